"""Schedulability sweeps: many random task sets per utilisation, each simulated under
several policies and analysed, serially or on a Dask cluster, resumable from Parquet.

A sweep is a grid of cells, one per (utilization, sample). Each cell's task set has a seed
derived from the sweep's seed, the utilisation and the sample only, so a cell gives the
same numbers whichever process, worker or batch runs it. Cells are run in batches by the
Rust core (one call per batch, GIL released), so the per-cell overhead is small.

With ``out=DIR``, each finished batch is written to ``DIR/batch-NNNNNN.parquet``
atomically (a temporary file, flushed, then renamed), beside ``DIR/grid.json``; a sweep
started again on the same directory reads the finished batches back (after checking
each one opens and holds the rows it should) and runs only the others.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from collections.abc import Iterable, Sequence
from typing import Any

import pandas as pd

from . import _native
from ._native import SchedlabError

#: Columns every sweep DataFrame has, before the analysis columns.
COLUMNS = [
    "utilization",
    "policy",
    "sample",
    "set_seed",
    "schedulable",
    "deadline_misses",
    "context_switches_per_cpu_per_s",
    "preemptions",
    "migrations",
    "events",
]


def _run_batch(cells_json: str) -> str:
    """Run one batch in this process (what a Dask worker calls)."""
    from schedlab import _native as native

    return native.run_cells(cells_json)


def _frame(cols: dict[str, list]) -> pd.DataFrame:
    """Columns from the Rust core as a DataFrame with fixed dtypes."""
    csw = cols["context_switches_per_cpu_per_s"]
    data = {
        "utilization": pd.array(cols["utilization"], dtype="float64"),
        "policy": pd.array(cols["policy"], dtype="string"),
        "sample": pd.array(cols["sample"], dtype="int64"),
        "set_seed": pd.array(cols["set_seed"], dtype="int64"),
        "schedulable": pd.array(cols["schedulable"], dtype="bool"),
        "deadline_misses": pd.array(cols["deadline_misses"], dtype="Int64"),
        "context_switches_per_cpu_per_s": pd.array(
            [math.nan if v is None else v for v in csw], dtype="float64"
        ),
        "preemptions": pd.array(cols["preemptions"], dtype="Int64"),
        "migrations": pd.array(cols["migrations"], dtype="Int64"),
        "events": pd.array(cols["events"], dtype="Int64"),
    }
    for t in _native.test_names():
        data["analysis_" + t] = pd.array(cols["analysis_" + t], dtype="boolean")
    return pd.DataFrame(data)


class _Progress:
    """Cells done, rate and time left on stderr (only on a terminal unless forced)."""

    def __init__(self, total: int, done: int, enabled: bool | None):
        self.total, self.done = total, done
        self.start_done = done
        self.t0 = time.monotonic()
        self.on = sys.stderr.isatty() if enabled is None else enabled
        self.last = 0.0

    def add(self, n: int) -> None:
        self.done += n
        now = time.monotonic()
        if not self.on or (now - self.last < 0.2 and self.done < self.total):
            return
        self.last = now
        elapsed = max(now - self.t0, 1e-9)
        rate = (self.done - self.start_done) / elapsed
        left = (self.total - self.done) / rate if rate > 0 else float("inf")
        pct = 100.0 * self.done / max(self.total, 1)
        left_s = (
            "?" if math.isinf(left) else time.strftime("%H:%M:%S", time.gmtime(left))
        )
        sys.stderr.write(
            f"\rsweep: {self.done}/{self.total} cells ({pct:.0f}%), "
            f"{rate:.0f} cells/s, {left_s} left\x1b[K"
        )
        sys.stderr.flush()

    def close(self) -> None:
        if self.on:
            sys.stderr.write("\n")
            sys.stderr.flush()


def _write_parquet_atomic(df: pd.DataFrame, path: str) -> None:
    """Write ``df`` to ``path`` so that ``path`` is either absent or complete."""
    tmp = path + ".tmp"
    df.to_parquet(tmp, index=False)
    with open(tmp, "rb") as f:
        os.fsync(f.fileno())
    os.replace(tmp, path)
    dfd = os.open(os.path.dirname(path) or ".", os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def _read_finished(path: str, rows: int) -> pd.DataFrame | None:
    """A finished batch's rows, or None when the file is missing, unreadable (e.g. cut
    short) or holds another number of rows."""
    if not os.path.exists(path):
        return None
    try:
        df = pd.read_parquet(path)
    except Exception:  # noqa: BLE001 - any unreadable file is simply redone
        return None
    return df if len(df) == rows else None


def _connect(client):
    """(client, cluster to close or None, name) for ``client``."""
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise SchedlabError(
            "sweep on Dask needs dask.distributed (pip install 'dask[distributed]'), "
            "or pass client='serial'"
        ) from e
    if client is None:
        cluster = LocalCluster(
            n_workers=os.cpu_count() or 1,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
        )
        return Client(cluster), cluster, "local"
    if isinstance(client, str):
        try:
            return Client(client, timeout="5s"), None, client
        except (OSError, TimeoutError) as e:
            raise SchedlabError(
                f"cannot reach the Dask scheduler at {client}: {e}"
            ) from e
    return client, None, "client"


def _cells(
    cpus: int,
    tasks: int,
    utilizations: Sequence[float],
    policies: Sequence[str],
    samples: int,
    seed: int,
    duration: str,
    method: str,
    periods: str,
    granularity: str,
    analysis: bool,
) -> list[dict[str, Any]]:
    cells = []
    for u in utilizations:
        for s in range(samples):
            cells.append(
                {
                    "cpus": cpus,
                    "tasks": tasks,
                    "utilization": float(u),
                    "sample": s,
                    "seed": seed,
                    "duration": duration,
                    "method": method,
                    "periods": periods,
                    "granularity": granularity,
                    "policies": list(policies),
                    "analysis": analysis,
                }
            )
    return cells


def sweep(
    cpus: int = 4,
    tasks: int = 16,
    utilizations: Iterable[float] = (1.0, 2.0, 3.0),
    policies: Iterable[str] = ("edf",),
    samples: int = 20,
    seed: int = 1,
    duration: str = "1s",
    client: Any = None,
    *,
    method: str = "uunifast-discard",
    periods: str = "10ms..1000ms",
    granularity: str = "1ms",
    analysis: bool = True,
    out: str | None = None,
    batch_size: int | None = None,
    progress: bool | None = None,
) -> pd.DataFrame:
    """Run a schedulability sweep and return one row per (utilization, policy, sample).

    Args:
        cpus, tasks: platform and task-set size.
        utilizations: total utilisations of the grid.
        policies: ``POLICY`` (global placement) or ``POLICY@PLACEMENT``, e.g.
            ``["edf", "llf", "illf", "edzl", "edf@partitioned"]``.
        samples: task sets per utilisation.
        seed: the sweep's seed; the same seed gives the same numbers on any client.
        duration: simulated time per set, e.g. ``"1s"``.
        client: ``None`` (or ``"local"``) starts a local Dask cluster (one worker per
            core); a ``dask.distributed.Client`` (any cluster) or a scheduler address
            string uses that cluster; ``"serial"`` runs in this process.
        method, periods, granularity: the generator (see :func:`schedlab.generate`).
        analysis: also run the schedulability tests on each set (``analysis_*``
            columns; empty without).
        out: directory for the Parquet results; a sweep started again on it resumes.
        batch_size: cells per task sent to a worker (default: about 4 tasks per worker).
        progress: show cells done, rate and time left (default: when stderr is a
            terminal).

    Returns:
        A DataFrame with the columns ``COLUMNS`` and ``analysis_<test>`` for each
        schedulability test (True: accepted, False: not, <NA>: not applicable), sorted by
        utilization, policy (in the given order) and sample. ``df.attrs`` holds
        ``batches``, ``batches_computed`` and ``batches_reused``.

    Raises:
        SchedlabError: a bad grid (checked before any work), or an unreachable Dask
            scheduler.
    """
    utilizations = [float(u) for u in utilizations]
    policies = [str(p) for p in policies]
    if isinstance(policies, str):  # pragma: no cover - guarded above
        policies = [policies]
    if samples < 1:
        raise SchedlabError(f"samples must be at least 1, not {samples}")
    if not utilizations:
        raise SchedlabError("utilizations: give at least one utilisation")
    if len(set(policies)) != len(policies):
        raise SchedlabError(f"policies: {policies} names a policy twice")
    cells = _cells(
        cpus,
        tasks,
        utilizations,
        policies,
        samples,
        seed,
        str(duration),
        method,
        periods,
        granularity,
        analysis,
    )
    _native.check_cells(json.dumps(cells))

    if isinstance(client, str) and client == "local":
        client = None
    serial = isinstance(client, str) and client == "serial"
    dask_client = cluster = None
    workers = 1
    if not serial:
        dask_client, cluster, _name = _connect(client)
        workers = max(len(dask_client.scheduler_info().get("workers", {})), 1)
    if batch_size is None:
        batch_size = max(1, min(256, math.ceil(len(cells) / (4 * workers))))
    batches = [cells[i : i + batch_size] for i in range(0, len(cells), batch_size)]
    per_batch_rows = [len(b) * len(policies) for b in batches]

    frames: dict[int, pd.DataFrame] = {}
    if out is not None:
        os.makedirs(out, exist_ok=True)
        grid = {
            "cells": cells,
            "batch_size": batch_size,
            "columns": COLUMNS,
            "tests": list(_native.test_names()),
        }
        grid_path = os.path.join(out, "grid.json")
        if os.path.exists(grid_path):
            with open(grid_path) as f:
                try:
                    old = json.load(f)
                except ValueError:
                    old = None
            if old is not None and old != grid:
                raise SchedlabError(
                    f"{out} holds the results of another sweep (its grid.json differs); "
                    "use another directory or remove it"
                )
        text = json.dumps(grid)
        tmp = grid_path + ".tmp"
        with open(tmp, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, grid_path)
        for i, n in enumerate(per_batch_rows):
            df = _read_finished(_batch_path(out, i), n)
            if df is not None:
                frames[i] = df
    reused = len(frames)
    todo = [i for i in range(len(batches)) if i not in frames]
    bar = _Progress(len(cells), sum(len(batches[i]) for i in frames), progress)

    def finish(i: int, cols_json: str) -> None:
        df = _frame(json.loads(cols_json))
        if out is not None:
            _write_parquet_atomic(df, _batch_path(out, i))
        frames[i] = df
        bar.add(len(batches[i]))

    try:
        if serial:
            for i in todo:
                finish(i, _native.run_cells(json.dumps(batches[i])))
        else:
            from dask.distributed import as_completed

            futures = {
                dask_client.submit(_run_batch, json.dumps(batches[i]), pure=False): i
                for i in todo
            }
            for fut in as_completed(list(futures)):
                finish(futures[fut], fut.result())
    finally:
        bar.close()
        if cluster is not None:
            dask_client.close()
            cluster.close()

    result = pd.concat([frames[i] for i in range(len(batches))], ignore_index=True)
    order = {p: k for k, p in enumerate(policies)}
    result = (
        result.assign(_p=result["policy"].map(order))
        .sort_values(["utilization", "_p", "sample"], kind="stable")
        .drop(columns="_p")
        .reset_index(drop=True)
    )
    result["policy"] = result["policy"].astype("string")
    result.attrs.update(
        batches=len(batches), batches_computed=len(todo), batches_reused=reused
    )
    return result


def _batch_path(out: str, i: int) -> str:
    return os.path.join(out, f"batch-{i:06d}.parquet")
