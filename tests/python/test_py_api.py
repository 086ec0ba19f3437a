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


def test_generate_takes_the_cli_periods_and_refuses_what_simulate_would(run):
    """The Python generate parses periods with the generator's own parser (divisor
    periods included) and reads its set back with simulate's rules, as the CLI does."""
    w = schedlab.generate(
        10, 2.0, 2, periods="divisors:200ms:10ms..200ms", seed=4, format="dict"
    )
    periods = [t["period"] for t in w["tasks"]]
    assert all(200_000_000 % schedlab_ns(p) == 0 for p in periods), periods
    cli = run(
        "generate", "--tasks", "10", "--utilization", "2.0", "--cpus", "2",
        "--periods", "divisors:200ms:10ms..200ms", "--seed", "4", "--json",
    ).stdout
    assert w == json.loads(cli)
    with pytest.raises(schedlab.SchedlabError, match="1025"):
        schedlab.generate(4, 1.0, 1025)


def schedlab_ns(text) -> int:
    """A period as the generator writes it (`40ms`, or ns) in nanoseconds."""
    if isinstance(text, int):
        return text
    for unit, f in (("ms", 10**6), ("us", 10**3), ("ns", 1), ("s", 10**9)):
        if text.endswith(unit):
            return int(float(text[: -len(unit)]) * f)
    return int(text)


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


# --- Hostile arguments: SchedlabError, TypeError or ValueError, never a panic, an
# OverflowError, a raw OSError or an AttributeError; each message names the argument.


def test_a_panic_in_the_core_is_a_schedlab_error():
    # PanicException derives from BaseException: `except Exception` would miss it.
    with pytest.raises(schedlab.SchedlabError, match="internal error .*: boom"):
        schedlab._native._raise_panic("boom")
    # A real input that made the core panic (ConvolutionalFixedSum with U = n x bound
    # inexact in floating point): a set or a SchedlabError, whichever the core gives.
    try:
        w = schedlab.generate(10, 1.0, 1, method="cfs", max_task_utilization=0.1)
    except schedlab.SchedlabError:
        pass
    else:
        assert len(w["tasks"]) == 10


@pytest.mark.parametrize(
    "call, error, message",
    [
        (
            lambda: schedlab.generate(-1, 1.0),
            schedlab.SchedlabError,
            "tasks: -1 is out",
        ),
        (lambda: schedlab.generate(2**70, 1.0), schedlab.SchedlabError, "tasks: 1180"),
        (
            lambda: schedlab.generate(4, 10**400),
            schedlab.SchedlabError,
            "utilization: 1",
        ),
        (lambda: schedlab.generate(4, "1"), TypeError, "utilization must be a number"),
        (
            lambda: schedlab.generate(4, 1.0, seed=-3),
            schedlab.SchedlabError,
            "seed: -3",
        ),
        (
            lambda: schedlab.generate(4, 1.0, cpus=True),
            TypeError,
            "cpus must be an int",
        ),
        (lambda: schedlab.generate(4, 1.0, name=5), TypeError, "name must be a str"),
        (
            lambda: schedlab.generate(4, 1.0, duration=-1),
            schedlab.SchedlabError,
            "duration: -1",
        ),
        (
            lambda: schedlab.simulate("examples/dhall.yaml", cpus=-1),
            schedlab.SchedlabError,
            "cpus: -1",
        ),
        (
            lambda: schedlab.simulate("examples/dhall.yaml", seed=2**64),
            schedlab.SchedlabError,
            "seed: 18446744073709551616 is out",
        ),
        (
            lambda: schedlab.simulate("examples/dhall.yaml", duration=2**80),
            schedlab.SchedlabError,
            "duration: 1208",
        ),
        (
            lambda: schedlab.simulate("examples/dhall.yaml", policy=5),
            TypeError,
            "policy must be a str",
        ),
        (
            lambda: schedlab.simulate("examples/dhall.yaml", jobs="yes"),
            TypeError,
            "jobs must be True or False",
        ),
        (
            lambda: schedlab.simulate("examples"),
            schedlab.SchedlabError,
            "examples: cannot read workload",
        ),
        (
            lambda: schedlab.simulate("a\0b"),
            schedlab.SchedlabError,
            "workload: the path 'a\\\\x00b' holds a NUL",
        ),
        (
            lambda: schedlab.simulate(b"examples/dhall.yaml"),
            TypeError,
            "workload must be a file path or a dict",
        ),
        (
            lambda: schedlab.simulate({"tasks": [{"runtime": float("nan")}]}),
            TypeError,
            "workload: the dict is not plain JSON",
        ),
        (
            lambda: schedlab.analyze("examples/dhall.yaml", cpus=-1),
            schedlab.SchedlabError,
            "cpus: -1",
        ),
        (
            lambda: schedlab.analyze("examples/dhall.yaml", cpus="4"),
            TypeError,
            "cpus must be an int",
        ),
        (
            lambda: schedlab.analyze("examples"),
            schedlab.SchedlabError,
            "examples: cannot read workload",
        ),
        (
            lambda: schedlab.analyze("no/such.yaml"),
            schedlab.SchedlabError,
            "no/such.yaml: cannot read workload",
        ),
        (
            lambda: schedlab.sweep(client=5, samples=1),
            TypeError,
            "client must be None, 'serial'",
        ),
        (
            lambda: schedlab.sweep(client="serial", utilizations="123"),
            schedlab.SchedlabError,
            "utilizations: give a list or {from, to, step}, not the text '123'",
        ),
        (
            lambda: schedlab.sweep(client="serial", utilizations=[1, "2"]),
            schedlab.SchedlabError,
            r"utilizations\[1\]: give a number, not the text '2'",
        ),
        (
            lambda: schedlab.sweep(client="serial", utilizations=[float("inf")]),
            schedlab.SchedlabError,
            r"utilizations\[0\]: \.?inf is not a finite number",
        ),
        (
            lambda: schedlab.sweep(client="serial", utilizations=[10**400]),
            schedlab.SchedlabError,
            r"utilizations\[0\]: 1\d* is not a finite number",
        ),
        (
            lambda: schedlab.sweep(client="serial", policies="edf"),
            schedlab.SchedlabError,
            "policies: give a non-empty list of policies, not the text 'edf'",
        ),
        (
            lambda: schedlab.sweep(client="serial", policies=["edf", 5]),
            schedlab.SchedlabError,
            r"policies\[1\]: give a policy name or a mapping, not 5",
        ),
        (
            lambda: schedlab.sweep(client="serial", samples="2"),
            schedlab.SchedlabError,
            "samples: give a whole number, not the text '2'",
        ),
        (
            lambda: schedlab.sweep(client="serial", cpus=2**70),
            schedlab.SchedlabError,
            "cpus: 1180591620717411303424 is above 1024",
        ),
        (
            lambda: schedlab.sweep(client="serial", batch_size=-1),
            schedlab.SchedlabError,
            "batch_size: -1",
        ),
        (
            lambda: schedlab.sweep(client="serial", out=3),
            TypeError,
            "out must be a directory path",
        ),
    ],
)
def test_hostile_arguments_raise_clear_errors(root, monkeypatch, call, error, message):
    monkeypatch.chdir(root)
    with pytest.raises(error, match=message):
        call()


