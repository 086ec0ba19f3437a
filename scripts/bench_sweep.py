"""Sweep throughput: task sets per second through schedlab.sweep (16 tasks, 4 CPUs, 1 s
simulated, global EDF), serially and on a local Dask cluster of 2 workers, beside the
bare simulation of the same sets and the Rust core's cells alone; the differences are
the per-cell overheads (generation, analysis, batching, DataFrame).

    pip install . && python3 scripts/bench_sweep.py [--samples N] [--repeat R] [--no-dask]

The last line is the headline figure, the serial sweep with analysis on one core:
``sweep cells 16x4 1s: N sets/s/core``. Every figure is the best of R runs (the machine
may be shared). docs/performance.md and docs/analysis.md report the numbers.
"""

import argparse
import importlib
import json
import time

import schedlab
from schedlab import _native

UTILS = [2.0, 2.5, 3.0, 3.5]


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--samples", type=int, default=250, help="sets per utilisation")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--policy", default="edf")
    p.add_argument("--no-dask", action="store_true", help="skip the Dask row")
    a = p.parse_args()
    n = a.samples * len(UTILS)
    grid = {
        "cpus": 4,
        "tasks": 16,
        "utilizations": UTILS,
        "policies": [a.policy],
        "samples": a.samples,
        "seed": 1,
        "duration": "1s",
    }
    # The same sets as workload files, generated beforehand.
    sets = [
        json.dumps(schedlab.generate(16, u, 4, seed=_native.set_seed(1, u, s)))
        for u in UTILS
        for s in range(a.samples)
    ]

    def bare():
        for w in sets:
            _native.simulate(
                w, True, "w.json", policy=a.policy, placement="global", jobs=False
            )

    engine = 0.0
    for w in sets:
        engine += json.loads(
            _native.simulate(
                w, True, "w.json", policy=a.policy, placement="global", jobs=False
            )[0]
        )["wall_s"]
    t_bare = best(bare, a.repeat)
    # The cells exactly as a serial sweep sends them to the core, without the DataFrame.
    sweep_module = importlib.import_module("schedlab.sweep")
    cells = sweep_module.cells_of(sweep_module.normalize_grid(dict(grid), "bench"))
    chunk = sweep_module._SERIAL_CHUNK

    def core():
        for i in range(0, len(cells), chunk):
            _native.run_cells(json.dumps(cells[i : i + chunk]))

    t_core = best(core, a.repeat)
    t_serial = best(lambda: schedlab.sweep(client="serial", **grid), a.repeat)
    t_serial_na = best(
        lambda: schedlab.sweep(client="serial", analysis=False, **grid), a.repeat
    )
    rows = [
        ("engine only (SimResult.wall_s)", engine),
        ("bare simulate() per set, 1 process", t_bare),
        ("core only: run_cells, with analysis", t_core),
        ("sweep serial, with analysis", t_serial),
        ("sweep serial, analysis=False", t_serial_na),
    ]
    try:
        if a.no_dask:
            raise ImportError
        from dask.distributed import Client, LocalCluster

        with (
            LocalCluster(
                n_workers=2,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
            ) as cluster,
            Client(cluster) as client,
        ):
            schedlab.sweep(client=client, **{**grid, "samples": 5})  # warm the workers
            t_dask = best(lambda: schedlab.sweep(client=client, **grid), a.repeat)
        rows.append(("sweep on 2 local Dask workers, with analysis", t_dask))
    except ImportError:
        print("no Dask row (--no-dask, or dask.distributed not installed)")
    print(f"{n} sets of 16 tasks on 4 CPUs, 1 s simulated, policy {a.policy}")
    print(f"{'':46} {'sets/s':>8} {'us/set':>8}")
    for name, t in rows:
        print(f"{name:46} {n / t:8.0f} {t / n * 1e6:8.0f}")
    print(
        f"overhead per cell, serial sweep vs bare simulate(): "
        f"{(t_serial - t_bare) / n * 1e6:.0f} us with analysis, "
        f"{(t_serial_na - t_bare) / n * 1e6:.0f} us without"
    )
    print(f"sweep cells 16x4 1s: {n / t_serial:.0f} sets/s/core")


if __name__ == "__main__":
    main()
