"""Figures of a sweep (matplotlib): the schedulability ratio against utilisation per
policy (with the analysis curves), the weighted schedulability per policy, and context
switches per CPU per second against utilisation. Each function takes the DataFrame that
:func:`schedlab.sweep` returns (or ``pd.read_parquet`` of its files) and an optional
matplotlib Axes.

What a reviewer needs is on every figure:

- **Confidence.** Each point is a binomial proportion (k of n sets schedulable); its 95 %
  Wilson score interval (Wilson, "Probable inference, the law of succession, and
  statistical inference", JASA 22(158), 1927; recommended over the normal interval by
  Brown, Cai & DasGupta, Statistical Science 16(2), 2001) is drawn as a band around each
  policy's curve and as error bars on each analysis curve. :func:`wilson` computes it.
- **Undecided cells.** When the DataFrame has a ``status`` column (``schedulable``,
  ``unschedulable``, ``undecided``: a simulation that could not reach a horizon that
  decides), the curve is the share of sets *decided* schedulable; the undecided share is
  drawn as a hatched band above it (the most the curve could rise) and counted in the
  set-up text. An undecided set is never counted as schedulable. Without the column every
  cell is decided and ``schedulable`` is the verdict.
- **Set-up.** (:func:`read` loads a sweep's Parquet files with it.) Under the figure: m (CPUs), n (tasks), task sets per point, the horizon
  (with the span simulated, from a ``horizon_ns`` column when the rows have one),
  the generator and its periods, the seed, the grid's hash and the schedlab version that
  produced the data, read from ``df.attrs`` (``schedlab_version``, ``grid`` as JSON
  text, ``grid_hash``, ``seed``; pandas keeps ``attrs`` through Parquet), else from the
  DataFrame's columns; what neither says is written ``?``. :func:`setup` returns it.
- **Readability.** The legend is outside the data area (right of the axes); each policy
  has its own marker and dash style, and the policies' points are shifted sideways by a
  few percent of the utilisation step (at most ±15 % of the smallest step) so that
  overlapping curves stay apart; the x tick labels are the true utilisations.
"""

from __future__ import annotations

import json
import math
import os
import textwrap
from collections.abc import Sequence
from typing import Any

import pandas as pd

#: Analysis columns drawn by default: the multiprocessor tests.
DEFAULT_TESTS = ("gfb", "bcl", "ffd-edf")

#: z of a two-sided 95 % interval.
Z95 = 1.959963984540054

_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h", "p")
_DASHES = ("-", "--", "-.", ":", (0, (5, 1, 1, 1, 1, 1)), (0, (1, 3)), (0, (8, 2)))
_TEST_MARKERS = ("x", "+", "1", "2", "3", "4", "|", "_")


def wilson(k, n, z: float = Z95):
    """Wilson score interval of a binomial proportion k/n: ``(low, high)`` (arrays when
    k, n are arrays). n = 0 gives (0, 1): no information."""
    import numpy as np

    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(n > 0, k / n, 0.0)
        z2n = np.where(n > 0, z * z / n, 0.0)
        centre = (p + z2n / 2) / (1 + z2n)
        half = (
            z
            / (1 + z2n)
            * np.sqrt(
                p * (1 - p) / np.where(n > 0, n, 1) + z2n / (4 * np.where(n > 0, n, 1))
            )
        )
    low = np.where(n > 0, np.clip(centre - half, 0.0, 1.0), 0.0)
    high = np.where(n > 0, np.clip(centre + half, 0.0, 1.0), 1.0)
    # Exact at the ends (k = 0 gives 0, k = n gives 1), not 1e-17 off by rounding.
    low = np.where(k == 0, 0.0, low)
    high = np.where((k == n) & (n > 0), 1.0, high)
    if low.ndim == 0:
        return float(low), float(high)
    return low, high


