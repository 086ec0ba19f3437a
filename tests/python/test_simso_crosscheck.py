"""scripts/simso_crosscheck.py on tiny cases: every job of a tie-free set agrees with
SimSo 0.8.5 under global EDF, SimSo's P_EDF_WF is recognised as next-fit decreasing, and
a policy schedlab lacks is skipped. Needs simso==0.8.5 importable (scripts/simso-
crosscheck.sh makes such a virtualenv; or PYTHONPATH to one), else skipped."""

import importlib.util
import json
import math
import sys

import pytest

pytest.importorskip(
    "simso", reason="SimSo 0.8.5 is not importable (pip install simso==0.8.5 simpy==2.3.1)")


@pytest.fixture(scope="module")
def xc(root):
    spec = importlib.util.spec_from_file_location(
        "simso_crosscheck", root / "scripts" / "simso_crosscheck.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["simso_crosscheck"] = mod
    spec.loader.exec_module(mod)
    return mod


def task_set(mod, cpus, tasks):
    """A set of (name, C ms, T ms) in the script's form, one hyperperiod long."""
    ts = [{"name": n, "c": round(c * mod.MS), "t": t * mod.MS, "o": 0} for n, c, t in tasks]
    hyper = 1
    for t in ts:
        hyper = hyper * t["t"] // math.gcd(hyper, t["t"])
    return {"seed": 0, "cpus": cpus, "level": 0, "tasks": ts, "horizon": hyper, "u": 0.0}


def test_a_tie_free_edf_set_agrees_job_by_job(xc, schedlab):
    # Global EDF, 2 CPUs, no two jobs with the same deadline ever compete:
    # t1 (2, 5), t3 (4.5, 5) and t2 (3, 10): 4 + 4 + 2 = 10 jobs in 20 ms, all on time.
    ws = task_set(xc, 2, [("t1", 2, 5), ("t2", 3, 10), ("t3", 4.5, 5)])
    ws["horizon"] = 20 * xc.MS
    row = xc.compare_policy("edf", xc.POLICIES["edf"], [ws], str(schedlab), [], False)
    assert row["sets"] == 1 and row["jobs"] == 10
    assert row["identical"] == 10 and row["differing"] == 0 and row["classes"] == {}


def test_simso_worst_fit_is_next_fit(xc, schedlab):
    # Decreasing order a8, a6, a3, a1 on 3 CPUs. Worst fit (schedlab wfd): a3 and a1 on the
    # empty CPU 2. Next fit (SimSo's decreasing_worst_fit): a8→0, a6→1, a3→1, a1→1.
    ws = task_set(xc, 3, [("a1", 1, 10), ("a3", 3, 10), ("a6", 6, 10), ("a8", 8, 10)])
    assert xc.simso_next_fit_decreasing(ws) == {"a8": 0, "a6": 1, "a3": 1, "a1": 1}
    _, _, part = xc.simso_run(ws, "P_EDF_WF")
    assert part == {"a1": 1, "a3": 1, "a6": 1, "a8": 0}
    rules = [{"pattern": "partition-next-fit", "class": "simso-bug", "why": "next fit"}]
    ours = {"part": {"a8": 0, "a6": 1, "a3": 2, "a1": 2}, "slices": [], "jobs": {}}
    theirs = {"part": part, "slices": [], "jobs": {}}
    entry = dict(xc.POLICIES["p-edf-wf"], name="p-edf-wf")
    assert xc.classify(entry, ws, ours, theirs, rules)[:2] == ("partition-next-fit", "simso-bug")


def test_the_script_runs_end_to_end_and_skips_unknown_policies(xc, schedlab, tmp_path, capsys):
    out = tmp_path / "rows.json"
    code = xc.main(["--schedlab", str(schedlab), "--policies", "edf,p-edf,pd2",
                    "--sizes", "2x4", "--levels", "0.5", "--seeds", "1",
                    "--markdown", "--json", str(out)])
    rows = {r["policy"]: r for r in json.loads(out.read_text())}
    ws = xc.make_set(0, 2, 4, 0.5, xc.GRAIN_NS)
    jobs = sum(ws["horizon"] // t["t"] for t in ws["tasks"])
    for name in ("edf", "p-edf"):
        r = rows[name]
        assert r["sets"] == 1 and r["jobs"] == jobs
        assert r["identical"] + r["rounding"] + r["differing"] == jobs
    assert "skipped" in rows["pd2"] or rows["pd2"]["sets"] == 1
    table = capsys.readouterr().out
    assert table.splitlines()[0].startswith("| policy | SimSo | sets |")
    # Exit status 1 means an unclassified difference; the EDF and P-EDF rows have none.
    unclassified = [r for r in rows.values() if r.get("classes", {}).get("unclassified")]
    assert code == (1 if unclassified else 0)


def test_offsets_are_whole_ms_below_the_period_and_lengthen_the_horizon(xc):
    ws = xc.make_set(4, 4, 8, 0.9, xc.GRAIN_NS, offsets=True)
    hyper = math.lcm(*(t["t"] for t in ws["tasks"]))
    assert all(t["o"] % xc.MS == 0 and 0 <= t["o"] < t["t"] for t in ws["tasks"])
    assert any(t["o"] for t in ws["tasks"])
    assert ws["horizon"] == max(t["o"] for t in ws["tasks"]) + 2 * hyper
    # The same set's tasks without offsets, one hyperperiod.
    plain = xc.make_set(4, 4, 8, 0.9, xc.GRAIN_NS)
    assert [(t["c"], t["t"]) for t in plain["tasks"]] == [(t["c"], t["t"]) for t in ws["tasks"]]
    assert plain["horizon"] == hyper
    # Job indices count from the offset.
    t = dict(ws["tasks"][0], o=3 * xc.MS, t=10 * xc.MS)
    assert [xc.job_at(t, v * xc.MS) for v in (0, 3, 12, 13)] == [-1, 0, 0, 1]
    assert xc.release(t, 2) == 23 * xc.MS


def test_pd2_group_deadlines_and_simsos_key(xc):
    # Weight 8/11 (Anderson & Srinivasan's figure): group deadlines 4, 4, 8, 8, 8, 11, 11, 11,
    # as schedlab's pd2 computes them.
    assert [xc.pd2_group_deadline(8, 11, i) for i in range(1, 9)] == [4, 4, 8, 8, 8, 11, 11, 11]
    assert xc.pd2_group_deadline(3, 7, 1) == 0  # light
    # (72, 100) ms at 0.1 ms: e = 720, L = 1000. T_24 is due at 34 (b = 1), T_25 at 35
    # (size 2), T_26 at 37 (size 3): the group deadline is 37 - 1 = 36. SimSo stops at the
    # last window of size 2 (35) and scales it by 1e6 cycles, not by the quantum.
    task = {"name": "a", "c": 72 * xc.MS, "t": 100 * xc.MS, "o": 0}
    slices = [(0, 2_300_000, "a", 0)]  # 23 quanta received: next is T_24
    assert xc.pfair_key("pd2", task, 3_100_000, slices, 100_000) == (34, False, -36)
    assert xc.simso_pd2_key(task, 3_100_000, slices, 100_000) == (34, False, -35_000_000.0)


def test_simso_epdf_windows_in_floats(xc):
    # 14 / (56/100) = 24.999999999999996: SimSo releases subtask 15 of (56, 100) at 24,
    # not 25 = floor(14 * 100 / 56).
    t = {"name": "a", "c": 56 * xc.MS, "t": 100 * xc.MS, "o": 0}
    assert xc.simso_epdf_window(t, 15) == (24, 27)
    assert xc.epdf_float_window(t, 24 * xc.MS, [(0, 14 * xc.MS, "a", 0)])
    # 21 / (35/100) = 60.00000000000001: subtask 21 of (35, 100) due at 61, not 60.
    t = {"name": "b", "c": 35 * xc.MS, "t": 100 * xc.MS, "o": 0}
    assert xc.simso_epdf_window(t, 21) == (57, 61)
    assert not xc.epdf_float_window(t, 0, [])  # subtask 1: (0, 3) in both


def test_simso_bf_gives_optional_quanta_by_its_own_ranking(xc):
    # 2 CPUs, interval [0, 5): mandatory 4 (t1), 1 (t2), 1 (t3), 2 (t4), 2 optional quanta.
    # Paper strings from 5: t1 ++, t2 +-, t4 +-+ (w(t+1) - floor(wt) - 1 at t = 5, 6, 7):
    # t1 and t4. SimSo: every alpha is -1 (bk1 = 5, bk2 = 100), smallest urgency factor
    # (1 - frac(5w))/w first: t2 (0.556), t1 (0.618).
    ws = task_set(xc, 2, [("t1", 89, 100), ("t2", 36, 100), ("t3", 1, 5), ("t4", 53, 100)])
    ws["horizon"] = 5 * xc.MS
    assert xc.bf_optional(ws, 0) == ({"t1", "t4"}, {"t1", "t2"})
    # SimSo's own schedule of [0, 5) agrees with that ranking: t2 runs 2 ms, t4 2 ms.
    _, slices, _ = xc.simso_run(ws, "BF")
    ran = {n: sum(min(e, 5 * xc.MS) - s for s, e, n2, _ in slices if n2 == n and s < 5 * xc.MS)
           for n in ("t1", "t2", "t3", "t4")}
    assert ran == {"t1": 5 * xc.MS, "t2": 2 * xc.MS, "t3": xc.MS, "t4": 2 * xc.MS}


def test_simso_pd2_sees_a_job_released_on_a_boundary_one_quantum_late(xc):
    # ER_PD2, 2 CPUs; t4's job released at 5 ms should run at once. As released, SimSo's
    # decision at 5 ms misses it (its activation is queued on its last CPU, after the
    # quantum timer): it starts at 5.1 ms. Aligned (the default), it starts at 5 ms.
    from simso.core.Task import GenericTask

    create = GenericTask.create_job
    ws = task_set(xc, 2, [("t1", 4, 20), ("t2", 8, 25), ("t3", 1, 20), ("t4", 2, 5)])

    def t4_starts(slices):
        return min(s for s, e, n, _ in slices if n == "t4" and s >= 5 * xc.MS)

    assert t4_starts(xc.simso_run(ws, "ER_PD2", as_released=True)[1]) == 5_100_000
    assert t4_starts(xc.simso_run(ws, "ER_PD2")[1]) == 5 * xc.MS
    assert GenericTask.create_job is create  # the alignment is undone after the run


def test_wcet_rounding_never_exceeds_the_target_utilisation(xc):
    from fractions import Fraction
    # Hand-checked: u = 0.58 and 0.46 round up to 3/5 and 5/10, the 1-grain task stays:
    # U = 1.15 > 1. The rounded-up task of the longest period loses a grain (U = 1.05);
    # it is then rounded down, so the 5-ms task loses one (U = 0.85).
    ms = xc.MS
    tasks = [{"name": "a", "c": 3 * ms, "t": 5 * ms, "o": 0},
             {"name": "b", "c": 5 * ms, "t": 10 * ms, "o": 0},
             {"name": "c", "c": 1 * ms, "t": 20 * ms, "o": 0}]
    excess = [Fraction(3, 5) - Fraction(58, 100), Fraction(5, 10) - Fraction(46, 100),
              Fraction(-1)]
    xc.repair_to_target(tasks, excess, Fraction(1), ms)
    assert [t["c"] // ms for t in tasks] == [2, 4, 1]
    # The set `run` refused (U = 501/250 on 2 CPUs) and every generated set: U <= level·m.
    assert sum(Fraction(t["c"], t["t"]) for t in xc.make_set(0, 2, 4, 1.0, xc.GRAIN_NS)["tasks"]) <= 2
    for m, n in ((2, 4), (4, 8), (8, 16)):
        for level in (0.5, 0.75, 0.9, 1.0):
            for seed in range(5):
                for grain in (xc.GRAIN_NS, xc.MS):
                    ws = xc.make_set(seed, m, n, level, grain)
                    u = sum(Fraction(t["c"], t["t"]) for t in ws["tasks"])
                    assert u <= Fraction(str(level)) * m, (seed, m, n, level, grain)
                    assert all(grain <= t["c"] <= t["t"] and t["c"] % grain == 0
                               for t in ws["tasks"])


def test_simso_run_packs_worst_fit_decreasing_when_aligned(xc):
    from collections import namedtuple
    from fractions import Fraction

    import simso.schedulers.RUN as run_mod
    from simso.schedulers.RUNServer import TaskServer

    task = namedtuple("T", ["utilization"])

    def bins(pack):
        servers = [TaskServer(task(Fraction(u, 10))) for u in (3, 5, 4, 6)]
        return [[int(c.utilization * 10) for c in b.children] for b in pack(servers)]

    assert bins(run_mod.pack) == [[3, 5], [4, 6]]  # SimSo: first fit, task order
    with xc.simso_wfd_pack(True):
        assert bins(run_mod.pack) == [[6, 3], [5, 4]]  # schedlab: worst fit decreasing
    assert bins(run_mod.pack) == [[3, 5], [4, 6]]


def test_simso_run_stops_a_job_one_ns_short_of_its_wcet_and_aborts_it(xc, schedlab):
    # SimSo's server utilisation is Fraction(28.9) / Fraction(50) from float ms, a hair
    # below 289/500: t2's budget ends 1 ns before its job's WCET, the job is never run
    # again and is aborted at 50 ms; schedlab finishes it at 30.5 ms.
    ws = xc.make_set(0, 2, 4, 0.75, xc.GRAIN_NS)
    assert [(t["c"], t["t"]) for t in ws["tasks"]][1] == (28_900_000, 50_000_000)
    jobs, slices, _ = xc.simso_run(ws, "RUN", align=("wfd-pack",))
    assert jobs["t2"][0] == (None, True)
    ran = sum(min(e, 50 * xc.MS) - s for s, e, n, _ in slices if n == "t2" and s < 50 * xc.MS)
    assert ran == 28_900_000 - 1
    theirs = {"jobs": jobs, "slices": slices}
    first = (0, "t2", 0, (30_500_000, False), jobs["t2"][0])
    assert xc.short_of_wcet(ws, first, theirs)
    assert not xc.short_of_wcet(ws, (0, "t2", 0, (30_500_000, False), (30_500_000, False)),
                                theirs)


def test_float_instant_is_a_schedule_change_a_few_ns_apart(xc):
    ours = [(0, 6_890_000, "a", 0), (6_890_000, 9_000_000, "b", 0)]
    theirs = [(0, 6_889_990, "a", 0), (6_889_990, 9_000_000, "c", 0)]
    assert xc.float_instant(ours, theirs, 6_889_990)
    assert not xc.float_instant(ours, ours, 6_890_000)
    assert not xc.float_instant(ours, [(0, 6_890_000, "a", 0), (6_890_000, 9_000_000, "c", 0)],
                                6_890_000)


def test_pending_and_float_finish(xc):
    ms = xc.MS
    task = {"name": "a", "c": 2 * ms, "t": 10 * ms, "o": 0}
    run = {"jobs": {"a": [(5 * ms, False), (None, True)]}, "slices": []}
    assert xc.pending(task, 4 * ms, run) and not xc.pending(task, 5 * ms, run)
    assert not xc.pending(task, 12 * ms, run)  # aborted
    assert not xc.pending(task, 25 * ms, run)  # not generated
    # Same schedule, ends 3 ns apart: float finish; 30 ns apart: not.
    ours = {"slices": [(0, 2 * ms, "a", 0)]}
    theirs = {"slices": [(0, 2 * ms - 3, "a", 0)]}
    first = (2 * ms - 3, "a", 0, (2 * ms, False), (2 * ms - 3, False))
    assert xc.float_finish(first, ours, theirs)
    far = {"slices": [(0, 2 * ms - 30, "a", 0)]}
    assert not xc.float_finish((0, "a", 0, (2 * ms, False), (2 * ms - 30, False)), ours, far)
    # An earlier divergence (another task) is not a float finish.
    other = {"slices": [(0, 2 * ms - 3, "a", 0), (ms, 2 * ms, "b", 1)]}
    assert not xc.float_finish(first, ours, other)


def test_simso_u_edf_runs_a_job_past_its_allotment(xc, schedlab, tmp_path):
    # Seed 2 of 2x4 at 0.75: at 15.8 ms t4's job (1 ms, released at 15) has used its
    # allotments; schedlab idles CPU 0 until 19.8 ms, SimSo runs t4 on to 16 ms.
    ws = xc.make_set(2, 2, 4, 0.75, xc.GRAIN_NS)
    entry = dict(xc.POLICIES["u-edf"], name="u-edf")
    s_jobs, s_slices, s_part, _ = xc.schedlab_run(str(schedlab), ws, entry, str(tmp_path))
    o_jobs, o_slices, o_part = xc.simso_run(ws, "U_EDF")
    ours = {"jobs": s_jobs, "slices": s_slices, "part": s_part}
    theirs = {"jobs": o_jobs, "slices": o_slices, "part": o_part}
    assert s_jobs["t4"][3] == (20 * xc.MS, False) and o_jobs["t4"][3] == (16 * xc.MS, False)
    import tomllib
    with open(xc.KNOWN, "rb") as f:
        rules = tomllib.load(f)["rule"]
    pattern, cls, _, t = xc.classify(entry, ws, ours, theirs, rules)
    assert (pattern, cls, t) == ("ours-idles-pending", "model", 15_800_000)


def test_simso_dp_wrap_without_mirroring_is_schedlabs_dp_wrap(xc, schedlab, tmp_path):
    ws = xc.make_set(0, 2, 4, 0.75, xc.GRAIN_NS)
    entry = dict(xc.POLICIES["dp-wrap"], name="dp-wrap")
    s_jobs, *_ = xc.schedlab_run(str(schedlab), ws, entry, str(tmp_path))
    mirrored, *_ = xc.simso_run(ws, "DP_WRAP")
    aligned, *_ = xc.simso_run(ws, "DP_WRAP", align=("no-mirror",))
    assert aligned == s_jobs
    assert mirrored != s_jobs


def test_simso_llref_runs_a_job_past_its_local_budget(xc, schedlab, tmp_path):
    # Seed 0 of 2x4 at 0.5: t3 = (7.1, 10) gets 0.71 * 5 = 3.55 ms of the TL-plane
    # [0, 5). At 1.42 ms only t3 has budget; SimSo selects t3 and a job of budget 0, arms
    # no timer and runs t3 to 5 ms (and finishes it at 7.1); schedlab stops it at 3.55.
    ws = xc.make_set(0, 2, 4, 0.5, xc.GRAIN_NS)
    entry = dict(xc.POLICIES["llref"], name="llref")
    s_jobs, s_slices, s_part, _ = xc.schedlab_run(str(schedlab), ws, entry, str(tmp_path))
    o_jobs, o_slices, o_part = xc.simso_run(ws, "LLREF")
    assert s_jobs["t3"][0] == (8_550_000, False) and o_jobs["t3"][0] == (7_100_000, False)
    assert (0, 3_550_000, "t3", 0) in s_slices
    ours = {"jobs": s_jobs, "slices": s_slices, "part": s_part}
    theirs = {"jobs": o_jobs, "slices": o_slices, "part": o_part}
    import tomllib
    with open(xc.KNOWN, "rb") as f:
        rules = tomllib.load(f)["rule"]
    pattern, cls, _, t = xc.classify(entry, ws, ours, theirs, rules)
    assert (pattern, cls, t) == ("ours-idles-pending", "simso-bug", 3_550_000)


def test_simso_llref_stale_timer_resorts_at_no_event(xc, schedlab, tmp_path):
    # Seed 8 of 2x4 at 1.0: at 25 ms SimSo decides before and after t3's release; the
    # first decision's timer (t4's budget, 1.8 ms) fires at 26.8 ms, where LLREF has no
    # event, and t4 preempts t3 in SimSo only.
    ws = xc.make_set(8, 2, 4, 1.0, xc.GRAIN_NS)
    entry = dict(xc.POLICIES["llref"], name="llref")
    s_jobs, s_slices, s_part, _ = xc.schedlab_run(str(schedlab), ws, entry, str(tmp_path))
    o_jobs, o_slices, o_part = xc.simso_run(ws, "LLREF")
    ours = {"jobs": s_jobs, "slices": s_slices, "part": s_part}
    theirs = {"jobs": o_jobs, "slices": o_slices, "part": o_part}
    assert "t3" in xc.running_at(s_slices, 26_800_000)
    assert "t4" in xc.running_at(o_slices, 26_800_000)
    import tomllib
    with open(xc.KNOWN, "rb") as f:
        rules = tomllib.load(f)["rule"]
    pattern, cls, _, t = xc.classify(entry, ws, ours, theirs, rules)
    assert (pattern, cls, t) == ("simso-no-event", "simso-bug", 26_800_000)


def test_prid_favoured_sets_with_and_without_the_one_cpu_floor(xc):
    # u = 0.75, 0.625, 0.5 (exact in binary). m(1) = ceil(1.125 / 0.25) = 5,
    # m(2) = 1 + ceil(0.5 / 0.375) = 3, m(3) = 2 + ceil(0 / 0.5) = 2 in SimSo (k = 3:
    # a and b favoured), 2 + 1 = 3 with schedlab's floor (the first minimum, k = 2: a).
    ws = task_set(xc, 2, [("a", 7.5, 10), ("b", 6.25, 10), ("c", 2.5, 5)])
    ws["horizon"] = 10 * xc.MS
    assert xc.prid_favoured(ws, True) == {"a"}
    assert xc.prid_favoured(ws, False) == {"a", "b"}
    assert [xc.favoured("prid", ws, x) for x in ws["tasks"]] == [
        (True, True), (False, True), (False, False)]
    # SimSo's own PriD runs its favoured a and b at 0; schedlab's EDF part would run c
    # (deadline 5) before b (deadline 10).
    _, slices, _ = xc.simso_run(ws, "PriD")
    assert xc.running_at(slices, 0) == {"a", "b"}


def test_edf_us_favours_above_m_over_2m_minus_1_simso_above_half(xc):
    # 2 CPUs: m/(2m-1) = 2/3. u = 0.6 is favoured in SimSo only, 0.7 in both, 0.5 in none.
    ws = task_set(xc, 2, [("a", 6, 10), ("b", 7, 10), ("c", 5, 10)])
    assert [xc.favoured("edf-us", ws, x) for x in ws["tasks"]] == [
        (False, True), (True, True), (False, False)]


def test_edhs_simso_gives_two_split_tasks_the_same_spare(xc):
    # 3 CPUs, first fit: a, b, c (0.7 each) one per CPU; d and e (0.4) fit nowhere.
    # schedlab: d takes 0.3 of CPU 0 and 0.1 of CPU 1, e the 0.2 left on CPU 1 and 0.2
    # of CPU 2. SimSo never takes a portion off a CPU's spare: e gets d's portions again.
    ws = task_set(xc, 3, [("a", 7, 10), ("b", 7, 10), ("c", 7, 10), ("d", 4, 10),
                          ("e", 4, 10)])
    ours, theirs = xc.edhs_plans(ws)
    ms = xc.MS
    placed = {"a": 0, "b": 1, "c": 2}
    assert ours == {**placed, "d": [(0, 3 * ms), (1, ms)], "e": [(1, 2 * ms), (2, 2 * ms)]}
    assert theirs == {**placed, "d": [(0, 3 * ms), (1, ms)], "e": [(0, 3 * ms), (1, ms)]}


def test_simso_activates_simultaneous_releases_in_its_event_order(xc, monkeypatch):
    # NVNLF's spare capacity goes in activation order. Seed 0 of 2x4 at level 0.75:
    # t1 = (0.8, 20) and t3 = (4.2, 10) are both released at 80 ms; SimSo activates t3
    # first (its event order), schedlab t1 (task order): nvnlf-activation-order.
    from simso.schedulers import NVNLF as nvnlf

    log, orig = [], nvnlf.NVNLF.on_activate

    def on_activate(self, job):
        log.append((self.sim.now() // self.sim.cycles_per_ms, job.task.name))
        return orig(self, job)

    monkeypatch.setattr(nvnlf.NVNLF, "on_activate", on_activate)
    ws = xc.make_set(0, 2, 4, 0.75, 100_000)
    assert [(x["c"], x["t"]) for x in ws["tasks"]][0::2] == [(800_000, 20 * xc.MS),
                                                            (4_200_000, 10 * xc.MS)]
    xc.simso_run(ws, "NVNLF")
    assert [n for t, n in log if t == 0] == ["t1", "t2", "t3", "t4"]
    assert [n for t, n in log if t == 80] == ["t3", "t1"]


def test_edhs_simso_refuses_a_cpu_filled_to_exactly_one(xc):
    # 0.016 + 0.268 + 0.116 + 0.6 = 1 exactly: schedlab keeps all four on CPU 0; SimSo's
    # sum of Fraction(0.4) / Fraction(25)... (binary fractions of float ms) is
    # 1 + 1/225179981368524800 at the last task, which goes to CPU 1.
    ws = task_set(xc, 2, [("t1", 0.4, 25), ("t2", 6.7, 25), ("t3", 2.9, 25), ("t4", 30, 50)])
    ours, theirs = xc.edhs_plans(ws)
    assert ours == {"t1": 0, "t2": 0, "t3": 0, "t4": 0}
    assert theirs == {"t1": 0, "t2": 0, "t3": 0, "t4": 1}
    _, slices, _ = xc.simso_run(ws, "EDHS")
    assert {c for s, e, n, c in slices if n == "t4"} == {1}


def _classified(xc, policy, ws, schedlab, tmp_path):
    """Both runs of `ws` under `policy` and the script's classification of the set."""
    import tomllib
    entry = dict(xc.POLICIES[policy], name=policy)
    s_jobs, s_slices, s_part, _ = xc.schedlab_run(str(schedlab), ws, entry, str(tmp_path))
    o_jobs, o_slices, o_part = xc.simso_run(ws, entry["simso"])
    ours = {"jobs": s_jobs, "slices": s_slices, "part": s_part}
    theirs = {"jobs": o_jobs, "slices": o_slices, "part": o_part}
    with open(xc.KNOWN, "rb") as f:
        rules = tomllib.load(f)["rule"]
    return ours, theirs, xc.classify(entry, ws, ours, theirs, rules)


def test_llref_ties_are_equal_local_remaining_executions(xc, schedlab, tmp_path):
    # Seed 1 of 8x16 at 0.75: at 3.13 ms t5 = (0.2, 5) and t16 = (2.6, 20) both have
    # 0.2 ms of local remaining execution in the TL-plane [0, 5) (t16: 0.65 - 0.45 run);
    # schedlab runs t5 (task order), SimSo t16 ("t16_1" < "t5_1", its sort by name).
    ws = xc.make_set(1, 8, 16, 0.75, xc.GRAIN_NS)
    ours, theirs, (pattern, cls, _, t) = _classified(xc, "llref", ws, schedlab, tmp_path)
    assert t == 3_130_000
    assert xc.llref_local(ws, ours, "t5", t) == xc.llref_local(ws, ours, "t16", t) == 200_000
    assert "t5" in xc.running_at(ours["slices"], t) and "t16" in xc.running_at(theirs["slices"], t)
    assert (pattern, cls) == ("tie", "tie")


def test_simso_epdf_moves_a_job_and_idles_the_cpu_it_left(xc, schedlab, tmp_path):
    # 2 CPUs, a = (42, 50), b = (1, 5), c = (47, 50), 1 ms quanta. At 6 ms c's next
    # subtask gets CPU 1 while its current one still holds CPU 0 (its end timer fires
    # later in the instant): c moves, CPU 0 idles for the quantum although b's second
    # subtask (released at 5) is eligible. schedlab runs b at 6.
    ws = task_set(xc, 2, [("a", 42, 50), ("b", 1, 5), ("c", 47, 50)])
    ws["horizon"] = 10 * xc.MS
    ours, theirs, (pattern, cls, _, t) = _classified(xc, "epdf", ws, schedlab, tmp_path)
    assert xc.running_at(theirs["slices"], 6 * xc.MS) == {"c"}
    assert "b" in xc.running_at(ours["slices"], 6 * xc.MS)
    assert xc.epdf_moved_job(theirs["slices"], 6 * xc.MS)
    assert not xc.epdf_moved_job(ours["slices"], 6 * xc.MS)
    assert (pattern, cls, t) == ("simso-epdf-moved-job", "simso-bug", 6 * xc.MS)


def test_simso_edhs_split_budget_one_cycle_over(xc, schedlab, tmp_path):
    # Seed 5 of 2x4 at 1.0: t4 = (4.4, 5) is split 0.367 on CPU 0, 0.513 on CPU 1;
    # SimSo's first portion is ceil(Fraction(4.4) / Fraction(5.0) ... * 5e6) = 1835001
    # cycles, schedlab's 1835000: t1, on CPU 0, finishes 4 ns late in SimSo at 17.54 ms.
    ws = xc.make_set(5, 2, 4, 1.0, xc.GRAIN_NS)
    mine, simsos = xc.edhs_plans(ws)
    assert mine["t4"] == [(0, 1_835_000), (1, 2_565_000)]
    assert simsos["t4"] == [(0, 1_835_001), (1, 2_565_000)]
    assert xc.edhs_rounded_budgets(ws)
    ours, theirs, (pattern, cls, _, _) = _classified(xc, "edhs", ws, schedlab, tmp_path)
    assert ours["jobs"]["t1"][0] == (17_540_000, False)
    assert theirs["jobs"]["t1"][0] == (17_540_004, False)
    assert (pattern, cls) == ("edhs-float-budget", "simso-bug")


def test_simso_llref_plane_counts_a_job_finished_at_a_release(xc, schedlab, tmp_path):
    # Seed 3 of 4x8 at 0.75 with offsets: at 9 ms t4 = (1, 5, +3) completes and t6 =
    # (0.6, 5, +4) is released. schedlab's TL-plane ends at 14 (t6's deadline; t4 has no
    # work left): t6 gets 0.6 ms and finishes at 9.6. SimSo's on_activate runs before the
    # completion is processed and ends the plane at t4's deadline, 13: t6 gets 0.48 ms,
    # stops at 9.48 and finishes at 13.12.
    ws = xc.make_set(3, 4, 8, 0.75, xc.GRAIN_NS, offsets=True)
    ours, theirs, (pattern, cls, _, t) = _classified(xc, "llref", ws, schedlab, tmp_path)
    assert ours["jobs"]["t4"][1] == (9 * xc.MS, False)
    assert ours["jobs"]["t6"][1] == (9_600_000, False)
    assert theirs["jobs"]["t6"][1] == (13_120_000, False)
    assert (pattern, cls, t) == ("simso-plane-counts-finished", "model", 9_480_000)


def test_speed_rows_time_both_tools_per_simulated_second(root, schedlab, tmp_path):
    spec = importlib.util.spec_from_file_location(
        "simso_speed", root / "scripts" / "simso_speed.py")
    sp = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sp)
    path = tmp_path / "set.json"
    path.write_text(json.dumps({
        "name": "tiny", "platform": {"cpus": 2}, "duration": "100ms",
        "tasks": [{"name": "a", "runtime": "2500us", "period": "5ms"},
                  {"name": "b", "runtime": "3ms", "period": "10ms"}]}))
    ws = sp.load_set(str(path))
    assert (ws["cpus"], ws["duration"]) == (2, 100 * 1_000_000)
    # The Pfair rows round WCETs up to their quantum (EPDF 1 ms), the others keep them.
    assert [t["c"] for t in sp.for_policy(ws, "epdf", 10)["tasks"]] == [3_000_000, 3_000_000]
    assert [t["c"] for t in sp.for_policy(ws, "edf", 10)["tasks"]] == [2_500_000, 3_000_000]
    r = sp.row("edf", ws, str(schedlab), 50 * 1_000_000, str(tmp_path))
    # schedlab over 100 ms (20 + 10 jobs), SimSo over 50 ms (10 + 5), none late.
    assert (r["schedlab_jobs"], r["schedlab_misses"]) == (30, 0)
    assert (r["simso_jobs"], r["simso_misses"]) == (15, 0)
    assert r["schedlab_s_per_sim_s"] == pytest.approx(r["schedlab_wall_s"] / 0.1)
    assert r["simso_s_per_sim_s"] == pytest.approx(r["simso_wall_s"] / 0.05)
    assert r["ratio"] == pytest.approx(r["simso_s_per_sim_s"] / r["schedlab_s_per_sim_s"])
    assert "no global pair" in sp.row("p-edf", ws, str(schedlab), 10, str(tmp_path))["skipped"]
    assert sp.table([r], ws, True).splitlines()[2].startswith("| policy | SimSo |")


def test_run_float_tree_where_exact_rates_fill_a_bin_to_one(xc):
    # Seed 3 of 2x4 at 0.5: 0.6 + 0.268 + 0.116 + 0.016 = 1 exactly, so schedlab packs
    # all four tasks into one unit server (one CPU, the other idle); SimSo's
    # Fraction(0.4) / Fraction(25) and the others sum to 1 + 4e-18 and t1 opens a bin.
    ws = xc.make_set(3, 2, 4, 0.5, xc.GRAIN_NS)
    assert [(t["c"], t["t"]) for t in ws["tasks"]] == [
        (400_000, 25_000_000), (6_700_000, 25_000_000), (2_900_000, 25_000_000),
        (30_000_000, 50_000_000)]
    assert xc.run_float_tree(ws)
    # Rates that fill no bin to exactly 1: the same tree in both.
    assert not xc.run_float_tree(task_set(xc, 2, [("a", 3, 10), ("b", 5, 10), ("c", 4, 10)]))


def test_short_then_late_is_a_job_one_ns_short_finished_at_a_later_instant(xc):
    ms = xc.MS
    ws = task_set(xc, 1, [("a", 2, 10)])
    ours = {"slices": [(0, 2 * ms, "a", 0)]}
    # SimSo stops a 1 ns short at 2 ms and runs that ns at 5 ms.
    theirs = {"slices": [(0, 2 * ms - 1, "a", 0), (5 * ms, 5 * ms + 1, "a", 0)]}
    first = (2 * ms, "a", 0, (2 * ms, False), (5 * ms + 1, False))
    assert xc.short_then_late(ws, first, ours, theirs)
    # 1 ms short is not a float budget.
    short = {"slices": [(0, ms, "a", 0), (5 * ms, 6 * ms, "a", 0)]}
    assert not xc.short_then_late(ws, (2 * ms, "a", 0, (2 * ms, False), (6 * ms, False)),
                                  ours, short)
    # Aborted in SimSo: short_of_wcet's case, not this one.
    assert not xc.short_then_late(ws, (2 * ms, "a", 0, (2 * ms, False), (None, True)),
                                  ours, theirs)
