"""Sweeps: a real Dask cluster (a scheduler and two workers on 127.0.0.1) gives exactly the
serial results; a sweep killed half-way resumes without recomputing finished batches and
never takes a cut-short Parquet file for a finished one; bad grids fail before any work;
figures are written."""

import os
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
    # A set GFB or first-fit EDF accepts meets every deadline in its simulation.
    g = serial[(serial["policy"] == "edf") & serial["analysis_gfb"].fillna(False)]
    assert g["schedulable"].all()
    p = serial[
        (serial["policy"] == "edf@partitioned")
        & serial["analysis_ffd-edf"].fillna(False)
    ]
    assert p["schedulable"].all()
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


def test_killed_sweep_resumes_without_recomputing_finished_batches(tmp_path, root):
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
    fresh = schedlab.sweep(client="serial", **_grid_kwargs())
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
    assert grid["policies"] == ["edf", "llf", "illf", "edzl", "edf@partitioned"]
    cells = schedlab.sweep(
        client="serial", **{**grid, "samples": 1, "utilizations": [2.0]}
    )
    assert len(cells) == 5
