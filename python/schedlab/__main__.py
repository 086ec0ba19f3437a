"""``python -m schedlab sweep GRID.yaml``: a sweep from a small YAML grid (what
``schedlab sweep`` runs).

The grid's keys are :func:`schedlab.sweep`'s arguments (``cpus``, ``tasks``,
``utilizations``, ``policies``, ``samples``, ``seed``, ``duration``, ``method``,
``periods``, ``granularity``, ``batch_size``) plus ``out`` (Parquet directory),
``client`` (``serial``, ``local`` or a scheduler address) and ``plot`` (a file prefix for
the figures). ``utilizations`` is a list or ``{from: A, to: B, step: S}``. Command-line
flags override the file.
"""

from __future__ import annotations

import argparse
import sys

_KEYS = {
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
    "analysis",
    "batch_size",
    "out",
    "client",
    "plot",
}


def _utilizations(value, path):
    from . import SchedlabError

    if isinstance(value, dict):
        unknown = set(value) - {"from", "to", "step"}
        if unknown or not {"from", "to", "step"} <= set(value):
            raise SchedlabError(
                f"{path}: utilizations: give a list or {{from, to, step}}"
            )
        a, b, s = float(value["from"]), float(value["to"]), float(value["step"])
        if s <= 0:
            raise SchedlabError(f"{path}: utilizations: step {s} must be positive")
        n = round((b - a) / s)
        return [round(a + i * s, 10) for i in range(n + 1)]
    if isinstance(value, list):
        return [float(v) for v in value]
    raise SchedlabError(f"{path}: utilizations: give a list or {{from, to, step}}")


def load_grid(path):
    """The grid file as sweep() keyword arguments (plus out, client, plot)."""
    from . import SchedlabError

    try:
        import yaml
    except ImportError as e:
        raise SchedlabError(
            "reading a grid file needs PyYAML: pip install pyyaml (or '.[all]')"
        ) from e
    try:
        with open(path) as f:
            grid = yaml.safe_load(f) or {}
    except OSError as e:
        raise SchedlabError(f"cannot read {path}: {e.strerror}") from e
    except yaml.YAMLError as e:
        raise SchedlabError(f"{path}: not YAML: {e}") from e
    if not isinstance(grid, dict):
        raise SchedlabError(f"{path}: the grid must be a mapping of keys")
    unknown = sorted(set(grid) - _KEYS)
    if unknown:
        raise SchedlabError(
            f"{path}: unknown key `{unknown[0]}` (known: {', '.join(sorted(_KEYS))})"
        )
    if "utilizations" in grid:
        grid["utilizations"] = _utilizations(grid["utilizations"], path)
    return grid


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

    from . import SchedlabError, sweep

    try:
        grid = load_grid(args.grid)
        out = args.out or grid.pop("out", None)
        grid.pop("out", None)
        client = args.client or grid.pop("client", "local")
        grid.pop("client", None)
        plot = args.plot or grid.pop("plot", None)
        grid.pop("plot", None)
        if client == "local":
            client = None
        df = sweep(client=client, out=out, progress=args.progress, **grid)
    except SchedlabError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.csv:
        df.to_csv(args.csv, index=False)
    ratio = (
        df.groupby(["utilization", "policy"], sort=False)["schedulable"]
        .mean()
        .unstack()
    )
    print(ratio.to_string(float_format=lambda x: f"{x:.3f}"))
    print(
        f"\n{len(df)} rows; batches: {df.attrs['batches_computed']} computed, "
        f"{df.attrs['batches_reused']} reused" + (f"; Parquet in {out}" if out else "")
    )
    if plot:
        from .plot import save_figures

        for path in save_figures(df, plot):
            print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
