"""Sweeps: a real Dask cluster (a scheduler and two workers on 127.0.0.1) gives exactly the
serial results; a sweep killed half-way resumes without recomputing finished batches and
never takes a cut-short Parquet file for a finished one; bad grids fail before any work;
figures are written."""

import importlib
import os
import re
import signal
import socket
import subprocess
import sys
import time

import pandas as pd
import pytest

schedlab = pytest.importorskip(
    "schedlab", reason="the schedlab Python package is not installed (pip install .)"
)

# The sweep module itself (``schedlab.sweep`` is also the name of the public function).
sweep_module = importlib.import_module("schedlab.sweep")

GRID = {
    "cpus": 4,
    "tasks": 8,
    "utilizations": [2.0, 3.0, 3.6],
    "policies": ["edf", "llf", "edf@partitioned"],
    "samples": 6,
    "seed": 7,
    "duration": "200ms",
}


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def serial():
    return schedlab.sweep(client="serial", **GRID)


def test_serial_sweep_has_one_row_per_cell_and_policy(serial):
    assert len(serial) == 3 * 3 * 6
    for col in [
        "utilization",
        "policy",
        "sample",
        "schedulable",
        "deadline_misses",
        "context_switches_per_cpu_per_s",
        "analysis_gfb",
        "analysis_ffd-edf",
    ]:
        assert col in serial
    assert list(serial["policy"].unique()) == GRID["policies"]
    # Every simulated row counts its decisions; a cell not simulated has none.
    simulated = serial["horizon_ns"].notna()
    assert simulated.any()
    assert (serial.loc[simulated, "scheduler_invocations"] > 0).all()
    assert serial.loc[~simulated, "scheduler_invocations"].isna().all()
    # A set GFB or first-fit EDF accepts meets every deadline in its simulation.
    g = serial[(serial["policy"] == "edf") & serial["analysis_gfb"].fillna(False)]
    assert (g["deadline_misses"] == 0).all() and len(g) > 0
    p = serial[
        (serial["policy"] == "edf@partitioned")
        & serial["analysis_ffd-edf"].fillna(False)
    ]
    assert (p["deadline_misses"] == 0).all() and len(p) > 0
    # 200 ms of log-uniform periods up to 1 s: no clean run is a decided one.
    clean = serial["deadline_misses"] == 0
    assert (serial.loc[clean, "status"] == "undecided").all()
    assert not serial["schedulable"].any()
    # The same cell draws the same set under every policy.
    seeds = serial.groupby(["utilization", "sample"])["set_seed"].nunique()
    assert (seeds == 1).all()
    # Batching does not change a number.
    again = schedlab.sweep(client="serial", batch_size=1, **GRID)
    pd.testing.assert_frame_equal(again, serial)


def test_dask_cluster_gives_the_serial_results(serial, tmp_path):
    pytest.importorskip("dask.distributed")
    port = _free_port()
    addr = f"tcp://127.0.0.1:{port}"
    env = dict(os.environ, DASK_DISTRIBUTED__WORKER__DAEMON="False")
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "distributed.cli.dask_scheduler",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--dashboard-address",
                ":0",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
        )
    ]
    try:
        for _ in range(2):
            procs.append(
                subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "distributed.cli.dask_worker",
                        addr,
                        "--nthreads",
                        "1",
                        "--nworkers",
                        "1",
                        "--no-dashboard",
                        "--local-directory",
                        str(tmp_path),
                    ],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    env=env,
                )
            )
        from dask.distributed import Client

        client = Client(addr, timeout="30s")
        try:
            client.wait_for_workers(2, timeout=60)
            df = schedlab.sweep(client=client, batch_size=4, **GRID)
            assert len(client.scheduler_info()["workers"]) == 2
            # Work went to both workers.
            who = client.run(lambda: os.getpid())
            assert len(set(who.values())) == 2
        finally:
            client.close()
        pd.testing.assert_frame_equal(df, serial)
        # An address string is a client too.
        df2 = schedlab.sweep(client=addr, batch_size=5, **GRID)
        pd.testing.assert_frame_equal(df2, serial)
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()


def test_unreachable_dask_address_is_a_clear_error():
    pytest.importorskip("dask.distributed")
    addr = f"tcp://127.0.0.1:{_free_port()}"
    with pytest.raises(
        schedlab.SchedlabError, match=f"cannot reach the Dask scheduler at {addr}"
    ):
        schedlab.sweep(client=addr, **GRID)


def test_bad_grids_fail_before_any_work(tmp_path):
    bad = dict(GRID)
    with pytest.raises(schedlab.SchedlabError, match="utilization -1 is negative"):
        schedlab.sweep(
            client="serial",
            out=str(tmp_path / "a"),
            **{**bad, "utilizations": [2.0, -1.0]},
        )
    assert (
        not list((tmp_path / "a").glob("batch-*"))
        if (tmp_path / "a").exists()
        else True
    )
    with pytest.raises(schedlab.SchedlabError, match="unknown policy `sjf`"):
        schedlab.sweep(client="serial", **{**bad, "policies": ["edf", "sjf"]})
    with pytest.raises(schedlab.SchedlabError, match="cannot be split over 8 tasks"):
        schedlab.sweep(client="serial", **{**bad, "utilizations": [9.0]})
    with pytest.raises(schedlab.SchedlabError, match="schedules fair tasks"):
        schedlab.sweep(client="serial", **{**bad, "policies": ["cfs"]})


