#!/usr/bin/env python3
"""Job-by-job cross-check of schedlab against SimSo 0.8.5 (docs/simso.md).

For every scheduler both tools have (the table POLICIES below), the same seeded random
implicit-deadline periodic sets (several sizes and utilisation levels, periods from a
small divisor set so the hyperperiod stays short) run in both for one hyperperiod, jobs
aborted at their deadline in both (SimSo's `abort_on_miss`, schedlab's `on_miss: abort`),
no overheads. Every job's finish time (and abort) is compared. For the first differing
job of a set the script finds the first instant the two schedules diverge and classifies
the difference with the rules of scripts/simso_crosscheck_known.toml (a tie broken
differently, a documented difference of model, a SimSo bug); anything else is reported
as unclassified. `--verbose` prints the job, both finish times and both schedules around
it.

Units: SimSo counts cycles, `cycles_per_ms` = 1e6, so one cycle is one nanosecond, the
unit of schedlab. Every time handed to SimSo (in ms, as floats) is checked to come back
as the exact integer number of cycles SimSo computes from it.

Run it with scripts/simso-crosscheck.sh (makes the virtualenv with SimSo) or directly with
a Python that has simso==0.8.5 and simpy==2.3.1:

  simso_crosscheck.py --schedlab target/debug/schedlab [--policies edf,llf] [--seeds 10]
                      [--sizes 2x4,4x8,8x16] [--levels 0.5,0.75,0.9,1.0] [--markdown]
                      [--verbose] [--json FILE]
"""
import argparse
import contextlib
import io
import json
import math
import operator
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager, redirect_stdout
from fractions import Fraction

import tomllib

MS = 1_000_000  # ns per ms; also SimSo's cycles per ms (1 cycle = 1 ns)

# schedlab policy name -> how to run it in schedlab and which SimSo class is its twin.
#   simso: SimSo scheduler class; policy: schedlab's `scheduler.deadline`;
#   placement: schedlab placement; partition: `scheduler.partition` (partitioned only);
#   quantum: SimSo schedules on a quantum (WCETs are whole milliseconds for these);
#   scheduler, platform: blocks merged into schedlab's workload (e.g. a policy's options,
#   a quantum setting), so that schedlab runs the same model as SimSo.
# A policy schedlab does not know yet is skipped with a line saying so.
POLICIES = {
    # on main: global EDF, RM, LLF, EDZL
    "edf": {"simso": "EDF", "policy": "edf", "placement": "global"},
    "rm": {"simso": "RM", "policy": "rm", "placement": "global"},
    "llf": {"simso": "LLF", "policy": "llf", "placement": "global", "quantum": True},
    "edzl": {"simso": "EDZL", "policy": "edzl", "placement": "global",
             "scheduler": {"edzl": {"mode": "exact"}}},
    # EDF variants and laxity-based (issue 27, `prio` group)
    "edf-us": {"simso": "EDF_US", "policy": "edf-us", "placement": "global"},
    "prid": {"simso": "PriD", "policy": "prid", "placement": "global"},
    "edcl": {"simso": "EDCL", "policy": "edcl", "placement": "global"},
    "g-fl": {"simso": "G_FL", "policy": "g-fl", "placement": "global"},
    "g-fl-zl": {"simso": "G_FL_ZL", "policy": "g-fl-zl", "placement": "global"},
    "mllf": {"simso": "MLLF", "policy": "mllf", "placement": "global"},
    # SimSo's NVNLF fails on a task not yet released (offsets): it is left out of the
    # next-deadline search there (simso_align "released-only"; no effect without offsets).
    "nvnlf": {"simso": "NVNLF", "policy": "nvnlf", "placement": "global",
              "simso_align": ["released-only"]},
    "edhs": {"simso": "EDHS", "policy": "edhs", "placement": "global"},
    "ekg": {"simso": "EKG", "policy": "ekg", "placement": "global"},
    # Pfair family (quantum-based)
    # SimSo's PD2 and ER_PD2 decide every 0.1 ms, its EPDF every 1 ms (schedlab's default
    # quantum, the tick of hz 1000); BF decides at deadlines only.
    "pd2": {"simso": "PD2", "policy": "pd2", "placement": "global", "quantum": True,
            "platform": {"quantum": "100us"}, "pfair_q": 100_000},
    "er-pd2": {"simso": "ER_PD2", "policy": "er-pd2", "placement": "global", "quantum": True,
               "platform": {"quantum": "100us"}, "pfair_q": 100_000},
    "epdf": {"simso": "EPDF", "policy": "epdf", "placement": "global", "quantum": True,
             "pfair_q": MS},
    "bf": {"simso": "BF", "policy": "bf", "placement": "global", "quantum": True},
    # fluid / DP-fair
    "llref": {"simso": "LLREF", "policy": "llref", "placement": "global"},
    "lre-tl": {"simso": "LRE_TL", "policy": "lre-tl", "placement": "global"},
    # SimSo's DP_WRAP mirrors every other slice (reverses its McNaughton order);
    # schedlab's dp-wrap does not: SimSo's mirroring is switched off (simso_align).
    "dp-wrap": {"simso": "DP_WRAP", "policy": "dp-wrap", "placement": "global",
                "simso_align": ["no-mirror"]},
    # server-based
    "u-edf": {"simso": "U_EDF", "policy": "u-edf", "placement": "global"},
    # SimSo's RUN packs first-fit in task order; schedlab (as the paper's evaluation)
    # worst-fit decreasing: SimSo's is switched to that (simso_align, SIMSO_ALIGN).
    "run": {"simso": "RUN", "policy": "run", "placement": "global", "simso_align": ["wfd-pack"]},
    # partitioned: SimSo's P_EDF is first-fit decreasing (schedlab's default); P_EDF_WF is
    # meant as worst-fit decreasing; LB_P_EDF and P_RM put each task, in task order, on
    # the least loaded CPU without a test (schedlab's `load-balance`).
    "p-edf": {"simso": "P_EDF", "policy": "edf", "placement": "partitioned",
              "partition": "first-fit-decreasing"},
    "p-edf-wf": {"simso": "P_EDF_WF", "policy": "edf", "placement": "partitioned",
                 "partition": "worst-fit-decreasing"},
    "lb-p-edf": {"simso": "LB_P_EDF", "policy": "edf", "placement": "partitioned",
                 "partition": "load-balance"},
    "p-rm": {"simso": "P_RM", "policy": "rm", "placement": "partitioned",
             "partition": "load-balance"},
}

# SimSo schedulers that keep budgets or shares as float milliseconds (short_of_wcet,
# float_finish; docs/simso.md, SimSo bug 12).
FLOAT_BUDGETS = ("RUN", "U_EDF", "DP_WRAP", "LLREF", "LRE_TL")
# SimSo schedulers that decide at a periodic quantum timer (see releases_first).
QUANTUM_TIMER = ("PD2", "ER_PD2")
DEFAULT_POLICIES = "edf,rm,llf,edzl,p-edf,p-edf-wf,lb-p-edf,p-rm"
# Periods (ms): divisors of 100, so a set's hyperperiod is at most 100 ms.
PERIODS_MS = (5, 10, 20, 25, 50, 100)
GRAIN_NS = 100_000  # WCET granularity of non-quantum schedulers (0.1 ms)
# Finish times this close are SimSo's float rounding (times in ms as floats, converted to
# cycles at each timer), counted apart from the real differences.
ROUNDING_NS = 2

KNOWN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "simso_crosscheck_known.toml")


# --------------------------------------------------------------------------- task sets
def uunifast_discard(rng, n, total, umax=1.0):
    """n utilisations summing to `total`, each in (0, umax] (UUniFast, redrawn when one
    exceeds umax; Davis & Burns 2011)."""
    while True:
        us, rest = [], total
        for i in range(1, n):
            nxt = rest * rng.random() ** (1.0 / (n - i))
            us.append(rest - nxt)
            rest = nxt
        us.append(rest)
        if all(0 < u <= umax for u in us):
            return us


def repair_to_target(tasks, excess, target, grain_ns):
    """Rounding WCETs to the grain can push U past the target (past m at level 1.0,
    which `run` and every optimal scheduler rightly refuse): take one grain off the WCET
    of a task that was rounded up (the longest period first: the smallest step in U),
    again, until U <= target. Sets already within it are unchanged."""
    while sum(Fraction(x["c"], x["t"]) for x in tasks) > target:
        i = max(range(len(tasks)),
                key=lambda k: (excess[k] > 0, excess[k] > -1, tasks[k]["t"], excess[k], -k))
        if excess[i] == -1:  # every WCET is down to one grain
            raise ValueError(f"cannot bring the set to U <= {target} with WCETs >= one grain")
        tasks[i]["c"] -= grain_ns
        excess[i] -= Fraction(grain_ns, tasks[i]["t"])
        if tasks[i]["c"] == grain_ns:
            excess[i] = Fraction(-1)