def _verdicts(df: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """(decided schedulable, undecided) per row, as booleans. Without a ``status`` column
    every row is decided and ``schedulable`` is its verdict."""
    if "status" in df:
        status = df["status"].astype("string").str.lower()
        known = {"schedulable", "unschedulable", "undecided"}
        bad = sorted(set(status.dropna().unique()) - known)
        if bad or status.isna().any():
            from ._native import SchedlabError

            what = bad[0] if bad else "a missing value"
            raise SchedlabError(
                f"status column: {what!r} is not schedulable, unschedulable or undecided"
            )
        return (status == "schedulable").astype(bool), (status == "undecided").astype(
            bool
        )
    ok = df["schedulable"].astype("boolean").fillna(False).astype(bool)
    return ok, pd.Series(False, index=df.index)


def counts(df: pd.DataFrame) -> pd.DataFrame:
    """Per (policy, utilization): ``n`` sets, ``k`` decided schedulable, ``undecided``,
    ``ratio`` = k/n, and the 95 % Wilson interval ``low``, ``high`` of k/n."""
    ok, und = _verdicts(df)
    g = (
        pd.DataFrame(
            {
                "policy": df["policy"].astype(str),
                "utilization": df["utilization"].astype(float),
                "k": ok.astype(int),
                "undecided": und.astype(int),
                "n": 1,
            }
        )
        .groupby(["policy", "utilization"], sort=False)
        .sum()
        .reset_index()
    )
    g["ratio"] = g["k"] / g["n"]
    g["low"], g["high"] = wilson(g["k"].to_numpy(), g["n"].to_numpy())
    return g


def _test_counts(df: pd.DataFrame, test: str) -> pd.DataFrame | None:
    """The analysis test's acceptances per utilisation, on one policy's rows (the tests
    see the task set only, the same for every policy)."""
    col = "analysis_" + test
    if col not in df:
        return None
    first = df[df["policy"].astype(str) == str(df["policy"].iloc[0])]
    acc = first[col].astype("boolean").fillna(False).astype(bool)
    g = (
        pd.DataFrame(
            {"utilization": first["utilization"].astype(float), "k": acc.astype(int)}
        )
        .assign(n=1)
        .groupby("utilization", sort=True)
        .sum()
        .reset_index()
    )
    g["ratio"] = g["k"] / g["n"]
    g["low"], g["high"] = wilson(g["k"].to_numpy(), g["n"].to_numpy())
    return g


# --- Reading a sweep back ---------------------------------------------------------------

#: The set-up keys a sweep writes into each Parquet file's metadata and ``df.attrs``.
SETUP_KEYS = ("schedlab_version", "grid", "grid_hash", "seed")


def read(path) -> pd.DataFrame:
    """A sweep's rows from one Parquet file or a sweep's output directory (its
    ``batch-*.parquet`` files, in order), with the set-up keys (:data:`SETUP_KEYS`) of
    the files' metadata in ``df.attrs``, for the figures' set-up text.

    Raises:
        SchedlabError: no batch files, an unreadable file, or batches of different
            grids (their ``grid_hash`` differs: one figure per experiment).
    """
    import glob

    import pyarrow.parquet as pq

    from ._native import SchedlabError

    p = os.fspath(path)
    if os.path.isdir(p):
        files = sorted(glob.glob(os.path.join(glob.escape(p), "batch-*.parquet")))
        if not files:
            raise SchedlabError(f"{p}: no batch-*.parquet files (not a sweep's output)")
    else:
        files = [p]
    frames, metas = [], []
    for f in files:
        try:
            frame = pd.read_parquet(f)
            raw = pq.read_schema(f).metadata or {}
        except Exception as e:  # noqa: BLE001 - pyarrow raises several kinds
            raise SchedlabError(f"{f}: not a readable Parquet file: {e}") from None
        meta = {k.decode(): v.decode() for k, v in raw.items()}
        metas.append(
            {k: meta[k] for k in SETUP_KEYS if k in meta}
            or {k: frame.attrs[k] for k in SETUP_KEYS if k in frame.attrs}
        )
        frames.append(frame)
    hashes = sorted({str(m.get("grid_hash")) for m in metas})
    if len(hashes) > 1:
        raise SchedlabError(
            f"{p}: batches of different grids (grid_hash "
            f"{', '.join(h[:12] for h in hashes)}): plot each experiment on its own"
        )
    df = pd.concat(frames, ignore_index=True)
    df.attrs = dict(metas[0])
    return df


# --- The set-up -------------------------------------------------------------------------


def _grid(df: pd.DataFrame) -> dict[str, Any]:
    """The sweep's grid from ``df.attrs['grid']`` (JSON text or a dict); its first cell's
    keys stand in for keys the grid does not have at top level."""
    raw = df.attrs.get("grid")
    if raw is None:
        return {}
    try:
        grid = json.loads(raw) if isinstance(raw, (str, bytes)) else dict(raw)
    except (ValueError, TypeError):
        return {}
    if not isinstance(grid, dict):
        return {}
    cells = grid.get("cells")
    if isinstance(cells, list) and cells and isinstance(cells[0], dict):
        grid = {**cells[0], **{k: v for k, v in grid.items() if k != "cells"}}
    return grid


def _column_value(df: pd.DataFrame, *names: str):
    """The one value of the first present column among ``names``; a list of values when
    they differ; None when no such column."""
    for c in names:
        if c in df:
            vals = pd.unique(df[c].dropna())
            if len(vals) == 1:
                v = vals[0]
                return v.item() if hasattr(v, "item") else v
            if len(vals) > 1:
                return sorted(v.item() if hasattr(v, "item") else v for v in vals)
    return None


def _fmt(v) -> str:
    if v is None:
        return "?"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    if isinstance(v, (list, tuple)):
        return "/".join(_fmt(x) for x in v)
    return str(v)


def _time(ns: int) -> str:
    """Nanoseconds in the largest unit that divides them (``200ms``, ``1s``)."""
    for unit, size in (("s", 10**9), ("ms", 10**6), ("us", 10**3)):
        if ns % size == 0:
            return f"{ns // size}{unit}"
    return f"{ns}ns"


def _horizon(df: pd.DataFrame, asked):
    """The horizon asked for (e.g. ``hyperperiod``), with the simulated span from the
    ``horizon_ns`` column when the rows have it and it says more."""
    if "horizon_ns" not in df or df["horizon_ns"].dropna().empty:
        return asked
    ns = df["horizon_ns"].dropna().astype("int64")
    lo, hi = int(ns.min()), int(ns.max())
    span = _time(lo) if lo == hi else f"{_time(lo)} to {_time(hi)}"
    if asked is None or str(asked) == span:
        return span
    return f"{asked} ({span})"


def _seed(v):
    """A seed as an int (Parquet metadata holds text: ``"9"``)."""
    if isinstance(v, str) and v.isdigit():
        return int(v)
    return v


def setup(df: pd.DataFrame) -> dict[str, Any]:
    """The sweep's set-up as a dict: ``cpus``, ``tasks``, ``samples`` (task sets per
    point, a list when they differ), ``horizon``, ``method``, ``periods``, ``seed``,
    ``grid_hash``, ``schedlab_version``, ``sets`` (cells), ``undecided`` (cells; None
    without a ``status`` column); a key neither the metadata nor the columns give is
    None."""
    grid = _grid(df)
    attrs = df.attrs

    def pick(keys, cols=()):
        for k in keys:
            if grid.get(k) is not None:
                return grid[k]
        return _column_value(df, *cols) if cols else None

    per_point = df.groupby(
        [df["policy"].astype(str), df["utilization"].astype(float)], sort=False
    ).size()
    sizes = sorted({int(x) for x in per_point})
    _, und = _verdicts(df)
    return {
        "cpus": pick(("cpus", "m"), ("cpus",)),
        "tasks": pick(("tasks", "n"), ("tasks",)),
        "samples": sizes[0] if len(sizes) == 1 else sizes,
        "horizon": _horizon(df, pick(("horizon", "duration"), ("horizon", "duration"))),
        "method": pick(("method",), ("method",)),
        "periods": pick(("periods",), ("periods",)),
        "seed": _seed(attrs.get("seed", pick(("seed",)))),
        "grid_hash": attrs.get("grid_hash"),
        "schedlab_version": attrs.get("schedlab_version"),
        "sets": len(df),
        # None: the rows do not say (no status column), not "none undecided".
        "undecided": int(und.sum()) if "status" in df else None,
    }


def setup_text(df: pd.DataFrame, note: str = "") -> str:
    """The set-up as the lines written under each figure (``note``, e.g. what the bands
    are, ends the last line): two lines, each wrapped at 130 characters."""
    s = setup(df)
    version = s["schedlab_version"]
    if version is None:
        from . import _native

        version = f"? (data unlabelled; plotted with {_native.__version__})"
    line1 = (
        f"m = {_fmt(s['cpus'])} CPUs, n = {_fmt(s['tasks'])} tasks, "
        f"{_fmt(s['samples'])} task sets per point, horizon {_fmt(s['horizon'])}, "
        f"generator {_fmt(s['method'])}, periods {_fmt(s['periods'])}"
    )
    h = s["grid_hash"]
    line2 = (
        f"seed {_fmt(s['seed'])}, grid {_fmt(h)[:12] if h else '?'}, "
        f"schedlab {version}; "
        + (
            f"undecided {s['undecided']} of {s['sets']} cells"
            if s["undecided"] is not None
            else f"{s['sets']} cells, undecided not recorded (no miss in the horizon "
            "counted as schedulable)"
        )
        + (f"; {note}" if note else "")
    )
    # Wrapped so that a long period list or note stays on the figure (about 130
    # characters of x-small text fit under the default figure's axes and legend).
    return "\n".join(
        textwrap.fill(line, width=130, break_on_hyphens=False)
        for line in (line1, line2)
    )


# --- Drawing ----------------------------------------------------------------------------


def _axes(ax):
    if ax is not None:
        return ax.figure, ax
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8.4, 4.8), layout="constrained")
    return fig, ax


