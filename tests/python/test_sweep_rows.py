"""Sweep rows byte for byte: the Rust core's rows for a fixed set of cells equal the
recorded file tests/python/golden/sweep_rows.json (written by the core before its cells
reused parsed workloads, engines and analyses), and a batch gives the same bytes as its
cells run one by one, in any order.

The cells cover what a cell's code paths branch on: policies of both classes and every
placement, a policy with its own label and scheduler block, grid-wide platform and
scheduler blocks, random execution times, constrained deadlines, a hyperperiod horizon,
a set first-fit cannot partition, and analysis on and off.

Regenerate (only when a change is meant to change results):
SCHEDLAB_WRITE_GOLDEN=1 python3 -m pytest tests/python/test_sweep_rows.py
"""

import json
import os
from pathlib import Path

import pytest

native = pytest.importorskip(
    "schedlab._native",
    reason="the schedlab Python package is not installed (pip install .)",
)

GOLDEN = Path(__file__).parent / "golden" / "sweep_rows.json"

BASE = {
    "cpus": 4,
    "tasks": 8,
    "seed": 11,
    "duration": "300ms",
    "method": "uunifast-discard",
    "periods": "10ms..200ms",
    "granularity": "1ms",
    "max_task_utilization": 1.0,
    "deadline_min_ratio": None,
    "scheduler": None,
    "platform": None,
    "analysis": True,
}

POLICIES = [
    "edf",
    "llf",
    "illf",
    "edzl",
    "rm",
    "dm",
    "fifo",
    "edf@partitioned",
    "edf@linux",
    "rm@partitioned",
    {"policy": "edzl", "label": "edzl-exact", "scheduler": {"edzl": {"mode": "exact"}}},
    {"policy": "illf", "placement": "linux", "label": "illf-exact-linux",
     "scheduler": {"illf": {"mode": "exact"}}},
]


def _variants():
    """(name, cell fields over BASE) for each variant; 3 utilisations x 2 samples each."""
    return [
        ("plain", {"policies": POLICIES}),
        ("no-analysis", {"policies": ["edf", "edf@partitioned"], "analysis": False}),
        (
            "constrained",
            {"policies": ["edf", "dm", "edf@partitioned"], "deadline_min_ratio": 0.3},
        ),
        (
            "exec-uniform",
            {"policies": ["edf", "llf"], "exec": {"uniform": [0.5, 1.0]}, "seed": 3},
        ),
        (
            "hyperperiod",
            {
                "policies": ["edf", "edzl", "edf@partitioned"],
                "periods": "divisors:120ms:10ms..120ms",
                "duration": "hyperperiod<=1s",
            },
        ),
        (
            "blocks",
            {
                "policies": [
                    "edf",
                    "rr",
                    "edf@partitioned",
                    {"policy": "edf", "label": "edf-ovh",
                     "platform": {"context_switch": "20us"}},
                ],
                "platform": {"hz": 250},
                "scheduler": {"rr_timeslice": "5ms", "partition": "wfd"},
            },
        ),
        ("heavy", {"policies": ["edf", "edf@partitioned", "rm@partitioned"],
                   "tasks": 5, "cpus": 2}),
    ]


UTILS = {"heavy": [1.9, 1.99, 2.0]}


def cells():
    out = []
    for name, over in _variants():
        for u in UTILS.get(name, [1.5, 2.6, 3.5]):
            for s in range(2):
                out.append({**BASE, **over, "utilization": u, "sample": s})
    return out


def run(batch):
    return native.run_cells(json.dumps(batch))


def test_rows_equal_the_recorded_file():
    got = run(cells())
    if os.environ.get("SCHEDLAB_WRITE_GOLDEN"):
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(got + "\n")
    assert got + "\n" == GOLDEN.read_text()


def test_a_batch_equals_its_cells_one_by_one_in_any_order():
    cs = cells()
    whole = json.loads(run(cs))
    # One call per cell, run last cell first: a cell's rows do not depend on the cells
    # run before it in the same process.
    alone = [json.loads(run([c])) for c in reversed(cs)][::-1]
    # One batch in reverse order: the same rows, cell by cell.
    rev = json.loads(run(cs[::-1]))
    sizes = [len(a["policy"]) for a in alone]
    assert sum(sizes) == len(whole["policy"]) > len(cs)
    for key, col in whole.items():
        assert col == [v for a in alone for v in a[key]], key
        back, at = [], 0
        for n in reversed(sizes):
            back.append(rev[key][at : at + n])
            at += n
        assert col == [v for part in reversed(back) for v in part], key


def test_columns_as_lists_equal_the_json_columns():
    # `run_cells_columns` (what the sweep calls) hands the same values as the JSON text,
    # without it: the same keys in the same order, each value of the same type and
    # equal (floats bit for bit, None where the JSON has null).
    cs = cells()
    want = json.loads(run(cs))
    got = native.run_cells_columns(json.dumps(cs))
    assert list(got) == list(want)
    for key, col in want.items():
        assert len(got[key]) == len(col) > len(cs), key
        for g, w in zip(got[key], col):
            assert type(g) is type(w) and (
                g == w or (isinstance(g, float) and g.hex() == w.hex())
            ), (key, g, w)


def test_one_cell_and_its_points_equal_the_cells_listed():
    # A batch of one axis combination goes to the core as its first cell and each cell's
    # [utilization, sample]; the rows are those of the cells listed in full.
    import importlib

    sweep = importlib.import_module("schedlab.sweep")
    seen = 0
    for name, over in _variants():
        cs = [c for c in cells() if all(c.get(k) == v for k, v in over.items())]
        text = sweep._batch_json(cs)
        assert json.loads(text)["points"] == [[c["utilization"], c["sample"]] for c in cs]
        assert native.run_cells_columns(text) == native.run_cells_columns(json.dumps(cs))
        seen += len(cs)
    assert seen >= len(cells())
    # Cells of two combinations (tasks differ) go as the list.
    mixed = [
        {**BASE, "utilization": 1.5, "sample": 0},
        {**BASE, "tasks": 5, "utilization": 1.5, "sample": 0},
    ]
    assert isinstance(json.loads(sweep._batch_json(mixed)), list)