def make_set(seed, cpus, ntasks, level, grain_ns, offsets=False):
    """A seeded implicit-deadline set: UUniFast utilisations for U = level·m, periods
    from PERIODS_MS, WCET = u·T rounded to the grain (at least one grain, at most T),
    then repaired so that U never exceeds the target level·m.
    With `offsets`, each task's first release is a whole millisecond in [0, T) (fewer
    equal deadlines, so fewer ties), and the horizon is the largest offset plus two
    hyperperiods (the feasibility interval of an asynchronous set); else one
    hyperperiod."""
    rng = random.Random(f"{seed}/{cpus}/{ntasks}/{level}/{grain_ns}")
    us = uunifast_discard(rng, ntasks, level * cpus)
    tasks, excess = [], []
    for i, u in enumerate(us):
        t = rng.choice(PERIODS_MS) * MS
        c = max(grain_ns, min(t, round(u * t / grain_ns) * grain_ns))
        tasks.append({"name": f"t{i + 1}", "c": c, "t": t, "o": 0})
        excess.append(Fraction(c, t) - Fraction(u) if c > grain_ns else Fraction(-1))
    repair_to_target(tasks, excess, Fraction(str(level)) * cpus, grain_ns)
    if offsets:
        orng = random.Random(f"offsets/{seed}/{cpus}/{ntasks}/{level}/{grain_ns}")
        for x in tasks:
            x["o"] = orng.randrange(x["t"] // MS) * MS
    hyper = 1
    for x in tasks:
        hyper = math.lcm(hyper, x["t"])
    horizon = max(x["o"] for x in tasks) + 2 * hyper if offsets else hyper
    return {"seed": seed, "cpus": cpus, "level": level, "tasks": tasks, "horizon": horizon,
            "u": float(sum(Fraction(x["c"], x["t"]) for x in tasks))}


def job_at(task, t):
    """Index of the job of `task` released last at or before t (-1: none yet)."""
    return (t - task["o"]) // task["t"] if t >= task["o"] else -1


def released_at(task, t):
    """A job of `task` is released at t."""
    return t >= task["o"] and (t - task["o"]) % task["t"] == 0


def release(task, k):
    """Release instant of job k of `task`."""
    return task["o"] + k * task["t"]


def exact_ms(ns_value):
    """A float number of ms that SimSo turns back into exactly `ns_value` cycles with
    int(x * cycles_per_ms)."""
    x = ns_value / MS
    while int(x * MS) < ns_value:
        x = math.nextafter(x, math.inf)
    assert int(x * MS) == ns_value, ns_value
    return x


# --------------------------------------------------------------------------- SimSo
def zero_timer_overheads():
    """SimSo's LLF (simso/schedulers/LLF.py) starts its 1 ms timer with overhead=.001: each
    tick takes 1 µs of the first CPU from the job running there. Overheads are off in this
    comparison (schedlab's `platform.tick` is 0), so the timer is built with overhead 0."""
    import importlib

    mod = importlib.import_module("simso.schedulers.LLF")
    timer = mod.Timer
    if getattr(timer, "crosscheck_zeroed", False):
        return

    def zeroed(*a, **kw):
        kw["overhead"] = 0
        return timer(*a, **kw)

    zeroed.crosscheck_zeroed = True
    mod.Timer = zeroed


@contextmanager
def releases_first(cls):
    """SimSo's PD2 and ER_PD2 decide at a periodic quantum timer on CPU 0. A job released
    at the same instant reaches the scheduler through an ACTIVATE event queued on its
    task's CPU (`task.cpu`: the CPU it last ran on), and SimPy runs the job's activation
    after the timer (the timer's event was posted a quantum earlier): the decision at a
    quantum boundary misses the jobs released on it whenever their activation is queued
    on another CPU or behind the timer, and they wait one quantum (docs/simso.md,
    `release-seen-late`). schedlab, as the Pfair papers, makes a subtask eligible in the
    quantum it is released in. To compare like with like, for these two schedulers a
    job's activation is posted ahead of the other events of its instant (SimPy's `prior`)
    and queued on CPU 0, before the timer. Restored on exit."""
    if cls not in QUANTUM_TIMER:
        yield
        return
    from simso.core.Job import Job
    from simso.core.Processor import Processor
    from simso.core.Task import GenericTask

    create, activate = GenericTask.create_job, Processor.activate

    def create_job(self, pred=None):
        sim_activate = self.sim.activate

        def prior(obj, process, *a, **kw):
            if isinstance(obj, Job):
                kw["prior"] = True
            return sim_activate(obj, process, *a, **kw)

        self.sim.activate = prior
        try:
            return create(self, pred)
        finally:
            del self.sim.activate  # back to the class's method

    def activate_on_cpu0(self, job):
        activate(self.sim.processors[0], job)

    GenericTask.create_job, Processor.activate = create_job, activate_on_cpu0
    try:
        yield
    finally:
        GenericTask.create_job, Processor.activate = create, activate


@contextmanager
def simso_wfd_pack(on=True):
    """SimSo's RUN packing switched to schedlab's worst-fit decreasing: servers by
    decreasing utilisation (ties in order), each into the least-loaded bin where it fits
    (ties: the first), else a new bin (crates/sim/src/policy/run_tree.rs `pack`)."""
    if not on:
        yield
        return
    import simso.schedulers.RUN as run_mod
    from simso.schedulers.RUNServer import EDFServer

    def wfd(servers):
        bins = []
        for server in sorted(servers, key=lambda x: x.utilization, reverse=True):
            least = min(bins, key=lambda b: b.utilization, default=None)
            if least is not None and least.utilization + server.utilization <= 1:
                least.add_child(server)
            else:
                least = EDFServer()
                least.add_child(server)
                bins.append(least)
        return bins

    saved = run_mod.pack
    run_mod.pack = wfd
    try:
        yield
    finally:
        run_mod.pack = saved


@contextmanager
def simso_no_mirror(on=True):
    """SimSo's DP_WRAP without its mirroring: every slice keeps McNaughton's order
    (DP_WRAP.init_interval reverses every other slice; schedlab's dp-wrap does not)."""
    if not on:
        yield
        return
    from simso.schedulers.DP_WRAP import DP_WRAP

    saved = DP_WRAP.init_interval

    def unmirrored(self):
        self.mirroring = False
        saved(self)

    DP_WRAP.init_interval = unmirrored
    try:
        yield
    finally:
        DP_WRAP.init_interval = saved


@contextmanager
def simso_released_only(on=True):
    """SimSo's NVNLF taking the next deadline over the tasks released so far:
    NVNLF.on_activate reads task.job.absolute_deadline for every task, and a task not yet
    released (an offset) has no job (AttributeError: every --offsets set fails)."""
    if not on:
        yield
        return
    from simso.schedulers.NVNLF import NVNLF

    saved = NVNLF.on_activate

    def released_only(self, job):
        every = self.task_list
        self.task_list = [t for t in every if t.job is not None]
        try:
            saved(self, job)
        finally:
            self.task_list = every

    NVNLF.on_activate = released_only
    try:
        yield
    finally:
        NVNLF.on_activate = saved


# Switches that make SimSo run schedlab's model of a scheduler (POLICIES' simso_align).
SIMSO_ALIGN = {"wfd-pack": simso_wfd_pack, "no-mirror": simso_no_mirror,
               "released-only": simso_released_only}


@contextmanager
def simso_aligned(names):
    with contextlib.ExitStack() as stack:
        for n in names:
            stack.enter_context(SIMSO_ALIGN[n](True))
        yield


def _alarm(signum, frame):
    raise SimsoTimeout()


# SimSo's NVNLF activations of the last run, in its order: [(instant, task name)]
# (simso_run fills it; nvnlf_order_differs reads it).
NVNLF_ACTIVATIONS = []


@contextmanager
def nvnlf_logged(cls):
    """Log the order in which SimSo's NVNLF activates jobs (NVNLF_ACTIVATIONS)."""
    NVNLF_ACTIVATIONS.clear()
    if cls != "NVNLF":
        yield
        return
    from simso.schedulers.NVNLF import NVNLF

    saved = NVNLF.on_activate

    def logged(self, job):
        NVNLF_ACTIVATIONS.append((self.sim.now(), job.task.name))
        saved(self, job)

    NVNLF.on_activate = logged
    try:
        yield
    finally:
        NVNLF.on_activate = saved


def simso_run(ws, cls, as_released=False, timeout=0, penalties=None, align=()):
    """Run SimSo on the set; per task the jobs' (finish_ns or None, aborted), the
    schedule slices [(start, end, task, cpu)] and the partition (CPU index per task)."""
    from simso.configuration import Configuration
    from simso.core import Model
    from simso.core.JobEvent import JobEvent

    if not as_released:
        zero_timer_overheads()
    cfg = Configuration()
    assert cfg.cycles_per_ms == MS
    cfg.duration = ws["horizon"]
    cfg.etm = "wcet"
    if penalties:
        # SimSo's FixedPenalty model, penalties in cycles (= ns).
        cfg.etm = "fixedpenalty"
        cfg.penalty_preemption, cfg.penalty_migration = penalties
    for i, t in enumerate(ws["tasks"]):
        cfg.add_task(name=t["name"], identifier=i + 1, period=exact_ms(t["t"]),
                     activation_date=exact_ms(t["o"]), wcet=exact_ms(t["c"]), deadline=exact_ms(t["t"]),
                     abort_on_miss=True)
    for c in range(ws["cpus"]):
        cfg.add_processor(name=f"CPU {c}", identifier=c + 1)
    cfg.scheduler_info.clas = "simso.schedulers." + cls
    cfg.check_all()
    model = Model(cfg)
    sink = io.StringIO()  # several SimSo schedulers print their decisions
    # SimSo can loop forever at one instant (EDZL re-arming a zero-delay timer, see
    # docs/simso.md): a wall-clock limit ends such a run.
    old = signal.signal(signal.SIGALRM, _alarm) if timeout else None
    if timeout:
        signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        with redirect_stdout(sink), releases_first(cls if not as_released else None), \
                simso_aligned(align), nvnlf_logged(cls):
            model.run_model()
    except AssertionError as e:
        if "Packing failed" in str(e):  # PartitionedScheduler: assert self.packer()
            raise Unpartitioned(str(e)) from None
        # Any other assertion, or exception, is SimSo failing on the set (EPDF: a negative
        # timer delay on overloaded sets; BF: a task not yet released, with --offsets;
        # docs/simso.md): the set is counted apart, not compared.
        raise SimsoCrash(f"AssertionError: {e}") from None
    except SimsoTimeout:
        raise
    except Exception as e:  # noqa: BLE001 (SimSo failing on its own: counted apart)
        raise SimsoCrash(f"{type(e).__name__}: {e}") from None
    finally:
        if timeout:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
    jobs, slices, part = {}, [], {}
    cpu_index = {p: k for k, p in enumerate(model.processors)}
    for task in model.task_list:
        jobs[task.name] = [
            (j.end_date if j.end_date is not None and not j.aborted else None, j.aborted)
            for j in task.jobs if j.activation_date * MS < ws["horizon"]
        ]
        if task.cpu is not None:
            part[task.name] = cpu_index.get(task.cpu)
        running = {}
        for when, ev in task.monitor:
            if ev.event == JobEvent.EXECUTE:
                running[ev.job] = (when, cpu_index[ev.cpu])
            elif ev.event in (JobEvent.PREEMPTED, JobEvent.TERMINATED,
                              JobEvent.ABORTED) and ev.job in running:
                start, cpu = running.pop(ev.job)
                if when > start:
                    slices.append((start, when, task.name, cpu))
        for start, cpu in running.values():
            slices.append((start, ws["horizon"], task.name, cpu))
    return jobs, sorted(slices), part


# --------------------------------------------------------------------------- schedlab
class Unknown(Exception):
    """schedlab does not know this policy or partition heuristic (yet)."""


class SimsoCrash(Exception):
    """SimSo stopped on an assertion or exception of its own (not a failed packing)."""


class SimsoTimeout(Exception):
    """SimSo did not finish the horizon within --simso-timeout seconds."""


class Unpartitioned(Exception):
    """The partitioning heuristic placed no partition."""


def workload(ws, entry, penalties=None):
    sched = {"deadline": entry["policy"], "placement": entry["placement"]}
    if "partition" in entry:
        sched["partition"] = entry["partition"]
    sched.update(entry.get("scheduler", {}))
    return {
        "name": f"crosscheck-{ws['seed']}",
        "platform": {"cpus": ws["cpus"], "hz": 1000, **entry.get("platform", {}),
                     **({"preemption": f"{penalties[0]}ns", "migration": f"{penalties[1]}ns"}
                        if penalties else {})},
        "duration": f"{ws['horizon']}ns",
        "on_miss": "abort",
        "scheduler": sched,
        "tasks": [{"name": t["name"], "runtime": f"{t['c']}ns", "period": f"{t['t']}ns",
                   "offset": f"{t['o']}ns"}
                  for t in ws["tasks"]],
    }


def schedlab_run(binary, ws, entry, tmp, penalties=None):
    path = os.path.join(tmp, "w.json")
    with open(path, "w") as f:
        json.dump(workload(ws, entry, penalties), f)
    csv, trace = os.path.join(tmp, "jobs.csv"), os.path.join(tmp, "trace.txt")
    out = subprocess.run([binary, "simulate", path, "--json", "--jobs-csv", csv,
                          "--trace-out", trace, "--trace-format", "ftrace"],
                         check=False, capture_output=True, text=True)
    if out.returncode != 0:
        err = out.stderr.strip()
        if "fits on no CPU" in err:
            raise Unpartitioned(err.splitlines()[-1])
        if "unknown" in err and (entry["policy"] in err or "partition" in err):
            raise Unknown(err.splitlines()[-1])
        raise RuntimeError(f"schedlab failed on {path}: {err}")
    res = json.loads(out.stdout)
    jobs = {t["name"]: [] for t in ws["tasks"]}
    with open(csv) as f:
        head = f.readline().strip().split(",")
        for line in f:
            row = dict(zip(head, line.strip().split(",")))
            fin = int(row["finish_ns"]) if row["finish_ns"] else None
            aborted = row["aborted"] == "true"
            jobs[row["task"]].append((None if aborted else fin, aborted))
    part = {}
    if res.get("partition"):
        for k, names in enumerate(res["partition"]["cpus"]):
            for n in names:
                part[n] = k
    return jobs, parse_ftrace(trace, ws["horizon"]), part, res


def parse_ftrace(path, horizon):
    """Schedule slices [(start, end, task, cpu)] from a `--trace-format ftrace` file."""
    cur, slices = {}, []
    with open(path) as f:
        for line in f:
            if "sched_switch:" not in line:
                continue
            left, right = line.split("sched_switch:")
            cpu = int(left.split("[")[1].split("]")[0])
            ts = round(float(left.split("]")[1].strip().rstrip(":")) * 1e9)
            nxt = right.split("==>")[1].split(":")[0].strip()
            if cpu in cur:
                start, task = cur.pop(cpu)
                if ts > start:
                    slices.append((start, ts, task, cpu))
            if not nxt.startswith("swapper"):
                cur[cpu] = (ts, nxt)
    for cpu, (start, task) in cur.items():
        slices.append((start, horizon, task, cpu))
    return sorted(slices)


# --------------------------------------------------------------------------- comparing
def running_at(slices, t):
    return {task for s, e, task, _ in slices if s <= t < e}


def snap(slices, grid=10):
    """Slice bounds to the nearest `grid` ns: SimSo's float-millisecond timers (EDZL's
    zero-laxity timer, for one) fire a cycle or two off the exact instant."""
    return [(round(s / grid) * grid, round(e / grid) * grid, n, c) for s, e, n, c in slices]


def divergence(a, b):
    """First instant where the sets of running tasks differ (CPU numbers ignored)."""
    a, b = snap(a), snap(b)
    times = sorted({s for s, *_ in a} | {e for _, e, *_ in a}
                   | {s for s, *_ in b} | {e for _, e, *_ in b})
    for t in times:
        ra, rb = running_at(a, t), running_at(b, t)
        if ra != rb:
            return t, ra - rb, rb - ra
    return None


def priority_key(policy, task, t, slices):
    """The priority a task's current job has at t under `policy` (smaller is higher), from
    the schedule up to t (the same in both tools before the divergence)."""
    rel = release(task, job_at(task, t))
    deadline = rel + task["t"]
    if policy == "rm":
        return task["t"]
    if policy in ("llf", "mllf", "edzl", "g-fl-zl", "nvnlf"):
        done = sum(min(e, t) - max(s, rel) for s, e, n, _ in slices
                   if n == task["name"] and e > rel and s < t)
        laxity = deadline - t - (task["c"] - done)
        if policy == "llf":
            return laxity
        if policy == "mllf":
            return laxity, deadline  # MLLF's sort at a decision instant
        # Zero-laxity jobs share the top priority (EDZL: ties among them are arbitrary).
        return (0, 0) if laxity <= 0 else (1, deadline)
    return deadline


def llref_local(ws, run, name, t):
    """LLREF's local remaining execution of `name`'s job at t (exact, a Fraction), from a
    run's schedule up to t: the TL-plane holding t begins at the last release at or
    before t and ends at the earliest deadline tf of the jobs pending then; the job's
    fluid work by tf, C·(tf − r)/T, minus what it has executed by t (schedlab's shares are
    this rounded to the ns, SimSo's a float of it)."""
    start = max(release(x, job_at(x, t)) for x in ws["tasks"] if job_at(x, t) >= 0)
    tf = min((release(x, job_at(x, start) + 1) for x in ws["tasks"]
              if pending(x, start, run)), default=start)
    task = next(x for x in ws["tasks"] if x["name"] == name)
    rel = release(task, job_at(task, t))
    done = sum(min(e, t) - max(s, rel) for s, e, n, _ in run["slices"]
               if n == name and e > rel and s < t)
    if not pending(task, t, run):
        return Fraction(0)
    return Fraction(task["c"] * (tf - rel), task["t"]) - done


def llref_finished_bound(ws, run, t):
    """At the start p of the TL-plane holding t, a job finished exactly at p whose
    deadline falls inside the plane schedlab computes (jobs with work left only): a plane
    that counts that job ends at its deadline, earlier. SimSo's LLREF.on_activate runs
    before the completion at the same instant is processed, so its plane does."""
    start = max(release(x, job_at(x, t)) for x in ws["tasks"] if job_at(x, t) >= 0)
    tf = min((release(x, job_at(x, start) + 1) for x in ws["tasks"]
              if pending(x, start, run)), default=start)
    for x in ws["tasks"]:
        k = job_at(x, start)
        jobs = run["jobs"][x["name"]]
        if 0 <= k < len(jobs) and jobs[k][0] == start and start < release(x, k + 1) < tf:
            return True
    return False


def nvnlf_order_differs(ws, ours, theirs, t, names):
    """One of `names` has a job pending at t that SimSo activated (its logged order,
    theirs["activations"]) in another order than schedlab (task order) relative to a job
    released at the same instant and still pending at t."""
    order = {}
    for k, (when, name) in enumerate(theirs.get("activations", [])):
        order.setdefault((round(when), name), k)
    index = {x["name"]: i for i, x in enumerate(ws["tasks"])}
    for n in names:
        x = next(v for v in ws["tasks"] if v["name"] == n)
        r = release(x, job_at(x, t))
        for y in ws["tasks"]:
            if y["name"] == n or not released_at(y, r) or not pending(y, t, ours):
                continue
            a, b = order.get((r, n)), order.get((r, y["name"]))
            if a is not None and b is not None and (a < b) != (index[n] < index[y["name"]]):
                return True
    return False


def pfair_subtask(task, t, slices, q):
    """The Pfair view of a task's current job at quantum boundary t: (anchor, e, L, i),
    the job's first quantum, its quanta of WCET and of window, and the index of its next
    subtask (1 + quanta the job received before t, from the schedule up to t)."""
    rel = release(task, job_at(task, t))
    done = sum(min(e, t) - max(s, rel) for s, e, n, _ in slices
               if n == task["name"] and e > rel and s < t)
    return -(-rel // q), -(-task["c"] // q), task["t"] // q, done // q + 1


def pd2_group_deadline(e, L, i):
    """PD2's group deadline of subtask i (relative quanta; 0 for a light task), as
    schedlab's pd2 computes it (Anderson & Srinivasan: the earliest t >= d(T_i) with
    t = d(T_k) and b(T_k) = 0, or t + 1 = d(T_k) and |w(T_k)| = 3)."""
    if 2 * e < L:
        return 0
    d_i, k = -(-i * L // e), i
    while True:
        r, d = (k - 1) * L // e, -(-k * L // e)
        if k > i and d - r == 3 and d > d_i:
            return d - 1
        if k * L % e == 0:
            return d
        k += 1


def pfair_key(policy, task, t, slices, q):
    """schedlab's priority of a task's next subtask at t (smaller is higher): EPDF the
    pseudo-deadline; PD2 and ER-PD2 (pseudo-deadline, b-bit 0 last, later group deadline
    first). The task index, schedlab's last tie-break, is left out: equal keys are a tie."""
    anchor, e, L, i = pfair_subtask(task, t, slices, q)
    d = anchor + -(-i * L // e)
    if policy == "epdf":
        return (d,)
    gd = pd2_group_deadline(e, L, i)
    return (d, i * L % e == 0, -(anchor + gd if gd else 0))


def simso_pd2_key(task, t, slices, q):
    """SimSo's PD2/ER_PD2 `PseudoJob.cmp_key` for the same subtask, in cycles
    (simso/schedulers/PD2.py): the same pseudo-deadline and b-bit, but the group deadline
    is relative to the job, in units of 10 quanta (`ceil(D*(j-1)/C * cycles_per_ms)`
    with D/C in ms counts quanta, multiplied by 1e6 cycles instead of the 1e5 of a
    quantum), stops at the last window of size 2 (d(T_{j-1}), not the paper's
    d(T_j) - 1), and has the job's activation date in ms added to it."""
    anchor, e, L, i = pfair_subtask(task, t, slices, q)
    d = anchor + -(-i * L // e)
    b = i * L % e != 0
    act_ms = release(task, job_at(task, t)) / MS
    if 2 * e < L:
        return (d, not b, -act_ms)
    j = i + 1
    while j <= e and (j - 1) * L % e != 0 and -(-j * L // e) - (j - 1) * L // e == 2:
        j += 1
    return (d, not b, -(act_ms + -(-(j - 1) * L // e) * MS))


def simso_epdf_window(task, i):
    """SimSo's EPDF window of subtask i in quanta of 1 ms (simso/schedulers/EPDF.py):
    int((i-1) / (C/D)) and ceil(i / (C/D)) in floats, C and D in ms, where the exact
    ones are floor((i-1)D/C) and ceil(iD/C): the float quotient can land just below an
    integer (14 / (56/100) = 24.999999999999996: released at 24, not 25) or just above
    one (21 / (35/100) = 60.00000000000001: due at 61, not 60)."""
    c, d = task["c"] / MS, task["t"] / MS
    return int((i - 1) / (c / d)), math.ceil(i / (c / d))


def epdf_float_window(task, t, slices):
    """The task's next subtask at t has another window in SimSo's float arithmetic."""
    _, e, L, i = pfair_subtask(task, t, slices, MS)
    return simso_epdf_window(task, i) != ((i - 1) * L // e, -(-i * L // e))


def epdf_moved_job(slices, t):
    """In this schedule a job moves at t from CPU a to CPU b and CPU a idles from t.
    SimSo's EPDF does this when it gives a job's next subtask a CPU while the job's
    current subtask still holds another CPU at the same instant (its end timer has not
    fired yet): the job migrates, the CPU it left keeps the stale subtask and is not
    rescheduled before the next event, although a subtask is eligible."""
    snapped = snap(slices)
    for _, e, name, a in snapped:
        if e != t:
            continue
        moved = any(s == t and n == name and c != a for s, _, n, c in snapped)
        idle = not any(s <= t < e2 and c == a for s, e2, _, c in snapped)
        if moved and idle:
            return True
    return False


def sign(v):
    return (v > 0) - (v < 0)


def bf_alpha(e, per, t):
    """BF's characteristic α(T, t) = sign(w(t+1) − ⌊wt⌋ − 1), t in quanta, w = e/per."""
    return sign(e * (t + 1) - per * (e * t // per) - per)


def bf_ours(elig, spare, end):
    """schedlab's optional quanta: the paper's characteristic strings from `end`, '+' >
    '0' > '−', equal up to a '0' in both: task order. elig: [(name, e, per)]."""
    from functools import cmp_to_key

    def cmp(a, z):
        for q in range(end, end + 100_000):
            ca, cz = bf_alpha(a[1], a[2], q), bf_alpha(z[1], z[2], q)
            if ca != cz:
                return cz - ca
            if ca == 0:
                break
        return 0  # stable sort: task order

    return {x[0] for x in sorted(elig, key=cmp_to_key(cmp))[:spare]}


def bf_simso(elig, spare, bk1, bk2):
    """SimSo's optional quanta (simso/schedulers/BF.py, in its floats): the sign of
    w·bk2 − ⌊w·bk1⌋ − (bk2 − bk1), then urgency factors, one pick at a time."""
    def alpha(x):
        u = x[1] / x[2]
        return sign(bk2 * u - int(bk1 * u) - bk2 + bk1)

    def uf(u):
        return (1. - (bk1 * u - int(bk1 * u))) / u

    def keeps(i, j):  # BF.compare(i, j) == -1
        ai, aj = alpha(i), alpha(j)
        if ai != aj:
            return ai > aj
        if ai == 0:
            return True
        if ai == -1:
            return not uf(i[1] / i[2]) > uf(j[1] / j[2])
        return uf(1 - i[1] / i[2]) >= uf(1 - j[1] / j[2])

    pool, chosen = list(elig), set()
    for _ in range(min(spare, len(pool))):
        best = pool[0]
        for x in pool[1:]:
            if not keeps(best, x):
                best = x
        chosen.add(best[0])
        pool.remove(best)
    return chosen


def bf_optional(ws, t):
    """The tasks given an optional quantum in the BF interval that contains t (ns), by
    schedlab's rule (bf_ours) and by SimSo's (bf_simso, bk1 and bk2 the two earliest
    current deadlines in ms); the intervals before planned by schedlab's rule (the
    schedules agree before t). Quanta of 1 ms, periodic tasks released at 0."""
    tasks = [(x["name"], x["c"] // MS, x["t"] // MS) for x in ws["tasks"]]
    m, rw, b = ws["cpus"], {x[0]: Fraction(0) for x in tasks}, 0
    while True:
        end = min((b // per + 1) * per for _, _, per in tasks)
        n, mand, elig = end - b, {}, []
        for name, e, per in tasks:
            if b % per == 0:
                rw[name] = Fraction(0)
            total = rw[name] + Fraction(n * e, per)
            mand[name] = min(n, max(0, math.floor(total)))
            rw[name] = total - mand[name]
            if rw[name] > 0 and mand[name] < n:
                elig.append((name, e, per))
        spare = m * n - sum(mand.values())
        ours = bf_ours(elig, spare, end)
        if end * MS > t:
            dl = sorted(float((b // per + 1) * per) for _, _, per in tasks)
            return ours, bf_simso(elig, spare, dl[0], dl[1])
        for name in ours:
            rw[name] -= 1
        b = end


def dropped(name, t, task, theirs):
    """In SimSo, the current job of `name` at t never runs again before its deadline and
    ends aborted: SimSo lost it (see the `abort-drops-running` rule)."""
    k = job_at(task, t)
    deadline = release(task, k + 1)
    jobs = theirs["jobs"][name]
    return (0 <= k < len(jobs) and jobs[k][1]
            and not any(n == name and s < deadline and e > t for s, e, n, _ in theirs["slices"]))


def simso_next_fit_decreasing(ws):
    """The partition of SimSo's `next_fit` on tasks by decreasing utilisation, in its float
    arithmetic (simso/utils/PartitionedScheduler.py), or None when it fails."""
    tasks = sorted(ws["tasks"], key=lambda t: -(t["c"] / MS) / (t["t"] / MS))
    load, j, out = [0.0] * ws["cpus"], 0, {}
    for t in tasks:
        c, p, k = t["c"] / MS, t["t"] / MS, 0
        while load[j] * p + c > p:
            j, k = (j + 1) % ws["cpus"], k + 1
            if k >= ws["cpus"]:
                return None
        out[t["name"]] = j
        load[j] += c / p
    return out


def penalty_sum(diff, penalties):
    """`diff` is a·P + b·M with |a|, |b| <= 2 (not 0): a resumption paid the
    preemption penalty P in one tool and the migration penalty M in the other."""
    p, m = penalties
    return diff != 0 and any(a * p + b * m == diff
                             for a in range(-2, 3) for b in range(-2, 3))


def float_instant(a, b, t, near=20):
    """At the divergence t, the tools change their schedules at instants a few ns apart
    (within `near`), not at the same one: SimSo's float-millisecond budgets and timers
    moved a decision instant, and the schedules part there."""
    def bounds(slices):
        return {v for s, e, *_ in slices for v in (s, e) if abs(v - t) <= near}
    ba, bb = bounds(a), bounds(b)
    return bool(ba) and bool(bb) and ba != bb


def pending(task, t, run):
    """The task's job at t is released and not finished at t in that tool's run."""
    k = job_at(task, t)
    jobs = run["jobs"][task["name"]]
    if k < 0 or k >= len(jobs):
        return False
    end, aborted = jobs[k]
    return not aborted and (end is None or end > t)


def float_finish(first, ours, theirs, near=20):
    """The first differing job finished in both tools within `near` ns (more than
    ROUNDING_NS) and the schedules are the same until then: SimSo's float-millisecond
    timers and budgets moved the bounds of the job's slices by a few ns."""
    x, y = first[3], first[4]
    if not (isinstance(x[0], int) and isinstance(y[0], int) and not x[1] and not y[1]
            and abs(x[0] - y[0]) <= near):
        return False
    d = divergence(ours["slices"], theirs["slices"])
    return d is None or d[0] >= min(x[0], y[0]) - near


def run_float_tree(ws):
    """SimSo's RUN builds another reduction tree than schedlab: its leaf rates are
    Fraction(wcet) / Fraction(period) of float milliseconds (simso/schedulers/RUNServer.py
    TaskServer), a hair off the exact C/T, so a bin that the exact rates fill to 1 is
    over 1 in SimSo and the last server opens a new one (worst-fit decreasing both, as
    simso_wfd_pack; idle leaves as SimSo's add_idle_tasks)."""
    def tree(rate):
        def pack(servers):
            bins = []
            for x in sorted(servers, key=lambda v: v[1], reverse=True):
                least = min(bins, key=lambda b: b[1], default=None)
                if least is not None and least[1] + x[1] <= 1:
                    least[0].append(x[0])
                    least[1] += x[1]
                else:
                    bins.append([[x[0]], x[1]])
            return [(("pack", frozenset(b[0])), b[1]) for b in bins]

        servers = pack([(x["name"], rate(x)) for x in ws["tasks"]])
        idle = ws["cpus"] - sum(v[1] for v in servers)
        for i, (k, u) in enumerate(servers):
            if u < 1 and idle > 0:
                add = min(1 - u, idle)
                servers[i] = (("pack", k[1] | {"idle"}), u + add)
                idle -= add
        while idle > 0:
            servers.append((("pack", frozenset({"idle"})), min(Fraction(1), idle)))
            idle -= min(Fraction(1), idle)
        units = [k for k, u in servers if u == 1]
        servers = [v for v in servers if v[1] < 1]
        while servers:
            servers = pack([(("dual", k), 1 - u) for k, u in servers])
            units += [k for k, u in servers if u == 1]
            servers = [v for v in servers if v[1] < 1]
        return sorted(units, key=repr)

    exact = tree(lambda x: Fraction(x["c"], x["t"]))
    simso = tree(lambda x: Fraction(exact_ms(x["c"])) / Fraction(exact_ms(x["t"])))
    return exact != simso


def short_then_late(ws, first, ours, theirs):
    """The schedules are the same until the first differing job finished in schedlab;
    it finished later in SimSo, which had run it within ROUNDING_NS of its WCET by then:
    SimSo stopped it a few ns short (float budgets) and ran the rest only at a later
    decision instant."""
    _, name, k, x, y = first
    if not (isinstance(x[0], int) and isinstance(y[0], int) and not x[1] and not y[1]
            and y[0] > x[0]):
        return False
    d = divergence(ours["slices"], theirs["slices"])
    if d is not None and d[0] < x[0] - ROUNDING_NS:
        return False
    spec = next(v for v in ws["tasks"] if v["name"] == name)
    lo = release(spec, k)
    ran = sum(max(0, min(e, x[0]) - max(b, lo)) for b, e, n, _ in theirs["slices"] if n == name)
    return spec["c"] - ROUNDING_NS <= ran < spec["c"]


def short_of_wcet(ws, first, theirs):
    """The first differing job finished in schedlab, was aborted in SimSo, and had run
    there within ROUNDING_NS of its WCET: SimSo stopped it a few ns short (its times are
    floats) and never ran it again before its deadline."""
    _, name, k, x, y = first
    if not (isinstance(x[0], int) and not x[1] and y[1]):
        return False
    spec = next(v for v in ws["tasks"] if v["name"] == name)
    lo, hi = release(spec, k), release(spec, k + 1)
    ran = sum(max(0, min(e, hi) - max(b, lo)) for b, e, n, _ in theirs["slices"] if n == name)
    return spec["c"] - ROUNDING_NS <= ran < spec["c"]


def prid_favoured(ws, floor):
    """PriD's k - 1 favoured task names: the k with the smallest
    m(k) = (k - 1) + ceil(U(k+1..n) / (1 - u_k)) in floats (schedlab's rule counts the
    EDF part as one CPU at least, `floor`; SimSo's does not, so it may take k = n)."""
    tasks = sorted(ws["tasks"], key=lambda x: Fraction(-x["c"], x["t"]))
    rest, best = sum(x["c"] / x["t"] for x in tasks), None
    for km1, x in enumerate(tasks):
        u = x["c"] / x["t"]
        rest -= u
        if u >= 1.0:
            continue  # schedlab's rule; SimSo divides by zero (the set fails there)
        m = km1 + (max(1, math.ceil(max(rest, 0.0) / (1 - u))) if floor
                   else math.ceil(rest / (1 - u)))
        if best is None or m < best[0]:
            best = (m, km1 + 1)
    return {x["name"] for x in tasks[:(best[1] if best else 1) - 1]}


def edhs_plans(ws):
    """EDHS's plans, {task: cpu, or [(cpu, budget ns)] if split}: (schedlab's, SimSo's).
    Both place first fit in task order and split a task that fits nowhere over the CPUs
    with spare capacity, in CPU order. schedlab (crates/sim/src/policy/edhs.rs) works in
    f64 with a 1e-9 slack and takes each portion off the CPU's spare; SimSo (EDHS.init)
    sums Fraction(wcet) / Fraction(period) of its float ms and never takes a portion off
    (its bug)."""
    ours, load, split = {}, [0.0] * ws["cpus"], []
    for x in ws["tasks"]:
        u = x["c"] / x["t"]
        j = next((j for j in range(ws["cpus"]) if load[j] + u <= 1.0 + 1e-9), None)
        if j is None:
            split.append(x)
        else:
            load[j] += u
            ours[x["name"]] = j
    for x in split:
        rem, ours[x["name"]] = x["c"] / x["t"], []
        for j in range(ws["cpus"]):
            if rem <= 1e-9:
                break
            if 1.0 - load[j] <= 1e-9:
                continue
            u = min(rem, 1.0 - load[j])
            ours[x["name"]].append((j, max(1, math.ceil(u * x["t"] - 1e-6))))
            load[j] += u
            rem -= u
    theirs, cpus, split = {}, [Fraction(0)] * ws["cpus"], []
    for x in ws["tasks"]:
        u = Fraction(exact_ms(x["c"])) / Fraction(exact_ms(x["t"]))
        j = next((j for j in range(ws["cpus"]) if cpus[j] + u <= 1), None)
        if j is None:
            split.append(x)
        else:
            cpus[j] += u
            theirs[x["name"]] = j
    for x in split:
        rem = Fraction(exact_ms(x["c"])) / Fraction(exact_ms(x["t"]))
        theirs[x["name"]] = []
        for j in range(ws["cpus"]):
            if cpus[j] < 1 and rem > 0:
                u = min(rem, 1 - cpus[j])
                theirs[x["name"]].append((j, math.ceil(u * exact_ms(x["t"]) * MS)))
                rem -= u
    return ours, theirs


def edhs_rounded_budgets(ws):
    """The two EDHS plans place and split the same tasks on the same CPUs, and some split
    budget differs by 1 or 2 ns only: SimSo's ceil(u * period * cycles_per_ms) of a
    Fraction of float milliseconds, one cycle above the exact budget."""
    mine, simsos = edhs_plans(ws)
    return (all(edhs_same(mine[n], simsos.get(n)) for n in mine)
            and any(mine[n] != simsos.get(n) for n in mine))


def drifted(first, ours, theirs, near=20):
    """The schedules (to SimSo's rounding, `snap`) are the same until the first
    differing job's outcome (its earlier finish, or its deadline), and it finished within
    `near` ns in both or was aborted in one: a few ns of drift, not another decision."""
    when, _, _, x, y = first
    if isinstance(x[0], int) and isinstance(y[0], int) and abs(x[0] - y[0]) > near:
        return False
    d = divergence(ours["slices"], theirs["slices"])
    return d is None or d[0] >= when - near


def edhs_same(a, b):
    """Two EDHS plans agree: same placement, same portions up to 2 ns a budget (SimSo's
    ceil of a float product)."""
    if isinstance(a, int) or isinstance(b, int):
        return a == b
    return len(a) == len(b) and all(
        j == k and abs(x - y) <= 2 for (j, x), (k, y) in zip(a, b))


def favoured(policy, ws, task):
    """Whether EDF-US / PriD favours a task: (in schedlab, in SimSo). EDF-US: schedlab's
    EDF-US[m/(2m-1)], SimSo's EDF-US[1/2]."""
    if policy == "edf-us":
        m = ws["cpus"]
        return task["c"] * (2 * m - 1) > m * task["t"], 2 * task["c"] > task["t"]
    return (task["name"] in prid_favoured(ws, True),
            task["name"] in prid_favoured(ws, False))


def classify(entry, ws, ours, theirs, rules, penalties=None):
    """Name the pattern of a set's first difference and look it up in the rules."""
    policy = entry["policy"]
    t = None
    first = first_difference(ws, ours, theirs)
    late = False
    if first is not None:
        _, name, k, x, y = first
        spec = next(v for v in ws["tasks"] if v["name"] == name)
        late = x[1] and isinstance(y[0], int) and y[0] > release(spec, k + 1)
    if entry["placement"] == "partitioned" and ours["part"] != theirs["part"]:
        pattern = "partition"
        byname = {x["name"]: x for x in ws["tasks"]}
        load = {}
        for n, c in ours["part"].items():
            load[c] = load.get(c, 0) + Fraction(byname[n]["c"], byname[n]["t"])
        if any(v == 1 for v in load.values()):
            pattern = "partition-full-cpu"
        elif theirs["part"] == simso_next_fit_decreasing(ws):
            pattern = "partition-next-fit"
    elif penalties and late:
        pattern = "late-not-aborted"
    elif (policy == "edhs" and first is not None and edhs_rounded_budgets(ws)
          and drifted(first, ours, theirs)):
        pattern = "edhs-float-budget"
    elif entry["simso"] == "RUN" and run_float_tree(ws):
        pattern = "run-float-tree"
    elif entry["simso"] in FLOAT_BUDGETS and first is not None and short_of_wcet(ws, first, theirs):
        pattern = "simso-short-of-wcet"
    elif entry["simso"] in FLOAT_BUDGETS and first is not None and float_finish(first, ours, theirs):
        pattern = "simso-float-finish"
    elif entry["simso"] in FLOAT_BUDGETS and first is not None and short_then_late(ws, first, ours, theirs):
        pattern = "simso-short-then-late"
    elif (penalties and first is not None and isinstance(first[3][0], int)
          and isinstance(first[4][0], int) and penalty_sum(first[4][0] - first[3][0], penalties)
          and divergence(ours["slices"], theirs["slices"]) is not None
          and divergence(ours["slices"], theirs["slices"])[0] >= release(
              next(v for v in ws["tasks"] if v["name"] == first[1]), first[2])):
        # Same jobs, same order, up to the job's own release; its finish differs by a
        # sum of penalties: it resumed on another CPU in one tool than in the other.
        pattern = "penalty-cpu-choice"
    else:
        d = divergence(ours["slices"], theirs["slices"])
        if (d is None and policy == "nvnlf" and first is not None
                and all(isinstance(v[0], int) for v in first[3:5])
                and 0 < abs(first[3][0] - first[4][0]) <= 10):
            # The same schedule, a job finished a few ns apart: SimSo's float shares.
            pattern = "simso-float-share"
        elif d is None:
            pattern = "same-schedule"
        else:
            t, only_ours, only_theirs = d
            byname = {x["name"]: x for x in ws["tasks"]}
            # A tie: both tools run jobs of the same priorities at t (the same multiset
            # of keys), only different jobs among equals. Keys come from schedlab's
            # history, the same as SimSo's before t.
            q = entry.get("pfair_q")

            def key(n):
                if policy in ("edf-us", "prid"):
                    base = priority_key(policy, byname[n], t, ours["slices"])
                    return (0 if favoured(policy, ws, byname[n])[0] else 1, base)
                if policy in ("g-fl", "g-fl-zl"):
                    # G-FL's priority point, times m: m(r + D) - (m - 1)C.
                    x, m = byname[n], ws["cpus"]
                    point = m * (release(x, job_at(x, t)) + x["t"]) - (m - 1) * x["c"]
                    if policy == "g-fl":
                        return point
                    # Zero-laxity jobs share the top priority, as in EDZL.
                    zl = priority_key(policy, x, t, ours["slices"])
                    return zl if zl == (0, 0) else (1, point)
                if q:
                    return pfair_key(policy, byname[n], t, ours["slices"], q)
                if policy == "llref":
                    # Largest local remaining execution first.
                    return -llref_local(ws, ours, n, t)
                return priority_key(policy, byname[n], t, ours["slices"])

            def keys(names):
                return sorted(key(n) for n in names)

            same_keys = keys(only_ours) == keys(only_theirs)
            zero = {n for n in only_ours
                    if priority_key("edzl", byname[n], t, ours["slices"]) == (0, 0)}
            aborted_now = any(
                theirs["jobs"][x["name"]][k][1]
                for x in ws["tasks"] for k in [job_at(x, t) - 1]
                if (t - x["o"]) % x["t"] == 0 and 0 <= k < len(theirs["jobs"][x["name"]]))
            if aborted_now and any(dropped(n, t, byname[n], theirs) for n in only_ours):
                pattern = "abort-drops-running"
            elif (q and entry["simso"] in QUANTUM_TIMER and entry.get("as_released")
                  and t > 0 and any(released_at(byname[n], t) for n in only_ours)):
                # A job released at t runs at t in schedlab, not in SimSo as released,
                # whose decision at t may not see it (releases_first).
                pattern = "release-seen-late"
            elif entry["simso"] == "EPDF" and any(
                    epdf_float_window(byname[n], t, ours["slices"])
                    for n in only_ours | only_theirs):
                # A task that runs in one tool only has a subtask window that SimSo
                # computes one quantum off (simso_epdf_window).
                pattern = "simso-float-window"
            elif (entry["simso"] == "BF" and not any(x["o"] for x in ws["tasks"])
                  and operator.ne(*bf_optional(ws, t))):
                # The interval's optional quanta went to other tasks: SimSo ranks them
                # by its own formula (bf_optional).
                pattern = "simso-bf-ranking"
            elif policy in ("edf-us", "prid") and any(
                    operator.ne(*favoured(policy, ws, byname[n]))
                    for n in only_ours | only_theirs):
                # A task favoured in one tool only runs in one tool only. EDF-US: a
                # utilisation in (1/2, m/(2m-1)] (SimSo: EDF-US[1/2]); PriD: SimSo's k.
                pattern = f"{policy}-favoured-set"
            elif (policy in ("edf-us", "prid") and only_ours and only_theirs
                  and all(favoured(policy, ws, byname[n])[0]
                          for n in only_ours | only_theirs)):
                # Favoured jobs only: SimSo gives them all priority 0 (FIFO), schedlab
                # orders them by deadline.
                pattern = "favoured-order"
            elif policy == "edhs" and any(
                    not edhs_same(*(p.get(x["name"]) for p in edhs_plans(ws)))
                    for x in ws["tasks"]):
                # The two tools split tasks differently (edhs_plans).
                mine, simsos = edhs_plans(ws)
                load = {}
                for n, j in mine.items():
                    if isinstance(j, int):
                        load[j] = load.get(j, 0) + Fraction(byname[n]["c"], byname[n]["t"])
                if any(mine[n] != simsos.get(n) for n in mine if isinstance(mine[n], int)):
                    # First fit placed a task elsewhere: where schedlab filled a CPU to
                    # exactly 1, SimSo's sum of fractions of float ms exceeds 1.
                    pattern = ("edhs-full-cpu" if any(v == 1 for v in load.values())
                               else "edhs-placement")
                else:
                    pattern = "edhs-split-portions"
            elif policy == "nvnlf" and only_ours and only_theirs and len({
                    release(byname[n], job_at(byname[n], t))
                    for n in only_ours | only_theirs}) == 1:
                # Jobs released at one instant, running in one tool each: NVNLF hands
                # out spare capacity and CPUs in activation order, which neither tool
                # defines among simultaneous releases (SimSo: its event order).
                pattern = "nvnlf-activation-order"
            elif (policy == "nvnlf" and first is not None
                  and all(isinstance(v[0], int) for v in first[3:5])
                  and 0 < abs(first[3][0] - first[4][0]) <= 10):
                # The first differing job finished a few ns apart before the schedules
                # diverged: SimSo's shares ceil(window * C / T) in float cycles.
                pattern = "simso-float-share"
            elif (policy == "nvnlf" and only_ours and only_theirs
                  and nvnlf_order_differs(ws, ours, theirs, t, only_ours | only_theirs)):
                # A job running in one tool only was activated, at its release, in
                # another order than a job released with it: the spare capacity of the
                # windows since went to them in another order.
                pattern = "nvnlf-activation-order"
            elif policy == "mllf" and only_ours and only_theirs and not any(
                    released_at(x, t) for x in ws["tasks"]) and not any(
                    isinstance(j[0], int) and abs(j[0] - t) <= 10
                    for r in (ours, theirs) for js in r["jobs"].values() for j in js):
                # Neither a release nor a completion at t: schedlab decided at MLLF's
                # timer, which SimSo arms in cycles read as ms (it never fires).
                pattern = "mllf-no-timer"
            elif policy == "edcl" and only_theirs and any(
                    release(byname[n], job_at(byname[n], t)) + byname[n]["t"]
                    >= max(release(byname[r], job_at(byname[r], t)) + byname[r]["t"]
                           for r in running_at(theirs["slices"], t))
                    for n in zero):
                # A zero-laxity job runs in schedlab and waits in SimSo, whose EDCL lets
                # a promoted job preempt only a running job of later deadline.
                pattern = "edcl-promoted-waits"
            elif (policy == "mllf" and only_ours and only_theirs and not same_keys
                  and sorted(key(n)[0] for n in only_ours)
                  == sorted(key(n)[0] for n in only_theirs)
                  and max(key(n)[1] for n in only_ours)
                  < min(key(n)[1] for n in only_theirs)):
                # Equal laxities: schedlab ran the earlier deadlines, as MLLF's sort
                # (laxity, deadline) says; SimSo's float laxity put a later one first.
                pattern = "simso-float-laxity"
            elif only_ours and only_theirs and same_keys:
                pattern = "tie"
            elif (q and entry["simso"] in QUANTUM_TIMER and only_ours and only_theirs
                  and sorted(key(n)[:2] for n in only_ours)
                  == sorted(key(n)[:2] for n in only_theirs)
                  and max(key(n) for n in only_ours) <= min(key(n) for n in only_theirs)
                  and max(simso_pd2_key(byname[n], t, ours["slices"], q) for n in only_theirs)
                  <= min(simso_pd2_key(byname[n], t, ours["slices"], q) for n in only_ours)):
                # Same pseudo-deadlines and b-bits, different keys: each tool ran the
                # higher group deadline by its own formula (simso_pd2_key; SimSo's may
                # tie where schedlab's does not, then its ready list decides).
                pattern = "simso-group-deadline"
            elif policy in ("edzl", "g-fl-zl") and zero:
                # A zero-laxity job runs in schedlab and waits in SimSo behind a job of
                # positive laxity.
                pattern = "zero-laxity-missed"
            elif (only_ours and not only_theirs and t % MS == 0
                  and only_ours <= running_at(theirs["slices"], t + 1000)):
                pattern = "timer-overhead"
            elif entry["simso"] == "RUN" and float_instant(ours["slices"], theirs["slices"], t):
                # RUN idles CPUs in both tools (idle leaves); SimSo ends the idle time a
                # few ns off schedlab's exact instant.
                pattern = "simso-float-instant"
            elif (only_theirs and not only_ours
                  and all(pending(byname[n], t, ours) for n in only_theirs)):
                # schedlab leaves a CPU idle while the job SimSo runs there is pending in
                # schedlab too (released, not finished).
                pattern = "ours-idles-pending"
            elif float_instant(ours["slices"], theirs["slices"], t):
                pattern = "simso-float-instant"
            elif (only_ours and only_theirs and not any(released_at(x, t) for x in ws["tasks"])
                  and not any(t in (b, e) for b, e, *_ in snap(ours["slices"]))):
                # SimSo changes its schedule at an instant where schedlab has no event:
                # no release, and every job schedlab runs there runs on through it.
                pattern = "simso-no-event"
            elif policy == "llref" and llref_finished_bound(ws, ours, t):
                pattern = "simso-plane-counts-finished"
            elif (entry["simso"] == "EPDF" and only_ours and not only_theirs
                  and epdf_moved_job(theirs["slices"], t)):
                # SimSo idles the CPU a job left at t for another CPU (epdf_moved_job).
                pattern = "simso-epdf-moved-job"
            elif not only_ours or not only_theirs:
                pattern = "idle-cpu"
            else:
                pattern = "priority"
    for r in rules:
        if r["pattern"] == pattern and r.get("policy", policy) in (policy, entry["name"]):
            return pattern, r["class"], r["why"], t
    return pattern, "unclassified", "", t


def close(x, y):
    """Finish times within ROUNDING_NS of each other (both finished)."""
    return (isinstance(x[0], int) and isinstance(y[0], int) and x[1] == y[1]
            and abs(x[0] - y[0]) <= ROUNDING_NS)


def first_difference(ws, ours, theirs):
    """The first job (by the earlier of its two finish times) whose finish or abort
    differs by more than rounding; (when, task, index, ours, theirs) or None."""
    diffs = []
    for t in ws["tasks"]:
        a, b = ours["jobs"].get(t["name"], []), theirs["jobs"].get(t["name"], [])
        for k in range(max(len(a), len(b))):
            x = a[k] if k < len(a) else ("missing", False)
            y = b[k] if k < len(b) else ("missing", False)
            if x != y and not close(x, y):
                when = min(v for v in (x[0], y[0], release(t, k + 1)) if isinstance(v, int))
                diffs.append((when, t["name"], k, x, y))
    return min(diffs) if diffs else None


def show_schedule(slices, lo, hi, limit=16):
    shown = [f"cpu{c} {s / MS:.6g}-{e / MS:.6g} {n}" for s, e, n, c in slices if e > lo and s < hi]
    more = f"; ... {len(shown) - limit} more" if len(shown) > limit else ""
    return "; ".join(shown[:limit]) + more


def describe(ws):
    return (f"seed {ws['seed']}, {ws['cpus']} CPUs, {len(ws['tasks'])} tasks, "
            f"U = {ws['u']:.3f}: " + ", ".join(
                f"{t['name']}=({t['c'] / MS:g},{t['t'] / MS:g}"
                + (f",+{t['o'] / MS:g})" if t["o"] else ")") for t in ws["tasks"]))


def compare_policy(name, entry, sets, binary, rules, verbose, as_released=False,
                   timeout=0, penalties=None):
    row = {"policy": name, "simso": entry["simso"], "sets": 0, "jobs": 0, "identical": 0,
           "rounding": 0, "differing": 0, "sets_differing": 0, "classes": {}, "examples": []}
    with tempfile.TemporaryDirectory(prefix="simso-crosscheck.") as tmp:
        for ws in sets:
            try:
                s_jobs, s_slices, s_part, _ = schedlab_run(binary, ws, entry, tmp, penalties)
            except Unknown as e:
                row["skipped"] = str(e)
                return row
            except Unpartitioned:
                s_jobs = None
            try:
                o_jobs, o_slices, o_part = simso_run(ws, entry["simso"], as_released, timeout,
                                                     penalties,
                                                     () if as_released else entry.get("simso_align", ()))
            except Unpartitioned:
                o_jobs = None
            except SimsoCrash as e:
                row["simso_crash"] = row.get("simso_crash", 0) + 1
                if verbose:
                    print(f"\n[{name}] {describe(ws)}: SimSo failed: {e}", file=sys.stderr)
                continue
            except SimsoTimeout:
                row["simso_timeout"] = row.get("simso_timeout", 0) + 1
                if verbose:
                    print(f"\n[{name}] {describe(ws)}: SimSo did not finish in {timeout} s",
                          file=sys.stderr)
                continue
            if s_jobs is None or o_jobs is None:
                # A set one heuristic cannot place is not compared job by job; both
                # failing is agreement, one failing a difference of partition.
                both = s_jobs is None and o_jobs is None
                row["unplaced_both" if both else "unplaced_one"] = row.get(
                    "unplaced_both" if both else "unplaced_one", 0) + 1
                if not both and verbose:
                    print(f"\n[{name}] {describe(ws)}: only "
                          f"{'schedlab' if s_jobs is None else 'SimSo'} finds no partition",
                          file=sys.stderr)
                continue
            ours = {"jobs": s_jobs, "slices": s_slices, "part": s_part}
            theirs = {"jobs": o_jobs, "slices": o_slices, "part": o_part,
                      "activations": list(NVNLF_ACTIVATIONS)}
            row["sets"] += 1
            ndiff = nround = 0
            for t in ws["tasks"]:
                a, b = s_jobs[t["name"]], o_jobs[t["name"]]
                row["jobs"] += max(len(a), len(b))
                same = sum(1 for x, y in zip(a, b) if x == y)
                near = sum(1 for x, y in zip(a, b) if x != y and close(x, y))
                row["identical"] += same
                nround += near
                ndiff += max(len(a), len(b)) - same - near
            row["rounding"] += nround
            row["differing"] += ndiff
            if not ndiff:
                continue
            row["sets_differing"] += 1
            pattern, cls, why, t0 = classify(dict(entry, name=name, as_released=as_released),
                                             ws, ours, theirs, rules, penalties)
            c = row["classes"].setdefault(cls, {"sets": 0, "jobs": 0, "patterns": {}})
            c["sets"] += 1
            c["jobs"] += ndiff
            c["patterns"][pattern] = why
            task, k, x, y = first_difference(ws, ours, theirs)[1:]
            spec = next(t for t in ws["tasks"] if t["name"] == task)
            rel = release(spec, k)
            lo, hi = rel, release(spec, k + 1)
            if t0 is not None and t0 < hi:
                lo = min(lo, t0)
            ex = {"set": describe(ws), "job": f"{task}#{k}", "release_ms": rel / MS,
                  "schedlab": x, "simso": y, "pattern": pattern, "class": cls}
            if entry["placement"] == "partitioned" and ours["part"] != theirs["part"]:
                ex["partition"] = {"schedlab": s_part, "simso": o_part}
            row["examples"].append(ex)
            if verbose:
                print(f"\n[{name}] {describe(ws)}", file=sys.stderr)
                print(f"  first differing job {task}#{k} (released {rel / MS:g} ms): "
                      f"schedlab {fmt_job(x)}, SimSo {fmt_job(y)} -> {pattern}: {cls}"
                      + (f" (schedules diverge at {t0 / MS:g} ms)" if t0 is not None else ""),
                      file=sys.stderr)
                if "partition" in ex:
                    print(f"  partition schedlab {s_part}\n  partition SimSo    {o_part}",
                          file=sys.stderr)
                print(f"  schedlab: {show_schedule(s_slices, lo, hi)}", file=sys.stderr)
                print(f"  SimSo:    {show_schedule(o_slices, lo, hi)}", file=sys.stderr)
    return row


def fmt_job(j):
    fin, aborted = j
    if fin == "missing":
        return "no such job"
    return "aborted at its deadline" if aborted else f"finished at {fin / MS:.6f} ms"


# --------------------------------------------------------------------------- output
def table(rows, markdown):
    head = ("policy", "SimSo", "sets", "jobs", "identical", f"within {ROUNDING_NS} ns",
            "differing", "classification of the first difference of each set")
    lines = []
    for r in rows:
        if "skipped" in r:
            lines.append((r["policy"], r["simso"], "-", "-", "-", "-", "-",
                          "skipped: not in schedlab yet"))
            continue
        cls = "; ".join(f"{k}: {v['jobs']} jobs in {v['sets']} sets"
                        f" ({', '.join(sorted(v['patterns']))})"
                        for k, v in sorted(r["classes"].items())) or "-"
        for key, what in (("unplaced_both", "no partition in either tool"),
                          ("unplaced_one", "no partition in one tool only"),
                          ("simso_timeout", "SimSo did not finish (not compared)"),
                          ("simso_crash", "SimSo failed (not compared)")):
            if r.get(key):
                cls = f"{cls}; {what}: {r[key]} sets" if cls != "-" else f"{what}: {r[key]} sets"
        lines.append((r["policy"], r["simso"], str(r["sets"]), str(r["jobs"]),
                      str(r["identical"]), str(r["rounding"]), str(r["differing"]), cls))
    if markdown:
        out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        out += ["| " + " | ".join(x.replace("|", "\\|") for x in ln) + " |" for ln in lines]
        return "\n".join(out)
    width = [max(len(x[i]) for x in [head, *lines]) for i in range(len(head))]
    return "\n".join("  ".join(c.ljust(w) if i in (0, 1, 7) else c.rjust(w)
                               for i, (c, w) in enumerate(zip(row, width))).rstrip()
                     for row in [head, *lines])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--schedlab", required=True, help="the schedlab binary")
    ap.add_argument("--policies", default=DEFAULT_POLICIES,
                    help=f"comma-separated, or `all` (default {DEFAULT_POLICIES})")
    ap.add_argument("--sizes", default="2x4,4x8,8x16", help="CPUsxTASKS,...")
    ap.add_argument("--levels", default="0.5,0.75,0.9,1.0",
                    help="total utilisation as fractions of the CPU count")
    ap.add_argument("--seeds", type=int, default=10, help="sets per size and level")
    ap.add_argument("--known", default=KNOWN, help="classification rules (TOML)")
    ap.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    ap.add_argument("--verbose", action="store_true",
                    help="print each set's first differing job and both schedules")
    ap.add_argument("--simso-as-released", action="store_true",
                    help="keep the 1 µs overhead of SimSo's LLF timer (zeroed by default)")
    ap.add_argument("--offsets", action="store_true",
                    help="release each task first at a random whole ms in [0, T) (fewer ties)")
    ap.add_argument("--penalties", metavar="P,M",
                    help="fixed preemption and migration penalties in ns: SimSo's "
                         "FixedPenalty model, schedlab's platform.preemption/migration")
    ap.add_argument("--simso-timeout", type=float, default=20,
                    help="seconds SimSo may take on one set before it is left out (default 20)")
    ap.add_argument("--json", help="write every row (with examples) to this file")
    args = ap.parse_args(argv)

    names = list(POLICIES) if args.policies == "all" else [
        p for p in args.policies.split(",") if p]
    for n in names:
        if n not in POLICIES:
            sys.exit(f"simso_crosscheck.py: --policies: unknown `{n}` "
                     f"(known: {', '.join(POLICIES)})")
    with open(args.known, "rb") as f:
        rules = tomllib.load(f).get("rule", [])
    sizes = [tuple(int(v) for v in s.split("x")) for s in args.sizes.split(",") if s]
    penalties = None
    if args.penalties:
        try:
            penalties = tuple(int(v) for v in args.penalties.split(","))
            assert len(penalties) == 2 and min(penalties) >= 0
        except (ValueError, AssertionError):
            sys.exit("simso_crosscheck.py: --penalties: give PREEMPTION,MIGRATION in ns, "
                     f"not {args.penalties!r}")
    levels = [float(v) for v in args.levels.split(",") if v]

    rows, t0 = [], time.perf_counter()
    for n in names:
        entry = POLICIES[n]
        grain = MS if entry.get("quantum") else GRAIN_NS
        sets = [make_set(seed, m, k, lv, grain, args.offsets)
                for m, k in sizes for lv in levels for seed in range(args.seeds)]
        row = compare_policy(n, entry, sets, args.schedlab, rules, args.verbose,
                             args.simso_as_released, args.simso_timeout, penalties)
        if "skipped" in row:
            print(f"{n}: skipped, schedlab does not know it yet ({row['skipped']})",
                  file=sys.stderr)
        else:
            print(f"{n}: {row['sets']} sets, {row['jobs']} jobs, {row['identical']} "
                  f"identical ({time.perf_counter() - t0:.0f} s)", file=sys.stderr)
        rows.append(row)
    print(table(rows, args.markdown))
    if args.json:
        tmp = args.json + ".tmp"
        with open(tmp, "w") as f:
            json.dump(rows, f, indent=1)
            f.write("\n")
        os.replace(tmp, args.json)
    return 0 if all(not r.get("classes", {}).get("unclassified") for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