def _finish(
    ax, df: pd.DataFrame, legend: bool = True, note: str = "bands: 95% Wilson intervals"
) -> None:
    """The legend right of the axes and the set-up under them."""
    if legend:
        leg = ax.legend(
            loc="upper left",
            bbox_to_anchor=(1.02, 1.0),
            borderaxespad=0.0,
            fontsize="small",
        )
        leg.set_gid("legend")
    # Anchored to the x label, so it sits below the tick labels whatever their size; an
    # Axes child, so constrained layout and bbox_inches="tight" keep room for it.
    t = ax.annotate(
        setup_text(df, note),
        xy=(0.0, 0.0),
        xycoords=("axes fraction", ax.xaxis.label),
        xytext=(0, -6),
        textcoords="offset points",
        ha="left",
        va="top",
        fontsize="x-small",
        color="0.25",
        annotation_clip=False,
    )
    t.set_gid("setup")


def _step(utilizations: Sequence[float]) -> float:
    """The smallest step between two utilisations of the grid (1 for one point)."""
    u = sorted({float(x) for x in utilizations})
    return min((b - a for a, b in zip(u, u[1:])), default=1.0)


def _dodge(utilizations: Sequence[float], k: int) -> float:
    """Sideways shift between two neighbouring curves: 30 % of the smallest utilisation
    step spread over the k curves (none for one curve or one point)."""
    if k < 2 or len(set(utilizations)) < 2:
        return 0.0
    return 0.3 * _step(utilizations) / (k - 1)


