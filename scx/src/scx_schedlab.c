/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scx_schedlab: load one of schedlab's sched_ext schedulers (illf, llf, edf), feed it
 * per-thread (runtime, deadline, period), report, and unload.
 *
 *   scx_schedlab --policy illf [--rules 1,2,3,4] [--swap-at-activation-only]
 *                [--strict] [--fifo-tie] [--all] [--slice-us N] [--timeout-ms N]
 *                [--task TID:RUNTIME_NS:DEADLINE_NS:PERIOD_NS]... [--debug] [-v]
 *
 * Once attached it prints `ready policy=NAME state=enabled` and reads commands on
 * stdin, one per line, answering each on stdout:
 *   task TID RUNTIME_NS DEADLINE_NS PERIOD_NS [INDEX]   register a thread   -> ok task TID
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
};

struct sched {
	void *skel;
	struct bpf_map *params, *task_stats, *stats;
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

#define CONFIGURE(skel, NAME, o)                                                    \
	do {                                                                       \
		int __i;                                                           \
		(skel)->rodata->nr_cpus = libbpf_num_possible_cpus();              \
		if ((skel)->rodata->nr_cpus > SL_MAX_CPUS)                         \
			(skel)->rodata->nr_cpus = SL_MAX_CPUS;                     \
		(skel)->rodata->slice_ns = (o)->slice_ns;                          \
		for (__i = 0; __i < 4; __i++)                                      \
			(skel)->rodata->rule[__i] = (o)->rule[__i];                \
		(skel)->rodata->swap_at_activation_only = (o)->swap_at_activation_only; \
		(skel)->rodata->strict_swap = (o)->strict;                         \
		(skel)->rodata->lrs_tie = !(o)->fifo_tie;                          \
		(skel)->rodata->debug = (o)->debug;                                \
		if (!(o)->all)                                                     \
			(skel)->struct_ops.NAME##_ops->flags |= SCX_OPS_SWITCH_PARTIAL; \
		if ((o)->timeout_ms)                                               \
			(skel)->struct_ops.NAME##_ops->timeout_ms = (o)->timeout_ms; \
	} while (0)

#define DEFINE_LOAD(NAME)                                                          \
	static void load_##NAME(struct sched *s, const struct opts *o)             \
	{                                                                          \
		struct scx_##NAME *skel = SCX_OPS_OPEN(NAME##_ops, scx_##NAME);    \
		CONFIGURE(skel, NAME, o);                                          \
		SCX_OPS_LOAD(skel, NAME##_ops, scx_##NAME, uei);                   \
		s->link = SCX_OPS_ATTACH(skel, NAME##_ops, scx_##NAME);            \
		s->skel = skel;                                                    \
		s->params = skel->maps.params;                                     \
		s->task_stats = skel->maps.task_stats;                             \
		s->stats = skel->maps.stats;                                       \
		s->uei = &skel->data->uei;                                         \
		s->dump = skel->data_uei_dump->uei_dump;                           \
		s->destroy = (void (*)(void *))scx_##NAME##__destroy;              \
	}

DEFINE_LOAD(illf)
DEFINE_LOAD(llf)
DEFINE_LOAD(edf)

static bool exited(struct sched *s)
{
	return __sync_val_compare_and_swap(&s->uei->kind, -1, -1) != 0;
}

static void print_stats(struct sched *s, const char *prefix)
{
	static const char *names[SL_NR] = { SL_STAT_NAMES };
	int nr = libbpf_num_possible_cpus();
	unsigned long long vals[SL_MAX_CPUS * 2];
	__u32 i;
	int c;

	if (nr > (int)(sizeof(vals) / sizeof(vals[0])))
		nr = sizeof(vals) / sizeof(vals[0]);
	printf("%s", prefix);
	for (i = 0; i < SL_NR; i++) {
		unsigned long long sum = 0;

		memset(vals, 0, sizeof(vals));
		if (bpf_map_lookup_elem(bpf_map__fd(s->stats), &i, vals) == 0)
			for (c = 0; c < nr; c++)
				sum += vals[c];
		printf(" %s=%llu", names[i], sum);
	}
	printf("\n");
}

static void print_tasks(struct sched *s)
{
	__u32 key, next, *prev = NULL;
	int fd = bpf_map__fd(s->task_stats);
	int pfd = bpf_map__fd(s->params);

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
	} else if ((n = sscanf(line, "task %u %llu %llu %llu %u", &tid, &r, &d, &p, &index)) >= 4) {
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
		"          [--task TID:RUNTIME_NS:DEADLINE_NS:PERIOD_NS]... [-v]\n",
		prog);
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
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct opts o = { .rule = { true, true, true, true }, .slice_ns = 50000000ULL };
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
		default:
			usage(argv[0]);
			return opt != 'h';
		}
	}
	if (!o.policy) {
		usage(argv[0]);
		return 1;
	}

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
	else {
		fprintf(stderr, "unknown policy %s (illf, llf, edf)\n", o.policy);
		return 1;
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
