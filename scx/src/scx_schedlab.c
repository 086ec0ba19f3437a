/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_schedlab: load one of schedlab's sched_ext schedulers (illf, llf, edf for periodic
 * tasks; bfs, cfsw for fair ones), feed it per-thread parameters, report, and unload.
 *
 *   scx_schedlab --policy illf [--rules 1,2,3,4] [--swap-at-activation-only]
 *                [--strict] [--fifo-tie] [--all] [--slice-us N] [--timeout-ms N]
 *                [--task TID:RUNTIME_NS:DEADLINE_NS:PERIOD_NS]... [--debug] [-v]
 *   scx_schedlab --policy cfsw [--weights linux|grouped-2|grouped-5|extended-60]
 *                [--latency-us N] [--min-gran-us N] [--wakeup-gran-us N] [--fair-cpus N]
 *   scx_schedlab --policy bfs [--rr-interval-ms N] [--locality] [--fair-cpus N]
 *
 * Once attached it prints `ready policy=NAME state=enabled` and reads commands on
 * stdin, one per line, answering each on stdout:
 *   task TID RUNTIME_NS DEADLINE_NS PERIOD_NS [INDEX]   register a thread   -> ok task TID
 *   fair TID LEVEL normal|batch|idle [INDEX]            register a fair thread (bfs,
 *        cfsw; LEVEL = nice, -30..29 with extended-60) -> ok fair TID weight=W diff=D
 *   untask TID                                          forget it           -> ok untask TID
 *   stats                                               counters so far     -> stats k=v ...
 *   state                                               /sys/kernel/sched_ext/state
 *   quit                                                unload and exit
 * End of input, SIGINT, SIGTERM and SIGHUP also unload. On the way out it prints one
 * `task tid=...` line per registered thread, the final `stats` line, the exit reason
 * (`exit kind=... reason=...`), then `unloaded state=disabled`. If the kernel ejects
 * the scheduler (an error, or the sched_ext watchdog), it reports that and exits 2.
 * The scheduler also goes away if this process dies: the kernel drops the struct_ops
 * link with the last file descriptor.
 *
 * Partial mode (the default, SCX_OPS_SWITCH_PARTIAL): only SCHED_EXT threads are
 * scheduled by BPF; --all switches every task.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <scx/common.h>
#include "schedlab.h"
#include "scx_illf.bpf.skel.h"
#include "scx_llf.bpf.skel.h"
#include "scx_edf.bpf.skel.h"
#include "scx_bfs.bpf.skel.h"
#include "scx_cfsw.bpf.skel.h"

struct opts {
	const char *policy;
	bool rule[4];
	bool swap_at_activation_only;
	bool strict;
	bool fifo_tie;
	bool all;
	unsigned long long slice_ns;
	unsigned int timeout_ms;
	bool verbose;
	bool debug;
	/* fair schedulers */
	const char *weights;
	unsigned long long latency_ns, min_gran_ns, wakeup_gran_ns;
	unsigned int rr_interval_ms;
	bool locality;
	unsigned int fair_cpus;
};

struct sched {
	void *skel;
	struct bpf_map *params, *task_stats, *stats;
	bool fair; /* bfs/cfsw: params and task_stats hold sl_fair_params / sl_fair_stats */
	const struct opts *o;
	struct user_exit_info *uei;
	char *dump;
	struct bpf_link *link;
	void (*destroy)(void *);
};

static volatile sig_atomic_t exit_req;
static bool verbose;

static int print_fn(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (level == LIBBPF_DEBUG && !verbose)
		return 0;
	return vfprintf(stderr, fmt, args);
}

static void on_signal(int sig)
{
	(void)sig;
	exit_req = 1;
}

