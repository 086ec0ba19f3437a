#!/usr/bin/env python3
"""Time SimSo 0.8.5 on task sets exported by `schedlab bench --export`.

Driven by scripts/simso-compare.sh, which makes the virtualenv (simso==0.8.5,
simpy==2.3.1, numpy) this runs in. For every set and policy it builds SimSo's
configuration from the exported workload (same tasks, CPUs and duration; SimSo's
default 1e6 cycles per ms, i.e. nanoseconds), times `Model.run_model()` — SimSo's
simulate() — and counts released and aborted jobs. It then runs `schedlab simulate` on
the same file with `--on-miss abort` (SimSo aborts a job at its deadline) for the same
counts, prints both, and writes the timing file that `schedlab bench --simso` reads:

  {"simso": "0.8.5", "simpy": "2.3.1", "python": "3.11.7",
   "sets": {"simso-64x8": {"edf": {"wall_s": 61.2, "build_s": 0.01, "jobs": 13750,
                                   "deadline_misses": 0, "schedlab_jobs": 13750,
                                   "schedlab_deadline_misses": 0,
                                   "simso_s_per_sim_s": 6.12,
                                   "schedlab_s_per_sim_s": 0.004}, "llf": {...}}}}

(schedlab's fields are null for a policy it does not have yet.) For the optimal
schedulers beside EDF: --sets simso-64x8 --policies edf,pd2,llref,lre-tl,dp-wrap,u-edf,run,ekg

usage: simso_compare.py --sets-dir DIR --schedlab BIN --out FILE [--sets a,b] [--policies edf,llf]
"""
import argparse
import io
import json
import os
import platform
import re
import subprocess
import sys
import time
from contextlib import redirect_stdout

# SimSo's global schedulers by schedlab policy name (simso/schedulers/*.py): EDF and LLF,
# and the optimal and EDF-variant schedulers of issue 27 for their cost per simulated
# second (a policy schedlab does not have yet is timed in SimSo only).
SCHEDULERS = {
    name: "simso.schedulers." + cls
    for name, cls in {
        "edf": "EDF", "llf": "LLF", "edzl": "EDZL", "rm": "RM",
        "pd2": "PD2", "er-pd2": "ER_PD2", "epdf": "EPDF", "bf": "BF",
        "llref": "LLREF", "lre-tl": "LRE_TL", "dp-wrap": "DP_WRAP", "ekg": "EKG",
        "u-edf": "U_EDF", "run": "RUN",
        "edf-us": "EDF_US", "prid": "PriD", "edcl": "EDCL", "g-fl": "G_FL",
        "g-fl-zl": "G_FL_ZL", "mllf": "MLLF", "nvnlf": "NVNLF", "edhs": "EDHS",
    }.items()
}

UNIT_NS = {"ns": 1, "us": 1_000, "µs": 1_000, "ms": 1_000_000, "s": 1_000_000_000}


def ns(value):
    """A duration of the workload format ("12us", "10ms", "10s" or integer ns) in ns."""
    if isinstance(value, int):
        return value
    m = re.fullmatch(r"\s*([0-9_]+)\s*(ns|us|µs|ms|s)\s*", str(value))
    if not m:
        raise ValueError(f"unsupported duration {value!r} (the exporter writes whole units)")
    return int(m.group(1).replace("_", "")) * UNIT_NS[m.group(2)]


def load_set(path):
    with open(path) as f:
        w = json.load(f)
    tasks = []
    for t in w["tasks"]:
        if "period" not in t:
            raise ValueError(f"{path}: task {t.get('name')} is not periodic; SimSo sets only")
        period = ns(t["period"])
        tasks.append(
            {
                "name": t["name"],
                "runtime_ns": ns(t["runtime"]),
                "period_ns": period,
                "deadline_ns": ns(t.get("deadline", t["period"])),
            }
        )
    return {
        "name": w["name"],
        "cpus": w["platform"]["cpus"],
        "duration_ns": ns(w["duration"]),
        "tasks": tasks,
    }


def simso_run(ws, scheduler):
    """Build SimSo's model for the set and time run_model(); returns a result dict."""
    from simso.configuration import Configuration
    from simso.core import Model

    cfg = Configuration()
    per_ms = cfg.cycles_per_ms  # 1e6: one cycle per ns
    cfg.duration = ws["duration_ns"] * per_ms // 1_000_000
    cfg.etm = "wcet"
    for i, t in enumerate(ws["tasks"]):
        cfg.add_task(
            name=t["name"],
            identifier=i + 1,
            period=t["period_ns"] / 1e6,
            activation_date=0,
            wcet=t["runtime_ns"] / 1e6,
            deadline=t["deadline_ns"] / 1e6,
            abort_on_miss=True,
        )
    for c in range(ws["cpus"]):
        cfg.add_processor(name=f"CPU {c + 1}", identifier=c + 1)
    cfg.scheduler_info.clas = scheduler
    cfg.check_all()
    t0 = time.perf_counter()
    model = Model(cfg)
    build_s = time.perf_counter() - t0
    # simso.schedulers.EDF prints every decision; the print stays (SimSo as released) but
    # goes to an in-memory buffer, not the terminal.
    sink = io.StringIO()
    t0 = time.perf_counter()
    with redirect_stdout(sink):
        model.run_model()
    wall_s = time.perf_counter() - t0
    jobs = sum(len(task.jobs) for task in model.task_list)
    aborted = sum(1 for task in model.task_list for job in task.jobs if job.aborted)
    return {
        "wall_s": wall_s,
        "build_s": build_s,
        "jobs": jobs,
        "deadline_misses": aborted,
        "printed_lines": sink.getvalue().count("\n"),
    }


