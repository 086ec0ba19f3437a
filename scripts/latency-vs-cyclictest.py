#!/usr/bin/env python3
"""schedlab latency against cyclictest (Debian's rt-tests) on this machine, in one run.

Both tools measure the same thing: one SCHED_FIFO 99 thread per CPU sleeping to absolute
1 ms instants (clock_nanosleep TIMER_ABSTIME, mlockall). They run alternately (A B A B...)
so that drift of the host hits both, idle and under the same stress-ng load (started by
this script, not by the tools). Averages and p99s are computed the same way for both,
from the per-microsecond histograms (bucket midpoints), and printed with their ratios.

usage: sudo scripts/latency-vs-cyclictest.py [--duration 10] [--rounds 2] [--schedlab PATH]
needs: root, cyclictest (apt install rt-tests), stress-ng for the loaded rows.
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time


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
    total = sum(hist.values())
    return sum((us + 0.5) * c for us, c in hist.items()) / total if total else float("nan")


def merge(hs):
    out = {}
    for h in hs:
        for us, c in h.items():
            out[us] = out.get(us, 0) + c
    return out


def run_schedlab(binary, seconds, cpus):
    out = subprocess.run(
        [binary, "latency", "--duration", f"{seconds}s", "--interval", "1ms",
         "--cpus", ",".join(map(str, cpus)), "--json"],
        capture_output=True, text=True, check=True)
    r = json.loads(out.stdout)
    hist = merge({us: c for us, c in t["histogram_us"]} for t in r["threads"])
    return hist, {"max_us": max(t["max_ns"] for t in r["threads"]) / 1000,
                  "reported_avg_us": sum(t["mean_ns"] * t["samples"] for t in r["threads"])
                  / max(1, sum(t["samples"] for t in r["threads"])) / 1000}


def run_cyclictest(seconds, cpus, bins=20000):
    out = subprocess.run(
        ["cyclictest", "-m", "-p99", "-i1000", "-d0", f"-t{len(cpus)}",
         f"-a{','.join(map(str, cpus))}", f"-D{seconds}", f"-h{bins}", "-q"],
        capture_output=True, text=True, check=True)
    hist, maxes, avgs = {}, [], []
    for line in out.stdout.splitlines():
        if line and line[0].isdigit():
            f = line.split()
            us = int(f[0])
            c = sum(int(x) for x in f[1:1 + len(cpus)])
            if c:
                hist[us] = hist.get(us, 0) + c
        elif line.startswith("# Max Latencies:"):
            maxes = [int(x) for x in line.split(":")[1].split()]
        elif line.startswith("# Avg Latencies:"):
            avgs = [int(x) for x in line.split(":")[1].split()]
    return hist, {"max_us": max(maxes) if maxes else float("nan"),
                  "reported_avg_us": sum(avgs) / len(avgs) if avgs else float("nan")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=int, default=10, help="seconds per run")
    ap.add_argument("--rounds", type=int, default=2, help="alternations per mode")
    ap.add_argument("--schedlab", default=None, help="path of the schedlab binary")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("needs root (SCHED_FIFO 99, mlockall)")
    if not shutil.which("cyclictest"):
        sys.exit("cyclictest not found: apt install rt-tests")
    here = os.path.dirname(os.path.abspath(__file__))
    binary = a.schedlab or next(
        (p for p in (os.path.join(here, "..", "target", d, "schedlab") for d in ("release", "debug"))
         if os.path.exists(p)), None)
    if not binary:
        sys.exit("schedlab binary not found: cargo build --release, or pass --schedlab")
    cpus = sorted(os.sched_getaffinity(0))
    modes = [("idle", None)]
    if shutil.which("stress-ng"):
        modes.append((f"stress-ng --cpu {len(cpus)}", ["stress-ng", "--cpu", str(len(cpus)), "--quiet"]))
    print(f"# kernel {os.uname().release}, CPUs {cpus}, {a.rounds} x {a.duration} s per tool and mode")
    print(f"{'mode':<22} {'tool':<10} {'avg us':>8} {'p99 us':>8} {'p99.9 us':>9} {'max us':>9}")
    for name, cmd in modes:
        load = subprocess.Popen(cmd, start_new_session=True, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL) if cmd else None
        try:
            time.sleep(0.5 if load else 0)
            res = {"schedlab": [], "cyclictest": []}
            for _ in range(a.rounds):
                res["schedlab"].append(run_schedlab(binary, a.duration, cpus))
                res["cyclictest"].append(run_cyclictest(a.duration, cpus))
        finally:
            if load:
                os.killpg(load.pid, signal.SIGTERM)
                load.wait()
        figs = {}
        for tool, runs in res.items():
            h = merge(r[0] for r in runs)
            figs[tool] = (avg(h), pct(h, 0.99), pct(h, 0.999), max(r[1]["max_us"] for r in runs))
            print(f"{name:<22} {tool:<10} {figs[tool][0]:>8.1f} {figs[tool][1]:>8} {figs[tool][2]:>9} {figs[tool][3]:>9.0f}")
        s, c = figs["schedlab"], figs["cyclictest"]
        print(f"{name:<22} {'ratio':<10} {s[0] / c[0]:>8.2f} {s[1] / max(c[1], 1):>8.2f}"
              f" {s[2] / max(c[2], 1):>9.2f}   (schedlab / cyclictest)")


if __name__ == "__main__":
    main()