static void read_file(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	snprintf(buf, len, "none");
	if (!f)
		return;
	if (fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = 0;
	fclose(f);
}

static const char *scx_state(void)
{
	static char buf[64];

	read_file("/sys/kernel/sched_ext/state", buf, sizeof(buf));
	return buf;
}

/* What every scheduler takes from the options: CPU count, debug, partial mode, watchdog. */
#define CONFIGURE_COMMON(skel, NAME, o)                                             \
	do {                                                                       \
		(skel)->rodata->nr_cpus = libbpf_num_possible_cpus();              \
		if ((skel)->rodata->nr_cpus > SL_MAX_CPUS)                         \
			(skel)->rodata->nr_cpus = SL_MAX_CPUS;                     \
		(skel)->rodata->debug = (o)->debug;                                \
		if (!(o)->all)                                                     \
			(skel)->struct_ops.NAME##_ops->flags |= SCX_OPS_SWITCH_PARTIAL; \
		if ((o)->timeout_ms)                                               \
			(skel)->struct_ops.NAME##_ops->timeout_ms = (o)->timeout_ms; \
	} while (0)

/* illf, llf, edf: the LLF family's switches. */
#define CONFIGURE_RT(skel, o)                                                       \
	do {                                                                       \
		int __i;                                                           \
		(skel)->rodata->slice_ns = (o)->slice_ns;                          \
		for (__i = 0; __i < 4; __i++)                                      \
			(skel)->rodata->rule[__i] = (o)->rule[__i];                \
		(skel)->rodata->swap_at_activation_only = (o)->swap_at_activation_only; \
		(skel)->rodata->strict_swap = (o)->strict;                         \
		(skel)->rodata->lrs_tie = !(o)->fifo_tie;                          \
	} while (0)

/* cfsw: the CFS tunables; both fair schedulers: the workload's CPU count. */
#define CONFIGURE_CFSW(skel, o)                                                     \
	do {                                                                       \
		(skel)->rodata->fair_cpus = (o)->fair_cpus ? (o)->fair_cpus : 1;   \
		(skel)->rodata->latency_ns = (o)->latency_ns;                      \
		(skel)->rodata->min_gran_ns = (o)->min_gran_ns;                    \
		(skel)->rodata->wakeup_gran_ns = (o)->wakeup_gran_ns;              \
	} while (0)

/* bfs: rr_interval (BFS ms of 2^20 ns) and the locality bias. */
#define CONFIGURE_BFS(skel, o)                                                      \
	do {                                                                       \
		(skel)->rodata->fair_cpus = (o)->fair_cpus ? (o)->fair_cpus : 1;   \
		(skel)->rodata->timeslice_ns = (unsigned long long)(o)->rr_interval_ms << 20; \
		(skel)->rodata->locality = (o)->locality;                          \
	} while (0)

/* load_NAME(): open, configure (CONFIGURE_KIND), load and attach scx_NAME. Every
 * scheduler names its per-thread maps `params` and `task_stats`; FAIR says which
 * layout they have (struct sl_params / sl_fair_params). */
#define DEFINE_LOAD(NAME, CONFIGURE_KIND, FAIR)                                    \
	static void load_##NAME(struct sched *s, const struct opts *o)             \
	{                                                                          \
		struct scx_##NAME *skel = SCX_OPS_OPEN(NAME##_ops, scx_##NAME);    \
		CONFIGURE_COMMON(skel, NAME, o);                                   \
		CONFIGURE_KIND(skel, o);                                           \
		SCX_OPS_LOAD(skel, NAME##_ops, scx_##NAME, uei);                   \
		s->link = SCX_OPS_ATTACH(skel, NAME##_ops, scx_##NAME);            \
		s->skel = skel;                                                    \
		s->fair = FAIR;                                                    \
		s->params = skel->maps.params;                                     \
		s->task_stats = skel->maps.task_stats;                             \
		s->stats = skel->maps.stats;                                       \
		s->uei = &skel->data->uei;                                         \
		s->dump = skel->data_uei_dump->uei_dump;                           \
		s->destroy = (void (*)(void *))scx_##NAME##__destroy;              \
	}

DEFINE_LOAD(illf, CONFIGURE_RT, false)
DEFINE_LOAD(llf, CONFIGURE_RT, false)
DEFINE_LOAD(edf, CONFIGURE_RT, false)
DEFINE_LOAD(cfsw, CONFIGURE_CFSW, true)
DEFINE_LOAD(bfs, CONFIGURE_BFS, true)

/* sched_prio_to_weight[40] (kernel/sched/core.c), index 0 = nice -20. */
static const unsigned long long prio_to_weight[40] = {
	88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916,
	9548,  7620,  6100,  4904,  3906,  3121,  2501,  1991,  1586,  1277,
	1024,  820,   655,   526,   423,   335,   272,   215,   172,   137,
	110,   87,    70,    56,    45,    36,    29,    23,    18,    15,
};

/*
 * Weight of nice `level` in table `name` (seed 004's tables, as schedlab's simulator
 * builds them: grouped = the group's mean rounded half up; extended-60 = the kernel's
 * 40 weights and round(1024 / 1.25^nice), at least 2, beyond). 0: out of range.
 */
static unsigned long long table_weight(const char *name, int level)
{
	int n = 0, start, i;
	unsigned long long sum = 0;

	if (!strcmp(name, "extended-60")) {
		double x = 1024.0;

		if (level < -30 || level > 29)
			return 0;
		if (level >= -20 && level <= 19)
			return prio_to_weight[level + 20];
		for (i = 0; i < (level < 0 ? -level : level); i++)
			x = level < 0 ? x * 1.25 : x / 1.25;
		x = (double)(long long)(x + 0.5);
		return x < 2 ? 2 : (unsigned long long)x;
	}
	if (level < -20 || level > 19)
		return 0;
	if (!strcmp(name, "linux"))
		return prio_to_weight[level + 20];
	if (!strcmp(name, "grouped-2"))
		n = 2;
	else if (!strcmp(name, "grouped-5"))
		n = 5;
	else
		return 0;
	start = (level + 20) / n * n;
	for (i = start; i < start + n; i++)
		sum += prio_to_weight[i];
	return (2 * sum + n) / (2 * (unsigned long long)n);
}

/* BFS's prio_deadline_diff(nice) in ns: prio_ratios[nice + 20] × rr_interval × 2^20 / 128. */
static unsigned long long bfs_deadline_diff(int level, unsigned int rr_ms)
{
	unsigned long long r = 128;
	int i;

	if (level < -20)
		level = -20;
	if (level > 19)
		level = 19;
	for (i = 0; i < level + 20; i++)
		r = r * 11 / 10;
	return r * rr_ms * ((1ULL << 20) / 128);
}

static bool exited(struct sched *s)
{
	return __sync_val_compare_and_swap(&s->uei->kind, -1, -1) != 0;
}

static void print_stats(struct sched *s, const char *prefix)
{
	static const char *rt_names[SL_NR] = { SL_STAT_NAMES };
	static const char *fair_names[SLF_NR] = { SLF_STAT_NAMES };
	const char **names = s->fair ? fair_names : rt_names;
	__u32 count = s->fair ? SLF_NR : SL_NR;
	int nr = libbpf_num_possible_cpus();
	unsigned long long vals[SL_MAX_CPUS * 2];
	__u32 i;
	int c;

	if (nr > (int)(sizeof(vals) / sizeof(vals[0])))
		nr = sizeof(vals) / sizeof(vals[0]);
	printf("%s", prefix);
	for (i = 0; i < count; i++) {
		unsigned long long sum = 0;

		memset(vals, 0, sizeof(vals));
		if (bpf_map_lookup_elem(bpf_map__fd(s->stats), &i, vals) == 0)
			for (c = 0; c < nr; c++)
				sum += vals[c];
		printf(" %s=%llu", names[i], sum);
	}
	printf("\n");
}

static void print_fair_tasks(struct sched *s)
{
	__u32 key, next, *prev = NULL;
	int fd = bpf_map__fd(s->task_stats);
	int pfd = bpf_map__fd(s->params);

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		struct sl_fair_stats st;
		struct sl_fair_params fp;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &st))
			continue;
		if (bpf_map_lookup_elem(pfd, &key, &fp))
			memset(&fp, 0, sizeof(fp));
		printf("fair tid=%u index=%u level=%d weight=%llu diff=%llu cpu_ns=%llu runs=%llu "
		       "preempted=%llu wakeups=%llu migrations=%llu refills=%llu key=%llu\n",
		       key, fp.index, fp.level, (unsigned long long)fp.weight,
		       (unsigned long long)fp.diff, (unsigned long long)st.cpu_ns,
		       (unsigned long long)st.runs, (unsigned long long)st.preempted,
		       (unsigned long long)st.wakeups, (unsigned long long)st.migrations,
		       (unsigned long long)st.refills, (unsigned long long)st.vruntime);
	}
}

