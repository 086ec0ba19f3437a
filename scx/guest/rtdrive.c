/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rtdrive: a small periodic-task driver for the sched_ext guest lane (static, no
 * dependencies beyond libc). It runs one task set under one kernel policy and prints
 * a machine-readable report on stdout.
 *
 *   rtdrive --name NAME --mode scx|deadline|other [--loader PATH -- LOADER ARGS...]
 *           --task NAME:RUNTIME_MS:DEADLINE_MS:PERIOD_MS[:OFFSET_MS] ...
 *           [--duration-ms N] [--start-delay-ms N] [--trace] [--trace-lines N]
 *           [--raw-trace]
 *
 * Each task is a thread: job k is released at t0 + offset + k*period
 * (clock_nanosleep TIMER_ABSTIME on CLOCK_MONOTONIC) and is busy until the thread's
 * CPU time (CLOCK_THREAD_CPUTIME_ID) advanced by RUNTIME. Threads are created, named
 * (the task name), registered with the scx loader (`task TID R D P` on its stdin)
 * and switched to their policy before t0: SCHED_EXT (7) for --mode scx,
 * SCHED_DEADLINE (runtime = min(1.1 RUNTIME, DEADLINE), so the CBS does not throttle
 * a job for the driver's own overhead) for --mode deadline, SCHED_OTHER otherwise.
 *
 * With --trace, sched_switch is recorded through tracefs (trace_clock mono, so trace
 * times and release times share CLOCK_MONOTONIC) and summarised: context switches per
 * CPU (idle counts as a task, as nr_switches does), preemptions and migrations of the
 * workload threads, and the first --trace-lines switches that involve them. With
 * --raw-trace the run's sched_switch and sched_wakeup lines are also printed as they
 * are (ftrace text, prefix SL-RAW), for `schedlab trace import` on the host.
 *
 * Output lines (times in microseconds relative to t0):
 *   SL-BEGIN name=.. mode=.. policy=..
 *   SL-LOADER <a line of the loader's output>
 *   SL-STATE during=<state while running> after=<state after unload>
 *   SL-JOB task=.. k=.. release=.. start=.. finish=.. deadline=.. cpu=..
 *   SL-TASK name=.. tid=.. jobs=.. misses=.. mean_response=.. max_response=..
 *           first_start=.. first_finish=..
 *   SL-SW t=.. cpu=.. prev=.. state=.. next=..      (task names, idle, or other)
 *   SL-RAW <an ftrace line>                          (--raw-trace)
 *   SL-SUM key=value ...
 *   SL-JSON {...}   (the fields of `schedlab run --json`, measured)
 *   SL-END name=.. status=ok|error|timeout
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_TASKS 64
#define MAX_JOBS 4096
#define SCHED_EXT_POLICY 7
#define NSEC 1000000000LL
#define TRACEFS "/sys/kernel/tracing"

struct sched_attr {
	uint32_t size;
	uint32_t sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime;
	uint64_t sched_deadline;
	uint64_t sched_period;
};

struct job {
	int64_t release, start, finish;
	int cpu;
};

struct task {
	char name[16];
	int64_t runtime, deadline, period, offset;
	pid_t tid;
	struct job *jobs;
	int njobs;
	int setup_err;
	pthread_t th;
	/* trace summary */
	int last_cpu;   /* CPU of the current job so far (-1 at a job start) */
	long preemptions, migrations, switches_in;
};

enum mode { MODE_SCX, MODE_DEADLINE, MODE_OTHER };

static struct task tasks[MAX_TASKS];
static int ntasks;
static enum mode mode = MODE_OTHER;
static const char *name = "run";
static const char *policy_name = "other";
static int64_t t0, t_end;
static int64_t duration = 2 * NSEC, start_delay = 500 * 1000000LL;
static pthread_barrier_t barrier_ready, barrier_go;
static volatile int done_threads;
static bool trace, raw_trace;
static int trace_lines = 3000;

static int64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ts.tv_sec * NSEC + ts.tv_nsec;
}

static void out(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
}

static int write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_TRUNC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, val, strlen(val));
	close(fd);
	return n < 0 ? -1 : 0;
}

static void read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	snprintf(buf, len, "none");
	if (!f)
		return;
	if (fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = 0;
	fclose(f);
}

