/* SPDX-License-Identifier: GPL-2.0 */
/*
 * schedlab's sched_ext framework for fair-share schedulers, shared by scx_bfs and
 * scx_cfsw (Linux 6.12's sched_ext API, as schedlab.bpf.h).
 *
 * Model (one queue for all CPUs, BFS's design and the simplest CFS on sched_ext):
 * - A task is *registered* when the `params` map holds its thread id: nice level,
 *   class (normal, batch, idle) and the level's weight (cfsw) or deadline offset (bfs),
 *   both worked out by the loader from the table chosen at load time. Anything else
 *   scheduled by sched_ext goes to a FIFO queue below the registered normal tasks.
 * - Registered tasks wait in FAIR_DSQ (normal and batch) or IDLE_DSQ (SCHED_IDLE),
 *   (BFS's SCHED_IDLEPRIO, SL_IDLE_BELOW), both ordered by the policy's key: BFS's
 *   virtual deadline, CFS's vruntime. A CPU takes the first task of FAIR_DSQ it may
 *   run, else a foreign task, else the first of IDLE_DSQ.
 * - CPU time is the scheduler's own accounting: bpf_ktime_get_ns() between
 *   ops.running() and ops.stopping() (fair_charge()).
 * - When the running task's slice runs out (or a kick ends it), ops.dispatch compares
 *   its next key with the head of the queue and keeps it if it still comes first, as
 *   the kernel puts `prev` back into its queue before picking (fair_keep()).
 * - A wake-up goes to an idle CPU when there is one (ops.select_cpu); else the policy
 *   says whether the woken task preempts a running one (pol_preempts) and the worst
 *   running task it preempts is kicked.
 */
#ifndef __SCHEDLAB_FAIR_BPF_H
#define __SCHEDLAB_FAIR_BPF_H

#include <scx/common.bpf.h>
#include "schedlab.h"
#include "schedlab_ops.bpf.h"

char _license[] SEC("license") = "GPL";

#define FAIR_DSQ 0ULL /* registered tasks, by key */
#define IDLE_DSQ 1ULL /* registered SCHED_IDLE tasks when they rank below all others */

/*
 * SL_IDLE_BELOW (the policy defines it before including this): SCHED_IDLE tasks wait in
 * IDLE_DSQ and run only when nothing else is runnable (BFS's SCHED_IDLEPRIO). Without
 * it they share FAIR_DSQ with their own weight (CFS: weight 3).
 */
#ifndef SL_IDLE_BELOW
#define SL_IDLE_BELOW 0
#endif
#define BG_DSQ 2ULL   /* unregistered sched_ext tasks, FIFO */

/* Set by the loader before loading. */
const volatile u32 nr_cpus = 1;
/* CPUs the workload's tasks share (its platform.cpus): CFS's per-CPU load is the load / this. */
const volatile u32 fair_cpus = 1;
const volatile bool debug = false;

UEI_DEFINE(uei);

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SL_MAX_TASKS);
	__type(key, u32);
	__type(value, struct sl_fair_params);
} params SEC(".maps"); /* the loader's name for every scheduler's per-thread input */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SL_MAX_TASKS);
	__type(key, u32);
	__type(value, struct sl_fair_stats);
} task_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SLF_NR);
	__type(key, u32);
	__type(value, u64);
} stats SEC(".maps");

/* What the scheduler keeps per task. */
struct fair_task {
	u64 key;        /* queue order: bfs virtual deadline, cfsw vruntime (ns) */
	u64 slice_left; /* bfs: what is left of the time slice (ns) */
	u64 since;      /* running since (0: not running) */
	u64 weight;     /* cfsw */
	u64 diff;       /* bfs: prio_deadline_diff */
	s32 level;
	u32 class;
	u32 pid;
	s32 last_cpu;
	s32 sticky_cpu; /* bfs locality: the CPU it is sticky to, -1 none */
	u8 ours;
	u8 placed; /* has been queued once (a new task is placed differently) */
	u8 pad[2];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct fair_task);
} fair_task_stor SEC(".maps");

/* What runs on a CPU. */
struct fair_cpu {
	u64 key;    /* key of the running registered task when it started */
	u64 since;  /* it started then */
	u64 weight; /* its weight (cfsw) */
	u32 pid;    /* running registered task, 0 none */
	u32 class;
	u32 sticky_pid; /* bfs: the task sticky to this CPU */
	u8 foreign;     /* an unregistered task runs here */
	u8 pad[3];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SL_MAX_CPUS);
	__type(key, u32);
	__type(value, struct fair_cpu);
} fair_cpus_map SEC(".maps");

/* ----- helpers ----------------------------------------------------------------- */

static __always_inline void stat_add(u32 idx, u64 n)
{
	u64 *c = bpf_map_lookup_elem(&stats, &idx);

	if (c)
		*c += n;
}