def schedulability_ratio(
    df: pd.DataFrame, ax=None, tests: Sequence[str] | None = DEFAULT_TESTS
):
    """Share of task sets decided schedulable (no deadline miss over a deciding horizon),
    per policy, against total utilisation, with 95 % Wilson bands; the undecided share as
    a hatched band above; dashed-dotted lines with error bars: share accepted by each
    analysis test. The set-up is written under the axes."""
    fig, ax = _axes(ax)
    c = counts(df)
    policies = list(dict.fromkeys(df["policy"].astype(str)))
    present = [t for t in (tests or ()) if "analysis_" + t in df]
    k = len(policies) + len(present)
    d = _dodge(df["utilization"], k)
    offsets = [(i - (k - 1) / 2) * d for i in range(k)]
    width = 0.8 * d if d > 0 else 0.05 * _step(df["utilization"])
    for i, policy in enumerate(policies):
        g = c[c["policy"] == policy].sort_values("utilization")
        x = g["utilization"].to_numpy() + offsets[i]
        (line,) = ax.plot(
            x,
            g["ratio"].to_numpy(),
            marker=_MARKERS[i % len(_MARKERS)],
            linestyle=_DASHES[i % len(_DASHES)],
            markersize=5,
            label=policy,
            zorder=3,
        )
        band = ax.fill_between(
            x,
            g["low"].to_numpy(),
            g["high"].to_numpy(),
            color=line.get_color(),
            alpha=0.12,
            linewidth=0,
            zorder=1,
        )
        band.set_gid(f"ci-{policy}")
        und = g["undecided"].to_numpy()
        if und.any():
            # One hatched bar per point (not a band: a band would interpolate
            # undecided sets between points that have none).
            some = und > 0
            bars = ax.bar(
                x[some],
                und[some] / g["n"].to_numpy()[some],
                bottom=g["ratio"].to_numpy()[some],
                width=width,
                facecolor="none",
                edgecolor=line.get_color(),
                hatch="////",
                linewidth=0.6,
                zorder=2,
                label=f"{policy}: undecided",
            )
            for u, patch in zip(g["utilization"].to_numpy()[some], bars):
                patch.set_gid(f"undecided-{policy}-{u:g}")
    for j, t in enumerate(present):
        g = _test_counts(df, t)
        x = g["utilization"].to_numpy() + offsets[len(policies) + j]
        r = g["ratio"].to_numpy()
        eb = ax.errorbar(
            x,
            r,
            yerr=[r - g["low"].to_numpy(), g["high"].to_numpy() - r],
            marker=_TEST_MARKERS[j % len(_TEST_MARKERS)],
            markersize=7,
            linestyle=(0, (3, 1, 1, 1)) if j % 2 == 0 else (0, (1, 1)),
            linewidth=1.0,
            color="0.35" if j % 2 == 0 else "0.55",
            capsize=2,
            elinewidth=0.8,
            label=f"{t} (analysis)",
            zorder=2,
        )
        eb[0].set_gid(f"test-{t}")
    ax.set_xlabel("total utilisation")
    ax.set_ylabel("schedulable task sets")
    ax.set_ylim(-0.02, 1.02)
    ax.set_xticks(sorted(set(df["utilization"].astype(float))))
    ax.grid(alpha=0.3)
    _finish(ax, df)
    return fig