GRID_YAML = """\
cpus: 4
tasks: 8
utilizations: {from: 2.0, to: 3.5, step: 0.5}
policies: [edf, llf]
samples: 40
seed: 3
duration: 4s
batch_size: 2
client: serial
"""


@pytest.fixture(scope="module")
def uninterrupted():
    """The GRID_YAML sweep run once, in one go, in this process."""
    return schedlab.sweep(client="serial", **_grid_kwargs())


def test_killed_sweep_resumes_without_recomputing_finished_batches(
    tmp_path, root, uninterrupted
):
    grid = tmp_path / "grid.yaml"
    grid.write_text(GRID_YAML)
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "schedlab", "sweep", str(grid), "--out", str(out)]
    p = subprocess.Popen(cmd, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if len(list(out.glob("batch-*.parquet"))) >= 10:
            break
        if p.poll() is not None:
            break
        time.sleep(0.005)
    p.send_signal(signal.SIGKILL)
    p.wait()
    finished = sorted(out.glob("batch-*.parquet"))
    total = 4 * 40 // 2
    assert 0 < len(finished) < total, (
        f"kill landed after {len(finished)} of {total} batches"
    )
    before = {f.name: (f.stat().st_ino, f.stat().st_mtime_ns) for f in finished}
    # A batch cut short (as by a crash without the atomic rename) is not taken as done.
    victim = finished[-1]
    data = victim.read_bytes()
    victim.write_bytes(data[: len(data) // 2])
    del before[victim.name]
    (out / "batch-999999.parquet.tmp").write_bytes(b"half")

    df = schedlab.sweep(client="serial", out=str(out), **_grid_kwargs())
    assert df.attrs["batches_reused"] == len(before)
    assert df.attrs["batches_computed"] == total - len(before)
    for name, stamp in before.items():
        f = out / name
        assert (f.stat().st_ino, f.stat().st_mtime_ns) == stamp, f"{name} was rewritten"
    fresh = uninterrupted
    pd.testing.assert_frame_equal(df, fresh)
    # A finished sweep started again computes nothing.
    again = schedlab.sweep(client="serial", out=str(out), **_grid_kwargs())
    assert again.attrs["batches_computed"] == 0
    pd.testing.assert_frame_equal(again, fresh)
    # Another grid on the same directory is refused.
    with pytest.raises(
        schedlab.SchedlabError, match="holds the results of another sweep"
    ):
        schedlab.sweep(client="serial", out=str(out), **{**_grid_kwargs(), "seed": 4})


def _grid_kwargs():
    return {
        "cpus": 4,
        "tasks": 8,
        "utilizations": [2.0, 2.5, 3.0, 3.5],
        "policies": ["edf", "llf"],
        "samples": 40,
        "seed": 3,
        "duration": "4s",
        "batch_size": 2,
    }


def test_cli_sweep_and_figures(tmp_path, run, root):
    pytest.importorskip("matplotlib")
    grid = tmp_path / "grid.yaml"
    grid.write_text(GRID_YAML.replace("samples: 40", "samples: 3"))
    prefix = tmp_path / "fig" / "s"
    csv = tmp_path / "rows.csv"
    p = run("sweep", grid, "--plot", prefix, "--csv", csv, "--out", tmp_path / "pq")
    assert "edf" in p.stdout and "reused" in p.stdout
    rows = pd.read_csv(csv)
    assert len(rows) == 4 * 2 * 3
    for name in ["schedulability", "weighted", "switches"]:
        png = tmp_path / "fig" / f"s-{name}.png"
        svg = tmp_path / "fig" / f"s-{name}.svg"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert b"<svg" in svg.read_bytes()[:2000]
    bad = tmp_path / "bad.yaml"
    bad.write_text("cpus: 4\nutilisations: [1]\n")
    e = run("sweep", bad, check=False)
    assert e.returncode == 2 and "unknown key `utilisations`" in e.stderr


def test_shipped_grid_loads(root):
    from schedlab.__main__ import load_grid

    grid = load_grid(root / "examples/sweeps/grid-4cpu.yaml")
    assert grid["utilizations"] == [2.0, 2.25, 2.5, 2.75, 3.0, 3.25, 3.5, 3.75, 4.0]
    exact = {"mode": "exact"}
    assert grid["policies"] == [
        "edf",
        "llf",
        "illf",
        {"policy": "illf", "label": "illf-exact", "scheduler": {"illf": exact}},
        "edzl",
        {"policy": "edzl", "label": "edzl-exact", "scheduler": {"edzl": exact}},
        "edf@partitioned",
    ]
    assert grid["duration"] == "hyperperiod"
    assert grid["periods"] == "divisors:200ms:10ms..200ms"
    cells = schedlab.sweep(
        client="serial", **{**grid, "samples": 3, "utilizations": [2.0, 3.5]}
    )
    assert len(cells) == 2 * 3 * 7
    # Every set is decided: its hyperperiod divides 200 ms and is simulated whole.
    assert cells["horizon_complete"].all()
    assert (200_000_000 % cells["horizon_ns"] == 0).all()
    assert set(cells["status"]) <= {"schedulable", "unschedulable"}
    # EDZL dominates global EDF (a set EDF schedules, EDZL does; Lee 1994): its exact
    # mode never falls below EDF on the same set.
    by = cells.pivot_table(
        index=["utilization", "sample"], columns="policy", values="schedulable"
    )
    assert (by["edzl-exact"] >= by["edf"]).all()


# ---- the sweep directory: owned, locked, written atomically ---------------------------

TINY = {
    "cpus": 2,
    "tasks": 4,
    "utilizations": [1.0, 1.5],
    "policies": ["edf", "llf"],
    "samples": 3,
    "seed": 11,
    "duration": "100ms",
    "batch_size": 2,
}


def _tiny(out, **kw):
    return schedlab.sweep(client="serial", out=str(out), **{**TINY, **kw})


def test_batches_carry_the_grid_hash_version_and_cells(tmp_path):
    import json

    import pyarrow.parquet as pq

    df = _tiny(tmp_path / "o")
    batches = sorted((tmp_path / "o").glob("batch-*.parquet"))
    assert [b.name for b in batches] == [f"batch-{i:06d}.parquet" for i in range(3)]
    grid = json.loads((tmp_path / "o" / "grid.json").read_text())
    cells = []
    for b in batches:
        md = {k.decode(): v.decode() for k, v in pq.read_schema(b).metadata.items()}
        assert md["grid_hash"] == grid["grid_hash"] == df.attrs["grid_hash"]
        assert md["schedlab_version"] == schedlab.__version__
        assert md["seed"] == "11"
        assert json.loads(md["grid"])["utilizations"] == [1.0, 1.5]
        cells += [tuple(c) for c in json.loads(md["cells"])]
    # Each cell's coordinates: cpus, tasks, task bound, deadline ratio (implicit: None),
    # method, periods, utilisation, sample.
    axes = (2, 4, 1.0, None, "uunifast-discard", "10ms..1000ms")
    assert sorted(cells) == [(*axes, u, s) for u in (1.0, 1.5) for s in range(3)]
    assert df.attrs["schedlab_version"] == schedlab.__version__
    assert json.loads(df.attrs["grid"])["samples"] == 3
    assert df.attrs["seed"] == 11


def test_directory_of_a_foreign_grid_is_refused_and_its_batches_never_reused(tmp_path):
    out = tmp_path / "o"
    _tiny(out, seed=5)
    with pytest.raises(
        schedlab.SchedlabError, match=r"another sweep .*differs in seed"
    ):
        _tiny(out)
    # The foreign grid's batches copied beside this grid's grid.json: each is reported
    # (another hash) and none is mixed in.
    mine = tmp_path / "mine"
    fresh = _tiny(mine)
    for b in sorted(out.glob("batch-*.parquet")):
        (mine / ("x" + b.name)).write_bytes(b.read_bytes())
        (mine / b.name.replace("batch-0000", "batch-0001")).write_bytes(b.read_bytes())
    df = _tiny(mine)
    pd.testing.assert_frame_equal(df, fresh)
    assert df.attrs["batches_computed"] == 0
    assert df.attrs["ignored"]["batch-000100.parquet"].startswith(
        "written for another grid"
    )
    assert df.attrs["ignored"]["xbatch-000000.parquet"] == "not a file of this sweep"


@pytest.mark.parametrize("content", [None, b"", b"{not json", b'{"cells": []}'])
def test_batches_without_a_valid_grid_json_are_refused(tmp_path, content):
    out = tmp_path / "o"
    _tiny(out)
    g = out / "grid.json"
    if content is None:
        g.unlink()
    else:
        g.write_bytes(content)
    before = sorted(p.name for p in out.iterdir())
    with pytest.raises(
        schedlab.SchedlabError, match="not empty|is empty|not a sweep's grid.json"
    ):
        _tiny(out)
    assert sorted(p.name for p in out.iterdir()) == before


def test_foreign_parquet_with_the_right_row_count_is_not_reused(tmp_path):
    out = tmp_path / "o"
    fresh = _tiny(out)
    first = out / "batch-000000.parquet"
    # Two cells x two policies: 4 rows, every column, but no sweep metadata.
    pd.DataFrame({c: fresh[c][:4] for c in fresh.columns}).to_parquet(first)
    df = _tiny(out)
    assert df.attrs["ignored"] == {
        "batch-000000.parquet": "not written by a schedlab sweep "
        "(no grid_hash in its metadata)"
    }
    assert df.attrs["batches_computed"] == 1 and df.attrs["batches_reused"] == 2
    pd.testing.assert_frame_equal(df, fresh)


def test_batch_whose_rows_are_not_its_cells_is_not_reused(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = tmp_path / "o"
    fresh = _tiny(out)
    b = out / "batch-000001.parquet"
    t = pq.read_table(b)
    df = t.to_pandas()
    df["sample"] = df["sample"] + 10  # rows of other cells under the right metadata
    pq.write_table(
        pa.Table.from_pandas(df, preserve_index=False).replace_schema_metadata(
            t.schema.metadata
        ),
        b,
    )
    again = _tiny(out)
    assert again.attrs["ignored"] == {
        "batch-000001.parquet": "its rows are not the cells its metadata lists"
    }
    pd.testing.assert_frame_equal(again, fresh)


def test_planted_symlinks_at_every_temporary_name_are_never_written_through(
    tmp_path, monkeypatch
):
    from schedlab import sweepdir
    from schedlab.__main__ import main

    victim = tmp_path / "victim"
    victim.write_text("precious")
    # A new directory whose first temporary names (made predictable here) are taken by
    # links: each file moves on to a free name, O_EXCL | O_NOFOLLOW.
    out = tmp_path / "o"
    out.mkdir()
    names = iter([f"{i:016x}" for i in range(10_000)])
    monkeypatch.setattr(sweepdir, "_suffix", lambda: next(names))
    for k in range(4):
        (out / f".grid.json.{k:016x}.tmp").symlink_to(victim)
    df = _tiny(out, samples=1)
    assert victim.read_text() == "precious" and len(df) == 4
    # The fixed names an older sweep used, planted before it is extended.
    for n in ["grid.json.tmp", "batch-000002.parquet.tmp", "batch-000003.parquet.tmp"]:
        (out / n).symlink_to(victim)
    df = _tiny(out)
    assert victim.read_text() == "precious" and len(df) == 12
    assert df.attrs["ignored"]["grid.json.tmp"] == "not a file of this sweep"
    # Every temporary name taken: a refusal, not a write through a link.
    csv = tmp_path / "rows.csv"
    monkeypatch.setattr(sweepdir, "_suffix", lambda: "0" * 16)
    (tmp_path / f".rows.csv.{0:016x}.tmp").symlink_to(victim)
    with pytest.raises(schedlab.SchedlabError, match="no name free"):
        sweepdir.write_atomic(str(csv), lambda f: f.write(b"x"))
    assert victim.read_text() == "precious" and not csv.exists()
    # The CLI's --csv goes through the same writer.
    monkeypatch.setattr(sweepdir, "_suffix", lambda: os.urandom(8).hex())
    grid = tmp_path / "g.yaml"
    grid.write_text(
        "cpus: 2\ntasks: 4\nutilizations: [1.0]\npolicies: [edf]\nsamples: 1\n"
        "duration: 100ms\nclient: serial\n"
    )
    assert main(["sweep", str(grid), "--csv", str(csv)]) == 0
    assert victim.read_text() == "precious"
    assert len(pd.read_csv(csv)) == 1


def test_csv_output_refuses_symlink_directory_device_and_the_grid(tmp_path, run):
    grid = tmp_path / "g.yaml"
    grid.write_text(
        "cpus: 2\ntasks: 4\nutilizations: [1.0]\npolicies: [edf]\nsamples: 1\n"
        "duration: 100ms\nclient: serial\n"
    )
    text = grid.read_text()
    link = tmp_path / "link.csv"
    link.symlink_to(tmp_path / "elsewhere.csv")
    hard = tmp_path / "hard.yaml"
    os.link(grid, hard)
    for target, why in [
        (link, "it is a symbolic link"),
        (tmp_path, "it is a directory"),
        ("/dev/null", "not a regular file"),
        (grid, f"it is also the input {grid}"),
        (hard, f"it is also the input {grid}"),
    ]:
        p = run("sweep", grid, "--csv", target, check=False)
        assert p.returncode == 2, p.stderr
        assert why in p.stderr and "Traceback" not in p.stderr
    assert grid.read_text() == text
    assert not (tmp_path / "elsewhere.csv").exists()


_CONCURRENT = """\
import sys, schedlab
try:
    df = schedlab.sweep(client="serial", out=sys.argv[1], cpus=2, tasks=4,
                        utilizations=[1.0, 1.2, 1.4, 1.6], policies=["edf"],
                        samples=int(sys.argv[2]), seed=int(sys.argv[3]),
                        duration="300ms", batch_size=1)
except schedlab.SchedlabError as e:
    print("REFUSED", e)
else:
    print("ROWS", len(df), sorted(set(df["set_seed"].tolist())) ==
          sorted({schedlab._native.set_seed(int(sys.argv[3]), u, s)
                  for u in [1.0, 1.2, 1.4, 1.6] for s in range(int(sys.argv[2]))}))
"""


def test_two_concurrent_sweeps_with_different_grids_on_one_directory(tmp_path, root):
    out = tmp_path / "o"
    script = tmp_path / "s.py"
    script.write_text(_CONCURRENT)
    ps = [
        subprocess.Popen(
            [sys.executable, str(script), str(out), "6", str(seed)],
            cwd=root,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for seed in (1, 2)
    ]
    res = [p.communicate(timeout=120)[0].strip() for p in ps]
    ok = [r for r in res if r.startswith("ROWS")]
    refused = [r for r in res if r.startswith("REFUSED")]
    # Exactly one owns the directory, with exactly its own 24 rows; the other is told
    # why (the lock's holder, or the grid it found).
    assert ok == ["ROWS 24 True"], res
    assert len(refused) == 1, res
    assert (
        "in use by another sweep (PID" in refused[0]
        or "holds the results of another sweep" in refused[0]
    ), refused[0]


def test_lock_names_the_holder(tmp_path):
    import fcntl

    out = tmp_path / "o"
    out.mkdir()
    fd = os.open(out / "sweep.lock", os.O_RDWR | os.O_CREAT)
    os.write(fd, b"4242 python3 -m schedlab sweep other.yaml\n")
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        with pytest.raises(
            schedlab.SchedlabError,
            match=r"in use by another sweep \(PID 4242: python3 -m schedlab sweep "
            r"other.yaml\)",
        ):
            _tiny(out)
    finally:
        os.close(fd)
    assert len(_tiny(out)) == 12  # the lock released, the sweep runs
    # A lock file that is a link or a FIFO is refused, not followed or blocked on.
    (out / "sweep.lock").unlink()
    (out / "sweep.lock").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(schedlab.SchedlabError, match="cannot open the sweep's lock"):
        _tiny(out)
    assert not (tmp_path / "elsewhere").exists()
    (out / "sweep.lock").unlink()
    os.mkfifo(out / "sweep.lock")
    with pytest.raises(schedlab.SchedlabError, match="lock file is not a regular file"):
        _tiny(out)


def test_a_finished_sweep_is_extended_without_recomputing(tmp_path):
    out = tmp_path / "o"
    _tiny(out)
    stamps = {p.name: p.stat().st_mtime_ns for p in out.glob("batch-*.parquet")}
    more = _tiny(out, samples=5, utilizations=[1.0, 1.5, 1.75])
    assert more.attrs["batches_reused"] == 3
    # 3 x 5 - 2 x 3 = 9 new cells in batches of 2.
    assert more.attrs["batches_computed"] == 5
    for name, t in stamps.items():
        assert (out / name).stat().st_mtime_ns == t
    fresh = schedlab.sweep(
        client="serial", **{**TINY, "samples": 5, "utilizations": [1.0, 1.5, 1.75]}
    )
    pd.testing.assert_frame_equal(more, fresh)
    # A smaller grid on the same directory returns its own cells, computing nothing.
    less = _tiny(out, samples=2, utilizations=[1.5])
    assert less.attrs["batches_computed"] == 0
    pd.testing.assert_frame_equal(
        less,
        fresh[(fresh["utilization"] == 1.5) & (fresh["sample"] < 2)].reset_index(
            drop=True
        ),
    )
    # Anything else changed is another grid.
    with pytest.raises(schedlab.SchedlabError, match="differs in duration"):
        _tiny(out, duration="200ms")


# ---- grids validated before anything runs, the same rules from the CLI and Python -----

_BASE_YAML = (
    "cpus: 2\ntasks: 4\nutilizations: [1.0]\npolicies: [edf]\nsamples: 1\n"
    "duration: 100ms\nclient: serial\n"
)

_BAD = [
    # (YAML line, sweep() arguments, the key and problem in the message)
    ("utilizations: .inf", {"utilizations": float("inf")}, None),
    (
        "utilizations: [1.0, .inf]",
        {"utilizations": [1.0, float("inf")]},
        "utilizations[1]: .inf is not a finite number",
    ),
    (
        "utilizations: [[1, 2]]",
        {"utilizations": [[1, 2]]},
        "utilizations[0]: give a number, not a list ([1, 2])",
    ),
    (
        "utilizations: [1.0, 1.5, 1.0]",
        {"utilizations": [1.0, 1.5, 1.0]},
        "utilizations[2]: 1.0 is given twice",
    ),
    (
        "utilizations: '123'",
        {"utilizations": "123"},
        "utilizations: give a list or {from, to, step}, not the text '123'",
    ),
    (
        "samples: '2'",
        {"samples": "2"},
        "samples: give a whole number, not the text '2'",
    ),
    (
        "policies: null",
        {"policies": None},
        "policies: give a non-empty list of policies, not null",
    ),
    ("batch_size: 0", {"batch_size": 0}, "batch_size: 0 is below 1"),
    ("batch_size: -1", {"batch_size": -1}, "batch_size: -1 is below 1"),
    ("seed: -3", {"seed": -3}, "seed: -3 is below 0"),
    (
        "policies: [{policy: edf, colour: red}]",
        {"policies": [{"policy": "edf", "colour": "red"}]},
        "policies[0]: unknown key `colour`",
    ),
    (
        "policies: [edf, {policy: edf}]",
        {"policies": ["edf", {"policy": "edf"}]},
        "policies: `edf` is named twice",
    ),
    (
        "deadlines: {min_ratio: 2}",
        {"deadlines": {"min_ratio": 2}},
        "deadlines.min_ratio: 2.0 is outside [0, 1]",
    ),
]


def _yaml_grid(tmp_path, line):
    g = tmp_path / "g.yaml"
    g.write_text(_BASE_YAML + line + "\n")
    return g


@pytest.mark.parametrize("line,kwargs,problem", _BAD, ids=[b[0] for b in _BAD])
def test_bad_grid_same_message_from_cli_and_python(
    tmp_path, capsys, line, kwargs, problem
):
    from schedlab.__main__ import main

    g = _yaml_grid(tmp_path, line)
    out = tmp_path / "o"
    assert main(["sweep", str(g), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    key = line.split(":")[0]
    assert err.startswith(f"error: {g}: {key}"), err
    if problem:
        assert problem in err, err
    assert not out.exists()  # nothing ran, nothing was written
    base = {"cpus": 2, "tasks": 4, "utilizations": [1.0], "samples": 1}
    args = {"client": "serial", "duration": "100ms", **base, **kwargs}
    # The grid check sweep() runs: the same key and problem as the grid file's.
    with pytest.raises(schedlab.SchedlabError) as e:
        sweep_module.sweep(**args)
    assert str(e.value).startswith(f"sweep(): {key}")
    if problem:
        assert problem in str(e.value)
    # The public function refuses it too (a wrong type may be a TypeError there), naming
    # the key.
    with pytest.raises((schedlab.SchedlabError, TypeError)) as e:
        schedlab.sweep(**args)
    assert key.split(".")[0] in str(e.value)


def test_bad_grid_from_the_command_is_exit_2_without_traceback(tmp_path, run):
    for line, problem in [
        ("samples: '2'", "samples: give a whole number"),
        ("policies: null", "policies: give a non-empty list"),
        ("colour: red", "unknown key `colour`"),
    ]:
        p = run("sweep", _yaml_grid(tmp_path, line), check=False)
        assert p.returncode == 2 and problem in p.stderr, p.stderr
        assert "Traceback" not in p.stderr and "pip install" not in p.stderr


def test_huge_grids_are_refused_at_once_with_the_count_and_the_limit(tmp_path, capsys):
    from schedlab.__main__ import main
    from schedlab.sweep import limits

    max_cells, _ = limits()
    t0 = time.monotonic()
    g = _yaml_grid(tmp_path, "samples: 1e8")
    assert main(["sweep", str(g)]) == 2
    err = capsys.readouterr().err
    assert (
        f"samples: 100,000,000 samples is above the limit on this machine of "
        f"{max_cells:,} cells" in err
    ), err
    g = _yaml_grid(tmp_path, "utilizations: {from: 1.0, to: 2.0, step: 1e-7}")
    assert main(["sweep", str(g)]) == 2
    err = capsys.readouterr().err
    assert (
        f"10,000,001 utilisations x 1 samples = 10,000,001 cells; the limit on "
        f"this machine is {max_cells:,} cells" in err
    ), err
    with pytest.raises(schedlab.SchedlabError, match="above the limit"):
        schedlab.sweep(client="serial", samples=10**9)
    assert time.monotonic() - t0 < 5


def test_a_client_that_is_no_address_is_a_clear_error():
    pytest.importorskip("dask.distributed")
    with pytest.raises(
        schedlab.SchedlabError,
        match=r"cannot reach the Dask scheduler at locall: .*a client is serial, local",
    ):
        schedlab.sweep(client="locall", cpus=2, tasks=4, utilizations=[1.0], samples=1)


def test_wrong_client_type_is_a_type_error():
    with pytest.raises(TypeError, match="client must be"):
        schedlab.sweep(client=5, cpus=2, tasks=4, utilizations=[1.0], samples=1)


# ---- grids that say everything --------------------------------------------------------


def test_platform_and_scheduler_blocks_reach_the_model(tmp_path):
    kw = {"cpus": 2, "tasks": 4, "utilizations": [1.0], "samples": 2, "seed": 3}
    # The model's own message for a bad option, before anything runs.
    with pytest.raises(
        schedlab.SchedlabError, match=r"sweep\(\): policy `llf`: .*mode"
    ):
        schedlab.sweep(
            client="serial",
            policies=["llf"],
            scheduler={"llf": {"mode": "sometimes"}},
            **kw,
        )
    # The simulator's rules too (exact LLF needs per-CPU run queues), before any run.
    with pytest.raises(
        schedlab.SchedlabError,
        match=r"policy `llf-exact`: llf mode exact needs per-CPU",
    ):
        schedlab.sweep(
            client="serial",
            policies=[
                {
                    "policy": "llf",
                    "label": "llf-exact",
                    "scheduler": {"llf": {"mode": "exact"}},
                }
            ],
            **kw,
        )
    # Per-policy options with labels: the same sets under two LLF modes, side by side;
    # each row equals a plain simulation of the generated set with that option.
    df = schedlab.sweep(
        client="serial",
        duration="300ms",
        analysis=False,
        platform={"hz": 250},
        policies=[
            "llf",
            {
                "policy": "llf",
                "placement": "partitioned",
                "label": "llf-exact",
                "scheduler": {"llf": {"mode": "exact"}},
            },
        ],
        **kw,
    )
    assert list(df["policy"]) == ["llf", "llf", "llf-exact", "llf-exact"]
    for _, row in df.iterrows():
        w = schedlab.generate(
            tasks=4,
            utilization=1.0,
            cpus=2,
            seed=int(row["set_seed"]),
            duration="300ms",
        )
        w["platform"]["hz"] = 250
        if row["policy"] == "llf-exact":
            w["scheduler"] = {"llf": {"mode": "exact"}}
        placement = "partitioned" if row["policy"] == "llf-exact" else "global"
        r = schedlab.simulate(w, policy="llf", placement=placement, jobs=False)
        assert r.data["events"] == row["events"]
        assert r.data["deadline_misses"] == row["deadline_misses"]


def test_constrained_deadlines_and_task_bound_reach_the_generator():
    df = schedlab.sweep(
        client="serial",
        cpus=2,
        tasks=4,
        utilizations=[1.0],
        samples=1,
        seed=3,
        duration="100ms",
        policies=["edf"],
        deadlines={"min_ratio": 0.5},
        max_task_utilization=0.3,
    )
    w = schedlab.generate(
        tasks=4,
        utilization=1.0,
        cpus=2,
        seed=int(df["set_seed"][0]),
        deadlines="constrained",
        deadline_ratio=0.5,
        max_task_utilization=0.3,
        duration="100ms",
    )
    a = schedlab.analyze(w)
    got = {t: df["analysis_" + t][0] for t in schedlab.TESTS}
    want = {
        t["test"]: {"schedulable": True, "not-applicable": None}.get(
            t["outcome"], False
        )
        for t in a["tests"]
    }
    assert {k: (None if pd.isna(v) else bool(v)) for k, v in got.items()} == want
    # The set really has constrained deadlines, and the row is its simulation.
    assert all(t["deadline"] != t["period"] for t in w["tasks"] if "deadline" in t)
    assert any("deadline" in t for t in w["tasks"])
    r = schedlab.simulate(w, policy="edf", placement="global", jobs=False)
    assert r.data["events"] == df["events"][0]


# ---- Python behaviour: Ctrl-C, the default client, Dask missing ----------------------


def test_ctrl_c_ends_with_one_line_and_the_same_command_resumes(
    tmp_path, root, uninterrupted
):
    grid = tmp_path / "grid.yaml"
    grid.write_text(GRID_YAML)
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "schedlab", "sweep", str(grid), "--out", str(out)]
    p = subprocess.Popen(
        cmd, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and p.poll() is None:
        if len(list(out.glob("batch-*.parquet"))) >= 5:
            break
        time.sleep(0.01)
    p.send_signal(signal.SIGINT)
    _, stderr = p.communicate(timeout=60)
    assert p.returncode == 130, stderr
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr
    lines = [x for x in stderr.splitlines() if x.strip()]
    assert len(lines) == 1, stderr
    done = int(
        re.match(
            r"sweep: interrupted, (\d+) of 160 cells done; the same "
            r"command resumes from the batches in ",
            lines[0],
        ).group(1)
    )
    batches = list(out.glob("batch-*.parquet"))
    assert done == 2 * len(batches) and 0 < done < 160
    # The same command finishes the sweep with exactly the rows of an uninterrupted one.
    csv = tmp_path / "rows.csv"
    r = subprocess.run(
        cmd + ["--csv", str(csv)], cwd=root, capture_output=True, text=True, check=False
    )
    assert r.returncode == 0, r.stderr
    assert f"{len(batches)} reused" in r.stdout
    fresh = uninterrupted
    rows = pd.read_csv(csv)
    assert len(rows) == len(fresh)
    assert (rows["set_seed"].to_numpy() == fresh["set_seed"].to_numpy()).all()
    assert (rows["events"].to_numpy() == fresh["events"].to_numpy()).all()


def test_default_client_works_from_a_plain_script(tmp_path, root):
    pytest.importorskip("dask.distributed")
    script = tmp_path / "plain.py"
    script.write_text(
        "import schedlab\n"  # no `if __name__ == "__main__":` guard
        "df = schedlab.sweep(cpus=2, tasks=4, utilizations=[1.0, 1.5], samples=3,\n"
        "                    policies=['edf'], duration='100ms', seed=2)\n"
        "print(len(df), list(df['set_seed']))\n"
    )
    r = subprocess.run(
        [sys.executable, str(script)],
        check=False,
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    serial = schedlab.sweep(
        client="serial",
        cpus=2,
        tasks=4,
        utilizations=[1.0, 1.5],
        samples=3,
        policies=["edf"],
        duration="100ms",
        seed=2,
    )
    assert r.stdout.strip() == f"6 {list(serial['set_seed'])}"


def test_without_dask_the_default_runs_serially_and_local_names_the_extra(
    monkeypatch, capsys
):
    monkeypatch.setitem(sys.modules, "dask.distributed", None)
    kw = {
        "cpus": 2,
        "tasks": 4,
        "utilizations": [1.0],
        "samples": 2,
        "duration": "100ms",
    }
    df = schedlab.sweep(**kw)
    assert len(df) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        (
            "sweep: Dask is not installed, running serially; "
            "pip install 'schedlab[dask]' runs on every core"
        )
    ]
    with pytest.raises(schedlab.SchedlabError, match=r"pip install 'schedlab\[dask\]'"):
        schedlab.sweep(client="local", **kw)


# ---- horizons that decide -------------------------------------------------------------


def test_status_is_decided_only_over_a_complete_horizon(capsys):
    kw = {
        "cpus": 2,
        "tasks": 4,
        "utilizations": [1.0, 1.9],
        "samples": 4,
        "seed": 2,
        "policies": ["edf", "llf"],
        "periods": "10ms,20ms,40ms",
        "analysis": False,
    }
    hp = schedlab.sweep(client="serial", duration="hyperperiod", **kw)
    short = schedlab.sweep(client="serial", duration="30ms", **kw)
    for df in (hp, short):
        missed = df["deadline_misses"] > 0
        assert (df.loc[missed, "status"] == "unschedulable").all()
        assert (df["schedulable"] == (df["status"] == "schedulable")).all()
    # Each row's horizon is its set's own (the simulator's hyperperiod; 40 ms at most).
    for _, row in hp.iterrows():
        w = schedlab.generate(
            tasks=4,
            utilization=row["utilization"],
            cpus=2,
            seed=int(row["set_seed"]),
            periods="10ms,20ms,40ms",
            duration="1s",
        )
        w["duration"] = "hyperperiod"
        r = schedlab.simulate(w, policy=row["policy"], placement="global", jobs=False)
        assert r.data["duration_ns"] == row["horizon_ns"] <= 40_000_000
        assert r.data["horizon_complete"] is True and row["horizon_complete"]
        assert r.data["deadline_misses"] == row["deadline_misses"]
        want = "schedulable" if r.data["deadline_misses"] == 0 else "unschedulable"
        assert row["status"] == want
    assert (hp["status"] == "schedulable").sum() > 0
    # 30 ms is short of a 40 ms hyperperiod whenever a 40 ms period was drawn: a clean
    # run there is undecided, never schedulable.
    inc = ~short["horizon_complete"].astype(bool)
    assert inc.any()
    assert set(short.loc[inc, "status"]) <= {"undecided", "unschedulable"}
    assert (
        short.loc[inc & (short["deadline_misses"] == 0), "status"] == "undecided"
    ).all()
    # The summary counts undecided cells apart.
    from schedlab.__main__ import summary

    text = summary(short)
    n = int((short["status"] == "undecided").sum())
    assert f", {n} undecided;" in text and "undecided (no miss" in text


def test_ctrl_c_at_the_terminal_through_the_cli_is_one_line_and_130(
    tmp_path, schedlab, root
):
    # A terminal's Ctrl-C signals the whole process group: the Rust CLI and its Python.
    grid = tmp_path / "grid.yaml"
    grid.write_text(GRID_YAML.replace("duration: 4s", "duration: 2s"))
    out = tmp_path / "out"
    p = subprocess.Popen(
        [str(schedlab), "sweep", str(grid), "--out", str(out)],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and p.poll() is None:
        if len(list(out.glob("batch-*.parquet"))) >= 2:
            break
        time.sleep(0.01)
    os.killpg(p.pid, signal.SIGINT)
    _, stderr = p.communicate(timeout=60)
    assert p.returncode == 130, stderr
    lines = [x for x in stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("sweep: interrupted, "), stderr
    n = len(list(out.glob("batch-*.parquet")))
    assert f", {2 * n} of 160 cells done; the same command resumes" in lines[0]


def test_every_axis_takes_a_list_and_each_combination_is_its_own_sweep(tmp_path):
    axes = {
        "cpus": [2, 3],
        "tasks": [4, 5],
        "max_task_utilization": [0.6, 1.0],
        "deadlines": {"min_ratio": [0.5, 1.0]},
        "method": ["uunifast-discard", "randfixedsum"],
        "periods": ["10ms,20ms,40ms", "10ms..100ms"],
    }
    base = {
        "utilizations": [1.0, 1.2],
        "samples": 2,
        "seed": 9,
        "duration": "60ms",
        "policies": ["edf", "edf@partitioned"],
        "analysis": False,
    }
    out = tmp_path / "o"
    df = sweep_module.sweep(client="serial", out=str(out), **base, **axes)
    assert len(df) == 2**6 * 2 * 2 * 2
    # Each combination's rows are exactly the sweep of that combination alone.
    one = {
        "cpus": 3,
        "tasks": 5,
        "max_task_utilization": 0.6,
        "deadlines": {"min_ratio": 0.5},
        "method": "randfixedsum",
        "periods": "10ms..100ms",
    }
    alone = schedlab.sweep(client="serial", **base, **one)
    sel = df[
        (df["cpus"] == 3)
        & (df["tasks"] == 5)
        & (df["max_task_utilization"] == 0.6)
        & (df["deadline_min_ratio"] == 0.5)
        & (df["method"] == "randfixedsum")
        & (df["periods"] == "10ms..100ms")
    ].reset_index(drop=True)
    pd.testing.assert_frame_equal(sel, alone)
    # Extended by samples on every combination; the axes themselves are the grid.
    more = sweep_module.sweep(
        client="serial", out=str(out), **{**base, "samples": 3}, **axes
    )
    assert len(more) == 2**6 * 2 * 3 * 2
    assert more.attrs["batches_reused"] == df.attrs["batches"]
    with pytest.raises(schedlab.SchedlabError, match="differs in cpus"):
        sweep_module.sweep(
            client="serial", out=str(out), **base, **{**axes, "cpus": [2]}
        )
    with pytest.raises(schedlab.SchedlabError, match=r"cpus\[1\]: 2 is given twice"):
        sweep_module.sweep(client="serial", **base, **{**axes, "cpus": [2, 2]})


def test_a_numeric_axis_takes_a_range_from_the_grid_file(tmp_path, capsys):
    from schedlab.__main__ import load_grid

    g = tmp_path / "g.yaml"
    g.write_text(
        _BASE_YAML.replace("cpus: 2\n", "cpus: {from: 2, to: 4, step: 1}\n")
        + "max_task_utilization: [0.5, 1]\n"
    )
    grid = load_grid(g)
    assert grid["cpus"] == [2, 3, 4]
    assert grid["max_task_utilization"] == [0.5, 1.0]


def test_figures_inside_the_output_directory_are_not_reported_on_resume(
    tmp_path, run
):
    """`--out DIR --plot DIR/fig` (the documented layout): a resume lists the figures
    in attrs as never read, says nothing about them on stderr, and still reports a
    foreign file by name."""
    pytest.importorskip("matplotlib")
    grid = tmp_path / "grid.yaml"
    grid.write_text(GRID_YAML.replace("samples: 40", "samples: 2"))
    out = tmp_path / "pq"
    run("sweep", grid, "--out", out, "--plot", out / "fig", "--csv", out / "rows.csv")
    (out / "notes.txt").write_text("mine")
    again = run("sweep", grid, "--out", out)
    assert "fig-schedulability" not in again.stderr
    assert "rows.csv" not in again.stderr
    assert f"ignoring {out / 'notes.txt'}: not a file of this sweep" in again.stderr
    df = _tiny(tmp_path / "t")
    (tmp_path / "t" / "x-weighted.svg").write_text("<svg/>")
    df = _tiny(tmp_path / "t")
    assert df.attrs["ignored"] == {
        "x-weighted.svg": "a figure or CSV export of a sweep (not read)"
    }