static int set_policy(struct task *t)
{
	struct sched_attr a = { .size = sizeof(a) };

	switch (mode) {
	case MODE_SCX:
		a.sched_policy = SCHED_EXT_POLICY;
		break;
	case MODE_DEADLINE: {
		int64_t r = t->runtime + t->runtime / 10;

		a.sched_policy = SCHED_DEADLINE;
		a.sched_runtime = r < t->deadline ? r : t->deadline;
		a.sched_deadline = t->deadline;
		a.sched_period = t->period;
		break;
	}
	default:
		a.sched_policy = SCHED_OTHER;
	}
	return syscall(SYS_sched_setattr, 0, &a, 0);
}

static void *task_main(void *arg)
{
	struct task *t = arg;
	struct sched_attr back = { .size = sizeof(back), .sched_policy = SCHED_OTHER };
	int k;

	prctl(PR_SET_NAME, t->name);
	t->tid = syscall(SYS_gettid);
	pthread_barrier_wait(&barrier_ready); /* main registers the tid */
	pthread_barrier_wait(&barrier_go);
	if (set_policy(t)) {
		t->setup_err = errno;
		__sync_fetch_and_add(&done_threads, 1);
		return NULL;
	}
	for (k = 0; k < MAX_JOBS; k++) {
		int64_t r = t0 + t->offset + k * t->period, c0;
		struct timespec ts = { r / NSEC, r % NSEC };
		struct job *j = &t->jobs[k];

		if (r >= t_end)
			break;
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		j->release = r;
		j->start = now_ns(CLOCK_MONOTONIC);
		c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
		while (now_ns(CLOCK_THREAD_CPUTIME_ID) - c0 < t->runtime)
			;
		j->finish = now_ns(CLOCK_MONOTONIC);
		j->cpu = sched_getcpu();
		t->njobs = k + 1;
	}
	syscall(SYS_sched_setattr, 0, &back, 0);
	__sync_fetch_and_add(&done_threads, 1);
	return NULL;
}

/* ----- the scx loader as a child process -------------------------------------------- */

static pid_t loader_pid = -1;
static FILE *loader_in, *loader_out;

