/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_llf: least laxity first in tick mode, as the simulator's `llf` (tick mode,
 * crates/sim/src/policy/llf.rs) and as a kernel would do it: decisions at every tick
 * and at every release/completion; every laxity of the CPU's queue counts as
 * re-evaluated each time (laxity_evaluations).
 *
 * The queue is vtime-ordered by the zero-laxity instant `deadline - remaining`,
 * constant while a task waits, so it never needs re-sorting; only the running task's
 * laxity stays put while the waiting ones fall. A waiting task preempts the running
 * one when its laxity is strictly lower, or equal and (lrs_tie) it was scheduled less
 * recently: the tick-by-tick alternation that makes LLF switch so much. Equal keys in
 * the queue are FIFO (a preempted task goes behind the tasks it ties with, which is
 * least-recently-scheduled order for them).
 */
#include "schedlab.bpf.h"

static u64 pol_key(const struct sl_job *j, u64 now)
{
	return j->deadline - job_remaining(j, now);
}

static void count_queue(s32 cpu)
{
	s32 n = scx_bpf_dsq_nr_queued((u64)cpu);

	stat_add(SL_LAX_EVALS, (n > 0 ? n : 0) + 1);
}

/* Does waiting `c` beat running `cur` (wakeup_preempt of the simulator)? */
static bool beats(const struct cand *c, const struct sl_job *cur, u64 now)
{
	s64 lr = job_laxity(cur, now);

	if (c->live_lax < lr)
		return true;
	return lrs_tie && c->live_lax == lr && c->last_ran < now;
}

static void pol_activate(struct task_struct *p, struct sl_job *j, s32 cpu, u64 now,
			 u64 enq_flags)
{
	struct cpu_ctx *cc = cctx(cpu);
	struct cand c = {};

	queue_ours(p, j, cpu, now, enq_flags);
	count_queue(cpu);
	if (!cc)
		return;
	if (!cc->cur.pid) {
		if (cc->foreign)
			kick(cpu, SCX_KICK_PREEMPT);
		return;
	}
	fill_cand(&c, j, now);
	if (beats(&c, &cc->cur, now)) {
		stat_add(SL_LAX_PREEMPTS, 1);
		kick(cpu, SCX_KICK_PREEMPT);
	}
}

static void pol_tick(struct task_struct *p, struct cpu_ctx *cc, s32 cpu, u64 now)
{
	struct cand w1, w2;

	count_queue(cpu);
	if (job_rollover(&cc->cur, now)) {
		p->scx.slice = 0; /* a new job: pick anew */
		return;
	}
	peek2(cpu, now, &w1, &w2);
	if (w1.valid && beats(&w1, &cc->cur, now)) {
		stat_add(SL_LAX_PREEMPTS, 1);
		p->scx.slice = 0;
	}
}

static bool pol_dispatch(s32 cpu, struct task_struct *prev, bool prev_runs,
			 struct cpu_ctx *cc, u64 now)
{
	struct cand w1, w2;

	peek2(cpu, now, &w1, &w2);
	if (prev_runs) {
		if (w1.valid && beats(&w1, &cc->cur, now) && take_pid(cpu, w1.pid)) {
			prev->scx.slice = 0;
			return true;
		}
		prev->scx.slice = slice_ns;
		return true;
	}
	if (w1.valid && take_pid(cpu, w1.pid))
		return true;
	return take_head(cpu);
}

static void pol_completed(s32 cpu, u64 now)
{
	count_queue(cpu);
}

static bool pol_would_preempt(const struct sl_job *curr, const struct sl_job *cand,
			      u64 now)
{
	return job_laxity(cand, now) < job_laxity(curr, now);
}

static bool pol_worse(const struct sl_job *a, const struct sl_job *b, u64 now)
{
	return job_laxity(a, now) > job_laxity(b, now);
}

SL_DEFINE_OPS(llf);