static __always_inline struct fair_cpu *fcpu(s32 cpu)
{
	u32 k = cpu;

	return bpf_map_lookup_elem(&fair_cpus_map, &k);
}

static __always_inline struct fair_task *ftask(struct task_struct *p)
{
	return bpf_task_storage_get(&fair_task_stor, p, 0, 0);
}

static struct sl_fair_stats *fstats(u32 pid)
{
	struct sl_fair_stats zero = {}, *s;

	s = bpf_map_lookup_elem(&task_stats, &pid);
	if (s)
		return s;
	bpf_map_update_elem(&task_stats, &pid, &zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(&task_stats, &pid);
}

#define FSTAT_ADD(pid, field, n)                                                   \
	({                                                                         \
		struct sl_fair_stats *__s = fstats(pid);                           \
		if (__s)                                                           \
			__sync_fetch_and_add(&__s->field, (n));                    \
	})

#define FSTAT_SET(pid, field, v)                                                   \
	({                                                                         \
		struct sl_fair_stats *__s = fstats(pid);                           \
		if (__s)                                                           \
			__s->field = (v);                                          \
	})

static __always_inline bool allowed_on(struct task_struct *p, s32 cpu)
{
	return bpf_cpumask_test_cpu(cpu, p->cpus_ptr);
}

static void kick(s32 cpu, u64 flags)
{
	scx_bpf_kick_cpu(cpu, flags);
	stat_add(SLF_KICKS, 1);
}

/* Refresh `t` from the `params` map (the loader may register a thread late). */
static void load_fair(struct task_struct *p, struct fair_task *t)
{
	u32 pid = p->pid;
	struct sl_fair_params *fp = bpf_map_lookup_elem(&params, &pid);

	t->pid = pid;
	if (!fp || (!fp->weight && !fp->diff)) {
		t->ours = 0;
		return;
	}
	t->ours = 1;
	t->weight = fp->weight ? fp->weight : 1;
	t->diff = fp->diff;
	t->level = fp->level;
	t->class = fp->class;
}

static __always_inline u64 dsq_of(const struct fair_task *t)
{
	return SL_IDLE_BELOW && t->class == SL_FAIR_IDLE ? IDLE_DSQ : FAIR_DSQ;
}

/* Key of the first task of `dsq` that may run on `cpu` (false: none). */
static bool head_key(u64 dsq, s32 cpu, u64 *key)
{
	struct task_struct *p;
	bool found = false;

	bpf_for_each(scx_dsq, p, dsq, 0) {
		if (!allowed_on(p, cpu))
			continue;
		*key = p->scx.dsq_vtime;
		found = true;
		break;
	}
	return found;
}

/* ----- policy interface ---------------------------------------------------------- */

/* Set `t->key` for a queueing; return the slice it gets. `wakeup`: it woke up. */
static u64 pol_enqueue(struct fair_task *t, u64 now, bool wakeup);
/*
 * Charge `ran` ns to `t` (it stops, or its slice ended and it may keep the CPU); also
 * called on a copy to see what the charge would do, so it only computes. Returns true
 * when it refilled the slice (bfs).
 */
static bool pol_charge(struct fair_task *t, u64 ran, bool runnable, u64 now);
/* The slice `t` gets when it keeps the CPU after pol_charge(). */
static u64 pol_keep_slice(struct fair_task *t, u64 now);
/* Does woken `t` preempt the task running on `c` (its key brought up to `now`)? */
static bool pol_preempts(const struct fair_task *t, const struct fair_cpu *c, u64 now);
/* Is the task on `a` a worse victim than the one on `b`? */
static bool pol_worse(const struct fair_cpu *a, const struct fair_cpu *b, u64 now);
/* Tick while registered `t` runs on `cpu` (c: that CPU's state). */
static void pol_tick(struct task_struct *p, struct fair_task *t, struct fair_cpu *c, s32 cpu,
		     u64 now);
/* `cpu` takes a task: return true when the policy moved one to the local DSQ. */
static bool pol_pick(s32 cpu, u64 now);
/* Registered `t` starts running on `cpu`. */
static void pol_running(struct fair_task *t, s32 cpu, u64 now);
/* Registered `t` stopped running on `cpu` (`runnable`: still runnable). */
static void pol_stopped(struct fair_task *t, s32 cpu, bool runnable);
/* Registered `t` became runnable / stopped being runnable (load tracking). */
static void pol_runnable(struct fair_task *t, bool runnable);

/* ----- the common operations --------------------------------------------------------- */

/* Charge the time since `t->since` (ops.stopping, or a kept CPU). */
static void fair_charge(struct fair_task *t, u64 now, bool runnable)
{
	u64 ran = 0;

	if (t->since && now > t->since)
		ran = now - t->since;
	t->since = 0;
	FSTAT_ADD(t->pid, cpu_ns, ran);
	if (pol_charge(t, ran, runnable, now)) {
		FSTAT_ADD(t->pid, refills, 1);
		stat_add(SLF_REFILLS, 1);
	}
	FSTAT_SET(t->pid, vruntime, t->key);
}

static s32 fair_select_cpu(struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	s32 cpu;

	/* An idle CPU, the previous one first; no direct dispatch, so that every
	 * wake-up goes through ops.enqueue (placement and preemption rules). */
	if (allowed_on(p, prev_cpu) && scx_bpf_test_and_clear_cpu_idle(prev_cpu))
		return prev_cpu;
	cpu = scx_bpf_pick_idle_cpu(p->cpus_ptr, 0);
	return cpu >= 0 ? cpu : prev_cpu;
}

/* Woken `t` (task `p`) is queued: kick the CPU running the worst task it preempts. */
static void wake_preempt(struct task_struct *p, struct fair_task *t, u64 now)
{
	struct fair_cpu *c, *bc;
	s32 best = -1;
	u32 i;

	if (t->class == SL_FAIR_IDLE)
		return;
	if (scx_bpf_pick_idle_cpu(p->cpus_ptr, 0) >= 0)
		return; /* an idle CPU takes it (select_cpu woke it) */
	bpf_for(i, 0, nr_cpus) {
		if (i >= SL_MAX_CPUS)
			break;
		if (!allowed_on(p, i))
			continue;
		c = fcpu(i);
		if (!c || !c->pid || !pol_preempts(t, c, now))
			continue;
		bc = best >= 0 ? fcpu(best) : NULL;
		if (!bc || pol_worse(c, bc, now))
			best = i;
	}
	if (best >= 0) {
		stat_add(SLF_WAKE_PREEMPTS, 1);
		kick(best, SCX_KICK_PREEMPT);
	}
}

static void fair_enqueue(struct task_struct *p, u64 enq_flags)
{
	struct fair_task *t = ftask(p);
	u64 now = bpf_ktime_get_ns();
	bool wakeup = enq_flags & SCX_ENQ_WAKEUP;
	u64 slice;
	s32 cpu;

	if (t && (wakeup || !t->placed))
		load_fair(p, t);
	if (!t || !t->ours) {
		stat_add(SLF_FOREIGN, 1);
		scx_bpf_dispatch(p, BG_DSQ, SCX_SLICE_DFL, enq_flags);
		cpu = scx_bpf_pick_idle_cpu(p->cpus_ptr, 0);
		if (cpu >= 0)
			kick(cpu, SCX_KICK_IDLE);
		return;
	}
	slice = pol_enqueue(t, now, wakeup);
	t->placed = 1;
	stat_add(SLF_ENQUEUES, 1);
	scx_bpf_dispatch_vtime(p, dsq_of(t), slice, t->key, enq_flags);
	if (wakeup) {
		FSTAT_ADD(t->pid, wakeups, 1);
		wake_preempt(p, t, now);
	}
	cpu = scx_bpf_pick_idle_cpu(p->cpus_ptr, 0);
	if (cpu >= 0)
		kick(cpu, SCX_KICK_IDLE);
}

/*
 * `prev` (registered, still runnable) ran out of slice or was kicked: keep it when its
 * next key still comes before the head of the queue. True: it keeps the CPU.
 */
static bool fair_keep(struct task_struct *prev, s32 cpu, u64 now)
{
	struct fair_task *t = ftask(prev);
	struct fair_cpu *c = fcpu(cpu);
	struct fair_task next;
	u64 head;

	if (!t || !t->ours || !c || c->pid != prev->pid)
		return false;
	next = *t;
	next.since = c->since;
	/* What ops.stopping would charge, on a copy. */
	if (next.since && now > next.since)
		pol_charge(&next, now - next.since, true, now);
	if (dsq_of(t) == FAIR_DSQ && head_key(FAIR_DSQ, cpu, &head) && head < next.key)
		return false;
	if (dsq_of(t) == IDLE_DSQ &&
	    (scx_bpf_dsq_nr_queued(FAIR_DSQ) > 0 || scx_bpf_dsq_nr_queued(BG_DSQ) > 0 ||
	     (head_key(IDLE_DSQ, cpu, &head) && head < next.key)))
		return false;
	/* It keeps the CPU: account as if it stopped and started again. */
	fair_charge(t, now, true);
	t->since = now;
	prev->scx.slice = pol_keep_slice(t, now);
	c->key = t->key;
	c->since = now;
	return true;
}

static void fair_dispatch(s32 cpu, struct task_struct *prev)
{
	u64 now = bpf_ktime_get_ns();

	if (prev && (prev->scx.flags & SCX_TASK_QUEUED) && fair_keep(prev, cpu, now))
		return;
	if (pol_pick(cpu, now))
		return;
	if (scx_bpf_consume(FAIR_DSQ))
		return;
	if (scx_bpf_consume(BG_DSQ))
		return;
	if (scx_bpf_consume(IDLE_DSQ))
		stat_add(SLF_IDLE_PICKS, 1);
}

static void fair_tick(struct task_struct *p)
{
	s32 cpu = scx_bpf_task_cpu(p);
	struct fair_task *t = ftask(p);
	struct fair_cpu *c = fcpu(cpu);
	u64 now = bpf_ktime_get_ns();

	if (!c)
		return;
	if (t && t->ours && c->pid == p->pid) {
		/* A SCHED_IDLE task gives way at once to anything else that waits. */
		if (dsq_of(t) == IDLE_DSQ &&
		    (scx_bpf_dsq_nr_queued(FAIR_DSQ) > 0 || scx_bpf_dsq_nr_queued(BG_DSQ) > 0)) {
			p->scx.slice = 0;
			return;
		}
		pol_tick(p, t, c, cpu, now);
		return;
	}
	/* A foreign task runs while registered ones wait: they go first. */
	if (scx_bpf_dsq_nr_queued(FAIR_DSQ) > 0)
		p->scx.slice = 0;
}

static void fair_running(struct task_struct *p)
{
	s32 cpu = scx_bpf_task_cpu(p);
	struct fair_task *t = ftask(p);
	struct fair_cpu *c = fcpu(cpu);
	u64 now = bpf_ktime_get_ns();

	if (!c)
		return;
	if (!t || !t->ours) {
		c->pid = 0;
		c->foreign = 1;
		return;
	}
	t->since = now;
	if (t->last_cpu >= 0 && t->last_cpu != cpu)
		FSTAT_ADD(t->pid, migrations, 1);
	t->last_cpu = cpu;
	FSTAT_ADD(t->pid, runs, 1);
	pol_running(t, cpu, now);
	c->pid = t->pid;
	c->class = t->class;
	c->key = t->key;
	c->since = now;
	c->weight = t->weight;
	c->foreign = 0;
}

static void fair_stopping(struct task_struct *p, bool runnable)
{
	s32 cpu = scx_bpf_task_cpu(p);
	struct fair_task *t = ftask(p);
	struct fair_cpu *c = fcpu(cpu);
	u64 now = bpf_ktime_get_ns();

	if (c) {
		c->pid = 0;
		c->foreign = 0;
	}
	if (!t || !t->ours)
		return;
	fair_charge(t, now, runnable);
	pol_stopped(t, cpu, runnable);
	if (runnable)
		FSTAT_ADD(t->pid, preempted, 1);
}

static void fair_runnable(struct task_struct *p, u64 enq_flags)
{
	struct fair_task *t = ftask(p);

	if (t) {
		load_fair(p, t);
		if (t->ours)
			pol_runnable(t, true);
	}
}

static void fair_quiescent(struct task_struct *p, u64 deq_flags)
{
	struct fair_task *t = ftask(p);

	if (t && t->ours)
		pol_runnable(t, false);
}

static s32 fair_init_task(struct task_struct *p, struct scx_init_task_args *args)
{
	struct fair_task *t;

	t = bpf_task_storage_get(&fair_task_stor, p, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!t)
		return -ENOMEM;
	t->last_cpu = -1;
	t->sticky_cpu = -1;
	return 0;
}

static s32 pol_init(void);

static s32 fair_init(void)
{
	s32 ret;

	ret = scx_bpf_create_dsq(FAIR_DSQ, -1);
	if (!ret)
		ret = scx_bpf_create_dsq(IDLE_DSQ, -1);
	if (!ret)
		ret = scx_bpf_create_dsq(BG_DSQ, -1);
	if (!ret)
		ret = pol_init();
	return ret;
}

/* Define NAME_ops with the callbacks above (program names carry the policy). */
#define SL_DEFINE_FAIR_OPS(NAME)                                                   \
	SL_OPS_CORE(NAME, fair)                                                    \
	void BPF_STRUCT_OPS(NAME##_runnable, struct task_struct *p, u64 enq_flags) \
	{                                                                          \
		fair_runnable(p, enq_flags);                                       \
	}                                                                          \
	void BPF_STRUCT_OPS(NAME##_quiescent, struct task_struct *p, u64 deq_flags) \
	{                                                                          \
		fair_quiescent(p, deq_flags);                                      \
	}                                                                          \
	SCX_OPS_DEFINE(NAME##_ops, SL_OPS_CORE_FIELDS(NAME),                      \
		       .runnable = (void *)NAME##_runnable,                        \
		       .quiescent = (void *)NAME##_quiescent, .name = #NAME)

#endif /* __SCHEDLAB_FAIR_BPF_H */
