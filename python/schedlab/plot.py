"""Figures of a sweep (matplotlib): the schedulability ratio against utilisation per
policy (with the analysis curves), the weighted schedulability per policy, and context
switches per CPU per second against utilisation. Each function takes the DataFrame that
:func:`schedlab.sweep` returns and an optional matplotlib Axes."""

from __future__ import annotations

import os
from collections.abc import Sequence

import pandas as pd

#: Analysis columns drawn by default: the multiprocessor tests.
DEFAULT_TESTS = ("gfb", "bcl", "ffd-edf")


def _axes(ax):
    if ax is not None:
        return ax.figure, ax
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.2), layout="constrained")
    return fig, ax


def schedulability_ratio(
    df: pd.DataFrame, ax=None, tests: Sequence[str] | None = DEFAULT_TESTS
):
    """Fraction of task sets with no deadline miss, per policy, against total
    utilisation; dashed lines: fraction accepted by each analysis test."""
    fig, ax = _axes(ax)
    for policy, g in df.groupby("policy", sort=False):
        r = g.groupby("utilization")["schedulable"].mean()
        ax.plot(r.index, r.values, marker="o", label=str(policy))
    for t in tests or ():
        col = "analysis_" + t
        if col not in df:
            continue
        first = df[df["policy"] == df["policy"].iloc[0]]
        acc = first.groupby("utilization")[col].apply(
            lambda s: s.fillna(False).astype(bool).mean()
        )
        ax.plot(acc.index, acc.values, linestyle="--", label=f"{t} (analysis)")
    ax.set_xlabel("total utilisation")
    ax.set_ylabel("schedulable task sets")
    ax.set_ylim(-0.02, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    return fig


def weighted_schedulability(
    df: pd.DataFrame, ax=None, tests: Sequence[str] | None = DEFAULT_TESTS
):
    """Weighted schedulability W = Σ_U U·S(U) / Σ_U U per policy and analysis test
    (Bastoni, Brandenburg & Anderson 2010): one number per curve, high utilisations
    weigh more."""
    fig, ax = _axes(ax)
    values = weighted(df, tests)
    ax.bar(range(len(values)), values.values, color="tab:blue")
    ax.set_xticks(range(len(values)), values.index, rotation=30, ha="right")
    ax.set_ylabel("weighted schedulability")
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3, axis="y")
    return fig


def weighted(
    df: pd.DataFrame, tests: Sequence[str] | None = DEFAULT_TESTS
) -> pd.Series:
    """The weighted schedulability of each policy (and ``<test> (analysis)``)."""
    out = {}
    for policy, g in df.groupby("policy", sort=False):
        r = g.groupby("utilization")["schedulable"].mean()
        out[str(policy)] = _weigh(r)
    first = df[df["policy"] == df["policy"].iloc[0]]
    for t in tests or ():
        col = "analysis_" + t
        if col in df:
            acc = first.groupby("utilization")[col].apply(
                lambda s: s.fillna(False).astype(bool).mean()
            )
            out[f"{t} (analysis)"] = _weigh(acc)
    return pd.Series(out)


def _weigh(ratio: pd.Series) -> float:
    u = ratio.index.to_numpy(dtype=float)
    return float((u * ratio.to_numpy(dtype=float)).sum() / u.sum())


def switches(df: pd.DataFrame, ax=None):
    """Mean context switches per CPU per second against total utilisation, per policy."""
    fig, ax = _axes(ax)
    for policy, g in df.groupby("policy", sort=False):
        r = g.groupby("utilization")["context_switches_per_cpu_per_s"].mean()
        ax.plot(r.index, r.values, marker="o", label=str(policy))
    ax.set_xlabel("total utilisation")
    ax.set_ylabel("context switches per CPU per s")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    return fig


def save_figures(
    df: pd.DataFrame, prefix: str, tests: Sequence[str] | None = DEFAULT_TESTS
) -> list[str]:
    """Write ``PREFIX-schedulability``, ``PREFIX-weighted`` and ``PREFIX-switches`` as PNG
    and SVG; returns the paths."""
    import matplotlib.pyplot as plt

    d = os.path.dirname(prefix)
    if d:
        os.makedirs(d, exist_ok=True)
    paths = []
    for name, fig in (
        ("schedulability", schedulability_ratio(df, tests=tests)),
        ("weighted", weighted_schedulability(df, tests=tests)),
        ("switches", switches(df)),
    ):
        for ext in ("png", "svg"):
            path = f"{prefix}-{name}.{ext}"
            tmp = path + ".tmp"
            fig.savefig(tmp, format=ext, dpi=120)
            os.replace(tmp, path)
            paths.append(path)
        plt.close(fig)
    return paths
