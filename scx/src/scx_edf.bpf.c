/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_edf: earliest deadline first on per-CPU queues with push/pull, the reference
 * the LLF family is compared with (the simulator's `edf`, placement `linux`).
 * Decisions at releases and completions only; equal deadlines do not preempt; the
 * queue is vtime-ordered by absolute deadline (FIFO among equals). Unlike the
 * kernel's SCHED_DEADLINE there is no CBS: a job that overruns is not throttled.
 */
#include "schedlab.bpf.h"

static u64 pol_key(const struct sl_job *j, u64 now)
{
	return j->deadline;
}

static void pol_activate(struct task_struct *p, struct sl_job *j, s32 cpu, u64 now,
			 u64 enq_flags)
{
	struct cpu_ctx *cc = cctx(cpu);

	queue_ours(p, j, cpu, now, enq_flags);
	if (!cc)
		return;
	if (!cc->cur.pid) {
		if (cc->foreign)
			kick(cpu, SCX_KICK_PREEMPT);
		return;
	}
	if (j->deadline < cc->cur.deadline) {
		stat_add(SL_DL_PREEMPTS, 1);
		kick(cpu, SCX_KICK_PREEMPT);
	}
}

static void pol_tick(struct task_struct *p, struct cpu_ctx *cc, s32 cpu, u64 now)
{
	if (job_rollover(&cc->cur, now))
		p->scx.slice = 0; /* a new job with a later deadline: pick anew */
}

static bool pol_dispatch(s32 cpu, struct task_struct *prev, bool prev_runs,
			 struct cpu_ctx *cc, u64 now)
{
	struct cand w1, w2;

	peek2(cpu, now, &w1, &w2);
	if (prev_runs) {
		if (w1.valid && w1.deadline < cc->cur.deadline && take_pid(cpu, w1.pid)) {
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
}

static bool pol_would_preempt(const struct sl_job *curr, const struct sl_job *cand,
			      u64 now)
{
	return cand->deadline < curr->deadline;
}

static bool pol_worse(const struct sl_job *a, const struct sl_job *b, u64 now)
{
	return a->deadline > b->deadline;
}

SL_DEFINE_OPS(edf);
