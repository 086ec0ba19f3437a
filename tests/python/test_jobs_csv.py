"""`simulate --jobs-csv`: every job as CSV that pandas loads as it is, agreeing with the
--json results (jobs, completions, misses, response times, CPU time)."""

import pytest

pd = pytest.importorskip("pandas", reason="pip install pandas")

CASES = [
    ("examples/table1.yaml", ["--policy", "llf"]),
    ("examples/rm-overload.yaml", []),
    ("examples/rm-overload.yaml", ["--on-miss", "abort"]),
    ("examples/sporadic.yaml", []),
    ("examples/dhall.yaml", ["--placement", "global"]),
]


@pytest.mark.parametrize("workload,flags", CASES)
def test_jobs_csv_agrees_with_the_results(tmp_path, simulate_json, workload, flags):
    csv = tmp_path / "jobs.csv"
    res = simulate_json(workload, *flags, "--jobs-csv", csv)
    df = pd.read_csv(csv)
    assert list(df.columns) == [
        "task", "job", "release_ns", "start_ns", "finish_ns", "deadline_ns",
        "cpu", "response_ns", "missed", "aborted",
    ]
    assert df["missed"].dtype == bool and df["aborted"].dtype == bool
    assert pd.api.types.is_integer_dtype(df["release_ns"])
    assert len(df) == res["jobs_released"]
    assert int(df["finish_ns"].notna().sum()) == res["jobs_completed"]
    assert int(df["missed"].sum()) == res["deadline_misses"]
    assert int(df["aborted"].sum()) == res["jobs_aborted"]
    done = df[df["finish_ns"].notna()]
    assert (done["response_ns"] == done["finish_ns"] - done["release_ns"]).all()
    assert (done["start_ns"] >= done["release_ns"]).all()
    late = done["finish_ns"] > done["deadline_ns"]
    assert (done.loc[late, "missed"]).all()
    for t in res["tasks"]:
        rows = df[df["task"] == t["name"]]
        assert len(rows) == t["jobs"], t["name"]
        assert int(rows["missed"].sum()) == t["misses"], t["name"]
        resp = rows["response_ns"].dropna()
        if len(resp):
            assert int(resp.max()) == t["max_response_ns"], t["name"]
            assert resp.mean() == pytest.approx(t["mean_response_ns"], rel=1e-12), t["name"]
        assert (rows["job"].to_numpy() == range(len(rows))).all()


def test_fair_bursts_have_no_deadline(tmp_path, run, simulate_json):
    w = tmp_path / "mix.yaml"
    w.write_text(
        "platform: { cpus: 2 }\nduration: 200ms\ntasks:\n"
        "  - { name: rt, runtime: 2ms, period: 10ms }\n"
        "  - { name: web, run: 3ms, sleep: 7ms }\n"
        "  - { name: hog }\n"
    )
    csv = tmp_path / "jobs.csv"
    res = simulate_json(w, "--policy", "cfs", "--jobs-csv", csv)
    df = pd.read_csv(csv)
    web = df[df["task"] == "web"]
    assert len(web) > 5 and web["deadline_ns"].isna().all() and not web["missed"].any()
    assert df[df["task"] == "rt"]["deadline_ns"].notna().all()
    assert len(df) == res["jobs_released"]
