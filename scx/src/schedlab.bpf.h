/* SPDX-License-Identifier: GPL-2.0 */
/*
 * schedlab's sched_ext framework, shared by scx_illf, scx_llf and scx_edf.
 *
 * Written against Linux 6.12's sched_ext (tools/sched_ext/include/scx/common.bpf.h and
 * kernel/sched/ext.c of 6.12): scx_bpf_dispatch[_vtime](), scx_bpf_consume(),
 * scx_bpf_dispatch_from_dsq() and the scx_dsq iterator (later kernels renamed the
 * first three scx_bpf_dsq_insert[_vtime](), scx_bpf_dsq_move_to_local() and
 * scx_bpf_dsq_move()).
 *
 * Model ("linux" placement of the simulator: per-CPU run queues, push/pull):
 * - A task is *registered* when the `params` map holds its thread id: (runtime,
 *   deadline, period). Anything else scheduled by sched_ext (in the default partial
 *   mode: SCHED_EXT threads nobody registered; with --all, every task) goes to one
 *   FIFO queue below the registered ones, as the fair class sits below deadline.
 * - A job is released when a registered task wakes up (ops.enqueue with
 *   SCX_ENQ_WAKEUP): release = now, absolute deadline = now + D, nothing consumed.
 *   It completes when the task sleeps (ops.stopping(p, false)). A task still running
 *   when its job's runtime is used up and its next release is due goes on with the
 *   next job at once (a late job: release += P).
 * - Consumed time is the scheduler's own accounting: bpf_ktime_get_ns() between
 *   ops.running() and ops.stopping(); the same clock (CLOCK_MONOTONIC) as the
 *   releases. remaining = runtime - consumed; laxity = deadline - now - remaining.
 * - Each CPU has a vtime-ordered DSQ (id = cpu) of its waiting registered tasks;
 *   the running one is kept in cpu_ctx.cur (its job state is authoritative there
 *   while it runs). The policy decides the DSQ order (pol_key), what an activation
 *   does (pol_activate), what a tick does (pol_tick) and which task a CPU runs next
 *   (pol_dispatch). A CPU with nothing of its own pulls the head of another CPU's
 *   queue; a task queued behind a busy CPU wakes an idle one to pull it.
 * - Preemption: the policy kicks the CPU (SCX_KICK_PREEMPT, or slice = 0 from
 *   ops.tick) and leaves its choice in cpu_ctx.want; ops.dispatch moves that task
 *   to the local DSQ. Keeping the current task = dispatching nothing.
 */
#ifndef __SCHEDLAB_BPF_H
#define __SCHEDLAB_BPF_H

#include <scx/common.bpf.h>
#include "schedlab.h"
#include "schedlab_ops.bpf.h"

char _license[] SEC("license") = "GPL";

#define BG_DSQ ((u64)SL_MAX_CPUS) /* FIFO queue of unregistered tasks */

/* Set by the loader before loading. */
const volatile u32 nr_cpus = 1;
const volatile u64 slice_ns = 50ULL * 1000 * 1000;
/* ILLF: rules 1-4 (index 0 = rule 1), as scheduler.illf.rules in the simulator. */
const volatile bool rule[4] = { true, true, true, true };
/* ILLF: rule 4 only at activations (the paper's E2 narrative). */
const volatile bool swap_at_activation_only = false;
/* ILLF: the prose's strict R_q < S_k instead of Algorithm 2's S_k >= R_q. */
const volatile bool strict_swap = false;
/* LLF: laxity ties go to the least recently scheduled task (else FIFO). */
const volatile bool lrs_tie = true;
/* Log decisions with bpf_printk (tracefs trace / trace_pipe). */
const volatile bool debug = false;

