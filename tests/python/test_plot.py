"""Sweep figures (schedlab.plot) from small synthetic DataFrames, no simulation: Wilson
intervals, the set-up under the figure, the legend off the data, one band per policy,
undecided cells counted apart, the weighted schedulability plot, byte-identical files."""

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("matplotlib")
plot = pytest.importorskip(
    "schedlab.plot",
    reason="the schedlab Python package is not installed (pip install .)",
)

SVG = "{http://www.w3.org/2000/svg}"


def frame(status=True, attrs=True):
    """Two policies, U = 1 and 2, 4 sets per point. edf: 4/4 then 2/4; llf: 3/4 then
    1/4 decided schedulable with 2 undecided at U = 2."""
    verdicts = {
        ("edf", 1.0): ["schedulable"] * 4,
        ("edf", 2.0): ["schedulable", "schedulable", "unschedulable", "unschedulable"],
        ("llf", 1.0): ["schedulable"] * 3 + ["unschedulable"],
        ("llf", 2.0): ["schedulable", "undecided", "undecided", "unschedulable"],
    }
    rows = []
    for (policy, u), vs in verdicts.items():
        for s, v in enumerate(vs):
            rows.append(
                {
                    "utilization": u,
                    "policy": policy,
                    "sample": s,
                    # What a sweep that does not know "undecided" would say: no miss
                    # within the horizon, i.e. schedulable. The plot must not trust it.
                    "schedulable": v != "unschedulable",
                    "status": v,
                    "context_switches_per_cpu_per_s": 100.0 * u,
                    "analysis_gfb": u < 1.5,
                    "analysis_bcl": pd.NA if s == 0 else u < 1.5,
                }
            )
    df = pd.DataFrame(rows)
    if not status:
        df = df.drop(columns="status")
    if attrs:
        df.attrs.update(
            schedlab_version="9.8.7",
            grid=json.dumps(
                {
                    "cpus": 4,
                    "tasks": 16,
                    "samples": 4,
                    "duration": "hyperperiod",
                    "method": "randfixedsum",
                    "periods": "10ms..100ms",
                }
            ),
            grid_hash="0123456789abcdef0123",
            seed=42,
        )
    return df


def test_wilson_interval_matches_hand_computed_values():
    # Wilson (1927), z = 1.96: 0/10 -> [0, 0.2775], 5/10 -> [0.2366, 0.7634],
    # 10/10 -> [0.7225, 1] (worked by hand from the closed form).
    assert plot.wilson(0, 10) == (0.0, pytest.approx(0.27753, abs=1e-5))
    assert plot.wilson(5, 10) == (
        pytest.approx(0.23659, abs=1e-5),
        pytest.approx(0.76341, abs=1e-5),
    )
    assert plot.wilson(10, 10) == (pytest.approx(0.72247, abs=1e-5), 1.0)
    assert plot.wilson(0, 0) == (0.0, 1.0)


def test_undecided_sets_are_never_counted_schedulable():
    c = plot.counts(frame()).set_index(["policy", "utilization"])
    assert c.loc[("llf", 2.0), ["k", "undecided", "n"]].tolist() == [1, 2, 4]
    assert c.loc[("llf", 2.0), "ratio"] == 0.25
    assert c.loc[("edf", 2.0), "ratio"] == 0.5
    # Without a status column every cell is decided and `schedulable` is the verdict.
    c2 = plot.counts(frame(status=False)).set_index(["policy", "utilization"])
    assert c2.loc[("llf", 2.0), ["k", "undecided"]].tolist() == [3, 0]


def test_bad_status_is_a_clear_error():
    df = frame()
    df.loc[0, "status"] = "maybe"
    with pytest.raises(ValueError, match="status column: 'maybe'"):
        plot.counts(df)


def test_weighted_schedulability_by_hand():
    w = plot.weighted_table(frame(), tests=("gfb", "bcl"))
    # W = (1·S(1) + 2·S(2)) / 3.
    assert w.loc["edf", "weighted"] == pytest.approx((1 * 1.0 + 2 * 0.5) / 3)
    assert w.loc["llf", "weighted"] == pytest.approx((0.75 + 2 * 0.25) / 3)
    assert w.loc["llf", "if_undecided_schedulable"] == pytest.approx(
        (0.75 + 2 * 0.75) / 3
    )
    assert w.loc["edf", "if_undecided_schedulable"] == w.loc["edf", "weighted"]
    # gfb accepts every set at U = 1, none at U = 2; bcl: NA (not applicable) is not
    # an acceptance, so 3 of 4 at U = 1.
    assert w.loc["gfb (analysis)", "weighted"] == pytest.approx(1 / 3)
    assert w.loc["bcl (analysis)", "weighted"] == pytest.approx(0.75 / 3)
    lo, hi = plot.wilson(2, 4)
    assert w.loc["edf", "low"] == pytest.approx((1 * plot.wilson(4, 4)[0] + 2 * lo) / 3)
    assert w.loc["edf", "high"] == pytest.approx((1 * 1.0 + 2 * hi) / 3)
    assert plot.weighted(frame(), tests=()).to_dict() == pytest.approx(
        {"edf": 2 / 3, "llf": 1.25 / 3}
    )


