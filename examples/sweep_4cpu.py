"""The classic schedulability figure on 4 CPUs: global EDF, LLF, ILLF and EDZL (ILLF and
EDZL both in tick and exact mode) and partitioned EDF against total utilisation, with the
analysis curves (GFB and BCL for global EDF, first-fit decreasing for partitioned EDF),
plus weighted schedulability and context switches per second.

    pip install '.[dask]'              # the package and its Dask extra (repository root)
    python examples/sweep_4cpu.py      # 100 sets per point, local Dask threads
    python examples/sweep_4cpu.py --quick --client serial

Each point: random sets of 16 implicit-deadline tasks (UUniFast-discard, no task above 1,
periods drawn from the divisors of 100 ms), each simulated over its hyperperiod (at most
100 ms) from a synchronous release under every policy, so a set with no miss is decided
schedulable, not guessed from a short horizon. The figures go to
out/examples/sweep-4cpu-*.png and .svg, the rows to out/examples/sweep-4cpu/ (Parquet;
run again to resume, or with more samples to extend).
"""

import argparse
import sys

import schedlab
from schedlab.plot import save_figures, weighted

POLICIES = [
    "edf",
    "llf",
    "illf",
    {"policy": "illf", "label": "illf-exact", "scheduler": {"illf": {"mode": "exact"}}},
    "edzl",
    {"policy": "edzl", "label": "edzl-exact", "scheduler": {"edzl": {"mode": "exact"}}},
    "edf@partitioned",
]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--quick", action="store_true", help="10 sets per point instead of 100"
    )
    p.add_argument(
        "--client",
        default=None,
        help="serial, or a Dask scheduler address (default: a local cluster)",
    )
    p.add_argument("--out", default="out/examples/sweep-4cpu", help="Parquet directory")
    args = p.parse_args()

    utilizations = [round(2.0 + 0.2 * i, 1) for i in range(11)]  # 2.0 .. 4.0
    df = schedlab.sweep(
        cpus=4,
        tasks=16,
        utilizations=utilizations,
        policies=POLICIES,
        samples=10 if args.quick else 100,
        seed=2025,
        duration="hyperperiod",
        periods="divisors:100ms:10ms..100ms",
        client=args.client,
        out=args.out + ("-quick" if args.quick else ""),
    )
    ratio = (
        df.groupby(["utilization", "policy"], sort=False)["schedulable"]
        .mean()
        .unstack()
    )
    print(ratio.to_string(float_format=lambda x: f"{x:.2f}"))
    print("\nweighted schedulability")
    print(
        weighted(df, tests=("gfb", "bcl", "ffd-edf")).to_string(
            float_format=lambda x: f"{x:.3f}"
        )
    )
    for path in save_figures(
        df, "out/examples/sweep-4cpu", tests=("gfb", "bcl", "ffd-edf")
    ):
        print("wrote", path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
