"""Schedulability sweeps: many random task sets per utilisation, each simulated under
several policies and analysed, serially or on a Dask cluster, resumable from Parquet.

A sweep is a grid of cells, one per (utilization, sample). Each cell's task set has a seed
derived from the sweep's seed, the utilisation and the sample only, so a cell gives the
same numbers whichever process, worker or batch runs it. Cells are run in batches by the
Rust core (one call per batch, GIL released), so the per-cell overhead is small.

Every grid, from the command line or from :func:`sweep`, is checked by
:func:`normalize_grid` before anything runs. The directory ``out=DIR`` is handled by
:mod:`schedlab.sweepdir` (ownership, lock, atomic writes, resume and extension).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import math
import os
import signal
import sys
import threading
import time
from collections.abc import Iterable
from typing import Any

import numpy as np
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
    "status",
    "horizon_ns",
    "horizon_complete",
    "deadline_misses",
    "context_switches_per_cpu_per_s",
    "preemptions",
    "migrations",
    "scheduler_invocations",
    "events",
]

#: The grid's other axes: each a value or a list of values (numbers also
#: ``{from, to, step}``); every combination is swept, and each row names its own values
#: in these columns (``deadline_min_ratio`` empty for implicit deadlines).
AXES = (
    "cpus",
    "tasks",
    "max_task_utilization",
    "deadline_min_ratio",
    "method",
    "periods",
)

#: Grid keys whose values a finished sweep may extend (they are not part of its hash).
EXTENDABLE = ("utilizations", "samples")

#: Estimated memory of one cell (its description, sent to the core) and one row (the
#: DataFrame and Parquet), for the up-front limits.
_CELL_BYTES = 2048
_ROW_BYTES = 1024


def expected_columns() -> list[str]:
    """Every column of a sweep's rows, in order."""
    return list(AXES) + COLUMNS + ["analysis_" + t for t in _native.test_names()]


def _memory_bytes() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not Linux
        return 8 << 30