def test_setup_from_metadata_and_from_columns():
    s = plot.setup(frame())
    assert (s["cpus"], s["tasks"], s["samples"], s["horizon"]) == (
        4,
        16,
        4,
        "hyperperiod",
    )
    assert (s["method"], s["periods"], s["seed"]) == ("randfixedsum", "10ms..100ms", 42)
    assert (s["schedlab_version"], s["undecided"], s["sets"]) == ("9.8.7", 2, 16)
    text = _flat(plot.setup_text(frame()))
    assert (
        "m = 4 CPUs, n = 16 tasks, 4 task sets per point, horizon hyperperiod" in text
    )
    assert "seed 42, grid 0123456789ab, schedlab 9.8.7; undecided 2 of 16 cells" in text
    # No metadata: the columns say what they can, the rest is "?", never invented.
    bare = frame(attrs=False).assign(cpus=8, duration="2s")
    s = plot.setup(bare)
    assert (s["cpus"], s["tasks"], s["horizon"], s["seed"]) == (8, None, "2s", None)
    text = _flat(plot.setup_text(bare))
    assert "m = 8 CPUs, n = ? tasks" in text and "schedlab ? (data unlabelled" in text
    # Without a status column nothing says whether a set was decided: not "0 undecided".
    nostatus = frame(status=False)
    assert plot.setup(nostatus)["undecided"] is None
    assert "16 cells, undecided not recorded" in _flat(plot.setup_text(nostatus))
    # A long line is wrapped so that it stays on the figure.
    long = frame()
    long.attrs["grid"] = json.dumps(
        {"periods": ",".join(f"{p}ms" for p in range(1, 60))}
    )
    lines = plot.setup_text(long).splitlines()
    assert len(lines) >= 3 and max(map(len, lines)) <= 130, lines
    # The simulated horizons, when the rows record them, beside the horizon asked for.
    spans = frame().assign(horizon_ns=[200_000_000] * 8 + [1_000_000_000] * 8)
    assert plot.setup(spans)["horizon"] == "hyperperiod (200ms to 1s)"
    same = frame(attrs=False).assign(horizon_ns=1_500_000)
    assert plot.setup(same)["horizon"] == "1500us"
    # Parquet metadata is text: a seed "42" is the seed 42.
    text_seed = frame()
    text_seed.attrs["seed"] = "42"
    assert plot.setup(text_seed)["seed"] == 42
    # The grid.json form (a list of cells) is read too.
    cells = frame()
    cells.attrs["grid"] = json.dumps(
        {"cells": [{"cpus": 2, "tasks": 5}], "batch_size": 1}
    )
    assert (plot.setup(cells)["cpus"], plot.setup(cells)["tasks"]) == (2, 5)


def _flat(text):
    """Text with every run of whitespace (line breaks included) as one space."""
    return " ".join(text.split())


def _ids(svg_path):
    root = ET.parse(svg_path).getroot()
    return {e.get("id") for e in root.iter() if e.get("id")}, root