def weighted_schedulability(
    df: pd.DataFrame, ax=None, tests: Sequence[str] | None = DEFAULT_TESTS
):
    """Weighted schedulability W = Σ_U U·S(U) / Σ_U U per policy and analysis test
    (Bastoni, Brandenburg & Anderson, "Cache-related preemption and migration delays:
    empirical approximation and impact on schedulability", OSPERT 2010): one number per
    curve, high utilisations weigh more. The error bar is W of the curve's Wilson bounds
    (each point at its low, then at its high bound: wider than a joint 95 % interval); a
    hatched cap: what W would gain if every undecided set were schedulable."""
    fig, ax = _axes(ax)
    w = weighted_table(df, tests)
    x = range(len(w))
    bars = ax.bar(
        x,
        w["weighted"].to_numpy(),
        yerr=[
            (w["weighted"] - w["low"]).to_numpy(),
            (w["high"] - w["weighted"]).to_numpy(),
        ],
        capsize=3,
        color=["tab:blue" if not n.endswith("(analysis)") else "0.6" for n in w.index],
        label="decided schedulable",
    )
    for name, patch in zip(w.index, bars):
        patch.set_gid(f"weighted-{name}")
    extra = (w["if_undecided_schedulable"] - w["weighted"]).to_numpy()
    some = extra > 0
    if some.any():
        cap = ax.bar(
            [i for i in x if some[i]],
            extra[some],
            bottom=w["weighted"].to_numpy()[some],
            facecolor="none",
            edgecolor="tab:blue",
            hatch="///",
            label="undecided",
        )
        for name, patch in zip(w.index[some], cap):
            patch.set_gid(f"weighted-undecided-{name}")
    ax.set_xticks(list(x), list(w.index), rotation=30, ha="right")
    ax.set_xlabel("policy or test")
    ax.set_ylabel("weighted schedulability")
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3, axis="y")
    _finish(ax, df, legend=some.any(), note="error bars: W of the 95% Wilson bounds")
    return fig


