/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_cfsw: CFS's weighted vruntime (kernel/sched/fair.c up to v6.5, the simulator's
 * `cfs`) with the nice-to-weight table chosen at load time (linux, grouped-2,
 * grouped-5, extended-60; the loader gives each thread its level's weight).
 *
 * - vruntime advances by ran × 1024 / weight (the kernel's fixed point 2^32 / weight);
 *   the queue is ordered by vruntime; min_vruntime only moves forward.
 * - slice = period × weight / load, period = latency, or nr × min_granularity beyond
 *   latency / min_granularity tasks; load and nr are those of one CPU: the runnable
 *   registered tasks' total over `fair_cpus`, the CPUs the workload shares.
 * - tick (check_preempt_tick): the slice is sched_ext's own countdown; after
 *   min_granularity the running task also stops when it is more than a slice of vruntime
 *   ahead of the first waiting task.
 * - wake-up preemption when the woken task's vruntime is more than wakeup_granularity
 *   (scaled by its weight) below the running one's; SCHED_IDLE running tasks always give
 *   way; woken SCHED_BATCH and SCHED_IDLE tasks never preempt.
 * - placement: a new task starts one vslice after min_vruntime (START_DEBIT); a woken
 *   task at min_vruntime − latency/2 at the earliest (GENTLE_FAIR_SLEEPERS).
 * Differences from the simulator (one queue for all CPUs instead of per-CPU queues and
 * load balancing; slices end at ticks): docs/scx.md.
 */
#include "schedlab_fair.bpf.h"

const volatile u64 latency_ns = 6ULL * 1000 * 1000;
const volatile u64 min_gran_ns = 750ULL * 1000;
const volatile u64 wakeup_gran_ns = 1000ULL * 1000;

#define NICE_0_LOAD 1024ULL

/* Queue keys are unsigned: vruntime starts far from 0 so that "earlier" never wraps. */
#define VRUNTIME_ORIGIN (1ULL << 62)

static u64 min_vruntime = VRUNTIME_ORIGIN;
static u64 load_sum; /* weights of the runnable registered tasks */
static u64 nr_runnable;

/* delta × NICE_0_LOAD / weight with the kernel's 2^32 / weight (__calc_delta). */
static __always_inline u64 calc_delta_fair(u64 delta, u64 weight)
{
	u64 inv;

	if (weight == NICE_0_LOAD)
		return delta;
	inv = (1ULL << 32) / (weight ? weight : 1);
	/* delta × 1024 × inv >> 32 without overflow for deltas below ~4 s. */
	return ((delta * NICE_0_LOAD) >> 16) * inv >> 16;
}

/* sched_slice(): this task's share of the period on one CPU. */
static u64 sched_slice(u64 weight)
{
	u64 cpus = fair_cpus ? fair_cpus : 1;
	u64 nr = (nr_runnable + cpus - 1) / cpus;
	u64 load = load_sum / cpus;
	u64 nr_latency = latency_ns / (min_gran_ns ? min_gran_ns : 1);
	u64 period = nr > nr_latency ? nr * min_gran_ns : latency_ns;

	if (nr <= 1 || load <= weight)
		return period;
	return period * weight / load;
}

static u64 curr_vruntime(const struct fair_cpu *c, u64 now)
{
	return c->key + (now > c->since ? calc_delta_fair(now - c->since, c->weight) : 0);
}

static u64 pol_enqueue(struct fair_task *t, u64 now, bool wakeup)
{
	u64 floor;

	if (!t->placed) {
		/* START_DEBIT: one vslice after min_vruntime (load already counts it). */
		t->key = min_vruntime + calc_delta_fair(sched_slice(t->weight), t->weight);
	} else if (wakeup) {
		floor = min_vruntime - latency_ns / 2;
		if (t->key < floor)
			t->key = floor;
	}
	return sched_slice(t->weight);
}

static bool pol_charge(struct fair_task *t, u64 ran, bool runnable, u64 now)
{
	t->key += calc_delta_fair(ran, t->weight);
	return false;
}

static u64 pol_keep_slice(struct fair_task *t, u64 now)
{
	return sched_slice(t->weight);
}

static bool pol_preempts(const struct fair_task *t, const struct fair_cpu *c, u64 now)
{
	u64 curr = curr_vruntime(c, now);

	if (t->class != SL_FAIR_NORMAL)
		return false;
	if (c->class == SL_FAIR_IDLE)
		return true;
	return curr > t->key && curr - t->key > calc_delta_fair(wakeup_gran_ns, t->weight);
}

static bool pol_worse(const struct fair_cpu *a, const struct fair_cpu *b, u64 now)
{
	if ((a->class == SL_FAIR_IDLE) != (b->class == SL_FAIR_IDLE))
		return a->class == SL_FAIR_IDLE;
	return curr_vruntime(a, now) > curr_vruntime(b, now);
}

static void pol_tick(struct task_struct *p, struct fair_task *t, struct fair_cpu *c, s32 cpu,
		     u64 now)
{
	u64 curr, head, ideal;

	if (now < c->since + min_gran_ns || !head_key(FAIR_DSQ, cpu, &head))
		return;
	curr = curr_vruntime(c, now);
	ideal = sched_slice(t->weight);
	if (curr > head && curr - head > ideal) {
		stat_add(SLF_TICK_PREEMPTS, 1);
		p->scx.slice = 0;
	}
}

static bool pol_pick(s32 cpu, u64 now)
{
	return false;
}

static void pol_running(struct fair_task *t, s32 cpu, u64 now)
{
	/* min_vruntime follows the task that starts (the least waiting vruntime). */
	if (t->key > min_vruntime)
		min_vruntime = t->key;
}

static void pol_stopped(struct fair_task *t, s32 cpu, bool runnable)
{
}

static void pol_runnable(struct fair_task *t, bool runnable)
{
	if (runnable) {
		__sync_fetch_and_add(&load_sum, t->weight);
		__sync_fetch_and_add(&nr_runnable, 1);
	} else {
		__sync_fetch_and_sub(&load_sum, t->weight);
		__sync_fetch_and_sub(&nr_runnable, 1);
	}
}

static s32 pol_init(void)
{
	return 0;
}

SL_DEFINE_FAIR_OPS(cfsw);
