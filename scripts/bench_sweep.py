"""Sweep throughput: task sets per second through schedlab.sweep (16 tasks, 4 CPUs, 1 s
simulated, global EDF), serially and on a local Dask cluster of 2 workers, beside the
bare simulation of the same sets and the Rust core's cells alone; the differences are
the per-cell overheads (generation, analysis, batching, DataFrame).

    pip install . && python3 scripts/bench_sweep.py [--samples N] [--repeat R] [--no-dask]

The last line is the headline figure, the serial sweep with analysis on one core:
``sweep cells 16x4 1s: N sets/s/core (M per CPU-second)``, the second by the process's
CPU time, steadier than the wall time on a shared machine. Every figure is the best of R runs (the machine
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
    """(wall, CPU) seconds of the fastest of ``repeat`` runs. The CPU time is this
    process's alone: on a shared machine it is the steadier figure (Dask's workers are
    other processes, so the Dask row has none)."""
    runs = []
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        fn()
        runs.append((time.perf_counter() - t, time.process_time() - c))
    return min(runs)


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
            _native.run_cells_columns(sweep_module._batch_json(cells[i : i + chunk]))

    t_core = best(core, a.repeat)
    t_serial = best(lambda: schedlab.sweep(client="serial", **grid), a.repeat)
    t_serial_na = best(
        lambda: schedlab.sweep(client="serial", analysis=False, **grid), a.repeat
    )
    rows = [
        ("engine only (SimResult.wall_s)", (engine, engine)),
        ("bare simulate() per set, 1 process", t_bare),
        ("core only: run_cells_columns, with analysis", t_core),
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
        rows.append(("sweep on 2 local Dask workers, with analysis", (t_dask[0], None)))
    except ImportError:
        print("no Dask row (--no-dask, or dask.distributed not installed)")
    print(f"{n} sets of 16 tasks on 4 CPUs, 1 s simulated, policy {a.policy}")
    print(f"{'':46} {'sets/s':>8} {'us/set':>8} {'cpu us/set':>10}")
    for name, (t, cpu) in rows:
        c = "-" if cpu is None else f"{cpu / n * 1e6:.0f}"
        print(f"{name:46} {n / t:8.0f} {t / n * 1e6:8.0f} {c:>10}")
    print(
        f"overhead per cell, serial sweep vs bare simulate(): "
        f"{(t_serial[0] - t_bare[0]) / n * 1e6:.0f} us with analysis, "
        f"{(t_serial_na[0] - t_bare[0]) / n * 1e6:.0f} us without"
    )
    print(
        f"sweep cells 16x4 1s: {n / t_serial[0]:.0f} sets/s/core "
        f"({n / t_serial[1]:.0f} per CPU-second)"
    )


if __name__ == "__main__":
    main()
