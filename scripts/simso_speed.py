#!/usr/bin/env python3
"""One-run speed table: schedlab and SimSo 0.8.5, scheduler by scheduler, on one set.

Driven by `scripts/simso-compare.sh --speed` (which exports the set with `schedlab bench
--export` and makes SimSo's virtualenv). For every policy of the cross-check's table
(scripts/simso_crosscheck.py POLICIES) that is asked for, both tools run the same task
set with the same model: schedlab (`simulate --json`, the engine's wall time `wall_s`)
over the set's whole duration, SimSo (`Model.run_model()` timed alone) over a shorter
horizon if `--simso-horizon` says so, since SimSo takes minutes where schedlab takes a
fraction of a second. Each cost is normalised per simulated second; the ratio is SimSo's
over schedlab's. Jobs are aborted at their deadline in both (`on_miss: abort`,
`abort_on_miss`), no overheads.

For the quantum-based schedulers (pd2, er-pd2 at SimSo's 0.1 ms quantum, epdf and bf at
1 ms) every WCET is rounded up to a whole quantum in both tools, as schedlab's Pfair
family does internally and SimSo's assumes. A policy schedlab does not know, or a
scheduler SimSo fails on, gets a row saying so; the other rows still run.

usage: simso_speed.py --set FILE --schedlab BIN [--policies edf,llref,...]
                      [--simso-horizon 1s] [--markdown] [--json FILE]
"""
import argparse
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from contextlib import redirect_stdout

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import simso_crosscheck as xc  # the cross-check's pairs and SimSo set-up
from simso_compare import ns  # workload durations, read as the timing script does

DEFAULT = ("edf,llf,pd2,er-pd2,epdf,bf,llref,lre-tl,dp-wrap,run,u-edf,ekg")
# The quantum of each quantum-based pair, in ns (SimSo's; schedlab's via POLICIES).
QUANTUM_NS = {"pd2": 100_000, "er-pd2": 100_000, "epdf": xc.MS, "bf": xc.MS}


def load_set(path):
    """The exported workload as the cross-check's set: tasks (name, c, t, o) in ns."""
    with open(path) as f:
        w = json.load(f)
    tasks = []
    for t in w["tasks"]:
        if "period" not in t or ns(t.get("deadline", t["period"])) != ns(t["period"]):
            sys.exit(f"simso_speed.py: {path}: task {t.get('name')}: periodic tasks with "
                     "implicit deadlines only (SimSo's optimal schedulers assume them)")
        tasks.append({"name": t["name"], "c": ns(t["runtime"]), "t": ns(t["period"]),
                      "o": ns(t.get("offset", 0))})
    return {"name": w.get("name", os.path.basename(path)), "cpus": w["platform"]["cpus"],
            "duration": ns(w["duration"]), "tasks": tasks}


