/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared between the schedlab sched_ext schedulers (scx_{illf,llf,edf}.bpf.c) and
 * their loader (scx_schedlab.c): map layouts and statistic names.
 */
#ifndef __SCHEDLAB_H
#define __SCHEDLAB_H

/* Value of the `params` map; key = thread id (u32). Filled by the loader. */
struct sl_params {
	__u64 runtime;  /* execution time of each job, ns */
	__u64 deadline; /* relative deadline, ns */
	__u64 period;   /* ns */
	__u32 index;    /* workload order */
	__u32 pad;
};

/* Value of the `task_stats` map; key = thread id. Written by the scheduler. */
struct sl_task_stats {
	__u64 releases;    /* jobs released (wake-ups, plus roll-overs of late jobs) */
	__u64 completions; /* jobs finished (the thread went to sleep) */
	__u64 misses;      /* completions after the absolute deadline */
	__u64 runs;        /* times it started running */
	__u64 preempted;   /* times it stopped running while still runnable */
	__u64 migrations;  /* times it started on another CPU than last time */
	__u64 cpu_ns;      /* CPU time while scheduled by us */
	__u64 swaps;       /* ILLF rule 4 ran it before the original task K */
	__u64 zero_lax;    /* it preempted because its laxity reached 0 (rule 3) */
};

/* Global counters (a per-CPU array, summed by the loader). */
enum sl_stat {
	SL_RELEASES,      /* job releases of registered tasks */
	SL_COMPLETIONS,   /* job completions */
	SL_MISSES,        /* completions after the deadline */
	SL_LAX_EVALS,     /* laxity evaluations (the seed's rules 1-2 reduce these) */
	SL_SWAPS,         /* rule 4 chose Q over K */
	SL_ZERO_LAX,      /* rule 3: zero-laxity preemptions */
	SL_LAX_PREEMPTS,  /* preemptions because a laxity fell below the running one */
	SL_DL_PREEMPTS,   /* EDF: earlier-deadline preemptions */
	SL_PULLS,         /* a CPU with an empty queue took a task from another CPU */
	SL_DISPATCHES,    /* registered tasks moved to a CPU */
	SL_SWITCHES,      /* a CPU started a registered task other than the last one */
	SL_ROLLOVERS,     /* late jobs followed by the next without sleeping */
	SL_FOREIGN,       /* enqueues of tasks without parameters (FIFO, lowest) */
	SL_KICKS,         /* CPUs kicked (preempt or wake from idle) */
	SL_NR,
};

#define SL_STAT_NAMES                                                              \
	"releases", "completions", "misses", "laxity_evaluations", "swaps",        \
		"zero_laxity_preemptions", "laxity_preemptions",                   \
		"deadline_preemptions", "pulls", "dispatches", "switches",         \
		"rollovers", "foreign_enqueues", "kicks"

/*
 * The fair schedulers (scx_bfs, scx_cfsw). Value of their `params` map; key =
 * thread id. Filled by the loader from `fair TID LEVEL CLASS INDEX`.
 */
enum sl_fair_class {
	SL_FAIR_NORMAL = 0, /* SCHED_NORMAL */
	SL_FAIR_BATCH = 1,  /* SCHED_BATCH */
	SL_FAIR_IDLE = 2,   /* SCHED_IDLE (BFS: SCHED_IDLEPRIO) */
};

struct sl_fair_params {
	__u64 weight;   /* scx_cfsw: load weight of the level in the loaded table */
	__u64 diff;     /* scx_bfs: prio_deadline_diff of the level, ns */
	__s32 level;    /* nice level (the extended table reaches -30..29) */
	__u32 class;    /* enum sl_fair_class */
	__u32 index;    /* workload order */
	__u32 pad;
};

/* Value of the fair schedulers' `task_stats` map; key = thread id. */
struct sl_fair_stats {
	__u64 cpu_ns;     /* CPU time while scheduled by us */
	__u64 runs;       /* times it started running */
	__u64 preempted;  /* times it stopped running while still runnable */
	__u64 wakeups;    /* times it woke up */
	__u64 migrations; /* times it started on another CPU than last time */
	__u64 refills;    /* scx_bfs: new slice and deadline (slice used up) */
	__u64 vruntime;   /* scx_cfsw: vruntime at the end, ns; scx_bfs: last deadline */
};

/* Global counters of the fair schedulers. */
enum sl_fair_stat {
	SLF_ENQUEUES,       /* registered tasks queued */
	SLF_WAKE_PREEMPTS,  /* a wake-up preempted a running task */
	SLF_TICK_PREEMPTS,  /* a tick ended a slice early (cfsw: vruntime test) */
	SLF_REFILLS,        /* bfs: slices refilled with a new deadline */
	SLF_STICKY_PICKS,   /* bfs locality: a sticky task picked on its own CPU */
	SLF_IDLE_PICKS,     /* a SCHED_IDLE task ran */
	SLF_FOREIGN,        /* enqueues of tasks without parameters (FIFO, lowest) */
	SLF_KICKS,          /* CPUs kicked */
	SLF_NR,
};

#define SLF_STAT_NAMES                                                             \
	"enqueues", "wake_preemptions", "tick_preemptions", "refills",            \
		"sticky_picks", "idle_picks", "foreign_enqueues", "kicks"

#define SL_MAX_CPUS 64
#define SL_MAX_TASKS 4096

#endif /* __SCHEDLAB_H */