static void print_tasks(struct sched *s)
{
	__u32 key, next, *prev = NULL;
	int fd = bpf_map__fd(s->task_stats);
	int pfd = bpf_map__fd(s->params);

	if (s->fair) {
		print_fair_tasks(s);
		return;
	}

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		struct sl_task_stats st;
		struct sl_params pp;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &st))
			continue;
		if (bpf_map_lookup_elem(pfd, &key, &pp))
			memset(&pp, 0, sizeof(pp));
		printf("task tid=%u index=%u releases=%llu completions=%llu misses=%llu "
		       "runs=%llu preempted=%llu migrations=%llu cpu_ns=%llu swaps=%llu "
		       "zero_lax=%llu\n",
		       key, pp.index, (unsigned long long)st.releases,
		       (unsigned long long)st.completions, (unsigned long long)st.misses,
		       (unsigned long long)st.runs, (unsigned long long)st.preempted,
		       (unsigned long long)st.migrations, (unsigned long long)st.cpu_ns,
		       (unsigned long long)st.swaps, (unsigned long long)st.zero_lax);
	}
}

static int add_task(struct sched *s, unsigned int tid, unsigned long long runtime,
		    unsigned long long deadline, unsigned long long period, unsigned int index)
{
	struct sl_params pp = {
		.runtime = runtime, .deadline = deadline, .period = period, .index = index,
	};

	if (!runtime || !deadline || runtime > deadline) {
		errno = EINVAL;
		return -1;
	}
	return bpf_map_update_elem(bpf_map__fd(s->params), &tid, &pp, BPF_ANY);
}

