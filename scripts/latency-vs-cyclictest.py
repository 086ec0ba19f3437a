#!/usr/bin/env python3
"""schedlab latency against cyclictest (Debian's rt-tests) on this machine, alternately.

Both tools measure the same thing: one SCHED_FIFO 99 thread pinned to one CPU, sleeping to
absolute 1 ms instants (clock_nanosleep TIMER_ABSTIME, mlockall), and by default both
hold a PM QoS CPU latency request of 0 (/dev/cpu_dma_latency) that keeps the CPUs out of
idle states; `--laptop` (both tools' name) turns the request off. Each round runs
schedlab then cyclictest, with the request and then without, so that drift of the host
hits every cell alike. Averages and percentiles are computed the same way for both, from
the per-microsecond histograms; the run-to-run spread (lowest to highest per-run figure)
is printed beside them.

Why an earlier version saw ratios near 1 between "idle" and loaded rows and no trace of
idle states: with a CPU hog beside the probe (or other people's builds on a shared
machine) the probe's CPU never idles, so it never enters an idle state and the request
changes nothing. Each run therefore records how idle the probe's CPU was (/proc/stat,
outside the probe's own few percent); below 80 % idle the row is flagged.

On a shared machine whose CPUs others keep busy, `--shield` moves every other thread
that may move off the probe's CPU for the whole comparison (both tools alike) and puts
each back afterwards, so that the CPU idles between wake-ups as on an idle machine.

usage: sudo scripts/latency-vs-cyclictest.py [--duration 8] [--rounds 3] [--cpu N]
           [--shield] [--load] [--schedlab PATH] [--json]
needs: root, cyclictest (apt install rt-tests); stress-ng for --load.
"""

import argparse
import contextlib
import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import time

# schedlab's system-wide lock of real runs (crates/linux/src/machine_lock.rs). schedlab
# takes it itself; cyclictest does not, so this script takes it around each cyclictest
# run (and releases it before the next schedlab run, which would otherwise wait for it).
LOCK_PATH = "/run/schedlab/machine.lock"

SETTINGS = [("request 0", []), ("--laptop", ["--laptop"])]


def pct(hist, q):
    """q-quantile of {us: count} (bucket floor, as cyclictest's bins)."""
    total = sum(hist.values())
    if total == 0:
        return float("nan")
    need, acc = q * total, 0
    for us in sorted(hist):
        acc += hist[us]
        if acc >= need:
            return us
    return max(hist)


def avg(hist):
    """Mean of {us: count}, each bucket at its midpoint."""
    total = sum(hist.values())
    return (
        sum((us + 0.5) * c for us, c in hist.items()) / total if total else float("nan")
    )


def cpu_idle_ticks(cpu):
    """(idle + iowait, total) jiffies of one CPU from /proc/stat."""
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith(f"cpu{cpu} "):
                v = [int(x) for x in line.split()[1:]]
                return v[3] + v[4], sum(v[:8])
    return 0, 0


def task_start(pid, tid):
    """Start time of a thread (field 22 of its stat), None when it is gone."""
    try:
        with open(f"/proc/{pid}/task/{tid}/stat") as f:
            st = f.read()
        return st[st.rfind(")") + 2 :].split()[19]
    except (OSError, IndexError):
        return None