def for_policy(ws, policy, horizon):
    """The set as this policy's pair runs it: WCETs rounded up to its quantum, if any."""
    q = QUANTUM_NS.get(policy, 0)
    tasks = [dict(t, c=min(t["t"], -(-t["c"] // q) * q) if q else t["c"]) for t in ws["tasks"]]
    return {"seed": 0, "cpus": ws["cpus"], "tasks": tasks, "horizon": horizon}


def schedlab_time(binary, ws, entry, tmp):
    """schedlab's engine wall time, jobs and misses on the set, or a reason it did not run."""
    path = os.path.join(tmp, "w.json")
    with open(path, "w") as f:
        json.dump(xc.workload(ws, entry), f)
    out = subprocess.run([binary, "simulate", path, "--json"], check=False,
                         capture_output=True, text=True)
    if out.returncode != 0:
        err = (out.stderr.strip().splitlines() or ["failed"])[-1]
        if "unknown policy" in err:
            err = f"no policy `{entry['policy']}` in this schedlab"
        return {"error": err}
    r = json.loads(out.stdout)
    return {"wall_s": r["wall_s"], "jobs": r["jobs_released"], "misses": r["deadline_misses"]}


def simso_time(ws, cls):
    """SimSo's run_model() wall time on the set (as released: no alignment), jobs and
    aborted jobs, or the exception SimSo stopped on."""
    from simso.configuration import Configuration
    from simso.core import Model

    cfg = Configuration()
    cfg.duration = ws["horizon"]
    cfg.etm = "wcet"
    for i, t in enumerate(ws["tasks"]):
        cfg.add_task(name=t["name"], identifier=i + 1, period=xc.exact_ms(t["t"]),
                     activation_date=xc.exact_ms(t["o"]), wcet=xc.exact_ms(t["c"]),
                     deadline=xc.exact_ms(t["t"]), abort_on_miss=True)
    for c in range(ws["cpus"]):
        cfg.add_processor(name=f"CPU {c}", identifier=c + 1)
    cfg.scheduler_info.clas = "simso.schedulers." + cls
    cfg.check_all()
    model = Model(cfg)
    t0 = time.perf_counter()
    try:
        with redirect_stdout(io.StringIO()):  # several SimSo schedulers print decisions
            model.run_model()
    except Exception as e:  # noqa: BLE001 (SimSo failing on its own: reported)
        return {"error": f"{type(e).__name__}: {e}"}
    wall = time.perf_counter() - t0
    jobs = [j for task in model.task_list for j in task.jobs
            if j.activation_date * xc.MS < ws["horizon"]]
    return {"wall_s": wall, "jobs": len(jobs), "misses": sum(1 for j in jobs if j.aborted)}


def row(policy, ws, binary, simso_horizon, tmp):
    entry = xc.POLICIES.get(policy)
    if entry is None or entry["placement"] != "global":
        return {"policy": policy, "skipped": "no global pair in the cross-check's table"}
    sim_s = ws["duration"] / 1e9
    r = {"policy": policy, "simso": entry["simso"], "sim_s": sim_s,
         "simso_sim_s": simso_horizon / 1e9}
    ours = schedlab_time(binary, for_policy(ws, policy, ws["duration"]), entry, tmp)
    if "error" in ours:
        r["skipped"] = f"schedlab: {ours['error']}"
        return r
    r.update(schedlab_wall_s=ours["wall_s"], schedlab_jobs=ours["jobs"],
             schedlab_misses=ours["misses"], schedlab_s_per_sim_s=ours["wall_s"] / sim_s)
    theirs = simso_time(for_policy(ws, policy, simso_horizon), entry["simso"])
    if "error" in theirs:
        r["simso_error"] = theirs["error"]
        return r
    r.update(simso_wall_s=theirs["wall_s"], simso_jobs=theirs["jobs"],
             simso_misses=theirs["misses"],
             simso_s_per_sim_s=theirs["wall_s"] / (simso_horizon / 1e9))
    r["ratio"] = r["simso_s_per_sim_s"] / max(r["schedlab_s_per_sim_s"], 1e-12)
    return r


def table(rows, ws, markdown):
    head = ("policy", "SimSo", "schedlab s/sim s", "SimSo s/sim s", "ratio",
            "schedlab wall s (sim s)", "SimSo wall s (sim s)", "misses schedlab / SimSo")
    lines = []
    for r in rows:
        if "schedlab_wall_s" not in r:
            lines.append((r["policy"], r.get("simso", "-"), "-", "-", "-",
                          r.get("skipped", ""), "", ""))
            continue
        ours = (f"{r['schedlab_s_per_sim_s']:.3g}",
                f"{r['schedlab_wall_s']:.3g} ({r['sim_s']:g})")
        if "simso_wall_s" in r:
            theirs = (f"{r['simso_s_per_sim_s']:.3g}", f"{r['ratio']:.0f}x",
                      f"{r['simso_wall_s']:.3g} ({r['simso_sim_s']:g})",
                      f"{r['schedlab_misses']} / {r['simso_misses']}")
        else:
            theirs = ("-", "-", f"SimSo failed: {r['simso_error'][:60]}",
                      f"{r['schedlab_misses']} / -")
        lines.append((r["policy"], r["simso"], ours[0], theirs[0], theirs[1], ours[1],
                      theirs[2], theirs[3]))
    title = (f"{ws['name']}: {len(ws['tasks'])} tasks, {ws['cpus']} CPUs; schedlab over "
             f"{ws['duration'] / 1e9:g} s, SimSo over the horizon in brackets; "
             "cost per simulated second, one run each")
    if markdown:
        out = [title, "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        out += ["| " + " | ".join(x) + " |" for x in lines]
        return "\n".join(out)
    width = [max(len(x[i]) for x in [head, *lines]) for i in range(len(head))]
    return "\n".join([title] + ["  ".join(c.ljust(w) if i < 2 else c.rjust(w)
                                          for i, (c, w) in enumerate(zip(x, width))).rstrip()
                                for x in [head, *lines]])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", required=True, help="a workload of `schedlab bench --export`")
    ap.add_argument("--schedlab", required=True, help="the schedlab binary (release)")
    ap.add_argument("--policies", default=DEFAULT, help=f"comma-separated (default {DEFAULT})")
    ap.add_argument("--simso-horizon", default="1s",
                    help="SimSo's simulated time (default 1s; at most the set's duration)")
    ap.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    ap.add_argument("--json", help="write the rows to this file")
    args = ap.parse_args(argv)
    ws = load_set(args.set)
    try:
        horizon = min(ns(args.simso_horizon), ws["duration"])
    except ValueError as e:
        sys.exit(f"simso_speed.py: --simso-horizon: {e}")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for p in [p for p in args.policies.split(",") if p]:
            print(f"simso_speed: {p}...", file=sys.stderr, flush=True)
            rows.append(row(p, ws, args.schedlab, horizon, tmp))
    print(table(rows, ws, args.markdown))
    if args.json:
        with open(args.json + ".tmp", "w") as f:
            json.dump({"set": ws["name"], "rows": rows}, f, indent=1)
            f.write("\n")
        os.replace(args.json + ".tmp", args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
