"""The Python package `schedlab` (PyO3): the same numbers as the command line's JSON, the
same messages as its errors, DataFrames and generated sets that load."""

import json

import pandas as pd
import pytest

schedlab = pytest.importorskip(
    "schedlab", reason="the schedlab Python package is not installed (pip install .)"
)


def _strip(d):
    """The JSON object without its one non-deterministic field (wall_s)."""
    return {k: v for k, v in d.items() if k != "wall_s"}


@pytest.mark.parametrize(
    "workload, policy, placement",
    [
        ("examples/dhall.yaml", "edf", "global"),
        ("examples/dhall.yaml", "llf", "linux"),
        ("examples/table1.yaml", "illf", "linux"),
        ("examples/table1.yaml", "rm", "partitioned"),
    ],
)
def test_python_api_equals_cli_json(root, simulate_json, workload, policy, placement):
    cli = simulate_json(
        workload, "--policy", policy, "--placement", placement, "--duration", "2s"
    )
    py = schedlab.simulate(
        root / workload, policy=policy, placement=placement, duration="2s"
    )
    assert _strip(py.to_dict()) == _strip(cli)
    assert py.deadline_misses == cli["deadline_misses"]
    assert py.tasks_df["misses"].tolist() == [t["misses"] for t in cli["tasks"]]
    assert len(py.cpus_df) == cli["cpus"]


def test_jobs_frame_equals_jobs_csv(root, run, tmp_path):
    csv = tmp_path / "jobs.csv"
    run(
        "simulate",
        "examples/dhall.yaml",
        "--policy",
        "edf",
        "--placement",
        "global",
        "--jobs-csv",
        csv,
    )
    py = schedlab.simulate(
        root / "examples/dhall.yaml", policy="edf", placement="global"
    )
    pd.testing.assert_frame_equal(py.jobs_df, pd.read_csv(csv))
    assert int(py.jobs_df["missed"].sum()) == py.deadline_misses
    assert schedlab.simulate(root / "examples/dhall.yaml", jobs=False).jobs_df is None


def test_dict_workload_and_overrides(run, tmp_path):
    w = schedlab.generate(10, 2.5, 4, seed=5)
    assert isinstance(w, dict) and len(w["tasks"]) == 10
    path = tmp_path / "w.json"
    path.write_text(json.dumps(w))
    py = schedlab.simulate(
        w, policy="llf", cpus=2, seed=3, duration="500ms", on_miss="abort"
    )
    cli = json.loads(
        run(
            "simulate",
            path,
            "--policy",
            "llf",
            "--cpus",
            "2",
            "--seed",
            "3",
            "--duration",
            "500ms",
            "--on-miss",
            "abort",
            "--json",
        ).stdout
    )
    assert _strip(py.to_dict()) == _strip(cli)
    assert py.cpus == 2 and py.duration_ns == 500_000_000


def test_hyperperiod_duration_and_partition_keys():
    # Periods 10 and 15 ms: the hyperperiod is 30 ms, which `hyperperiod` simulates whole.
    # RM on one CPU: R(a) = 3 ms, R(b) = 5 + 3 = 8 ms <= 15 ms, so ffd-rm puts both on CPU 0.
    w = {
        "platform": {"cpus": 2},
        "tasks": [
            {"name": "a", "runtime": "3ms", "period": "10ms"},
            {"name": "b", "runtime": "5ms", "period": "15ms"},
        ],
    }
    r = schedlab.simulate(
        w, policy="rm", placement="partitioned", duration="hyperperiod"
    )
    assert r.duration_ns == 30_000_000 and r.hyperperiod_ns == 30_000_000
    assert r.horizon_complete is True and r.deadline_misses == 0
    assert r.partition == {
        "method": "ffd-rm",
        "certified": True,
        "cpus": [["a", "b"], []],
    }
    short = schedlab.simulate(w, duration="hyperperiod<=20ms")
    assert short.duration_ns == 20_000_000 and short.horizon_complete is False
    assert short.partition is None
    with pytest.raises(schedlab.SchedlabError, match="hyperperiod<=20s"):
        schedlab.simulate(w, duration="hyperperiodic")


def test_generate_and_analyze_equal_the_cli(run, tmp_path):
    yaml = schedlab.generate(12, 3.1, 4, method="randfixedsum", seed=9, format="yaml")
    cli_yaml = run(
        "generate",
        "--tasks",
        "12",
        "--utilization",
        "3.1",
        "--cpus",
        "4",
        "--method",
        "randfixedsum",
        "--seed",
        "9",
    ).stdout
    assert yaml == cli_yaml
    f = tmp_path / "set.yaml"
    f.write_text(yaml)
    cli = json.loads(run("analyze", f, "--json").stdout)
    assert schedlab.analyze(f) == cli
    assert [t["test"] for t in cli["tests"]] == schedlab.TESTS
    one = schedlab.analyze(f, cpus=1)
    assert one["cpus"] == 1
    assert {t["test"]: t["outcome"] for t in one["tests"]}[
        "edf-util"
    ] == "unschedulable"


def test_errors_carry_the_cli_messages(root, run, tmp_path):
    bad = run("simulate", "examples/dhall.yaml", "--policy", "sjf", check=False)
    with pytest.raises(schedlab.SchedlabError, match="unknown policy `sjf`"):
        schedlab.simulate(root / "examples/dhall.yaml", policy="sjf")
    assert "unknown policy `sjf`" in bad.stderr
    missing = tmp_path / "missing.yaml"
    cli = run("simulate", missing, check=False).stderr.removeprefix("error: ").strip()
    with pytest.raises(schedlab.SchedlabError) as e:
        schedlab.simulate(missing)
    assert str(e.value) == cli
    with pytest.raises(schedlab.SchedlabError, match="utilization -1 is negative"):
        schedlab.generate(4, -1.0)
    with pytest.raises(schedlab.SchedlabError, match="cannot be split over 3 tasks"):
        schedlab.generate(3, 3.5)
    with pytest.raises(schedlab.SchedlabError, match="unknown generator"):
        schedlab.generate(3, 1.0, method="gauss")
    with pytest.raises(TypeError, match="unknown override 'cpu'"):
        schedlab.simulate(root / "examples/dhall.yaml", cpu=2)
    with pytest.raises(schedlab.SchedlabError, match="task hog has no period"):
        schedlab.analyze({"tasks": [{"name": "hog", "nice": 0}]})
    assert issubclass(schedlab.SchedlabError, ValueError)


def test_gil_is_released_while_simulating(root):
    """Two simulations in two threads overlap: each releases the GIL while it runs."""
    import threading
    import time

    w = schedlab.generate(64, 6.0, 8, seed=2, duration="200s")
    ticks = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    t = threading.Thread(target=ticker)
    t.start()
    time.sleep(0.01)
    start = time.perf_counter()
    schedlab.simulate(w, policy="llf", jobs=False)
    end = time.perf_counter()
    stop.set()
    t.join()
    # With the GIL held the ticker could not run during the simulation; released, it
    # ticks all along (a 1 ms sleep each time, so at most one tick per ms).
    during = [x for x in ticks if start < x < end]
    assert end - start > 0.1, "the simulation is too short to tell"
    assert len(during) >= 0.2 * (end - start) / 0.001, (end - start, len(during))