def all_tasks():
    """Every (pid, tid) on the machine."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            yield int(pid), int(tid)


@contextlib.contextmanager
def shield(cpu):
    """Move every other thread that may move off `cpu` for the comparison, and put each
    back afterwards (only if it is still the same thread: same start time). Threads born
    meanwhile with the shielded mask (children of moved processes) get every CPU back."""
    me = os.getpid()
    online = set(os.sched_getaffinity(me))
    moved, t0 = [], int(start_time())
    for pid, tid in all_tasks():
        if pid == me:
            continue
        try:
            aff = os.sched_getaffinity(tid)
            if cpu in aff and len(aff) > 1:
                os.sched_setaffinity(tid, aff - {cpu})
                moved.append((pid, tid, task_start(pid, tid), aff))
        except OSError:
            pass  # gone, or a per-CPU kernel thread that refuses
    try:
        yield len(moved)
    finally:
        for pid, tid, start, aff in moved:
            if task_start(pid, tid) == start:
                with contextlib.suppress(OSError):
                    os.sched_setaffinity(tid, aff)
        done = {(pid, tid) for pid, tid, _, _ in moved}
        for pid, tid in all_tasks():
            st = task_start(pid, tid)
            if (pid, tid) in done or pid == me or st is None or int(st) < t0:
                continue
            with contextlib.suppress(OSError):
                if os.sched_getaffinity(tid) == online - {cpu}:
                    os.sched_setaffinity(tid, online)


def run_schedlab(binary, seconds, cpu, extra):
    out = subprocess.run(
        [
            binary,
            "latency",
            "--duration",
            f"{seconds}s",
            "--interval",
            "1ms",
            "--cpus",
            str(cpu),
            "--json",
            *extra,
        ],
        check=False,
        capture_output=True,
        text=True,
    )
    if out.returncode != 0:
        sys.exit(f"schedlab latency failed: {out.stderr.strip()}")
    r = json.loads(out.stdout)
    t = r["threads"][0]
    return (
        {us: c for us, c in t["histogram_us"]},
        t["max_ns"] / 1000,
        r["pm_qos"]["dma_latency_us"],
    )


def start_time():
    """This process's start time (field 22 of /proc/self/stat), as schedlab records it."""
    with open("/proc/self/stat") as f:
        s = f.read()
    return s[s.rfind(")") + 2 :].split()[19]


@contextlib.contextmanager
def machine_lock(what):
    """Hold schedlab's machine lock (waiting for another real run to finish)."""
    os.makedirs(os.path.dirname(LOCK_PATH), exist_ok=True)
    fd = os.open(
        LOCK_PATH, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644
    )
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.ftruncate(fd, 0)
        os.pwrite(
            fd,
            f"scripts/latency-vs-cyclictest.py pid {os.getpid()} (start time {start_time()}) running {what}".encode(),
            0,
        )
        yield
    finally:
        os.close(fd)


def run_cyclictest(seconds, cpu, extra, bins=20000):
    out = subprocess.run(
        [
            "cyclictest",
            "-m",
            "-p99",
            "-i1000",
            "-t1",
            f"-a{cpu}",
            f"-D{seconds}",
            f"-h{bins}",
            "-q",
            *extra,
        ],
        check=False,
        capture_output=True,
        text=True,
    )
    if out.returncode != 0:
        sys.exit(f"cyclictest failed: {out.stderr.strip()}")
    hist, mx = {}, float("nan")
    for line in out.stdout.splitlines():
        if line and line[0].isdigit():
            f = line.split()
            if int(f[1]):
                hist[int(f[0])] = int(f[1])
        elif line.startswith("# Max Latencies:"):
            mx = float(line.split(":")[1].split()[0])
    return hist, mx, None if extra else 0


def one(tool, binary, seconds, cpu, extra):
    """One run: figures and how idle the CPU was around the probe."""
    i0, t0 = cpu_idle_ticks(cpu)
    if tool == "schedlab":
        hist, mx, held = run_schedlab(binary, seconds, cpu, extra)
    else:
        with machine_lock("cyclictest"):
            hist, mx, held = run_cyclictest(seconds, cpu, extra)
    i1, t1 = cpu_idle_ticks(cpu)
    idle = 100.0 * (i1 - i0) / max(1, t1 - t0)
    return {
        "min_us": min(hist, default=float("nan")),
        "avg_us": round(avg(hist), 2),
        "p99_us": pct(hist, 0.99),
        "max_us": mx,
        "samples": sum(hist.values()),
        "cpu_idle_pct": round(idle, 1),
        "dma_latency_us": held,
    }


