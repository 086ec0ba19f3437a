"""`schedlab.reproduce`: every experiment's report from Python equals the command line's
`reproduce --json`, and its DataFrames hold the same cases, headlines, sensitivity rows
and claims. Nothing runs for real (real=False, `--no-real`): the measured side needs
root and minutes of real runs, and is the command line's own (tests in crates/cli)."""

import json
import math
import os

import pytest

schedlab = pytest.importorskip(
    "schedlab", reason="the schedlab Python package is not installed (pip install .)"
)

EXPERIMENTS = ["illf", "cfs-weights", "bfs", "latency", "shield", "fidelity", "interactive"]


@pytest.fixture(scope="module")
def guest(root):
    # Both sides read the same sched_ext guest results: the default file is looked up
    # from the current directory, which the two need not share.
    return str(root / "crates/experiments/tests/fixtures/scx-fair-shares.json")


def _none_if_nan(x):
    return None if isinstance(x, float) and math.isnan(x) else x


def test_every_experiment_is_offered():
    assert schedlab.EXPERIMENTS == EXPERIMENTS


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_reproduce_equals_the_cli_json(run, tmp_path, guest, name):
    cli = json.loads(
        run(
            "reproduce", name, "--no-real", "--json",
            "--guest-results", guest, "--out-dir", tmp_path,
        ).stdout
    )
    r = schedlab.reproduce(name, real=False, guest_results=guest)
    assert r.to_dict() == cli
    assert r.experiment == name
    assert r.plots == cli["plots"]
    assert r.assumptions == cli["assumptions"]

    # One row per case, the JSON's values in its columns (None where it has none).
    assert len(r.cases) == len(cli["cases"]) > 0
    for row, case in zip(r.cases.to_dict("records"), cli["cases"]):
        assert {k: _none_if_nan(v) for k, v in row.items()} == {
            k: case.get(k) for k in row
        }
    assert list(r.headlines["headline"]) == [h["headline"] for h in cli["headlines"]]
    assert list(r.headlines["verdict"]) == [h["verdict"] for h in cli["headlines"]]
    rows = [(h["headline"], s) for h in cli["headlines"] for s in h["sensitivity"]]
    assert len(r.sensitivity) == len(rows)
    for got, (headline, s) in zip(r.sensitivity.to_dict("records"), rows):
        assert got == {"headline": headline, **s}
    assert r.claims.to_dict("records") == cli["claims"]
    assert r.not_modelled.to_dict("records") == cli["not_modelled"]


def test_a_seed_review_has_headlines_claims_and_verdicts(guest):
    r = schedlab.reproduce("shield", guest_results=guest)
    assert len(r.headlines) > 0 and len(r.claims) > 0
    assert set(r.claims["verdict"]) <= {"holds", "does_not_hold", "not_testable"}
    # Each headline's first sensitivity row is the default set-up.
    firsts = r.sensitivity.groupby("headline", sort=False).head(1)
    assert list(firsts["choice"]) == ["default"] * len(r.headlines)
    assert r.sensitivity["holds"].dtype == bool


def test_an_unknown_experiment_is_refused_with_the_cli_message(run):
    p = run("reproduce", "nope", "--no-real", check=False)
    with pytest.raises(schedlab.SchedlabError) as e:
        schedlab.reproduce("nope")
    assert str(e.value) in p.stderr
    assert "unknown experiment `nope`" in str(e.value)


def test_bad_arguments_are_type_errors():
    with pytest.raises(TypeError, match="real must be a bool"):
        schedlab.reproduce("illf", real="no")
    with pytest.raises(TypeError, match="experiment must be a str"):
        schedlab.reproduce(3)


def test_a_missing_guest_results_file_names_it(tmp_path):
    missing = os.fspath(tmp_path / "none.json")
    with pytest.raises(schedlab.SchedlabError, match="none.json"):
        schedlab.reproduce("cfs-weights", guest_results=missing)