def weighted_table(
    df: pd.DataFrame, tests: Sequence[str] | None = DEFAULT_TESTS
) -> pd.DataFrame:
    """Per policy (and ``<test> (analysis)``): ``weighted`` W, its ``low``/``high``
    bounds (W of the Wilson bounds) and ``if_undecided_schedulable`` (W counting the
    undecided sets as schedulable: equal to W when none is undecided)."""
    rows = {}
    c = counts(df)
    for policy in dict.fromkeys(df["policy"].astype(str)):
        g = c[c["policy"] == policy]
        u = g["utilization"]
        top = (g["k"] + g["undecided"]) / g["n"]
        rows[policy] = (
            _weigh(u, g["ratio"]),
            _weigh(u, g["low"]),
            _weigh(u, g["high"]),
            _weigh(u, top),
        )
    for t in tests or ():
        g = _test_counts(df, t)
        if g is None:
            continue
        u = g["utilization"]
        w = _weigh(u, g["ratio"])
        rows[f"{t} (analysis)"] = (w, _weigh(u, g["low"]), _weigh(u, g["high"]), w)
    return pd.DataFrame.from_dict(
        rows,
        orient="index",
        columns=["weighted", "low", "high", "if_undecided_schedulable"],
    )


def weighted(
    df: pd.DataFrame, tests: Sequence[str] | None = DEFAULT_TESTS
) -> pd.Series:
    """The weighted schedulability of each policy (and ``<test> (analysis)``), counting
    only sets decided schedulable."""
    return weighted_table(df, tests)["weighted"]


def _weigh(u: pd.Series, ratio: pd.Series) -> float:
    u = u.to_numpy(dtype=float)
    total = u.sum()
    if total == 0:
        return math.nan
    return float((u * ratio.to_numpy(dtype=float)).sum() / total)


def switches(df: pd.DataFrame, ax=None):
    """Mean context switches per CPU per second against total utilisation, per policy."""
    fig, ax = _axes(ax)
    policies = list(dict.fromkeys(df["policy"].astype(str)))
    d = _dodge(df["utilization"], len(policies))
    for i, policy in enumerate(policies):
        g = df[df["policy"].astype(str) == policy]
        r = g.groupby("utilization")["context_switches_per_cpu_per_s"].mean()
        ax.plot(
            r.index.to_numpy(dtype=float) + (i - (len(policies) - 1) / 2) * d,
            r.values,
            marker=_MARKERS[i % len(_MARKERS)],
            linestyle=_DASHES[i % len(_DASHES)],
            label=policy,
        )
    ax.set_xlabel("total utilisation")
    ax.set_ylabel("context switches per CPU per s")
    ax.set_xticks(sorted(set(df["utilization"].astype(float))))
    ax.grid(alpha=0.3)
    _finish(ax, df, note="")
    return fig


def save_figures(
    df: pd.DataFrame, prefix: str, tests: Sequence[str] | None = DEFAULT_TESTS
) -> list[str]:
    """Write ``PREFIX-schedulability``, ``PREFIX-weighted`` and ``PREFIX-switches`` as PNG
    and SVG; returns the paths. The set-up is also written into each file's metadata
    (PNG ``Description``, SVG ``<dc:description>``)."""
    import matplotlib.pyplot as plt

    d = os.path.dirname(prefix)
    if d:
        os.makedirs(d, exist_ok=True)
    paths = []
    description = setup_text(df).replace("\n", "; ")
    for name, fig in (
        ("schedulability", schedulability_ratio(df, tests=tests)),
        ("weighted", weighted_schedulability(df, tests=tests)),
        ("switches", switches(df)),
    ):
        for ext in ("png", "svg"):
            path = f"{prefix}-{name}.{ext}"
            tmp = f"{path}.{os.getpid()}.tmp"
            # No date and a fixed id salt: the same DataFrame gives the same bytes.
            meta = {
                "Description": description,
                **({"Date": None} if ext == "svg" else {}),
            }
            try:
                # SVG text as text, not paths: the set-up stays searchable and editable.
                with plt.rc_context(
                    {"svg.fonttype": "none", "svg.hashsalt": "schedlab"}
                ):
                    fig.savefig(tmp, format=ext, dpi=120, metadata=meta)
                os.replace(tmp, path)
            finally:
                if os.path.exists(tmp):
                    os.unlink(tmp)
            paths.append(path)
        plt.close(fig)
    return paths