def spread(runs, key):
    v = [r[key] for r in runs]
    return min(v), max(v)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--duration", type=int, default=8, help="seconds per run (default 8)"
    )
    ap.add_argument(
        "--rounds", type=int, default=3, help="runs per tool and setting (default 3)"
    )
    ap.add_argument(
        "--cpu", type=int, default=None, help="probe CPU (default: the last one)"
    )
    ap.add_argument(
        "--load",
        action="store_true",
        help="also run under stress-ng --cpu N (the CPUs never idle: no difference)",
    )
    ap.add_argument(
        "--shield",
        action="store_true",
        help="move every other thread off the probe CPU for the comparison (a busy shared "
        "machine: the probe CPU then idles between wake-ups as on an idle machine)",
    )
    ap.add_argument("--schedlab", default=None, help="path of the schedlab binary")
    ap.add_argument("--json", action="store_true", help="print every run as JSON")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("needs root (SCHED_FIFO 99, mlockall, /dev/cpu_dma_latency)")
    if not shutil.which("cyclictest"):
        sys.exit("cyclictest not found: apt install rt-tests")
    if a.duration < 1 or a.rounds < 1:
        sys.exit("--duration and --rounds must be at least 1")
    here = os.path.dirname(os.path.abspath(__file__))
    binary = a.schedlab or next(
        (
            p
            for p in (
                os.path.join(here, "..", "target", d, "schedlab")
                for d in ("release", "debug")
            )
            if os.path.exists(p)
        ),
        None,
    )
    if not binary:
        sys.exit("schedlab binary not found: cargo build --release, or pass --schedlab")
    cpus = sorted(os.sched_getaffinity(0))
    cpu = cpus[-1] if a.cpu is None else a.cpu
    if cpu not in cpus:
        sys.exit(f"--cpu {cpu}: not available (CPUs {cpus})")
    loads = [("idle", None)]
    if a.load:
        if not shutil.which("stress-ng"):
            sys.exit("--load needs stress-ng (apt install stress-ng)")
        loads.append(
            (
                f"stress-ng --cpu {len(cpus)}",
                ["stress-ng", "--cpu", str(len(cpus)), "--quiet"],
            )
        )
    results = []
    guard = shield(cpu) if a.shield else contextlib.nullcontext(0)
    with guard as moved:
        if a.shield:
            print(f"# shield: {moved} threads moved off CPU {cpu}", file=sys.stderr)
        for load_name, cmd in loads:
            measure(a, binary, cpu, load_name, cmd, results)
    report(a, cpu, results)


def measure(a, binary, cpu, load_name, cmd, results):
    """Every setting and tool, alternately, under one load."""
    load = (
        subprocess.Popen(
            cmd,
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        if cmd
        else None
    )
    try:
        time.sleep(0.5 if load else 0)
        runs = {(s, t): [] for s, _ in SETTINGS for t in ("schedlab", "cyclictest")}
        for _ in range(a.rounds):
            for s, extra in SETTINGS:
                for tool in ("schedlab", "cyclictest"):
                    runs[(s, tool)].append(one(tool, binary, a.duration, cpu, extra))
    finally:
        if load:
            os.killpg(load.pid, signal.SIGTERM)
            load.wait()
    for (s, tool), rs in runs.items():
        results.append({"load": load_name, "setting": s, "tool": tool, "runs": rs})


def report(a, cpu, results):
    """The table, or every run as JSON."""
    if a.json:
        json.dump(
            {
                "kernel": os.uname().release,
                "cpu": cpu,
                "duration_s": a.duration,
                "rounds": a.rounds,
                "shield": a.shield,
                "results": results,
            },
            sys.stdout,
            indent=1,
        )
        print()
        return
    print(
        f"# kernel {os.uname().release}, probe on CPU {cpu}, {a.rounds} x {a.duration} s per "
        f"tool and setting, alternating{', CPU shielded' if a.shield else ''}; "
        "figures per run, lowest-highest"
    )
    print(
        f"{'load':<18} {'setting':<10} {'tool':<10} {'avg us':>13} {'p99 us':>11} "
        f"{'max us':>13} {'CPU idle %':>11}"
    )
    for r in results:
        rs = r["runs"]
        lo, hi = spread(rs, "avg_us")
        plo, phi = spread(rs, "p99_us")
        mlo, mhi = spread(rs, "max_us")
        ilo, _ = spread(rs, "cpu_idle_pct")
        flag = "  (CPU busy: idle states not entered)" if ilo < 80 else ""
        print(
            f"{r['load']:<18} {r['setting']:<10} {r['tool']:<10} {lo:>6.1f}-{hi:<6.1f} "
            f"{plo:>5}-{phi:<5} {mlo:>6.0f}-{mhi:<6.0f} {ilo:>10.0f}{flag}"
        )


if __name__ == "__main__":
    main()