def test_sweep_output_errors_are_schedlab_errors(root, tmp_path):
    """OS errors on `out` are SchedlabError naming the path, never FileExistsError,
    FileNotFoundError or IsADirectoryError."""
    import re

    afile = tmp_path / "file"
    afile.write_text("x")
    grid = {"client": "serial", "samples": 1, "utilizations": [1.0], "analysis": False}
    # A file where the output directory should be.
    with pytest.raises(
        schedlab.SchedlabError, match=re.escape(str(afile)) + ".*exists"
    ):
        schedlab.sweep(out=str(afile), **grid)
    # A directory that cannot be created.
    with pytest.raises(schedlab.SchedlabError, match="/proc/no-such"):
        schedlab.sweep(out="/proc/no-such/x", **grid)
    # A directory where grid.json goes.
    (tmp_path / "d" / "grid.json").mkdir(parents=True)
    with pytest.raises(schedlab.SchedlabError, match="grid.json"):
        schedlab.sweep(out=str(tmp_path / "d"), **grid)


def test_python_results_carry_the_cli_provenance(root):
    r = schedlab.simulate(
        root / "examples/dhall.yaml", policy="llf", seed=4, duration="100ms"
    )
    assert r.schedlab_version == schedlab.__version__
    assert r.seed == 4
    assert r.options == {
        "policy": "llf",
        "placement": None,
        "cpus": None,
        "duration": "100ms",
        "seed": 4,
        "on_miss": None,
        "platform": None,
    }
    a = schedlab.analyze(root / "examples/dhall.yaml", cpus=2)
    assert list(a)[-3:] == ["schedlab_version", "seed", "options"]
    assert a["options"]["cpus"] == 2 and a["options"]["policy"] is None


def _interrupt_after(seconds):
    """Deliver Ctrl-C to the main thread after `seconds` (as the terminal would)."""
    import _thread
    import threading

    t = threading.Timer(seconds, _thread.interrupt_main)
    t.start()
    return t


@pytest.mark.parametrize("what", ["analyze", "simulate"])
def test_ctrl_c_interrupts_a_long_call_and_the_gil_is_free(what):
    """Ctrl-C during a long analysis or simulation raises KeyboardInterrupt within a
    poll period, and other Python threads run meanwhile (the GIL is released)."""
    import threading
    import time

    if what == "analyze":
        # The O(n^2) global tests on 6,000 tasks on one CPU: seconds even in a release
        # build (1,000 tasks took 0.11 s there, done before the Ctrl-C).
        w = schedlab.generate(6000, 0.9, 1, seed=3, granularity="1us")
        call = lambda: schedlab.analyze(w)
    else:
        w = schedlab.generate(64, 6.0, 8, seed=2, duration="1000s")
        call = lambda: schedlab.simulate(w, policy="llf", jobs=False)
    ticks = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    tick = threading.Thread(target=ticker)
    tick.start()
    start = time.perf_counter()
    timer = _interrupt_after(0.5)
    try:
        call()
    except KeyboardInterrupt:
        interrupted = True
    else:
        interrupted = False
    end = time.perf_counter()
    timer.cancel()
    stop.set()
    tick.join()
    if not interrupted:
        pytest.skip(
            f"{what} finished in {end - start:.2f} s, before the Ctrl-C: too short"
        )
    # Raised within the 50 ms poll (plus scheduling slack on a loaded machine), not at
    # the end of the work.
    assert end - start < 0.5 + 0.45, end - start
    during = [x for x in ticks if start < x < end]
    assert len(during) >= 0.2 * (end - start) / 0.001, (end - start, len(during))