#define DBG(fmt, args...)                                                          \
	do {                                                                       \
		if (debug)                                                         \
			bpf_printk(fmt, ##args);                                   \
	} while (0)

UEI_DEFINE(uei);

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SL_MAX_TASKS);
	__type(key, u32);
	__type(value, struct sl_params);
} params SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SL_MAX_TASKS);
	__type(key, u32);
	__type(value, struct sl_task_stats);
} task_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SL_NR);
	__type(key, u32);
	__type(value, u64);
} stats SEC(".maps");

/* Everything the scheduler knows about a task and its current job. */
struct sl_job {
	u64 runtime;      /* per job, ns */
	u64 rel_deadline; /* ns */
	u64 period;       /* ns */
	u64 release;      /* current job, absolute (CLOCK_MONOTONIC) */
	u64 deadline;     /* current job, absolute */
	u64 consumed;     /* ns the current job ran before `since` */
	u64 since;        /* running since (0 = not running) */
	s64 lax;          /* stored laxity (ILLF rules 1-2 decide when it is refreshed) */
	u64 activated_at; /* last activation */
	u64 last_ran;     /* last time it stopped running */
	u32 pid;
	u32 index;
	s32 last_cpu;
	u8 ours;   /* registered */
	u8 in_job; /* a job is released and not complete */
	u8 pad[2];
};

struct task_ctx {
	struct sl_job j;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_ctx);
} task_ctx_stor SEC(".maps");

struct cpu_ctx {
	struct sl_job cur; /* the registered task running here (cur.pid != 0) */
	u32 want;          /* task the next dispatch must run (rule 3/4 decision) */
	u32 want_why;      /* SL_SWAPS, SL_ZERO_LAX, SL_LAX_PREEMPTS, SL_DL_PREEMPTS */
	u32 last_pid;      /* last task that ran here */
	u8 foreign;        /* an unregistered sched_ext task runs here */
	u8 activation;     /* the next pick follows an activation (idle CPU woken) */
	u8 rollover;       /* the running task went on with a new job */
	u8 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SL_MAX_CPUS);
	__type(key, u32);
	__type(value, struct cpu_ctx);
} cpu_ctxs SEC(".maps");

/* A waiting task as the policies compare it. */
struct cand {
	u32 pid;
	u8 valid;
	s64 lax;       /* stored laxity */
	s64 live_lax;  /* laxity now */
	u64 remaining; /* remaining execution time now */
	u64 deadline;  /* absolute */
	u64 last_ran;
};

/* ----- small helpers ----------------------------------------------------------- */

static __always_inline void stat_add(u32 idx, u64 n)
{
	u64 *c = bpf_map_lookup_elem(&stats, &idx);

	if (c)
		*c += n;
}

static __always_inline struct cpu_ctx *cctx(s32 cpu)
{
	u32 k = cpu;

	return bpf_map_lookup_elem(&cpu_ctxs, &k);
}

static __always_inline struct task_ctx *tctx(struct task_struct *p)
{
	return bpf_task_storage_get(&task_ctx_stor, p, 0, 0);
}

static struct sl_task_stats *tstats(u32 pid)
{
	struct sl_task_stats zero = {}, *s;