/* `fair TID LEVEL CLASS [INDEX]` for bfs/cfsw; prints the answer. */
static void add_fair(struct sched *s, const char *line, unsigned int *next_index)
{
	struct sl_fair_params fp = {};
	char class[16];
	unsigned int tid, index;
	int level, n;

	n = sscanf(line, "fair %u %d %15s %u", &tid, &level, class, &index);
	if (n < 3) {
		printf("err fair: expected `fair TID LEVEL normal|batch|idle [INDEX]`\n");
		return;
	}
	if (n < 4)
		index = *next_index;
	*next_index = index + 1;
	if (!strcmp(class, "normal"))
		fp.class = SL_FAIR_NORMAL;
	else if (!strcmp(class, "batch"))
		fp.class = SL_FAIR_BATCH;
	else if (!strcmp(class, "idle"))
		fp.class = SL_FAIR_IDLE;
	else {
		printf("err fair %u: class `%s` (expected normal, batch or idle)\n", tid, class);
		return;
	}
	fp.level = level;
	fp.index = index;
	if (!strcmp(s->o->policy, "cfsw")) {
		fp.weight = table_weight(s->o->weights, level);
		/* CFS: SCHED_IDLE tasks weigh WEIGHT_IDLEPRIO = 3 whatever their nice. */
		if (fp.weight && fp.class == SL_FAIR_IDLE)
			fp.weight = 3;
		if (!fp.weight) {
			printf("err fair %u: nice level %d is outside the %s table\n", tid, level,
			       s->o->weights);
			return;
		}
	} else {
		fp.diff = bfs_deadline_diff(level, s->o->rr_interval_ms);
	}
	if (bpf_map_update_elem(bpf_map__fd(s->params), &tid, &fp, BPF_ANY)) {
		printf("err fair %u: %s\n", tid, strerror(errno));
		return;
	}
	printf("ok fair %u weight=%llu diff=%llu\n", tid, (unsigned long long)fp.weight,
	       (unsigned long long)fp.diff);
}

