"""SimSo's execution-time models in sweeps: a grid's `exec` (fractions of each task's
runtime) and a policy entry's own `platform:` block (fixed preemption/migration
penalties), through schedlab.sweep (docs/analysis.md)."""

import pytest

schedlab = pytest.importorskip("schedlab", reason="maturin develop (the Python package)")
SchedlabError, sweep = schedlab.SchedlabError, schedlab.sweep

# A fixed horizon: with random execution times `hyperperiod` is no longer a complete
# horizon, so the two runs compared below must cover the same time.
BASE = {"cpus": 1, "tasks": 6, "samples": 4, "seed": 3, "duration": "200ms",
        "periods": "divisors:100ms:10ms..100ms", "client": "serial", "analysis": False}


def test_full_uniform_is_the_wcet_and_half_the_work_fits(tmp_path):
    plain = sweep(utilizations=[1.9], policies=["edf"], **BASE)
    same = sweep(utilizations=[1.9], policies=["edf"], exec={"uniform": [1, 1]}, **BASE)
    cols = ["deadline_misses", "preemptions", "context_switches_per_cpu_per_s"]
    assert plain[cols].equals(same[cols])
    assert (plain["deadline_misses"] > 0).all()  # U = 1.9 on one CPU
    # Every job runs exactly half its WCET (stddev 0): U = 0.95, EDF on one CPU meets
    # every deadline, and with `uniform: [1, 1]` nothing changed.
    half = sweep(utilizations=[1.9], policies=["edf"], exec={"normal": [0.5, 0]}, **BASE)
    assert (half["deadline_misses"] == 0).all()


def test_a_policy_entry_carries_its_own_penalties():
    pen = {"policy": "edf", "label": "edf+pen", "platform": {"preemption": "100ms"}}
    df = sweep(utilizations=[0.9], policies=["edf", pen], **BASE)
    assert list(df["policy"].unique()) == ["edf", "edf+pen"]
    plain = df[df["policy"] == "edf"].reset_index(drop=True)
    paid = df[df["policy"] == "edf+pen"].reset_index(drop=True)
    # Same sets, same schedule up to the first preemption. A preempted job resumes
    # before its deadline (EDF, one CPU, U <= 1) and then needs 100 ms more, longer
    # than any period: a set with a preemption misses, one without does not.
    assert (plain["deadline_misses"] == 0).all()
    had = plain["preemptions"] > 0
    assert had.any()
    assert (paid.loc[had, "deadline_misses"] > 0).all()
    assert (paid.loc[~had, "deadline_misses"] == 0).all()


@pytest.mark.parametrize("bad,msg", [
    ({"normal": [0, 0.1]}, "exec.normal: [0.0, 0.1] must satisfy 0 < mean <= 1"),
    ({"uniform": [0.8, 0.5]}, "exec.uniform: [0.8, 0.5] must satisfy 0 < a <= b <= 1"),
    ({"gamma": [1, 1]}, "exec: unknown model `gamma`"),
    ("acet", "exec: give wcet, {uniform: [a, b]} or {normal: [mean, stddev]}"),
])
def test_a_bad_exec_is_named(bad, msg):
    with pytest.raises(SchedlabError, match=msg.replace("[", r"\[").replace("]", r"\]")
                       .replace("{", r"\{").replace("}", r"\}")):
        sweep(utilizations=[0.5], policies=["edf"], exec=bad, **BASE)