def schedlab_counts(binary, path, policy):
    """schedlab's counts and wall time on the set, or None when it has no such policy."""
    out = subprocess.run(
        [binary, "simulate", path, "--policy", policy, "--placement", "global",
         "--on-miss", "abort", "--json"],
        check=False, capture_output=True, text=True,
    )
    if out.returncode != 0:
        if "--policy" in out.stderr or "unknown" in out.stderr or "invalid value" in out.stderr:
            return None
        raise RuntimeError(f"schedlab simulate {path} --policy {policy}: {out.stderr.strip()}")
    r = json.loads(out.stdout)
    return {
        "jobs": r["jobs_released"],
        "deadline_misses": r["deadline_misses"],
        "jobs_aborted": r["jobs_aborted"],
        "wall_s": r["wall_s"],
    }


def versions():
    from importlib.metadata import version

    return {"simso": version("simso"), "simpy": version("simpy"),
            "python": platform.python_version()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets-dir", required=True, help="directory of `schedlab bench --export`")
    ap.add_argument("--schedlab", required=True, help="the schedlab binary")
    ap.add_argument("--out", required=True, help="timing file to write (JSON)")
    ap.add_argument("--sets", default="simso-64x8,simso-256x16")
    ap.add_argument("--policies", default="edf,llf")
    args = ap.parse_args()

    doc = versions()
    doc["sets"] = {}
    lines = []
    for name in [s for s in args.sets.split(",") if s]:
        path = os.path.join(args.sets_dir, name + ".json")
        ws = load_set(path)
        doc["sets"][name] = {}
        for policy in [p for p in args.policies.split(",") if p]:
            if policy not in SCHEDULERS:
                sys.exit(f"simso_compare.py: no SimSo scheduler for `{policy}` "
                         f"(known: {', '.join(SCHEDULERS)})")
            print(f"simso: {name} ({len(ws['tasks'])} tasks, {ws['cpus']} CPUs, "
                  f"{ws['duration_ns'] / 1e9:g} s) under {SCHEDULERS[policy]}...",
                  file=sys.stderr, flush=True)
            r = simso_run(ws, SCHEDULERS[policy])
            s = schedlab_counts(args.schedlab, path, policy) or {}
            r["schedlab_jobs"] = s.get("jobs")
            r["schedlab_deadline_misses"] = s.get("deadline_misses")
            r["schedlab_wall_s"] = s.get("wall_s")
            # Cost per simulated second, the figure comparable across set lengths.
            sim_s = ws["duration_ns"] / 1e9
            r["simso_s_per_sim_s"] = r["wall_s"] / sim_s
            r["schedlab_s_per_sim_s"] = None if not s else s["wall_s"] / sim_s
            doc["sets"][name][policy] = r
            print(f"simso: {name} {policy}: {r['wall_s']:.2f} s", file=sys.stderr, flush=True)
            lines.append((name, policy, r))
            # Write after every run: a long session interrupted keeps what it measured.
            with open(args.out + ".tmp", "w") as f:
                json.dump(doc, f, indent=2)
                f.write("\n")
            os.replace(args.out + ".tmp", args.out)

    print(f"SimSo {doc['simso']} (SimPy {doc['simpy']}, Python {doc['python']}) "
          "and schedlab on the same sets, jobs aborted at their deadline (on_miss: abort):")
    head = ("set", "policy", "simso s", "simso jobs", "simso misses",
            "schedlab jobs", "schedlab misses", "simso s/sim s", "schedlab s/sim s")

    def opt(v, fmt="{}"):
        return "-" if v is None else fmt.format(v)

    rows = [head] + [
        (n, p, f"{r['wall_s']:.2f}", str(r["jobs"]), str(r["deadline_misses"]),
         opt(r["schedlab_jobs"]), opt(r["schedlab_deadline_misses"]),
         f"{r['simso_s_per_sim_s']:.3g}", opt(r["schedlab_s_per_sim_s"], "{:.3g}"))
        for n, p, r in lines
    ]
    width = [max(len(row[i]) for row in rows) for i in range(len(head))]
    for row in rows:
        print("  ".join(c.ljust(w) if i < 2 else c.rjust(w)
                        for i, (c, w) in enumerate(zip(row, width))).rstrip())
    print(f"timing file: {args.out}")


if __name__ == "__main__":
    main()