static int start_loader(char **argv)
{
	int in[2], outp[2];

	if (pipe(in) || pipe(outp))
		return -1;
	loader_pid = fork();
	if (loader_pid < 0)
		return -1;
	if (loader_pid == 0) {
		dup2(in[0], 0);
		dup2(outp[1], 1);
		close(in[1]);
		close(outp[0]);
		execv(argv[0], argv);
		fprintf(stderr, "rtdrive: exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(in[0]);
	close(outp[1]);
	loader_in = fdopen(in[1], "w");
	loader_out = fdopen(outp[0], "r");
	setvbuf(loader_in, NULL, _IOLBF, 0);
	return 0;
}

/* Read loader lines (echoing them) until one starts with `want`; timeout in ms. */
static int loader_expect(const char *want, int timeout_ms, char *got, size_t len)
{
	int64_t deadline = now_ns(CLOCK_MONOTONIC) + (int64_t)timeout_ms * 1000000;
	char line[1024];

	for (;;) {
		struct pollfd pfd = { .fd = fileno(loader_out), .events = POLLIN };
		int64_t left = (deadline - now_ns(CLOCK_MONOTONIC)) / 1000000;
		int n;

		if (left <= 0)
			return -1;
		n = poll(&pfd, 1, (int)left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		if (!fgets(line, sizeof(line), loader_out))
			return -1;
		line[strcspn(line, "\n")] = 0;
		out("SL-LOADER %s\n", line);
		if (want && !strncmp(line, want, strlen(want))) {
			if (got)
				snprintf(got, len, "%s", line);
			return 0;
		}
		if (want && !strncmp(line, "err", 3))
			return -2;
	}
}

static void stop_loader(void)
{
	int status, i;

	if (loader_pid < 0)
		return;
	fprintf(loader_in, "stats\n");
	fclose(loader_in);
	loader_in = NULL;
	/* Echo everything up to EOF (the loader unloads, then exits). */
	loader_expect(NULL, 30000, NULL, 0);
	for (i = 0; i < 300; i++) {
		if (waitpid(loader_pid, &status, WNOHANG) == loader_pid) {
			out("SL-LOADER-EXIT code=%d\n",
			    WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
			loader_pid = -1;
			return;
		}
		usleep(100000);
	}
	kill(loader_pid, SIGKILL);
	waitpid(loader_pid, &status, 0);
	out("SL-LOADER-EXIT code=killed\n");
	loader_pid = -1;
}

static void on_alarm(int sig)
{
	(void)sig;
	/* The loader sees EOF when we exit and unloads; the watchdog is the last line. */
	dprintf(1, "SL-END name=%s status=timeout\n", name);
	_exit(3);
}

/* ----- tracing --------------------------------------------------------------------- */

/*
 * Enabling a tracepoint patches kernel text (static keys). Under qemu's multi-threaded
 * TCG a vCPU can still run the old code after the patch and trap on a stale int3
 * ("Oops: int3" in ttwu_do_wakeup was seen), so events already enabled (the guest's
 * init enables them once at boot) are left alone: only tracing_on and the buffer move.
 */
static void enable_event(const char *path)
{
	char v[16];

	read_line(path, v, sizeof(v));
	if (strcmp(v, "1"))
		write_file(path, "1");
}

static void trace_setup(void)
{
	char v[32];

	write_file(TRACEFS "/tracing_on", "0");
	read_line(TRACEFS "/trace_clock", v, sizeof(v));
	if (!strstr(v, "[mono]"))
		write_file(TRACEFS "/trace_clock", "mono");
	read_line(TRACEFS "/buffer_size_kb", v, sizeof(v));
	if (atoi(v) < 8192)
		write_file(TRACEFS "/buffer_size_kb", "8192");
	enable_event(TRACEFS "/events/sched/sched_switch/enable");
	if (raw_trace)
		enable_event(TRACEFS "/events/sched/sched_wakeup/enable");
	write_file(TRACEFS "/trace", "");
	if (write_file(TRACEFS "/tracing_on", "1"))
		out("SL-WARN tracing unavailable at %s\n", TRACEFS);
}

/* Timestamp (ns) of an ftrace text line: the number just before ": sched_...:". */
static int line_ts(const char *line, int64_t *t)
{
	const char *q = strstr(line, ": sched_"), *end;

	if (!q)
		return -1;
	end = q;
	while (q > line && (isdigit((unsigned char)q[-1]) || q[-1] == '.'))
		q--;
	if (q == end)
		return -1;
	*t = (int64_t)(strtod(q, NULL) * 1e9 + 0.5);
	return 0;
}

static struct task *task_of(pid_t pid)
{
	int i;

	for (i = 0; i < ntasks; i++)
		if (tasks[i].tid == pid)
			return &tasks[i];
	return NULL;
}

static const char *label(pid_t pid)
{
	struct task *t = task_of(pid);

	if (t)
		return t->name;
	return pid == 0 ? "idle" : "other";
}

/*
 * `switches`: every sched_switch in the run's window (idle counts as a task, as
 * nr_switches does). `sched_switches`: the same with the other tasks (the driver, the
 * loader, kworkers) taken out of each CPU's sequence, i.e. the switches between
 * workload threads and idle that the simulator's schedule has.
 */
static void trace_report(long *switches, long *sched_switches, long *wl_switches,
			 long *preempt, long *migr, long per_cpu[], int ncpu)
{
	FILE *f;
	char line[1024];
	int printed = 0, i;
	pid_t occupant[64];

	for (i = 0; i < 64; i++)
		occupant[i] = 0; /* idle before the window */

	write_file(TRACEFS "/tracing_on", "0");
	f = fopen(TRACEFS "/trace", "r");
	if (!f)
		return;
	for (i = 0; i < ntasks; i++)
		tasks[i].last_cpu = -1;
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "sched_switch:"), *q, *b;
		double ts;
		int cpu;
		pid_t prev, next;
		char pstate[8] = "";
		struct task *tp, *tn;
		int64_t t;

		if (line[0] != '#' && strstr(line, "bpf_trace_printk:")) {
			out("SL-DBG %s", line);
			continue;
		}
		if (line[0] == '#')
			continue;
		if (raw_trace && (p || strstr(line, " sched_wakeup:")) &&
		    !line_ts(line, &t) && t >= t0 && t < t_end)
			out("SL-RAW %s", line);
		if (!p)
			continue;
		b = strchr(line, '[');
		if (!b || sscanf(b, "[%d]", &cpu) != 1)
			continue;
		q = strchr(b, ']');
		if (!q)
			continue;
		/* the timestamp is the last number before ": sched_switch" */
		*p = 0;
		q = strrchr(line, ':');
		if (!q)
			continue;
		*q = 0;
		b = strrchr(line, ' ');
		if (!b || sscanf(b, "%lf", &ts) != 1)
			continue;
		*q = ':';
		p += strlen("sched_switch:") + 1;
		q = strstr(p + 1, "prev_pid=");
		if (!q || sscanf(q, "prev_pid=%d", &prev) != 1)
			continue;
		q = strstr(q, "prev_state=");
		if (!q || sscanf(q, "prev_state=%7s", pstate) != 1)
			continue;
		q = strstr(q, "next_pid=");
		if (!q || sscanf(q, "next_pid=%d", &next) != 1)
			continue;
		t = (int64_t)(ts * 1e9 + 0.5);
		if (t < t0 || t >= t_end)
			continue;
		if (prev == next)
			continue;
		(*switches)++;
		if (cpu >= 0 && cpu < ncpu)
			per_cpu[cpu]++;
		tp = task_of(prev);
		tn = task_of(next);
		if ((tn || next == 0) && cpu >= 0 && cpu < 64) {
			if (occupant[cpu] != next)
				(*sched_switches)++;
			occupant[cpu] = next;
		}
		if (!tp && !tn)
			continue;
		(*wl_switches)++;
		if (tp) {
			if (pstate[0] == 'R') {
				tp->preemptions++;
				(*preempt)++;
			} else {
				tp->last_cpu = -1; /* the job is over */
			}
		}
		if (tn) {
			tn->switches_in++;
			if (tn->last_cpu >= 0 && tn->last_cpu != cpu) {
				tn->migrations++;
				(*migr)++;
			}
			tn->last_cpu = cpu;
		}
		if (printed < trace_lines) {
			out("SL-SW t=%lld cpu=%d prev=%s state=%s next=%s\n",
			    (long long)((t - t0) / 1000), cpu, label(prev), pstate, label(next));
			printed++;
		}
	}
	fclose(f);
	if (printed >= trace_lines)
		out("SL-SW-TRUNCATED after=%d\n", trace_lines);
}

/* ----- main ------------------------------------------------------------------------ */

static int64_t parse_ms(const char *s)
{
	return (int64_t)(strtod(s, NULL) * 1e6 + 0.5);
}

static int parse_task(char *spec)
{
	struct task *t;
	char *f[6];
	int n = 0;

	if (ntasks >= MAX_TASKS)
		return -1;
	t = &tasks[ntasks];
	for (char *tok = strtok(spec, ":"); tok && n < 6; tok = strtok(NULL, ":"))
		f[n++] = tok;
	if (n < 4)
		return -1;
	snprintf(t->name, sizeof(t->name), "%s", f[0]);
	t->runtime = parse_ms(f[1]);
	t->deadline = parse_ms(f[2]);
	t->period = parse_ms(f[3]);
	t->offset = n > 4 ? parse_ms(f[4]) : 0;
	if (t->runtime <= 0 || t->deadline < t->runtime || t->period <= 0)
		return -1;
	ntasks++;
	return 0;
}

int main(int argc, char **argv)
{
	char **loader_argv = NULL, state_during[64] = "none", state_after[64] = "none";
	int64_t jobs = 0, completed = 0, misses = 0, i64;
	long switches = 0, sched_sw = 0, wl_switches = 0, preempt = 0, migr = 0;
	long per_cpu[64] = { 0 };
	int i, k, ncpu = sysconf(_SC_NPROCESSORS_ONLN), rc = 0;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--name") && i + 1 < argc)
			name = argv[++i];
		else if (!strcmp(a, "--mode") && i + 1 < argc) {
			const char *m = argv[++i];

			mode = !strcmp(m, "scx") ? MODE_SCX :
			       !strcmp(m, "deadline") ? MODE_DEADLINE : MODE_OTHER;
			if (mode != MODE_SCX)
				policy_name = mode == MODE_DEADLINE ? "deadline" : "other";
		} else if (!strcmp(a, "--task") && i + 1 < argc) {
			if (parse_task(argv[++i])) {
				fprintf(stderr, "rtdrive: bad --task %s\n", argv[i]);
				return 2;
			}
		} else if (!strcmp(a, "--duration-ms") && i + 1 < argc)
			duration = parse_ms(argv[++i]);
		else if (!strcmp(a, "--start-delay-ms") && i + 1 < argc)
			start_delay = parse_ms(argv[++i]);
		else if (!strcmp(a, "--trace"))
			trace = true;
		else if (!strcmp(a, "--raw-trace"))
			trace = raw_trace = true;
		else if (!strcmp(a, "--trace-lines") && i + 1 < argc)
			trace_lines = atoi(argv[++i]);
		else if (!strcmp(a, "--loader") && i + 1 < argc) {
			loader_argv = &argv[i + 1];
			/* everything after --loader PATH -- ... belongs to the loader */
			for (k = i + 2; k < argc; k++) {
				if (!strcmp(argv[k], "--")) {
					memmove(&argv[k], &argv[k + 1], (argc - k) * sizeof(char *));
					argc--;
					break;
				}
			}
			for (k = i + 1; k < argc; k++)
				if (!strcmp(argv[k], "--policy") && k + 1 < argc)
					policy_name = argv[k + 1];
			break;
		} else {
			fprintf(stderr, "rtdrive: unknown argument %s\n", a);
			return 2;
		}
	}
	if (!ntasks || (mode == MODE_SCX && !loader_argv)) {
		fprintf(stderr, "rtdrive: need --task ... and, for --mode scx, --loader PATH ...\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGALRM, on_alarm);
	signal(SIGPIPE, SIG_IGN);
	alarm((unsigned)((start_delay + duration) / NSEC) * 4 + 90);

	out("SL-BEGIN name=%s mode=%s policy=%s cpus=%d duration_ns=%lld\n", name,
	    mode == MODE_SCX ? "scx" : mode == MODE_DEADLINE ? "deadline" : "other",
	    policy_name, ncpu, (long long)duration);

	if (mode == MODE_SCX) {
		if (start_loader(loader_argv) || loader_expect("ready", 120000, NULL, 0)) {
			out("SL-ERROR the scx loader did not get ready\n");
			out("SL-END name=%s status=error\n", name);
			return 1;
		}
		read_line("/sys/kernel/sched_ext/state", state_during, sizeof(state_during));
	}

	pthread_barrier_init(&barrier_ready, NULL, ntasks + 1);
	pthread_barrier_init(&barrier_go, NULL, ntasks + 1);
	for (i = 0; i < ntasks; i++) {
		tasks[i].jobs = calloc(MAX_JOBS, sizeof(struct job));
		if (pthread_create(&tasks[i].th, NULL, task_main, &tasks[i])) {
			out("SL-ERROR pthread_create failed\n");
			return 1;
		}
	}
	pthread_barrier_wait(&barrier_ready);
	for (i = 0; i < ntasks && mode == MODE_SCX; i++) {
		struct task *t = &tasks[i];
		char want[64];

		fprintf(loader_in, "task %d %lld %lld %lld %d\n", t->tid, (long long)t->runtime,
			(long long)t->deadline, (long long)t->period, i);
		snprintf(want, sizeof(want), "ok task %d", t->tid);
		if (loader_expect(want, 30000, NULL, 0)) {
			out("SL-ERROR the loader did not register %s\n", t->name);
			rc = 1;
		}
	}
	if (trace)
		trace_setup();
	t0 = now_ns(CLOCK_MONOTONIC) + start_delay;
	t_end = t0 + duration;
	pthread_barrier_wait(&barrier_go);

	/* Sleep through the run without waking up (a wake-up of this fair-class thread
	 * preempts the workload), then wait for the threads (bounded: the alarm above is
	 * the hard limit). */
	{
		struct timespec ts = { t_end / NSEC, t_end % NSEC };

		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
	}
	while (done_threads < ntasks) {
		if (mode == MODE_SCX && loader_out) {
			struct pollfd pfd = { .fd = fileno(loader_out), .events = POLLIN };

			if (poll(&pfd, 1, 100) > 0) {
				char line[1024];

				if (fgets(line, sizeof(line), loader_out)) {
					line[strcspn(line, "\n")] = 0;
					out("SL-LOADER %s\n", line);
				} else {
					out("SL-ERROR the loader exited during the run\n");
					rc = 1;
					break;
				}
			}
			if (now_ns(CLOCK_MONOTONIC) > t0 && !strcmp(state_during, "none"))
				read_line("/sys/kernel/sched_ext/state", state_during,
					  sizeof(state_during));
		} else {
			usleep(100000);
		}
	}
	if (mode == MODE_SCX)
		read_line("/sys/kernel/sched_ext/state", state_during, sizeof(state_during));
	for (i = 0; i < ntasks; i++)
		pthread_join(tasks[i].th, NULL);
	if (trace)
		trace_report(&switches, &sched_sw, &wl_switches, &preempt, &migr, per_cpu,
			     ncpu < 64 ? ncpu : 64);
	if (mode == MODE_SCX) {
		stop_loader();
		read_line("/sys/kernel/sched_ext/state", state_after, sizeof(state_after));
		out("SL-STATE during=%s after=%s\n", state_during, state_after);
	}

	for (i = 0; i < ntasks; i++) {
		struct task *t = &tasks[i];
		int64_t sum = 0, max = 0, m = 0;

		if (t->setup_err) {
			out("SL-ERROR task %s: setting its policy failed: %s\n", t->name,
			    strerror(t->setup_err));
			rc = 1;
		}
		for (k = 0; k < t->njobs; k++) {
			struct job *j = &t->jobs[k];
			int64_t resp = j->finish - j->release;

			sum += resp;
			if (resp > max)
				max = resp;
			if (j->finish > j->release + t->deadline)
				m++;
			if (k < 40)
				out("SL-JOB task=%s k=%d release=%lld start=%lld finish=%lld deadline=%lld cpu=%d\n",
				    t->name, k, (long long)((j->release - t0) / 1000),
				    (long long)((j->start - t0) / 1000),
				    (long long)((j->finish - t0) / 1000),
				    (long long)((j->release + t->deadline - t0) / 1000), j->cpu);
		}
		jobs += t->njobs;
		completed += t->njobs;
		misses += m;
		out("SL-TASK name=%s tid=%d jobs=%d misses=%lld mean_response=%lld max_response=%lld "
		    "first_start=%lld first_finish=%lld preemptions=%ld migrations=%ld\n",
		    t->name, t->tid, t->njobs, (long long)m,
		    (long long)(t->njobs ? sum / t->njobs / 1000 : 0), (long long)(max / 1000),
		    (long long)(t->njobs ? (t->jobs[0].start - t0) / 1000 : -1),
		    (long long)(t->njobs ? (t->jobs[0].finish - t0) / 1000 : -1), t->preemptions,
		    t->migrations);
	}
	out("SL-SUM jobs=%lld misses=%lld switches=%ld sched_switches=%ld workload_switches=%ld "
	    "preemptions=%ld migrations=%ld switches_per_cpu_per_s=%.1f",
	    (long long)jobs, (long long)misses, switches, sched_sw, wl_switches, preempt, migr,
	    (double)switches / ncpu / ((double)duration / NSEC));
	for (i = 0; i < ncpu && i < 64; i++)
		out(" cpu%d=%ld", i, per_cpu[i]);
	out("\n");

	/* The measured result object (DESIGN.md, `schedlab run --json`). */
	out("SL-JSON {\"name\":\"%s\",\"policy\":\"%s\",\"backend\":\"%s\",\"placement\":\"linux\","
	    "\"cpus\":%d,\"duration_ns\":%lld,\"jobs_released\":%lld,\"jobs_completed\":%lld,"
	    "\"deadline_misses\":%lld,\"context_switches\":%ld,"
	    "\"context_switches_per_cpu_per_s\":%.3f,\"preemptions\":%ld,\"migrations\":%ld,"
	    "\"tasks\":[",
	    name, policy_name, mode == MODE_SCX ? "scx" : "kernel", ncpu, (long long)duration,
	    (long long)jobs, (long long)completed, (long long)misses, switches,
	    (double)switches / ncpu / ((double)duration / NSEC), preempt, migr);
	for (i = 0; i < ntasks; i++) {
		struct task *t = &tasks[i];
		int64_t sum = 0, max = 0, m = 0, cpu = 0;

		for (k = 0; k < t->njobs; k++) {
			int64_t resp = t->jobs[k].finish - t->jobs[k].release;

			sum += resp;
			max = resp > max ? resp : max;
			m += t->jobs[k].finish > t->jobs[k].release + t->deadline;
			cpu += t->runtime;
		}
		i64 = t->njobs ? sum / t->njobs : 0;
		out("%s{\"name\":\"%s\",\"jobs\":%d,\"misses\":%lld,\"cpu_time_ns\":%lld,"
		    "\"mean_response_ns\":%lld,\"max_response_ns\":%lld,\"preemptions\":%ld,"
		    "\"migrations\":%ld}",
		    i ? "," : "", t->name, t->njobs, (long long)m, (long long)cpu, (long long)i64,
		    (long long)max, t->preemptions, t->migrations);
	}
	out("]}\n");
	out("SL-END name=%s status=%s\n", name, rc ? "error" : "ok");
	return rc;
}