def limits() -> tuple[int, int]:
    """(most cells, most rows) of one sweep on this machine: a quarter of its memory."""
    budget = _memory_bytes() // 4
    return max(1000, budget // _CELL_BYTES), max(1000, budget // _ROW_BYTES)


# ---- validation: the one place every grid goes through -------------------------------


class _Check:
    """Type checks with the grid's source and key in every message."""

    def __init__(self, source: str):
        self.source = source

    def fail(self, key: str, problem: str):
        raise SchedlabError(f"{self.source}: {key}: {problem}")

    def integer(self, key: str, v: Any, lo: int, hi: int | None = None) -> int:
        if isinstance(v, float) and math.isfinite(v) and v.is_integer():
            v = int(v)  # 1e8 in YAML 1.2 or Python: a count, checked against the limits
        if isinstance(v, bool) or not isinstance(v, int):
            self.fail(key, f"give a whole number, not {_show(v)}")
        if v < lo:
            self.fail(key, f"{v} is below {lo}")
        if hi is not None and v > hi:
            self.fail(key, f"{v} is above {hi}")
        return v

    def number(self, key: str, v: Any) -> float:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            self.fail(key, f"give a number, not {_show(v)}")
        try:
            x = float(v)
        except OverflowError:  # an int beyond any float (10**400)
            x = math.inf
        if not math.isfinite(x):
            self.fail(key, f"{_show(v)} is not a finite number")
        return x

    def text(self, key: str, v: Any) -> str:
        if not isinstance(v, str) or not v:
            self.fail(key, f"give a non-empty string, not {_show(v)}")
        return v

    def mapping(self, key: str, v: Any) -> dict:
        if not isinstance(v, dict):
            self.fail(key, f"give a mapping of keys, not {_show(v)}")
        for k in v:
            if not isinstance(k, str):
                self.fail(key, f"key {_show(k)} is not a string")
        return v


def _show(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, str):
        return f"the text {v!r}"
    if isinstance(v, float) and math.isinf(v):
        return ".inf" if v > 0 else "-.inf"
    if isinstance(v, float) and math.isnan(v):
        return ".nan"
    if isinstance(v, (list, tuple)):
        return f"a list ({list(v)!r})"
    if isinstance(v, dict):
        return f"a mapping ({v!r})"
    return repr(v)


def _range(c: _Check, key: str, v: dict, shape: str, limit) -> list[float]:
    """``{from: A, to: B, step: S}`` as its values; ``shape`` names what else the key
    takes (for the message), ``limit(n)`` refuses too many values before they exist."""
    unknown = sorted(set(v) - {"from", "to", "step"})
    if unknown or not {"from", "to", "step"} <= set(v):
        c.fail(key, f"give {shape} or {{from: A, to: B, step: S}}")
    a = c.number(key + ".from", v["from"])
    b = c.number(key + ".to", v["to"])
    s = c.number(key + ".step", v["step"])
    if s <= 0:
        c.fail(key + ".step", f"{s} must be positive")
    if b < a:
        c.fail(key, f"from {a} is above to {b}")
    n = math.floor((b - a) / s + 1e-9) + 1
    limit(n)
    return [round(a + i * s, 10) for i in range(n)]


def _no_repeats(c: _Check, key: str, values: list) -> list:
    seen: set = set()
    for i, x in enumerate(values):
        if x in seen:
            c.fail(f"{key}[{i}]", f"{x} is given twice")
        seen.add(x)
    return values


def _utilizations(c: _Check, v: Any, samples: int, max_cells: int) -> list[float]:
    key = "utilizations"
    if isinstance(v, dict):

        def limit(n: int) -> None:
            if n * samples > max_cells:
                c.fail(
                    key,
                    f"{n:,} utilisations x {samples:,} samples = {n * samples:,} "
                    f"cells; the limit on this machine is {max_cells:,} cells",
                )

        return _range(c, key, v, "a list", limit)
    if isinstance(v, str) or not isinstance(v, (list, tuple)):
        c.fail(key, f"give a list or {{from, to, step}}, not {_show(v)}")
    if not v:
        c.fail(key, "give at least one utilisation")
    return _no_repeats(c, key, [c.number(f"{key}[{i}]", u) for i, u in enumerate(v)])


def _policies(c: _Check, v: Any) -> list:
    key = "policies"
    if isinstance(v, str) or not isinstance(v, (list, tuple)) or not v:
        c.fail(key, f"give a non-empty list of policies, not {_show(v)}")
    out: list = []
    for i, p in enumerate(v):
        k = f"{key}[{i}]"
        if isinstance(p, str):
            out.append(c.text(k, p))
            continue
        if not isinstance(p, dict):
            c.fail(k, f"give a policy name or a mapping, not {_show(p)}")
        p = c.mapping(k, p)
        unknown = sorted(set(p) - {"policy", "placement", "label", "scheduler", "platform"})
        if unknown:
            c.fail(
                k,
                f"unknown key `{unknown[0]}` "
                "(known: label, placement, platform, policy, scheduler)",
            )
        if "policy" not in p:
            c.fail(k, "give the `policy`")
        e = {"policy": c.text(k + ".policy", p["policy"])}
        for sub in ("placement", "label"):
            if sub in p:
                e[sub] = c.text(f"{k}.{sub}", p[sub])
        for block in ("scheduler", "platform"):
            if block in p:
                e[block] = c.mapping(f"{k}.{block}", p[block])
        out.append(e)
    return out


def _exec(c: _Check, v: Any) -> Any:
    """The tasks' execution-time model in fractions of each task's runtime: ``"wcet"``,
    ``{"uniform": [a, b]}`` (0 < a <= b <= 1) or ``{"normal": [mean, stddev]}``
    (0 < mean <= 1, stddev >= 0)."""
    key = "exec"
    if v == "wcet":
        return v
    shape = "give wcet, {uniform: [a, b]} or {normal: [mean, stddev]} (fractions of the runtime)"
    if not isinstance(v, dict) or len(v) != 1:
        c.fail(key, f"{shape}, not {_show(v)}")
    (model, pair), = v.items()
    if model not in ("uniform", "normal"):
        c.fail(key, f"unknown model `{model}`: {shape}")
    if not isinstance(pair, (list, tuple)) or len(pair) != 2:
        c.fail(f"{key}.{model}", f"give two numbers, not {_show(pair)}")
    x, y = (c.number(f"{key}.{model}[{i}]", p) for i, p in enumerate(pair))
    if model == "uniform" and not 0 < x <= y <= 1:
        c.fail(key + ".uniform", f"[{x}, {y}] must satisfy 0 < a <= b <= 1")
    if model == "normal" and not (0 < x <= 1 and y >= 0):
        c.fail(key + ".normal", f"[{x}, {y}] must satisfy 0 < mean <= 1 and stddev >= 0")
    return {model: [x, y]}


def _axis(c: _Check, key: str, v: Any, one, numeric: bool) -> Any:
    """An axis: one value (kept as given), a list of values (no value twice), or for a
    numeric axis ``{from, to, step}``; each value checked by ``one(key, value)``."""
    if numeric and isinstance(v, dict):

        def limit(n: int) -> None:
            if n > 10_000:
                c.fail(key, f"{n:,} values; an axis takes at most 10,000")

        v = _range(c, key, v, "a value, a list", limit)
    if isinstance(v, (list, tuple)):
        if not v:
            c.fail(key, "give at least one value")
        return _no_repeats(c, key, [one(f"{key}[{i}]", x) for i, x in enumerate(v)])
    return one(key, v)


def values(g: dict[str, Any], axis: str) -> list:
    """The values of one of :data:`AXES` in a normalised grid (None: implicit deadlines)."""
    if axis == "deadline_min_ratio":
        d = g["deadlines"]
        v = None if d is None else d["min_ratio"]
    else:
        v = g[axis]
    return list(v) if isinstance(v, list) else [v]


def _deadlines(c: _Check, v: Any) -> dict | None:
    if v is None or v == "implicit":
        return None
    if isinstance(v, dict) and set(v) == {"min_ratio"}:

        def ratio(key, x):
            r = c.number(key, x)
            if not 0.0 <= r <= 1.0:
                c.fail(key, f"{r} is outside [0, 1]")
            return r

        return {
            "min_ratio": _axis(c, "deadlines.min_ratio", v["min_ratio"], ratio, True)
        }
    c.fail("deadlines", f"give `implicit` or {{min_ratio: R}}, not {_show(v)}")
    return None  # pragma: no cover


def normalize_grid(raw: dict[str, Any], source: str) -> dict[str, Any]:
    """Check a grid (sweep()'s arguments) and return it normalised; the same rules for a
    grid file and for :func:`sweep`. Raises SchedlabError naming ``source``, the key and
    the problem, before any work: types, ranges, duplicates, the limits on cells and
    rows, and each utilisation's generated set under each policy through the Rust core
    (the generator's and the model's own rules)."""
    c = _Check(source)
    max_cells, max_rows = limits()
    g: dict[str, Any] = {}
    # The model's ceilings (crates/model/src/limits.rs), so that a huge count is named
    # here rather than failing as a type error in the core.
    g["cpus"] = _axis(
        c, "cpus", raw.get("cpus", 4), lambda k, x: c.integer(k, x, 1, 1024), True
    )
    g["tasks"] = _axis(
        c, "tasks", raw.get("tasks", 16), lambda k, x: c.integer(k, x, 1, 100_000), True
    )
    g["samples"] = c.integer("samples", raw.get("samples", 20), 1)
    if g["samples"] > max_cells:
        c.fail(
            "samples",
            f"{g['samples']:,} samples is above the limit on this machine "
            f"of {max_cells:,} cells",
        )
    g["utilizations"] = _utilizations(
        c, raw.get("utilizations", (1.0, 2.0, 3.0)), g["samples"], max_cells
    )
    g["policies"] = _policies(c, raw.get("policies", ("edf",)))
    g["seed"] = c.integer("seed", raw.get("seed", 1), 0, 2**64 - 1)
    d = raw.get("duration", "1s")
    if isinstance(d, bool) or not isinstance(d, (int, str)):
        c.fail("duration", f"give a duration such as '1s' (or int ns), not {_show(d)}")
    g["duration"] = str(d)
    g["method"] = _axis(
        c, "method", raw.get("method", "uunifast-discard"), c.text, False
    )
    g["periods"] = _axis(
        c, "periods", raw.get("periods", "10ms..1000ms"), c.text, False
    )
    g["granularity"] = c.text("granularity", raw.get("granularity", "1ms"))
    g["max_task_utilization"] = _axis(
        c, "max_task_utilization", raw.get("max_task_utilization", 1.0), c.number, True
    )
    g["deadlines"] = _deadlines(c, raw.get("deadlines"))
    for block in ("scheduler", "platform"):
        v = raw.get(block)
        g[block] = None if v is None else c.mapping(block, v)
    # Only when given: a grid without it keeps its identity (and its sweep directory).
    if raw.get("exec") is not None:
        g["exec"] = _exec(c, raw["exec"])
    a = raw.get("analysis", True)
    if not isinstance(a, bool):
        c.fail("analysis", f"give true or false, not {_show(a)}")
    g["analysis"] = a
    b = raw.get("batch_size")
    g["batch_size"] = None if b is None else c.integer("batch_size", b, 1)

    combos = math.prod(len(values(g, a)) for a in AXES)
    cells = combos * len(g["utilizations"]) * g["samples"]
    rows = cells * len(g["policies"])
    if cells > max_cells or rows > max_rows:
        c.fail(
            "samples",
            f"{combos:,} axis combinations x "
            f"{len(g['utilizations']):,} utilisations x {g['samples']:,} samples x "
            f"{len(g['policies'])} policies = {rows:,} rows in {cells:,} cells; the "
            f"limits on this machine are {max_cells:,} cells and {max_rows:,} rows "
            "(a quarter of its memory): split the sweep",
        )
    # The Rust core checks one cell per combination and utilisation (the sample does not
    # change a rule).
    probe = [_cell(g, a, u, 0) for a in combinations(g) for u in g["utilizations"]]
    try:
        _native.check_cells(json.dumps(probe))
    except SchedlabError as e:
        raise SchedlabError(f"{source}: {e}") from None
    return g


def identity(g: dict[str, Any]) -> dict[str, Any]:
    """What a sweep directory is owned by: the grid without its extendable axes (and
    without the batch size, which changes no number), plus the columns and tests."""
    ident = {k: v for k, v in g.items() if k not in EXTENDABLE and k != "batch_size"}
    ident["columns"] = expected_columns()
    return ident


def grid_hash(g: dict[str, Any]) -> str:
    """SHA-256 of the grid's :func:`identity` as canonical JSON."""
    import hashlib

    text = json.dumps(identity(g), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def provenance(g: dict[str, Any]) -> dict[str, str]:
    """The keys every batch file's metadata and the result's ``attrs`` carry."""
    return {
        "schedlab_version": _native.__version__,
        "grid": json.dumps(g, sort_keys=True),
        "grid_hash": grid_hash(g),
        "seed": str(g["seed"]),
    }


# ---- cells and batches ---------------------------------------------------------------


def combinations(g: dict[str, Any]) -> list[tuple]:
    """Every combination of the :data:`AXES`' values, in the grid's order."""
    return list(itertools.product(*(values(g, a) for a in AXES)))


def cells_of(g: dict[str, Any]) -> list[dict[str, Any]]:
    """Every cell of a normalised grid: combinations, then utilisations, then samples."""
    return [
        _cell(g, a, u, s)
        for a in combinations(g)
        for u in g["utilizations"]
        for s in range(g["samples"])
    ]


def cell_key(c: dict[str, Any]) -> tuple:
    """A cell's coordinates: its axes' values, utilisation and sample."""
    return (*(c[a] for a in AXES), c["utilization"], c["sample"])


def row_keys(df: pd.DataFrame) -> list[tuple]:
    """Each row's cell coordinates, as :func:`cell_key` gives them."""
    cols = [df[a].tolist() for a in (*AXES, "utilization", "sample")]
    k = AXES.index("deadline_min_ratio")
    cols[k] = [None if pd.isna(r) else r for r in cols[k]]  # NaN: implicit deadlines
    return list(zip(*cols))


def _cell(g: dict[str, Any], axes: tuple, u: float, s: int) -> dict[str, Any]:
    cpus, tasks, bound, ratio, method, periods = axes
    return {
        "cpus": cpus,
        "tasks": tasks,
        "utilization": float(u),
        "sample": s,
        "seed": g["seed"],
        "duration": g["duration"],
        "method": method,
        "periods": periods,
        "granularity": g["granularity"],
        "max_task_utilization": bound,
        "deadline_min_ratio": ratio,
        "scheduler": g["scheduler"],
        "platform": g["platform"],
        "policies": g["policies"],
        "analysis": g["analysis"],
        **({"exec": g["exec"]} if "exec" in g else {}),
    }


def labels(g: dict[str, Any]) -> list[str]:
    """The ``policy`` column's values, in the grid's order."""
    out = []
    for p in g["policies"]:
        if isinstance(p, str):
            out.append(p)
        elif "label" in p:
            out.append(p["label"])
        elif "placement" in p:
            out.append(f"{p['policy']}@{p['placement']}")
        else:
            out.append(p["policy"])
    return out


def _batch_json(batch: list[dict[str, Any]]) -> str:
    """A batch's cells as the core reads them: the first cell and each cell's
    ``[utilization, sample]`` when every cell has its axis values (the cells of one grid
    then differ only there), else the list of cells."""
    first = tuple(batch[0][a] for a in AXES)
    if all(tuple(c[a] for a in AXES) == first for c in batch):
        points = [[c["utilization"], c["sample"]] for c in batch]
        return json.dumps({"cell": batch[0], "points": points})
    return json.dumps(batch)


def _run_batch(cells_json: str) -> dict[str, list]:
    """Run one batch in this process (what a Dask worker calls): its columns."""
    from schedlab import _native as native

    return native.run_cells_columns(cells_json)


#: Cells per native call in a serial sweep: Ctrl-C is seen between calls (the core runs
#: with the GIL released), so a few cells keep it prompt (16 cells of 16 tasks for 1 s
#: are about 3 ms); a call has a fixed cost (its batch's text, the columns' lists) that
#: 16 cells share.
_SERIAL_CHUNK = 16


def _run_serial(batch: list[dict]) -> pd.DataFrame:
    """Run one batch in this process, a few cells per call to the core, and make one
    DataFrame of the whole batch (a DataFrame per call cost more than the cells)."""
    cols: dict[str, list] = {}
    for i in range(0, len(batch), _SERIAL_CHUNK):
        part = _native.run_cells_columns(_batch_json(batch[i : i + _SERIAL_CHUNK]))
        for k, v in part.items():
            cols.setdefault(k, []).extend(v)
    return frame(cols, batch)


def frame(cols: dict[str, list], batch: list[dict[str, Any]]) -> pd.DataFrame:
    """Columns from the Rust core (the rows of ``batch``'s cells, each under every
    policy in turn) as a DataFrame with fixed dtypes, led by the cells' axis values."""
    csw = cols["context_switches_per_cpu_per_s"]
    per = len(cols["policy"]) // max(len(batch), 1)

    def axis(a):
        return [c[a] for c in batch for _ in range(per)]

    ratio = [math.nan if r is None else r for r in axis("deadline_min_ratio")]
    data = {
        "cpus": pd.array(axis("cpus"), dtype=_INT64),
        "tasks": pd.array(axis("tasks"), dtype=_INT64),
        "max_task_utilization": pd.array(axis("max_task_utilization"), dtype=_FLOAT64),
        "deadline_min_ratio": pd.array(ratio, dtype=_FLOAT64),
        "method": pd.array(axis("method"), dtype=_STRING),
        "periods": pd.array(axis("periods"), dtype=_STRING),
        "utilization": pd.array(cols["utilization"], dtype=_FLOAT64),
        "policy": pd.array(cols["policy"], dtype=_STRING),
        "sample": pd.array(cols["sample"], dtype=_INT64),
        "set_seed": pd.array(cols["set_seed"], dtype=_INT64),
        "schedulable": pd.array(cols["schedulable"], dtype=_BOOL),
        "status": pd.array(cols["status"], dtype=_STRING),
        "horizon_ns": pd.array(cols["horizon_ns"], dtype=_NULLABLE_INT64),
        "horizon_complete": _nullable_bools(cols["horizon_complete"]),
        "deadline_misses": pd.array(cols["deadline_misses"], dtype=_NULLABLE_INT64),
        "context_switches_per_cpu_per_s": pd.array(
            [math.nan if v is None else v for v in csw], dtype=_FLOAT64
        ),
        "preemptions": pd.array(cols["preemptions"], dtype=_NULLABLE_INT64),
        "migrations": pd.array(cols["migrations"], dtype=_NULLABLE_INT64),
        "scheduler_invocations": pd.array(
            cols["scheduler_invocations"], dtype=_NULLABLE_INT64
        ),
        "events": pd.array(cols["events"], dtype=_NULLABLE_INT64),
    }
    for t in _native.test_names():
        data["analysis_" + t] = _nullable_bools(cols["analysis_" + t])
    return pd.DataFrame(data)


# The columns' dtypes as objects: a dtype named by its string is looked up in pandas'
# registry at every call, which cost more than the conversion of a batch's values.
_INT64 = pd.api.types.pandas_dtype("int64")
_FLOAT64 = pd.api.types.pandas_dtype("float64")
_BOOL = pd.api.types.pandas_dtype("bool")
_STRING = pd.StringDtype()
_NULLABLE_INT64 = pd.Int64Dtype()


def _nullable_bools(values: list) -> pd.arrays.BooleanArray:
    """True/False/None (JSON's null) as a ``boolean`` array, <NA> for None: what
    ``pd.array(values, dtype="boolean")`` gives, built from two masks instead of a
    per-value coercion (the 16 such columns were a third of a batch's DataFrame)."""
    n = len(values)
    na = np.fromiter((v is None for v in values), dtype=bool, count=n)
    true = np.fromiter((v is True for v in values), dtype=bool, count=n)
    return pd.arrays.BooleanArray(true, na)


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


class _Interrupts:
    """Ctrl-C at once, except while a finished batch is written and counted (then just
    after), so that the count printed is exactly what a resume finds. Only the main
    thread can handle signals; elsewhere nothing changes."""

    def __init__(self):
        self.critical = False
        self.pending = False
        self.old = None

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            self.old = signal.signal(signal.SIGINT, self._on_sigint)
        return self

    def __exit__(self, *exc):
        if self.old is not None:
            signal.signal(signal.SIGINT, self.old)
        return False

    def _on_sigint(self, signum, frame):
        if self.critical:
            self.pending = True
        else:
            raise KeyboardInterrupt

    @contextlib.contextmanager
    def deferred(self):
        self.critical = True
        try:
            yield
        finally:
            self.critical = False
        if self.pending:
            raise KeyboardInterrupt


def _have_dask() -> bool:
    try:
        import dask.distributed  # noqa: F401
    except ImportError:
        return False
    return True


_DASK_EXTRA = "pip install 'schedlab[dask]'"


def _connect(client):
    """(client, cluster to close or None) for ``client`` (None or "local": a local
    cluster of threads, which needs no ``if __name__ == "__main__":`` guard since the
    core releases the GIL)."""
    if not _have_dask():
        raise SchedlabError(
            f"client {client or 'local'!r} needs Dask: {_DASK_EXTRA} "
            "(or pass client='serial')"
        )
    from dask.distributed import Client, LocalCluster

    if client is None or client == "local":
        cluster = LocalCluster(
            n_workers=1,
            threads_per_worker=os.cpu_count() or 1,
            processes=False,
            dashboard_address=None,
        )
        return Client(cluster), cluster
    if isinstance(client, str):
        try:
            return Client(client, timeout="5s"), None
        except (OSError, TimeoutError, ValueError) as e:
            # ValueError: not an address at all (`--client locall`).
            raise SchedlabError(
                f"cannot reach the Dask scheduler at {client}: {e} (a client is serial, "
                "local or a scheduler address such as tcp://10.0.0.5:8786)"
            ) from e
    if not hasattr(client, "submit"):
        raise TypeError(
            "client must be None, 'serial', 'local', a scheduler address or a "
            f"dask.distributed.Client, not {type(client).__name__}"
        )
    return client, None


def sweep(
    cpus: int = 4,
    tasks: int = 16,
    utilizations: Iterable[float] = (1.0, 2.0, 3.0),
    policies: Iterable[Any] = ("edf",),
    samples: int = 20,
    seed: int = 1,
    duration: str = "1s",
    client: Any = None,
    *,
    method: str = "uunifast-discard",
    periods: str = "10ms..1000ms",
    granularity: str = "1ms",
    max_task_utilization: float = 1.0,
    deadlines: Any = None,
    scheduler: dict | None = None,
    platform: dict | None = None,
    exec: Any = None,
    analysis: bool = True,
    out: str | None = None,
    batch_size: int | None = None,
    progress: bool | None = None,
) -> pd.DataFrame:
    """Run a schedulability sweep and return one row per (axis values, utilization,
    policy, sample).

    Args:
        cpus, tasks: platform and task-set size; like ``max_task_utilization``,
            ``method`` and ``periods``, one value, a list, or (numbers) a
            ``{"from", "to", "step"}`` range: every combination of the axes is swept.
        utilizations: total utilisations of the grid (a list, or
            ``{"from": A, "to": B, "step": S}``); no value twice.
        policies: each ``POLICY`` (global placement), ``POLICY@PLACEMENT``, or a dict
            ``{"policy": "illf", "placement": "global", "label": "illf-exact",
            "scheduler": {...}, "platform": {...}}`` (the label is the ``policy``
            column).
        samples: task sets per utilisation.
        seed: the sweep's seed; the same seed gives the same numbers on any client.
        duration: simulated time per set, e.g. ``"1s"``, or ``"hyperperiod"`` (also
            ``"hyperperiod<=20s"``): the set's feasibility interval, so that a run
            without a miss decides the cell.
        client: ``None`` starts a local Dask cluster of threads (serial, with one line
            on stderr, when Dask is not installed); ``"local"`` the same but an error
            without Dask; a ``dask.distributed.Client`` or a scheduler address uses that
            cluster; ``"serial"`` runs in this process.
        method, periods, granularity, max_task_utilization: the generator (see
            :func:`schedlab.generate`).
        deadlines: ``None``/``"implicit"``, or ``{"min_ratio": R}`` (R a value or a
            list) for constrained deadlines drawn in [C + R(T - C), T].
        scheduler, platform: blocks merged into every generated workload before the
            model validates it (e.g. ``platform={"hz": 250}``, or SimSo's fixed
            penalties ``platform={"preemption": "10us", "migration": "20us"}``); a
            policy entry's own ``scheduler`` and ``platform`` are merged over them.
        exec: every generated task's execution-time model in fractions of its runtime:
            ``"wcet"`` (default), ``{"uniform": [a, b]}`` or ``{"normal": [mean,
            stddev]}`` (SimSo's ACET), drawn from each set's seed.
        analysis: also run the schedulability tests on each set (``analysis_*``
            columns; empty without).
        out: directory for the Parquet results, owned by this grid (see
            docs/analysis.md): started again it resumes; with more samples or more
            utilisations it computes only the new cells.
        batch_size: cells per task sent to a worker (default: about 4 tasks per worker).
        progress: show cells done, rate and time left (default: when stderr is a
            terminal).

    Returns:
        A DataFrame with the columns ``AXES``, ``COLUMNS`` and ``analysis_<test>`` for
        each schedulability test (True: accepted, False: not, <NA>: not applicable),
        sorted by the axes, utilization, policy (in the given order) and sample.
        ``status`` is ``schedulable`` (no miss over a complete horizon),
        ``unschedulable`` (a miss, or no partition) or ``undecided`` (no miss, horizon
        short of the feasibility interval); ``schedulable`` is ``status ==
        "schedulable"``. ``df.attrs`` holds
        ``schedlab_version``, ``grid`` (JSON), ``grid_hash``, ``seed``, ``batches``,
        ``batches_computed``, ``batches_reused`` and ``ignored`` (files of ``out`` not
        used, with the reason).

    Raises:
        SchedlabError: a bad grid (checked before any work), a directory that is not
            this grid's or is in use, or an unreachable Dask scheduler.
    """
    raw = {
        "cpus": cpus,
        "tasks": tasks,
        "utilizations": utilizations,
        "policies": policies,
        "samples": samples,
        "seed": seed,
        "duration": duration,
        "method": method,
        "periods": periods,
        "granularity": granularity,
        "max_task_utilization": max_task_utilization,
        "deadlines": deadlines,
        "scheduler": scheduler,
        "platform": platform,
        "exec": exec,
        "analysis": analysis,
        "batch_size": batch_size,
    }
    # Any other iterable (a range, a NumPy array) as a list; the rest is checked.
    for key in ("utilizations", "policies"):
        v = raw[key]
        if not isinstance(v, (str, dict, list, tuple)) and hasattr(v, "__iter__"):
            raw[key] = list(v)
    grid = normalize_grid(raw, "sweep()")
    return run(grid, client=client, out=out, progress=progress)


def run(
    grid: dict[str, Any],
    client: Any = None,
    out: str | None = None,
    progress: bool | None = None,
) -> pd.DataFrame:
    """Run a grid returned by :func:`normalize_grid` (what :func:`sweep` and
    ``schedlab sweep`` call). A KeyboardInterrupt raised from here carries
    ``cells_done`` and ``cells_total``."""
    from .sweepdir import SweepDir

    cells = cells_of(grid)
    serial = isinstance(client, str) and client == "serial"
    if client is None and not _have_dask():
        print(
            "sweep: Dask is not installed, running serially; "
            f"{_DASK_EXTRA} runs on every core",
            file=sys.stderr,
        )
        serial = True
    dask_client = cluster = None
    workers = 1
    if not serial:
        dask_client, cluster = _connect(client)
        workers = max(len(dask_client.scheduler_info().get("workers", {})), 1)
        nthreads = sum(
            w.get("nthreads", 1)
            for w in dask_client.scheduler_info().get("workers", {}).values()
        )
        workers = max(workers, nthreads)
    bar = None
    try:
        batch_size = grid["batch_size"] or max(
            1, min(256, math.ceil(len(cells) / (4 * workers)))
        )
        meta = provenance(grid)
        names = labels(grid)
        with SweepDir.open(out, grid, meta, names) as d:
            done = d.done_cells() if d else set()
            todo = [c for c in cells if cell_key(c) not in done]
            batches = [
                todo[i : i + batch_size] for i in range(0, len(todo), batch_size)
            ]
            bar = _Progress(len(cells), len(cells) - len(todo), progress)
            frames = list(d.frames()) if d else []

            interrupts = _Interrupts()

            def finish(batch: list[dict], df: pd.DataFrame) -> None:
                # Ctrl-C waits until the batch is on disk and counted, so the count
                # printed is what a resume finds.
                with interrupts.deferred():
                    if d:
                        d.write_batch(df, [cell_key(c) for c in batch])
                    frames.append(df)
                    bar.add(len(batch))

            try:
                with interrupts:
                    if serial:
                        for b in batches:
                            finish(b, _run_serial(b))
                    else:
                        from dask.distributed import as_completed

                        futures = {
                            dask_client.submit(_run_batch, _batch_json(b), pure=False): k
                            for k, b in enumerate(batches)
                        }
                        for fut in as_completed(list(futures)):
                            finish(
                                batches[futures[fut]],
                                frame(fut.result(), batches[futures[fut]]),
                            )
            except KeyboardInterrupt as e:
                e.cells_done, e.cells_total = bar.done, bar.total
                raise
            reused = d.reused if d else 0
            ignored = dict(d.ignored) if d else {}
    finally:
        if bar is not None:
            bar.close()
        if cluster is not None:
            dask_client.close()
            cluster.close()

    result = pd.concat(frames, ignore_index=True)
    if out is not None:
        # Only this grid's cells (a directory may hold more, from a larger grid); without
        # a directory every frame is one of this grid's batches.
        wanted = {cell_key(c) for c in cells}
        result = result[[k in wanted for k in row_keys(result)]]
    order = {p: k for k, p in enumerate(names)}
    result = (
        result.assign(_p=result["policy"].map(order))
        .sort_values([*AXES, "utilization", "_p", "sample"], kind="stable")
        .drop(columns="_p")
        .reset_index(drop=True)
    )
    result["policy"] = result["policy"].astype("string")
    result.attrs.update(meta)
    result.attrs["seed"] = grid["seed"]  # an int here; text in Parquet's metadata
    result.attrs.update(
        batches=reused + len(batches),
        batches_computed=len(batches),
        batches_reused=reused,
        ignored=ignored,
    )
    return result