/* One command line from stdin; returns false on `quit`. */
static bool command(struct sched *s, char *line, unsigned int *next_index)
{
	unsigned long long r, d, p;
	unsigned int tid, index;
	int n;

	line[strcspn(line, "\r\n")] = 0;
	if (!line[0])
		return true;
	if (!strcmp(line, "quit"))
		return false;
	if (!strcmp(line, "stats")) {
		print_stats(s, "stats");
	} else if (!strcmp(line, "state")) {
		printf("state %s\n", scx_state());
	} else if (!strncmp(line, "fair ", 5) && s->fair) {
		add_fair(s, line, next_index);
	} else if (!s->fair &&
		   (n = sscanf(line, "task %u %llu %llu %llu %u", &tid, &r, &d, &p, &index)) >= 4) {
		if (n < 5)
			index = *next_index;
		*next_index = index + 1;
		if (add_task(s, tid, r, d, p, index))
			printf("err task %u: %s\n", tid, strerror(errno));
		else
			printf("ok task %u\n", tid);
	} else if (sscanf(line, "untask %u", &tid) == 1) {
		bpf_map_delete_elem(bpf_map__fd(s->params), &tid);
		printf("ok untask %u\n", tid);
	} else {
		printf("err unknown command: %s\n", line);
	}
	fflush(stdout);
	return true;
}

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s --policy illf|llf|edf [--rules 1,2,3,4] [--swap-at-activation-only]\n"
		"          [--strict] [--fifo-tie] [--all] [--slice-us N] [--timeout-ms N]\n"
		"          [--task TID:RUNTIME_NS:DEADLINE_NS:PERIOD_NS]... [-v]\n"
		"       %s --policy cfsw [--weights linux|grouped-2|grouped-5|extended-60]\n"
		"          [--latency-us N] [--min-gran-us N] [--wakeup-gran-us N] [--fair-cpus N]\n"
		"       %s --policy bfs [--rr-interval-ms N] [--locality] [--fair-cpus N]\n",
		prog, prog, prog);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "policy", required_argument, NULL, 'p' },
		{ "rules", required_argument, NULL, 'r' },
		{ "swap-at-activation-only", no_argument, NULL, 'a' },
		{ "strict", no_argument, NULL, 's' },
		{ "fifo-tie", no_argument, NULL, 'f' },
		{ "all", no_argument, NULL, 'A' },
		{ "slice-us", required_argument, NULL, 'S' },
		{ "timeout-ms", required_argument, NULL, 'T' },
		{ "task", required_argument, NULL, 't' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "debug", no_argument, NULL, 'd' },
		{ "weights", required_argument, NULL, 'W' },
		{ "latency-us", required_argument, NULL, 'L' },
		{ "min-gran-us", required_argument, NULL, 'M' },
		{ "wakeup-gran-us", required_argument, NULL, 'G' },
		{ "rr-interval-ms", required_argument, NULL, 'R' },
		{ "locality", no_argument, NULL, 'l' },
		{ "fair-cpus", required_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct opts o = { .rule = { true, true, true, true }, .slice_ns = 50000000ULL,
			  .weights = "linux", .latency_ns = 6000000ULL, .min_gran_ns = 750000ULL,
			  .wakeup_gran_ns = 1000000ULL, .rr_interval_ms = 6, .fair_cpus = 1 };
	struct sched s = {};
	char *tasks[SL_MAX_TASKS];
	unsigned int ntasks = 0, next_index = 0, i;
	char line[512];
	bool ejected = false, eof = false;
	int opt, rc = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((opt = getopt_long(argc, argv, "p:r:t:vh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			o.policy = optarg;
			break;
		case 'r': {
			const char *c;

			memset(o.rule, 0, sizeof(o.rule));
			for (c = optarg; *c; c++) {
				if (*c >= '1' && *c <= '4')
					o.rule[*c - '1'] = true;
				else if (*c != ',' && *c != ' ' && strcmp(optarg, "none")) {
					fprintf(stderr, "--rules: expected digits 1-4, e.g. 1,2,3\n");
					return 1;
				}
			}
			break;
		}
		case 'a':
			o.swap_at_activation_only = true;
			break;
		case 's':
			o.strict = true;
			break;
		case 'f':
			o.fifo_tie = true;
			break;
		case 'A':
			o.all = true;
			break;
		case 'S':
			o.slice_ns = strtoull(optarg, NULL, 10) * 1000ULL;
			break;
		case 'T':
			o.timeout_ms = strtoul(optarg, NULL, 10);
			break;
		case 't':
			if (ntasks < SL_MAX_TASKS)
				tasks[ntasks++] = optarg;
			break;
		case 'v':
			verbose = true;
			break;
		case 'd':
			o.debug = true;
			break;
		case 'W':
			o.weights = optarg;
			break;
		case 'L':
			o.latency_ns = strtoull(optarg, NULL, 10) * 1000ULL;
			break;
		case 'M':
			o.min_gran_ns = strtoull(optarg, NULL, 10) * 1000ULL;
			break;
		case 'G':
			o.wakeup_gran_ns = strtoull(optarg, NULL, 10) * 1000ULL;
			break;
		case 'R':
			o.rr_interval_ms = strtoul(optarg, NULL, 10);
			break;
		case 'l':
			o.locality = true;
			break;
		case 'C':
			o.fair_cpus = strtoul(optarg, NULL, 10);
			break;
		default:
			usage(argv[0]);
			return opt != 'h';
		}
	}
	if (!o.policy) {
		usage(argv[0]);
		return 1;
	}

	if (!table_weight(o.weights, 0)) {
		fprintf(stderr, "--weights: unknown table %s (linux, grouped-2, grouped-5, extended-60)\n",
			o.weights);
		return 1;
	}
	if (o.rr_interval_ms < 1 || o.rr_interval_ms > 1000 || !o.latency_ns || !o.min_gran_ns) {
		fprintf(stderr, "--rr-interval-ms must be 1..1000; --latency-us and --min-gran-us above 0\n");
		return 1;
	}
	s.o = &o;
	libbpf_set_print(print_fn);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	signal(SIGPIPE, SIG_IGN);

	if (!strcmp(o.policy, "illf"))
		load_illf(&s, &o);
	else if (!strcmp(o.policy, "llf"))
		load_llf(&s, &o);
	else if (!strcmp(o.policy, "edf"))
		load_edf(&s, &o);
	else if (!strcmp(o.policy, "bfs"))
		load_bfs(&s, &o);
	else if (!strcmp(o.policy, "cfsw"))
		load_cfsw(&s, &o);
	else {
		fprintf(stderr, "unknown policy %s (illf, llf, edf, bfs, cfsw)\n", o.policy);
		return 1;
	}

	if (s.fair && ntasks) {
		fprintf(stderr, "--task is for illf, llf and edf; %s takes `fair` commands on stdin\n",
			o.policy);
		rc = 1;
		goto out;
	}
	for (i = 0; i < ntasks; i++) {
		unsigned long long r, d, p;
		unsigned int tid;

		if (sscanf(tasks[i], "%u:%llu:%llu:%llu", &tid, &r, &d, &p) != 4 ||
		    add_task(&s, tid, r, d, p, next_index++)) {
			fprintf(stderr, "bad --task %s\n", tasks[i]);
			rc = 1;
			goto out;
		}
	}

	if (s.fair)
		printf("ready policy=%s state=%s weights=%s latency_ns=%llu min_gran_ns=%llu "
		       "wakeup_gran_ns=%llu rr_interval_ms=%u locality=%d fair_cpus=%u partial=%d\n",
		       o.policy, scx_state(), o.weights, o.latency_ns, o.min_gran_ns,
		       o.wakeup_gran_ns, o.rr_interval_ms, o.locality, o.fair_cpus, !o.all);
	else
		printf("ready policy=%s state=%s rules=%d%d%d%d swap_at_activation_only=%d strict=%d "
		       "partial=%d slice_ns=%llu\n",
		       o.policy, scx_state(), o.rule[0], o.rule[1], o.rule[2], o.rule[3],
		       o.swap_at_activation_only, o.strict, !o.all, o.slice_ns);

	while (!exit_req && !eof) {
		struct pollfd pfd = { .fd = 0, .events = POLLIN };
		int n;

		if (exited(&s)) {
			ejected = true;
			break;
		}
		/* Wake up rarely: every wake-up of this (fair-class) process preempts the
		 * workload's SCHED_EXT threads. 500 ms bounds the delay in noticing that
		 * the kernel ejected the scheduler. */
		n = poll(&pfd, 1, 500);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			perror("poll");
			break;
		}
		if (n == 0)
			continue;
		if (!fgets(line, sizeof(line), stdin)) {
			eof = true;
			break;
		}
		if (!command(&s, line, &next_index))
			break;
	}

out:
	print_tasks(&s);
	print_stats(&s, "stats");
	bpf_link__destroy(s.link);
	printf("exit kind=%d code=%lld reason=\"%s\" msg=\"%s\"\n", s.uei->kind,
	       (long long)s.uei->exit_code, s.uei->reason, s.uei->msg);
	if (ejected) {
		fprintf(stderr, "scx_schedlab: the kernel ejected the scheduler: %s (%s)\n",
			s.uei->reason, s.uei->msg);
		if (s.dump && s.dump[0])
			fprintf(stderr, "%s\n", s.dump);
		rc = 2;
	}
	s.destroy(s.skel);
	for (i = 0; i < 50 && strcmp(scx_state(), "disabled"); i++)
		usleep(100000);
	printf("unloaded state=%s\n", scx_state());
	return rc;
}