	s = bpf_map_lookup_elem(&task_stats, &pid);
	if (s)
		return s;
	bpf_map_update_elem(&task_stats, &pid, &zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(&task_stats, &pid);
}

#define TSTAT_ADD(pid, field, n)                                                   \
	({                                                                         \
		struct sl_task_stats *__s = tstats(pid);                           \
		if (__s)                                                           \
			__sync_fetch_and_add(&__s->field, (n));                    \
	})

static __always_inline u64 job_done(const struct sl_job *j, u64 now)
{
	u64 d = j->consumed;

	if (j->since && now > j->since)
		d += now - j->since;
	return d;
}

static __always_inline u64 job_remaining(const struct sl_job *j, u64 now)
{
	u64 d = job_done(j, now);

	return d >= j->runtime ? 0 : j->runtime - d;
}

static __always_inline s64 job_laxity(const struct sl_job *j, u64 now)
{
	if (!j->in_job)
		return 1LL << 62;
	return (s64)(j->deadline - now) - (s64)job_remaining(j, now);
}

static __always_inline bool allowed_on(struct task_struct *p, s32 cpu)
{
	return bpf_cpumask_test_cpu(cpu, p->cpus_ptr);
}

/* Refresh the registered parameters of `p` from the `params` map. */
static void load_params(struct task_struct *p, struct sl_job *j)
{
	u32 pid = p->pid;
	struct sl_params *pp = bpf_map_lookup_elem(&params, &pid);

	j->pid = pid;
	if (!pp || !pp->runtime) {
		j->ours = 0;
		j->in_job = 0;
		return;
	}
	j->ours = 1;
	j->runtime = pp->runtime;
	j->rel_deadline = pp->deadline;
	j->period = pp->period;
	j->index = pp->index;
}

static void job_release(struct sl_job *j, u64 now)
{
	j->release = now;
	j->deadline = now + j->rel_deadline;
	j->consumed = 0;
	j->since = 0;
	j->in_job = 1;
	j->activated_at = now;
	stat_add(SL_RELEASES, 1);
	TSTAT_ADD(j->pid, releases, 1);
}

static void job_complete(struct sl_job *j, u64 now)
{
	j->in_job = 0;
	stat_add(SL_COMPLETIONS, 1);
	TSTAT_ADD(j->pid, completions, 1);
	if (now > j->deadline) {
		stat_add(SL_MISSES, 1);
		TSTAT_ADD(j->pid, misses, 1);
	}
}

/*
 * The running job `j` used up its runtime and its next release is due: the thread
 * goes on with the next job without sleeping (what a late periodic thread does).
 */
static bool job_rollover(struct sl_job *j, u64 now)
{
	u64 done;

	if (!j->in_job || !j->period)
		return false;
	done = job_done(j, now);
	if (done < j->runtime || now < j->release + j->period)
		return false;
	job_complete(j, now);
	j->release += j->period;
	j->deadline += j->period;
	j->consumed = done - j->runtime;
	j->since = j->since ? now : 0;
	j->in_job = 1;
	stat_add(SL_RELEASES, 1);
	stat_add(SL_ROLLOVERS, 1);
	TSTAT_ADD(j->pid, releases, 1);
	return true;
}

static __always_inline void fill_cand(struct cand *c, const struct sl_job *j, u64 now)
{
	c->pid = j->pid;
	c->valid = 1;
	c->lax = j->lax;
	c->live_lax = job_laxity(j, now);
	c->remaining = job_remaining(j, now);
	c->deadline = j->deadline;
	c->last_ran = j->last_ran;
}

/* The first two registered tasks of `cpu`'s queue that may run on `cpu`. */
static void peek2(s32 cpu, u64 now, struct cand *c1, struct cand *c2)
{
	struct task_struct *p;

	c1->valid = 0;
	c2->valid = 0;
	bpf_for_each(scx_dsq, p, (u64)cpu, 0) {
		struct task_ctx *t;

		if (!allowed_on(p, cpu))
			continue;
		t = tctx(p);
		if (!t || !t->j.ours || !t->j.in_job)
			continue;
		if (!c1->valid) {
			fill_cand(c1, &t->j, now);
			continue;
		}
		fill_cand(c2, &t->j, now);
		break;
	}
}

/* Move task `pid` from `cpu`'s queue to the local DSQ (ops.dispatch only). */
static bool take_pid(s32 cpu, u32 pid)
{
	struct task_struct *p;
	bool ok = false;

	bpf_for_each(scx_dsq, p, (u64)cpu, 0) {
		if (p->pid != pid)
			continue;
		if (allowed_on(p, cpu))
			ok = scx_bpf_dispatch_from_dsq(BPF_FOR_EACH_ITER, p, SCX_DSQ_LOCAL, 0);
		break;
	}
	if (ok)
		stat_add(SL_DISPATCHES, 1);
	return ok;
}

/* Move the head of `cpu`'s queue (first task allowed here) to the local DSQ. */
static bool take_head(s32 cpu)
{
	if (scx_bpf_consume((u64)cpu)) {
		stat_add(SL_DISPATCHES, 1);
		return true;
	}
	return false;
}

static void kick(s32 cpu, u64 flags)
{
	scx_bpf_kick_cpu(cpu, flags);
	stat_add(SL_KICKS, 1);
}

/* `p` waits in a queue: wake an idle CPU that may run it, so that CPU pulls it. */
static void kick_idle_for(struct task_struct *p)
{
	s32 cpu = scx_bpf_pick_idle_cpu(p->cpus_ptr, 0);

	if (cpu >= 0)
		kick(cpu, SCX_KICK_IDLE);
}

/* Insert a registered task into `cpu`'s queue, ordered by the policy's key. */
static u64 pol_key(const struct sl_job *j, u64 now);

static void queue_ours(struct task_struct *p, struct sl_job *j, s32 cpu, u64 now,
		       u64 enq_flags)
{
	scx_bpf_dispatch_vtime(p, (u64)cpu, slice_ns, pol_key(j, now), enq_flags);
}

/* ----- policy interface ---------------------------------------------------------- */

/* A job of `p` was just released on `cpu`: queue it and decide about preemption. */
static void pol_activate(struct task_struct *p, struct sl_job *j, s32 cpu, u64 now,
			 u64 enq_flags);
/* Scheduler tick on `cpu` while registered `cc->cur` (task `p`) runs. */
static void pol_tick(struct task_struct *p, struct cpu_ctx *cc, s32 cpu, u64 now);
/*
 * `cpu` needs a decision. `prev_runs`: the registered task in cc->cur is still
 * runnable (its slice ran out or it was kicked). Return true when it decided (a task
 * moved to the local DSQ, or prev keeps the CPU); false lets the framework pull.
 */
static bool pol_dispatch(s32 cpu, struct task_struct *prev, bool prev_runs,
			 struct cpu_ctx *cc, u64 now);
/* The job of the task that ran on `cpu` completed (the task went to sleep). */
static void pol_completed(s32 cpu, u64 now);
/* Would a new job `cand` preempt `curr` (used to place wake-ups)? */
static bool pol_would_preempt(const struct sl_job *curr, const struct sl_job *cand,
			      u64 now);
/* Is `a` a worse (lower-priority) running task than `b`? */
static bool pol_worse(const struct sl_job *a, const struct sl_job *b, u64 now);

/* ----- sched_ext operations -------------------------------------------------------- */

static s32 sl_select_cpu(struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	struct task_ctx *t = tctx(p);
	struct sl_job cand;
	struct cpu_ctx *cc;
	s32 cpu, best = -1;
	u64 now;
	u32 i;

	if (t)
		load_params(p, &t->j);
	if (!t || !t->j.ours) {
		bool idle = false;

		cpu = scx_bpf_select_cpu_dfl(p, prev_cpu, wake_flags, &idle);
		if (idle)
			scx_bpf_dispatch(p, SCX_DSQ_LOCAL, SCX_SLICE_DFL, 0);
		return cpu;
	}

	/* An idle CPU, the previous one first. */
	if (allowed_on(p, prev_cpu) && scx_bpf_test_and_clear_cpu_idle(prev_cpu))
		return prev_cpu;
	cpu = scx_bpf_pick_idle_cpu(p->cpus_ptr, 0);
	if (cpu >= 0)
		return cpu;

	/*
	 * No idle CPU (select_task_rq_dl / find_later_rq): stay on the previous CPU if
	 * nothing registered runs there or the new job would preempt it; else a CPU
	 * free of registered tasks; else the one running the worst task the new job
	 * preempts; else (it waits wherever it goes) the CPU with the shortest queue,
	 * the previous one on ties. That last rule is not in the simulator, whose
	 * deterministic releases keep queues balanced; with real wake-up jitter, staying
	 * on the previous CPU can stack every small task of a period behind one big one.
	 */
	now = bpf_ktime_get_ns();
	cand = t->j;
	cand.release = now;
	cand.deadline = now + cand.rel_deadline;
	cand.consumed = 0;
	cand.since = 0;
	cand.in_job = 1;
	cand.lax = job_laxity(&cand, now);

	cc = cctx(prev_cpu);
	if (cc && allowed_on(p, prev_cpu) &&
	    (!cc->cur.pid || pol_would_preempt(&cc->cur, &cand, now)))
		return prev_cpu;

	bpf_for(i, 0, nr_cpus) {
		struct cpu_ctx *bc;

		if (i >= SL_MAX_CPUS)
			break;
		if (!allowed_on(p, i))
			continue;
		cc = cctx(i);
		if (!cc)
			continue;
		if (!cc->cur.pid)
			return i;
		if (!pol_would_preempt(&cc->cur, &cand, now))
			continue;
		bc = best >= 0 ? cctx(best) : NULL;
		if (!bc || pol_worse(&cc->cur, &bc->cur, now))
			best = i;
	}
	if (best >= 0)
		return best;

	best = allowed_on(p, prev_cpu) ? prev_cpu : -1;
	bpf_for(i, 0, nr_cpus) {
		if (i >= SL_MAX_CPUS)
			break;
		if (!allowed_on(p, i))
			continue;
		if (best < 0 || scx_bpf_dsq_nr_queued(i) < scx_bpf_dsq_nr_queued(best))
			best = i;
	}
	return best >= 0 ? best : prev_cpu;
}

static void sl_enqueue(struct task_struct *p, u64 enq_flags)
{
	struct task_ctx *t = tctx(p);
	u64 now = bpf_ktime_get_ns();
	s32 cpu = scx_bpf_task_cpu(p);

	if (t && (enq_flags & SCX_ENQ_WAKEUP))
		load_params(p, &t->j);
	if (!t || !t->j.ours) {
		stat_add(SL_FOREIGN, 1);
		scx_bpf_dispatch(p, BG_DSQ, SCX_SLICE_DFL, enq_flags);
		kick_idle_for(p);
		return;
	}
	if (enq_flags & SCX_ENQ_WAKEUP) {
		job_release(&t->j, now);
		pol_activate(p, &t->j, cpu, now, enq_flags);
		return;
	}
	if (!t->j.in_job) {
		/* Registered but between jobs without sleeping (setting up): lowest. */
		scx_bpf_dispatch(p, BG_DSQ, SCX_SLICE_DFL, enq_flags);
		kick_idle_for(p);
		return;
	}
	/* Put back after a preemption (or moved): wait in this CPU's queue. */
	queue_ours(p, &t->j, cpu, now, enq_flags);
	kick_idle_for(p);
}

static void sl_dispatch(s32 cpu, struct task_struct *prev)
{
	struct cpu_ctx *cc = cctx(cpu);
	u64 now = bpf_ktime_get_ns();
	bool prev_runs;
	u32 i;

	if (!cc)
		return;
	prev_runs = cc->cur.pid && prev && prev->pid == cc->cur.pid &&
		    (prev->scx.flags & SCX_TASK_QUEUED);
	if (pol_dispatch(cpu, prev, prev_runs, cc, now))
		return;
	if (prev_runs)
		return; /* keeps the CPU */

	/* Nothing here: pull the head of another CPU's queue (pull_dl_task). */
	bpf_for(i, 1, nr_cpus) {
		u32 other = ((u32)cpu + i) % nr_cpus;

		if (other >= SL_MAX_CPUS)
			break;
		if (scx_bpf_consume((u64)other)) {
			stat_add(SL_PULLS, 1);
			stat_add(SL_DISPATCHES, 1);
			return;
		}
	}
	if (prev && (prev->scx.flags & SCX_TASK_QUEUED) && prev->scx.slice)
		return;
	scx_bpf_consume(BG_DSQ);
}

static void sl_tick(struct task_struct *p)
{
	s32 cpu = scx_bpf_task_cpu(p);
	struct cpu_ctx *cc = cctx(cpu);
	u64 now = bpf_ktime_get_ns();

	if (!cc)
		return;
	if (cc->cur.pid && cc->cur.pid == p->pid) {
		pol_tick(p, cc, cpu, now);
		return;
	}
	/* An unregistered task runs while registered ones wait here: they go first. */
	if (scx_bpf_dsq_nr_queued((u64)cpu) > 0)
		p->scx.slice = 0;
}

static void sl_running(struct task_struct *p)
{
	s32 cpu = scx_bpf_task_cpu(p);
	struct cpu_ctx *cc = cctx(cpu);
	struct task_ctx *t = tctx(p);
	u64 now = bpf_ktime_get_ns();

	if (!cc)
		return;
	if (t && t->j.ours && t->j.in_job) {
		t->j.since = now;
		if (t->j.last_cpu >= 0 && t->j.last_cpu != cpu)
			TSTAT_ADD(t->j.pid, migrations, 1);
		t->j.last_cpu = cpu;
		TSTAT_ADD(t->j.pid, runs, 1);
		if (cc->last_pid != p->pid)
			stat_add(SL_SWITCHES, 1);
		cc->cur = t->j;
		cc->foreign = 0;
	} else {
		cc->cur.pid = 0;
		cc->foreign = 1;
	}
	cc->last_pid = p->pid;
	if (cc->want == p->pid)
		cc->want = 0;
}

static void sl_stopping(struct task_struct *p, bool runnable)
{
	s32 cpu = scx_bpf_task_cpu(p);
	struct cpu_ctx *cc = cctx(cpu);
	struct task_ctx *t = tctx(p);
	u64 now = bpf_ktime_get_ns();

	if (!cc)
		return;
	cc->foreign = 0;
	if (!t || !cc->cur.pid || cc->cur.pid != p->pid) {
		cc->cur.pid = 0;
		return;
	}
	t->j = cc->cur;
	cc->cur.pid = 0;
	if (t->j.since && now > t->j.since) {
		TSTAT_ADD(t->j.pid, cpu_ns, now - t->j.since);
		t->j.consumed += now - t->j.since;
	}
	t->j.since = 0;
	t->j.last_ran = now;
	if (runnable) {
		TSTAT_ADD(t->j.pid, preempted, 1);
		return;
	}
	if (t->j.in_job) {
		job_complete(&t->j, now);
		cc->activation = 0;
		cc->rollover = 0;
		pol_completed(cpu, now);
	}
}

static s32 sl_init_task(struct task_struct *p, struct scx_init_task_args *args)
{
	struct task_ctx *t;

	t = bpf_task_storage_get(&task_ctx_stor, p, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!t)
		return -ENOMEM;
	t->j.last_cpu = -1;
	return 0;
}

static s32 sl_init(void)
{
	u32 i;
	s32 ret;

	bpf_for(i, 0, nr_cpus) {
		if (i >= SL_MAX_CPUS)
			break;
		ret = scx_bpf_create_dsq(i, -1);
		if (ret)
			return ret;
	}
	return scx_bpf_create_dsq(BG_DSQ, -1);
}

/* Define the sched_ext_ops of one policy: NAME_ops with the callbacks above. */
#define SL_DEFINE_OPS(NAME)                                                        \
	SL_OPS_CORE(NAME, sl)                                                      \
	SCX_OPS_DEFINE(NAME##_ops, SL_OPS_CORE_FIELDS(NAME), .name = #NAME)

#endif /* __SCHEDLAB_BPF_H */
