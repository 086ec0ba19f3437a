"""``python -m schedlab sweep GRID.yaml``: a sweep from a small YAML grid (what
``schedlab sweep`` runs).

The grid's keys are :func:`schedlab.sweep`'s arguments (``cpus``, ``tasks``,
``utilizations``, ``policies``, ``samples``, ``seed``, ``duration``, ``method``,
``periods``, ``granularity``, ``max_task_utilization``, ``deadlines``, ``scheduler``,
``platform``, ``analysis``, ``batch_size``) plus ``out`` (Parquet directory), ``client``
(``serial``, ``local`` or a scheduler address) and ``plot`` (a file prefix for the
figures). ``utilizations`` is a list or ``{from: A, to: B, step: S}``. Command-line flags
override the file. The grid is checked by :func:`schedlab.sweep.normalize_grid`, the same
rules as :func:`schedlab.sweep`'s.
"""

from __future__ import annotations

import argparse
import re
import sys

_RUN_KEYS = {"out", "client", "plot"}
_GRID_KEYS = {
    "cpus",
    "tasks",
    "utilizations",
    "policies",
    "samples",
    "seed",
    "duration",
    "method",
    "periods",
    "granularity",
    "max_task_utilization",
    "deadlines",
    "scheduler",
    "platform",
    "exec",
    "analysis",
    "batch_size",
}
_KEYS = _GRID_KEYS | _RUN_KEYS

# YAML 1.2 numbers: PyYAML (YAML 1.1) reads `1e8` as text; a grid means the number.
_FLOAT = re.compile(
    r"^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)"
    r"|\.[0-9_]+(?:[eE][-+][0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
)


def _loader():
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    Loader.yaml_implicit_resolvers = {
        k: [r for r in v if r[0] != "tag:yaml.org,2002:float"]
        for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    Loader.add_implicit_resolver(
        "tag:yaml.org,2002:float", _FLOAT, list("-+0123456789.")
    )
    return Loader


def load_grid(path):
    """The grid file, checked and normalised (sweep()'s keyword arguments), plus out,
    client and plot when it gives them."""
    from . import SchedlabError
    from .sweep import normalize_grid

    try:
        import yaml
    except ImportError as e:
        raise SchedlabError(
            "reading a grid file needs PyYAML, a dependency of the package: pip install ."
        ) from e
    try:
        with open(path) as f:
            grid = yaml.load(f, Loader=_loader())
    except OSError as e:
        raise SchedlabError(f"cannot read {path}: {e.strerror}") from None
    except yaml.YAMLError as e:
        raise SchedlabError(f"{path}: not YAML: {e}") from None
    if grid is None:
        raise SchedlabError(f"{path}: the grid is empty")
    if not isinstance(grid, dict):
        raise SchedlabError(f"{path}: the grid must be a mapping of keys")
    unknown = sorted(str(k) for k in set(grid) - _KEYS)
    if unknown:
        raise SchedlabError(
            f"{path}: unknown key `{unknown[0]}` (known: {', '.join(sorted(_KEYS))})"
        )
    for k in _RUN_KEYS & set(grid):
        if not isinstance(grid[k], str) or not grid[k]:
            raise SchedlabError(f"{path}: {k}: give a string, not {grid[k]!r}")
    out = normalize_grid({k: v for k, v in grid.items() if k in _GRID_KEYS}, str(path))
    out.update({k: grid[k] for k in _RUN_KEYS & set(grid)})
    return out


def summary(df, out=None) -> str:
    """The text printed at the end: the share of sets each policy schedules per
    utilisation (decided: no miss over a complete horizon), the share undecided (no miss,
    horizon short of the feasibility interval) apart, and the counts."""
    fmt = {"float_format": lambda x: f"{x:.3f}"}
    by = df.groupby(["utilization", "policy"], sort=False)["status"]
    share = by.value_counts(normalize=True).unstack(fill_value=0.0)
    parts = [
        "schedulable (no miss over the whole feasibility interval):",
        _table(share, "schedulable").to_string(**fmt),
    ]
    counts = df["status"].value_counts()
    undecided = int(counts.get("undecided", 0))
    if undecided:
        parts += [
            "",
            (
                "undecided (no miss, but the horizon is short of the feasibility "
                "interval: use duration: hyperperiod):"
            ),
            _table(share, "undecided").to_string(**fmt),
        ]
    parts += [
        "",
        f"{len(df)} rows: {int(counts.get('schedulable', 0))} schedulable, "
        f"{int(counts.get('unschedulable', 0))} unschedulable, {undecided} undecided; "
        f"batches: {df.attrs['batches_computed']} computed, "
        f"{df.attrs['batches_reused']} reused" + (f"; Parquet in {out}" if out else ""),
    ]
    return "\n".join(parts)


def _table(share, status):
    col = share[status] if status in share else share.iloc[:, 0] * 0.0
    return col.unstack()


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        prog="schedlab sweep",
        description="Run a schedulability sweep from a YAML grid.",
    )
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("sweep", help="run a sweep grid")
    s.add_argument("grid", help="YAML grid file")
    s.add_argument("--out", help="Parquet directory (resumes a sweep started on it)")
    s.add_argument("--client", help="serial, local, or a Dask scheduler address")
    s.add_argument(
        "--plot", help="write the figures (PNG and SVG) with this file prefix"
    )
    s.add_argument("--csv", help="also write every row as CSV to this file")
    s.add_argument(
        "--progress",
        action="store_true",
        default=None,
        help="show progress even when not on a terminal",
    )
    args = p.parse_args(argv)

    from . import SchedlabError
    from .sweep import run
    from .sweepdir import check_output, write_atomic

    out = None
    try:
        grid = load_grid(args.grid)
        out = args.out or grid.pop("out", None)
        grid.pop("out", None)
        client = args.client or grid.pop("client", None)
        grid.pop("client", None)
        plot = args.plot or grid.pop("plot", None)
        grid.pop("plot", None)
        if args.csv:
            check_output(args.csv, [args.grid], "--csv")
        df = run(grid, client=client, out=out, progress=args.progress)
        if args.csv:
            write_atomic(args.csv, lambda f: df.to_csv(f, index=False))
    except SchedlabError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as e:
        done, total = getattr(e, "cells_done", None), getattr(e, "cells_total", None)
        got = f"{done} of {total} cells done" if total is not None else "interrupted"
        tail = (
            f"the same command resumes from the batches in {out}"
            if out
            else "nothing was kept (give --out DIR to resume a sweep)"
        )
        print(f"\nsweep: interrupted, {got}; {tail}", file=sys.stderr)
        return 130
    print(summary(df, out))
    if plot:
        from .plot import save_figures

        for path in save_figures(df, plot):
            print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