def test_figures_hold_setup_bands_legend_outside_and_weighted_plot(tmp_path):
    import matplotlib.pyplot as plt

    df = frame()
    paths = plot.save_figures(df, str(tmp_path / "fig" / "s"), tests=("gfb",))
    assert [p.rsplit("/", 1)[1] for p in paths] == [
        f"s-{n}.{e}"
        for n in ("schedulability", "weighted", "switches")
        for e in ("png", "svg")
    ]
    for p in paths[::2]:
        assert Path(p).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    ids, root = _ids(tmp_path / "fig" / "s-schedulability.svg")
    text = _flat(" ".join(root.itertext()))
    assert sorted(i for i in ids if i.startswith("ci-")) == ["ci-edf", "ci-llf"]
    # Undecided sets: one hatched bar, llf at U = 2 only (edf has none).
    assert sorted(i for i in ids if i.startswith("undecided-")) == ["undecided-llf-2"]
    assert {"legend", "setup", "test-gfb"} <= ids
    assert (
        "m = 4 CPUs, n = 16 tasks, 4 task sets per point, horizon hyperperiod" in text
    )
    assert "schedlab 9.8.7; undecided 2 of 16 cells" in text
    assert "bands: 95% Wilson intervals" in text

    ids, root = _ids(tmp_path / "fig" / "s-weighted.svg")
    text = _flat(" ".join(root.itertext()))
    assert {"weighted-edf", "weighted-llf", "weighted-gfb (analysis)"} <= ids
    assert {i for i in ids if i.startswith("weighted-undecided-")} == {
        "weighted-undecided-llf"
    }
    assert "error bars: W of the 95% Wilson bounds" in text
    assert "m = 4 CPUs" in text

    # The legend is right of the data area and the set-up below it (display boxes).
    fig = plot.schedulability_ratio(df, tests=("gfb",))
    fig.canvas.draw()
    ax = fig.axes[0]
    box = ax.get_window_extent()
    legend = ax.get_legend().get_window_extent()
    assert legend.x0 >= box.x1, (legend, box)
    setup = next(t for t in ax.texts if t.get_gid() == "setup").get_window_extent()
    assert setup.y1 <= box.y0 and setup.y0 >= 0, (setup, box)
    # Overlapping curves stay apart: own marker, own dash style, shifted sideways.
    lines = {ln.get_label(): ln for ln in ax.get_lines()}
    edf, llf = lines["edf"], lines["llf"]
    assert edf.get_marker() != llf.get_marker()
    assert edf.get_linestyle() != llf.get_linestyle()
    # Three curves (edf, llf, gfb) over 30 % of the step 1.0: -0.15, 0, +0.15.
    assert edf.get_xdata().tolist() == pytest.approx([0.85, 1.85])
    assert llf.get_xdata().tolist() == pytest.approx([1.0, 2.0])
    plt.close(fig)


def test_same_frame_gives_the_same_bytes(tmp_path):
    a = plot.save_figures(frame(), str(tmp_path / "a"))
    b = plot.save_figures(frame(), str(tmp_path / "b"))
    for x, y in zip(a, b):
        assert Path(x).read_bytes() == Path(y).read_bytes(), x


def test_axes_given_by_the_caller_are_used():
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2)
    assert plot.schedulability_ratio(frame(), ax=left) is fig
    assert plot.weighted_schedulability(frame(), ax=right) is fig
    assert len(left.collections) >= 2 and len(right.patches) >= 5
    plt.close(fig)


def test_a_sweeps_frame_labels_its_figures():
    """A sweep's DataFrame carries what the set-up text needs (from the sweep itself, or
    from the arguments where it leaves a key out)."""
    import schedlab

    df = schedlab.sweep(
        cpus=2,
        tasks=4,
        utilizations=[0.5, 1.5],
        policies=["edf", "llf"],
        samples=2,
        seed=9,
        duration="100ms",
        client="serial",
        analysis=False,
        periods="10ms..100ms",
    )
    s = plot.setup(df)
    assert (s["cpus"], s["tasks"], s["samples"], s["seed"]) == (2, 4, 2, 9)
    assert (s["horizon"], s["periods"]) == ("100ms", "10ms..100ms")
    assert s["method"] == "uunifast-discard"
    assert s["schedlab_version"] == schedlab.__version__
    assert s["sets"] == 8


def test_read_takes_the_setup_from_parquet_metadata(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq
    from schedlab import SchedlabError

    df = frame()
    meta = {k: str(v) for k, v in df.attrs.items()}

    def write(path, part, grid_hash):
        table = pa.Table.from_pandas(part, preserve_index=False)
        m = {
            **table.schema.metadata,
            **{k.encode(): v.encode() for k, v in meta.items()},
        }
        m[b"grid_hash"] = grid_hash.encode()
        pq.write_table(table.replace_schema_metadata(m), path)

    d = tmp_path / "sweep"
    d.mkdir()
    write(d / "batch-000000.parquet", df.iloc[:8], "0123456789abcdef0123")
    write(d / "batch-000001.parquet", df.iloc[8:], "0123456789abcdef0123")
    (d / "sweep.lock").write_text("123\n")  # anything else in the directory is ignored
    back = plot.read(d)
    assert len(back) == 16
    assert back.attrs["schedlab_version"] == "9.8.7"
    s = plot.setup(back)
    assert (s["cpus"], s["tasks"], s["seed"], s["undecided"]) == (4, 16, 42, 2)
    assert plot.read(d / "batch-000001.parquet").attrs["seed"] == "42"
    # Batches of two grids are not one figure.
    write(d / "batch-000002.parquet", df.iloc[:4], "ffffffffffffffff")
    with pytest.raises(SchedlabError, match="batches of different grids"):
        plot.read(d)
    with pytest.raises(SchedlabError, match="no batch-"):
        plot.read(tmp_path)
    (tmp_path / "junk.parquet").write_text("not parquet")
    with pytest.raises(SchedlabError, match="junk.parquet: not a readable Parquet"):
        plot.read(tmp_path / "junk.parquet")
