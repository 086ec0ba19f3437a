/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_illf: the seed paper's improved least-laxity-first (rules 1-4) as a sched_ext
 * scheduler. Same rules and ablation switches as the simulator's `illf`
 * (crates/sim/src/policy/illf.rs); see schedlab.bpf.h for the framework.
 *
 * Each CPU's queue is vtime-ordered by the zero-laxity instant `deadline - remaining`
 * (constant while a task waits), i.e. by laxity: the head is rb_leftmost, the next
 * one rb_left2most. Each task also carries a *stored* laxity, refreshed only as the
 * rules say; decisions (rule 3's zero test, Algorithm 2) use the stored values:
 * 1. all stored laxities of a CPU's queue (and its running task) are refreshed just
 *    before an activated task is inserted there, and when the running task's job
 *    completes;
 * 2. at each tick only the least-laxity waiting task (the head) is refreshed;
 * 3. the running task keeps the CPU unless a task is activated, a waiting task's
 *    stored laxity reaches 0, or its job completes;
 * 4. at an activation (K = running task, Q = the activated one) and at a pick after a
 *    completion (K = head, Q = next), Algorithm 2: run Q iff K is big (R > S), Q is
 *    small (R <= S), R_k > S_q and S_k >= R_q (R_q < S_k with strict_swap).
 * Ablation (rule[i] = false): without rule 1 an activation/completion refreshes only
 * the task itself; without rule 2 every tick refreshes the whole queue; without rule
 * 3 the head preempts whenever its laxity is below the running task's (LLF with the
 * swap rule); without rule 4 Algorithm 2 always returns K ("LLF + rule 3").
 * swap_at_activation_only: Algorithm 2 only at activations (the E2 narrative).
 *
 * Difference from the simulator: its laxity tree is keyed by the stored values, so
 * with rule 1 disabled it may hold stale orders; here the queue is always in true
 * laxity order (the stored values still drive the decisions).
 */
#include "schedlab.bpf.h"

static u64 pol_key(const struct sl_job *j, u64 now)
{
	return j->deadline - job_remaining(j, now);
}

/* Rule 1: refresh every stored laxity of `cpu`'s queue and of its running task. */
static void refresh_all(s32 cpu, u64 now)
{
	struct task_struct *p;
	struct cpu_ctx *cc;
	u64 n = 0;

	bpf_for_each(scx_dsq, p, (u64)cpu, 0) {
		struct task_ctx *t = tctx(p);

		if (!t || !t->j.ours || !t->j.in_job)
			continue;
		t->j.lax = job_laxity(&t->j, now);
		n++;
	}
	cc = cctx(cpu);
	if (cc && cc->cur.pid) {
		cc->cur.lax = job_laxity(&cc->cur, now);
		n++;
	}
	stat_add(SL_LAX_EVALS, n);
}

/* Rule 2: refresh only the least-laxity waiting task; returns it in `c1`. */
static void refresh_head(s32 cpu, u64 now, struct cand *c1)
{
	struct task_struct *p;

	c1->valid = 0;
	bpf_for_each(scx_dsq, p, (u64)cpu, 0) {
		struct task_ctx *t;

		if (!allowed_on(p, cpu))
			continue;
		t = tctx(p);
		if (!t || !t->j.ours || !t->j.in_job)
			continue;
		t->j.lax = job_laxity(&t->j, now);
		stat_add(SL_LAX_EVALS, 1);
		fill_cand(c1, &t->j, now);
		break;
	}
}

/* Algorithm 2 (pick_next_laxity_entity): run Q instead of K? */
static bool swap_with(u64 r_k, s64 s_k, u64 r_q, s64 s_q)
{
	bool big_k = (s64)r_k > s_k;
	bool small_q = (s64)r_q <= s_q;
	bool fits = strict_swap ? (s64)r_q < s_k : s_k >= (s64)r_q;

	return rule[3] && big_k && small_q && (s64)r_k > s_q && fits;
}

static void set_want(struct cpu_ctx *cc, u32 pid, u32 why)
{
	cc->want = pid;
	cc->want_why = why;
}

static void pol_activate(struct task_struct *p, struct sl_job *j, s32 cpu, u64 now,
			 u64 enq_flags)
{
	struct cpu_ctx *cc = cctx(cpu);
	struct cand w1, w2;

	if (rule[0])
		refresh_all(cpu, now);
	j->lax = job_laxity(j, now);
	stat_add(SL_LAX_EVALS, 1);
	queue_ours(p, j, cpu, now, enq_flags);
	if (!cc)
		return;

	DBG("illf act cpu=%d pid=%d lax=%lld cur=%d", cpu, j->pid, j->lax, cc->cur.pid);
	if (!cc->cur.pid) {
		/* Nothing registered runs there: the pick that follows is at activation. */
		cc->activation = 1;
		if (cc->foreign)
			kick(cpu, SCX_KICK_PREEMPT);
		return;
	}

	/* K = the running task, Q = the activated one. */
	peek2(cpu, now, &w1, &w2);
	if (w1.valid && w1.lax <= 0) {
		set_want(cc, w1.pid, SL_ZERO_LAX); /* rule 3: zero laxity runs at once */
	} else if (w1.valid && !rule[2] && w1.lax < job_laxity(&cc->cur, now)) {
		set_want(cc, w1.pid, SL_LAX_PREEMPTS);
	} else if (swap_with(job_remaining(&cc->cur, now), cc->cur.lax,
			     job_remaining(j, now), j->lax)) {
		set_want(cc, j->pid, SL_SWAPS); /* rule 4 at activation */
	} else {
		DBG("illf act keep cur=%d r=%llu s=%lld", cc->cur.pid,
		    job_remaining(&cc->cur, now), cc->cur.lax);
		return;
	}
	DBG("illf act want=%d why=%d", cc->want, cc->want_why);
	kick(cpu, SCX_KICK_PREEMPT);
}

