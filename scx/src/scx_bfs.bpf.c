/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_bfs: BFS 0.440 (kernel/sched/bfs.c, seed 001; the simulator's `bfs`) on one
 * global queue ordered by virtual deadline.
 *
 * - deadline = niffies + prio_deadline_diff(nice), where prio_deadline_diff =
 *   prio_ratios[nice + 20] × rr_interval × (2^20 / 128) ns (the loader works it out per
 *   thread); niffies = ns since the scheduler loaded (BFS's starts at boot).
 * - time slice = rr_interval << 20 ns (BFS's rr_interval << 10 "µs" of 1024 ns). It is
 *   refilled, with a new deadline, only when used up (less than RESCHED_US = 100 × 1024
 *   ns left counts as used up), checked whenever the task is descheduled; SCHED_BATCH
 *   tasks get a new slice and deadline every time. Slice and deadline are kept across
 *   sleep; a new task starts with a full slice and a fresh deadline.
 * - A CPU takes the earliest deadline it may run; SCHED_IDLE (BFS's SCHED_IDLEPRIO)
 *   tasks only when nothing else is runnable; they never preempt.
 * - Wake-up: an idle CPU, else the CPU running the latest deadline (SCHED_IDLE first)
 *   is preempted if the woken task's deadline is earlier (try_preempt).
 * - Cache locality (`--locality`): a task descheduled while still runnable with others
 *   waiting becomes sticky to its CPU (one per CPU); another CPU compares it with its
 *   deadline << 2 (BFS's locality 2: another core sharing the cache).
 * What sched_ext cannot express exactly (slice expiry at ticks, SCHED_ISO): docs/scx.md.
 */
#define SL_IDLE_BELOW 1
#include "schedlab_fair.bpf.h"

const volatile u64 timeslice_ns = 6ULL << 20;
const volatile bool locality = false;

#define RESCHED_NS (100ULL << 10)
#define LOCALITY_SHIFT 2

/* niffies' origin: the load. */
static u64 origin;

static __always_inline u64 niffies(u64 now)
{
	return now > origin ? now - origin : 0;
}

static void refill(struct fair_task *t, u64 now)
{
	t->slice_left = timeslice_ns;
	t->key = niffies(now) + t->diff;
}

static u64 pol_enqueue(struct fair_task *t, u64 now, bool wakeup)
{
	if (!t->placed)
		refill(t, now);
	return t->slice_left ? t->slice_left : timeslice_ns;
}

/* check_deadline at every deschedule: refill when (nearly) used up, always for batch. */
static bool pol_charge(struct fair_task *t, u64 ran, bool runnable, u64 now)
{
	t->slice_left = ran >= t->slice_left ? 0 : t->slice_left - ran;
	if (t->slice_left >= RESCHED_NS && t->class != SL_FAIR_BATCH)
		return false;
	refill(t, now);
	return true;
}

static u64 pol_keep_slice(struct fair_task *t, u64 now)
{
	return t->slice_left;
}

static bool pol_preempts(const struct fair_task *t, const struct fair_cpu *c, u64 now)
{
	if (t->class == SL_FAIR_IDLE)
		return false;
	if (c->class == SL_FAIR_IDLE)
		return true;
	return t->key < c->key;
}

static bool pol_worse(const struct fair_cpu *a, const struct fair_cpu *b, u64 now)
{
	if ((a->class == SL_FAIR_IDLE) != (b->class == SL_FAIR_IDLE))
		return a->class == SL_FAIR_IDLE;
	return a->key > b->key;
}

static void pol_tick(struct task_struct *p, struct fair_task *t, struct fair_cpu *c, s32 cpu,
		     u64 now)
{
	/* The slice is sched_ext's countdown, set from slice_left at each queueing. */
}

/*
 * With locality: earliest_deadline_task over the tasks this CPU may run, a task sticky
 * to another CPU counted at deadline << 2. Without: the queue's own order.
 */
static bool pol_pick(s32 cpu, u64 now)
{
	struct task_struct *p;
	struct fair_task *t;
	struct fair_cpu *c;
	u64 best = (u64)-1, k;
	u32 best_pid = 0;
	bool sticky_pick = false, ok = false;

	if (!locality)
		return false;
	bpf_for_each(scx_dsq, p, FAIR_DSQ, 0) {
		if (!allowed_on(p, cpu))
			continue;
		t = ftask(p);
		k = p->scx.dsq_vtime;
		if (t && t->sticky_cpu >= 0 && t->sticky_cpu != cpu) {
			c = fcpu(t->sticky_cpu);
			if (c && c->sticky_pid == p->pid)
				k = k << LOCALITY_SHIFT;
		}
		if (k < best) {
			best = k;
			best_pid = p->pid;
			sticky_pick = t && t->sticky_cpu == cpu;
		}
	}
	if (!best_pid)
		return false;
	bpf_for_each(scx_dsq, p, FAIR_DSQ, 0) {
		if (p->pid != best_pid)
			continue;
		ok = scx_bpf_dispatch_from_dsq(BPF_FOR_EACH_ITER, p, SCX_DSQ_LOCAL, 0);
		break;
	}
	if (ok && sticky_pick)
		stat_add(SLF_STICKY_PICKS, 1);
	return ok;
}

static void unstick(struct fair_task *t)
{
	struct fair_cpu *c;

	if (t->sticky_cpu < 0)
		return;
	c = fcpu(t->sticky_cpu);
	if (c && c->sticky_pid == t->pid)
		c->sticky_pid = 0;
	t->sticky_cpu = -1;
}

static void pol_running(struct fair_task *t, s32 cpu, u64 now)
{
	unstick(t);
}

/* swap_sticky: descheduled while runnable with others waiting; sleeping unsticks. */
static void pol_stopped(struct fair_task *t, s32 cpu, bool runnable)
{
	struct fair_cpu *c;

	unstick(t);
	if (!locality || !runnable || scx_bpf_dsq_nr_queued(FAIR_DSQ) == 0)
		return;
	c = fcpu(cpu);
	if (!c)
		return;
	c->sticky_pid = t->pid;
	t->sticky_cpu = cpu;
}

static void pol_runnable(struct fair_task *t, bool runnable)
{
}

static s32 pol_init(void)
{
	origin = bpf_ktime_get_ns();
	return 0;
}

SL_DEFINE_FAIR_OPS(bfs);