static void pol_tick(struct task_struct *p, struct cpu_ctx *cc, s32 cpu, u64 now)
{
	struct cand w1;

	if (job_rollover(&cc->cur, now)) {
		/* A new job of the running task: pick anew, as after a completion. */
		if (rule[0])
			refresh_all(cpu, now);
		else
			cc->cur.lax = job_laxity(&cc->cur, now);
		cc->rollover = 1;
		p->scx.slice = 0;
		return;
	}
	if (rule[1]) {
		refresh_head(cpu, now, &w1);
	} else {
		refresh_all(cpu, now);
		struct cand w2;
		peek2(cpu, now, &w1, &w2);
	}
	if (!w1.valid)
		return;
	if (w1.lax <= 0) {
		set_want(cc, w1.pid, SL_ZERO_LAX);
		p->scx.slice = 0;
	} else if (!rule[2] && w1.lax < job_laxity(&cc->cur, now)) {
		set_want(cc, w1.pid, SL_LAX_PREEMPTS);
		p->scx.slice = 0;
	}
}

static void took(struct cpu_ctx *cc, u32 pid, u32 why)
{
	stat_add(why, 1);
	if (why == SL_SWAPS)
		TSTAT_ADD(pid, swaps, 1);
	else if (why == SL_ZERO_LAX)
		TSTAT_ADD(pid, zero_lax, 1);
}

static bool pol_dispatch(s32 cpu, struct task_struct *prev, bool prev_runs,
			 struct cpu_ctx *cc, u64 now)
{
	struct cand k, q, w1, w2;
	bool allow_swap;
	u32 want = cc->want, why = cc->want_why;

	/* A decision taken at an activation or a tick. */
	if (want) {
		cc->want = 0;
		if (take_pid(cpu, want)) {
			took(cc, want, why);
			if (prev_runs)
				prev->scx.slice = 0;
			cc->activation = 0;
			return true;
		}
	}

	peek2(cpu, now, &w1, &w2);
	if (prev_runs && !cc->rollover) {
		/* Rule 3: only a zero-laxity task displaces the running one. */
		if (w1.valid && (w1.lax <= 0 || (!rule[2] && w1.lax < job_laxity(&cc->cur, now)))) {
			if (take_pid(cpu, w1.pid)) {
				took(cc, w1.pid, w1.lax <= 0 ? SL_ZERO_LAX : SL_LAX_PREEMPTS);
				prev->scx.slice = 0;
				return true;
			}
		}
		prev->scx.slice = slice_ns;
		return true;
	}

	/*
	 * A pick: after a completion, at an idle CPU woken by an activation, or when the
	 * running task went on with a new job (then it competes with the queue).
	 * K = least stored laxity, Q = the next one (rb_leftmost, rb_left2most).
	 */
	k = w1;
	q = w2;
	if (prev_runs) {
		struct cand c = {};

		fill_cand(&c, &cc->cur, now);
		if (!w1.valid || c.lax <= w1.lax) {
			q = w1;
			k = c;
		} else if (!w2.valid || c.lax <= w2.lax) {
			q = c;
		}
	}
	DBG("illf pick cpu=%d k=%d q=%d", cpu, k.pid, q.pid);
	DBG("illf pick k r=%llu s=%lld", k.remaining, k.lax);
	DBG("illf pick q r=%llu s=%lld prev_runs=%d", q.remaining, q.lax, prev_runs);
	allow_swap = !swap_at_activation_only || cc->activation;
	cc->activation = 0;
	cc->rollover = 0;
	if (!k.valid)
		return false;
	if (allow_swap && q.valid && swap_with(k.remaining, k.lax, q.remaining, q.lax)) {
		struct cand tmp = k;

		k = q;
		q = tmp;
		stat_add(SL_SWAPS, 1);
		TSTAT_ADD(k.pid, swaps, 1);
	}
	if (prev_runs && k.pid == cc->cur.pid) {
		prev->scx.slice = slice_ns;
		return true;
	}
	if (take_pid(cpu, k.pid)) {
		if (prev_runs)
			prev->scx.slice = 0;
		return true;
	}
	DBG("illf pick take_pid %d failed", k.pid);
	return take_head(cpu);
}

static void pol_completed(s32 cpu, u64 now)
{
	if (rule[0])
		refresh_all(cpu, now);
}

static bool pol_would_preempt(const struct sl_job *curr, const struct sl_job *cand,
			      u64 now)
{
	s64 s_q = job_laxity(cand, now);

	/* At zero laxity a pushed task displaces only a task with more laxity, as in the
	 * simulator: two zero-laxity tasks would otherwise push each other round the CPUs. */
	return (s_q <= 0 && s_q < job_laxity(curr, now)) ||
	       swap_with(job_remaining(curr, now), curr->lax, job_remaining(cand, now), s_q);
}

static bool pol_worse(const struct sl_job *a, const struct sl_job *b, u64 now)
{
	return job_laxity(a, now) > job_laxity(b, now);
}

SL_DEFINE_OPS(illf);
