//! The "sched_ext guest" column of `reproduce cfs-weights` and `reproduce bfs`: the CPU
//! shares measured by the sched_ext guest lane (scx/guest/run.sh boots a 6.12 kernel
//! with sched_ext under qemu and runs scx/guest/fair/*.yaml with `schedlab run --backend
//! scx`, i.e. under scx_cfsw and scx_bfs) beside the simulator's for the same workloads.
//!
//! The lane writes `fair-shares.json` into its output directory (`$SCX_OUT/guest/`,
//! default `target/scx/guest/` of the source checkout); this module reads the last one
//! (or `--guest-results FILE`), or runs the lane first with `--guest`. With no results
//! the column says so and how to get them. Nothing here needs sched_ext or qemu unless
//! `--guest` is given.

use super::Case;
use crate::workloads::Draft;
use crate::Error;
use crate::Progress;
use schedlab_model::{Overrides, WeightTable, Workload};
use schedlab_sim::{simulate, SimOptions, SimResult};
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};

/// The lane's CFS mix (nice −5/0/5 on one CPU), `WEIGHTS` standing for the table.
const CFS_NICE: &str = include_str!("../../../scx/guest/fair/cfs-nice.yaml");
/// The lane's extended-60 mix beyond the kernel's nice range (nice −25/−20/0).
const CFS_EXTENDED: &str = include_str!("../../../scx/guest/fair/cfs-extended.yaml");
/// Its tasks and their nice values.
const EXTENDED_TASKS: [(&str, i8); 3] = [("n-25", -25), ("n-20", -20), ("n0", 0)];
/// Its row in the case.
const EXTENDED_ROW: &str = "extended-60 at -25/-20/0";
/// The lane's BFS mix (nice 0 and 19 hogs and an interactive task on one CPU).
const BFS_MIX: &str = include_str!("../../../scx/guest/fair/bfs-mix.yaml");

/// What `fair-shares.json` declares itself as.
pub const SCHEMA: &str = "schedlab-scx-fair-shares/1";

/// The weight tables, in report order.
const TABLES: [&str; 4] = ["linux", "grouped-2", "grouped-5", "extended-60"];
/// The CFS mix's tasks and their nice values.
const CFS_TASKS: [(&str, i8); 3] = [("n-5", -5), ("n0", 0), ("n5", 5)];

/// Where the guest column comes from.
#[derive(Debug, Clone, Default)]
pub struct GuestSource {
    /// `--guest-results FILE`: this file must exist and be valid.
    pub results: Option<PathBuf>,
    /// `--guest`: run the lane (scx/guest/run.sh) first.
    pub run: bool,
}

/// The lane's results, or why there are none.
#[derive(Debug, Clone)]
pub enum GuestResults {
    /// A valid results file and its content.
    Found(PathBuf, Value),
    /// No usable results: the column shows this sentence.
    Missing(String),
}

/// `fair-shares.json` of the last lane run: `$SCX_OUT/guest/`, else `target/scx/guest/`
/// in the current directory or the nearest parent that has one.
pub fn default_results_file() -> PathBuf {
    if let Some(out) = std::env::var_os("SCX_OUT") {
        return PathBuf::from(out).join("guest").join("fair-shares.json");
    }
    let rel = Path::new("target/scx/guest/fair-shares.json");
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    cwd.ancestors()
        .map(|d| d.join(rel))
        .find(|p| p.is_file())
        .unwrap_or_else(|| rel.to_path_buf())
}

/// Read and check a results file (the file, the field and the problem on error).
pub fn read_results(path: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    let v: Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: not JSON: {e}", path.display()))?;
    if v.get("schema").and_then(Value::as_str) != Some(SCHEMA) {
        return Err(format!(
            "{}: schema: expected `{SCHEMA}` (a fair-shares.json written by scx/guest/check.py), found {}",
            path.display(),
            v.get("schema").unwrap_or(&Value::Null)
        ));
    }
    // Every share the columns show: present, a number, between 0 and 1.
    let share_at = |field: String, x: Option<&Value>| match x.and_then(Value::as_f64) {
        Some(s) if (0.0..=1.0).contains(&s) => Ok(()),
        _ => Err(format!(
            "{}: {field}: expected a CPU share between 0 and 1",
            path.display()
        )),
    };
    if let Some(tables) = v.get("cfs_weights") {
        let tables = tables.as_object().ok_or_else(|| {
            format!(
                "{}: cfs_weights: expected an object of tables",
                path.display()
            )
        })?;
        for (table, row) in tables {
            for (task, _) in CFS_TASKS {
                let g = row.get(task).and_then(|t| t.get("guest"));
                share_at(format!("cfs_weights.{table}.{task}.guest"), g)?;
            }
        }
    }
    if let Some(row) = v.get("cfs_extended").filter(|r| !r.is_null()) {
        for (task, _) in EXTENDED_TASKS {
            let g = row.get(task).and_then(|t| t.get("guest"));
            share_at(format!("cfs_extended.{task}.guest"), g)?;
        }
    }
    if let Some(b) = v.get("bfs").filter(|b| !b.is_null()) {
        for key in ["n0", "n19", "ui"] {
            let g = b.get("guest").and_then(|g| g.get(key));
            share_at(format!("bfs.guest.{key}"), g)?;
        }
    }
    Ok(v)
}

/// The lane's results for this run of `reproduce`: run the lane if asked, then read the
/// given file (an error if it is missing or invalid) or the default one (a note if so).
pub fn load(src: &GuestSource, progress: &dyn Progress) -> Result<GuestResults, Error> {
    if src.run {
        run_lane(progress)?;
    }
    match &src.results {
        Some(p) => read_results(p)
            .map(|v| GuestResults::Found(p.clone(), v))
            .map_err(|e| Error::input(format!("--guest-results {e}"))),
        None => {
            let p = default_results_file();
            if !p.is_file() {
                return Ok(GuestResults::Missing(format!(
                    "no sched_ext guest results ({} not found): run the guest lane (scx/guest/run.sh, or reproduce --guest) or give --guest-results FILE",
                    p.display()
                )));
            }
            Ok(match read_results(&p) {
                Ok(v) => GuestResults::Found(p, v),
                Err(e) => GuestResults::Missing(format!("unusable sched_ext guest results: {e}")),
            })
        }
    }
}

/// Run scx/guest/run.sh of the source checkout the current directory is in.
fn run_lane(progress: &dyn Progress) -> Result<(), Error> {
    let cwd = std::env::current_dir().map_err(|e| Error::input(format!("--guest: {e}")))?;
    let script = cwd
        .ancestors()
        .map(|d| d.join("scx/guest/run.sh"))
        .find(|p| p.is_file())
        .ok_or_else(|| {
            Error::input(
                "--guest runs scx/guest/run.sh of a schedlab source checkout: run reproduce from inside one (or give --guest-results FILE)",
            )
        })?;
    progress
        .step("sched_ext guest lane (scx/guest/run.sh; minutes, longer on a cold kernel cache)");
    let st = std::process::Command::new("bash")
        .arg(&script)
        .stdout(std::process::Stdio::null())
        .status()
        .map_err(|e| Error::input(format!("cannot run {}: {e}", script.display())))?;
    if !st.success() {
        return Err(Error::input(format!(
            "the sched_ext guest lane failed ({}; {st}): see its report.txt and console.txt in target/scx/guest/",
            script.display()
        )));
    }
    Ok(())
}

fn simulate_yaml(yaml: &str, name: &str) -> Result<SimResult, Error> {
    let w =
        Workload::parse_str(yaml, Path::new(name), &Overrides::default()).map_err(Error::input)?;
    simulate(&w, &SimOptions { trace: false }).map_err(|e| Error::input(format!("{name}: {e}")))
}

fn share(r: &SimResult, task: &str) -> f64 {
    r.tasks
        .iter()
        .find(|t| t.name == task)
        .and_then(|t| t.fair.as_ref())
        .map_or(0.0, |f| f.share)
}

fn r4(x: f64) -> f64 {
    (x * 1e4).round() / 1e4
}

/// A CPU share as a percentage with two decimals (the terminal table shows two).
fn pct(x: f64) -> f64 {
    (x * 1e4).round() / 100.0
}

/// [`pct`] of a share read from the results file (null stays null).
fn pct_of(v: &Value) -> Value {
    v.as_f64().map_or(Value::Null, |x| json!(pct(x)))
}

/// The column when there are no results: one sentence.
fn missing(why: &str) -> Value {
    json!({ "claim": why, "numbers": Value::Null })
}

/// A case with its guest column.
pub struct GuestCase {
    /// Case, paper and simulated columns as every other case.
    pub case: Case,
    /// The "sched_ext guest" column.
    pub guest: Value,
}

/// scx/guest/fair/cfs-nice.yaml under the weight table `table` (the lane fills the
/// file's `WEIGHTS` in its name and its `scheduler.weights`; here they are set as fields).
fn cfs_nice(table: &str) -> Result<Draft, Error> {
    let mut d = Draft::parse(CFS_NICE, "scx/guest/fair")?.with_weights(table);
    d.spec.name = Some(format!("cfs-nice-{table}"));
    Ok(d)
}

/// One of the guest lane's CFS mixes: a row of the case.
struct CfsMix<'a> {
    /// Row name.
    row: String,
    /// The workload, its weight table set.
    draft: Draft,
    /// Weight table.
    table: &'a str,
    /// Tasks and their nice values.
    tasks: &'a [(&'a str, i8)],
    /// The lane's results for it (task → {guest, ...}).
    results: Option<&'a Value>,
}

/// One row of the CFS case for `tasks` under `table`: simulated shares, the table's
/// weight ratios and, when the results have them (`rows`, keyed by task), the guest's.
fn cfs_row(
    draft: &Draft,
    table: &str,
    tasks: &[(&str, i8)],
    rows: Option<&Value>,
) -> Result<(Value, Value, Option<Value>), Error> {
    let w = draft.workload(&Overrides::default())?;
    let r = simulate(&w, &SimOptions { trace: false })
        .map_err(|e| Error::input(format!("scx/guest/fair: {e}")))?;
    let t = WeightTable::parse(table).map_err(Error::bug)?;
    let total: u64 = tasks.iter().map(|&(_, n)| t.weight(n)).sum();
    let (mut sim, mut ratio, mut guest) = (Map::new(), Map::new(), Map::new());
    for &(task, nice) in tasks {
        let key = format!("pct_{nice}");
        sim.insert(key.clone(), json!(pct(share(&r, task))));
        ratio.insert(
            key.clone(),
            json!(pct(t.weight(nice) as f64 / total as f64)),
        );
        if let Some(g) = rows.and_then(|rows| rows.get(task)) {
            guest.insert(key, pct_of(&g["guest"]));
        }
    }
    let guest = (!guest.is_empty()).then_some(Value::Object(guest));
    Ok((Value::Object(sim), Value::Object(ratio), guest))
}

/// `reproduce cfs-weights`: the lane's nice −5/0/5 mix under every table and its
/// extended-60 mix beyond the kernel's range, simulated here and measured in the guest
/// under scx_cfsw.
pub fn cfs_case(g: &GuestResults) -> Result<GuestCase, Error> {
    let found = match g {
        GuestResults::Found(_, v) => Some(v),
        GuestResults::Missing(_) => None,
    };
    let (mut sim, mut ratios, mut guest) = (Map::new(), Map::new(), Map::new());
    let mut mixes: Vec<CfsMix> = TABLES
        .iter()
        .map(|&t| {
            Ok(CfsMix {
                row: t.to_string(),
                draft: cfs_nice(t)?,
                table: t,
                tasks: &CFS_TASKS,
                results: found
                    .and_then(|v| v.get("cfs_weights"))
                    .and_then(|c| c.get(t)),
            })
        })
        .collect::<Result<_, Error>>()?;
    mixes.push(CfsMix {
        row: EXTENDED_ROW.into(),
        draft: Draft::parse(CFS_EXTENDED, "scx/guest/fair")?,
        table: "extended-60",
        tasks: &EXTENDED_TASKS,
        results: found.and_then(|v| v.get("cfs_extended")),
    });
    for m in mixes {
        let (s, r, gu) = cfs_row(&m.draft, m.table, m.tasks, m.results)?;
        sim.insert(m.row.clone(), s);
        ratios.insert(m.row.clone(), r);
        if let Some(gu) = gu {
            guest.insert(m.row, gu);
        }
    }
    let (guest, note) = match g {
        GuestResults::Found(p, _) if !guest.is_empty() => (
            Value::Object(guest),
            format!(
                "sched_ext guest: scx_cfsw in a qemu guest (TCG), shares of CPU time over 2 s, from {}; the lane asserts each within 3 points of the table's weight ratio (by hand)",
                p.display()
            ),
        ),
        GuestResults::Found(p, _) => (
            missing(&format!("{} has no cfs_weights results", p.display())),
            String::new(),
        ),
        GuestResults::Missing(why) => (missing(why), String::new()),
    };
    Ok(GuestCase {
        case: Case {
            case: "CPU shares (%) under sched_ext, one CPU, 2 s: nice -5/0/5 per table, -25/-20/0 in extended-60".into(),
            paper: json!({ "claim": "CFS shares the CPU in proportion to the weights whatever the range (Fig. 3)", "numbers": Value::Null }),
            simulated: Value::Object(sim),
            real: Value::Null,
            expected: Value::Object(ratios),
            note,
        },
        guest,
    })
}

/// BFS's share of a nice-19 hog among itself and a nice-0 hog, from prio_ratios: a
/// refilled deadline is `now + d(nice)`, not the old one plus d, so after each nice-19
/// slice the nice-0 hog runs slices until its deadline passes the nice-19 one, i.e. for
/// (d(19) − d(0)) of the hogs' time: k = ⌊(d(19) − d(0)) × (1 − u) / slice⌋ + 1 slices,
/// where `u` is the CPU share other tasks take meanwhile; the nice-19 part is 1 / (k + 1).
pub fn bfs_n19_of_hogs(rr_ms: u64, u: f64) -> f64 {
    use schedlab_sim::derived::{bfs_deadline_offset, bfs_timeslice};
    let gap = (bfs_deadline_offset(19, rr_ms) - bfs_deadline_offset(0, rr_ms)) as f64;
    let k = (gap * (1.0 - u.clamp(0.0, 0.99)) / bfs_timeslice(rr_ms) as f64).floor() + 1.0;
    1.0 / (k + 1.0)
}

/// `reproduce bfs`: nice 0 and nice 19 hogs beside an interactive task, simulated here and
/// measured in the guest under scx_bfs, with prio_ratio's prediction.
pub fn bfs_case(g: &GuestResults) -> Result<GuestCase, Error> {
    let r = simulate_yaml(BFS_MIX, "scx/guest/fair/bfs-mix.yaml")?;
    let rr_ms = 6;
    let (n0, n19, ui) = (share(&r, "n0"), share(&r, "n19"), share(&r, "ui"));
    let lat = r
        .tasks
        .iter()
        .find(|t| t.name == "ui")
        .and_then(|t| t.latency.as_ref())
        .map(|l| (r4(l.mean_ns / 1e6), r4(l.max_ns as f64 / 1e6)));
    let simulated = json!({ "bfs": {
        "pct_n0": pct(n0), "pct_n19": pct(n19), "pct_ui": pct(ui),
        "n19_of_hogs_pct": pct(n19 / (n0 + n19).max(f64::MIN_POSITIVE)),
        "ui_wakeup_mean_ms": lat.map(|l| l.0), "ui_wakeup_max_ms": lat.map(|l| l.1),
    }});
    let by_hand = "by hand: 1/(k+1), k = floor((d(19) - d(0)) × (1 - ui share) / slice) + 1 \
        (rr_interval 6 ms): a refill sets the deadline from now, so the shares do not follow \
        d(0)/(d(0)+d(19)) = 14 %";
    let (guest, note) = match g {
        GuestResults::Found(p, v) if v.get("bfs").is_some_and(|b| !b.is_null()) => {
            let b = &v["bfs"]["guest"];
            let l = &b["ui_latency_ms"];
            (
                json!({ "scx_bfs": {
                    "pct_n0": pct_of(&b["n0"]), "pct_n19": pct_of(&b["n19"]), "pct_ui": pct_of(&b["ui"]),
                    "n19_of_hogs_pct": pct_of(&b["n19_of_hogs"]),
                    "ui_wakeup_mean_ms": l.get(0), "ui_wakeup_max_ms": l.get(1),
                }}),
                format!(
                    "{by_hand}; sched_ext guest: scx_bfs in a qemu guest (TCG: its wake-up latencies are the emulator's, not a machine's), from {}; the lane asserts n19_of_hogs within 1 point of the same formula with the ui share and slices it measured",
                    p.display()
                ),
            )
        }
        GuestResults::Found(p, _) => (
            missing(&format!("{} has no bfs results", p.display())),
            by_hand.to_string(),
        ),
        GuestResults::Missing(why) => (missing(why), by_hand.to_string()),
    };
    Ok(GuestCase {
        case: Case {
            case: "BFS CPU shares (%) under sched_ext: nice 0, nice 19, ui (1 ms / 10 ms); one CPU, 3 s".into(),
            paper: json!({ "claim": "a task's virtual deadline offset grows with its nice level (prio_ratios, ×1.1 per level): a nice-19 task waits longer for its turn", "numbers": Value::Null }),
            simulated,
            real: Value::Null,
            expected: json!({
                "n19_of_hogs_pct_two_hogs_alone": pct(bfs_n19_of_hogs(rr_ms, 0.0)),
                "n19_of_hogs_pct_beside_ui": pct(bfs_n19_of_hogs(rr_ms, ui)),
            }),
            note,
        },
        guest,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/scx-fair-shares.json")
    }

    #[test]
    fn the_fixture_fills_both_guest_columns() {
        let g = GuestResults::Found(fixture(), read_results(&fixture()).unwrap());
        let c = cfs_case(&g).unwrap();
        assert_eq!(c.guest["grouped-5"]["pct_-5"], json!(67.42));
        assert_eq!(c.case.simulated.as_object().unwrap().len(), 5);
        // Beyond the kernel's range: w(-25) = 271051 against w(-20) = 88761.
        let e = c.case.simulated[EXTENDED_ROW]["pct_-25"].as_f64().unwrap();
        assert!((e - 100.0 * 271051.0 / 360836.0).abs() < 1.0, "{e}");
        assert_eq!(c.guest[EXTENDED_ROW]["pct_-25"], json!(74.88));
        // The simulator gives the weight ratios: grouped-5 = 2095 / 690 / 226.
        let s = c.case.simulated["grouped-5"]["pct_-5"].as_f64().unwrap();
        assert!((s - 100.0 * 2095.0 / 3011.0).abs() < 1.0, "{s}");
        let b = bfs_case(&g).unwrap();
        assert_eq!(b.guest["scx_bfs"]["n19_of_hogs_pct"], json!(3.15));
        let want = b.case.expected["n19_of_hogs_pct_beside_ui"]
            .as_f64()
            .unwrap();
        let sim = b.case.simulated["bfs"]["n19_of_hogs_pct"].as_f64().unwrap();
        assert!(
            (sim - want).abs() < 1.0,
            "simulated {sim}% vs prio_ratio {want}%"
        );
        // Two hogs alone: 34 nice-0 slices per nice-19 one at rr_interval 6 ms.
        assert!((bfs_n19_of_hogs(6, 0.0) - 1.0 / 35.0).abs() < 1e-12);
    }

    #[test]
    fn without_results_the_column_says_so_and_bad_files_name_the_problem() {
        let g = GuestResults::Missing("no sched_ext guest results (x not found)".into());
        let c = cfs_case(&g).unwrap();
        assert_eq!(c.guest["claim"], "no sched_ext guest results (x not found)");
        let dir = std::env::temp_dir().join(format!("sl-guest-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let bad = dir.join("bad.json");
        std::fs::write(&bad, r#"{"schema": "other"}"#).unwrap();
        assert!(read_results(&bad).unwrap_err().contains("schema: expected"));
        // One share above 1.
        let mut v: Value =
            serde_json::from_str(&std::fs::read_to_string(fixture()).unwrap()).unwrap();
        v["cfs_weights"]["grouped-5"]["n-5"]["guest"] = json!(1.6742);
        std::fs::write(&bad, v.to_string()).unwrap();
        let e = read_results(&bad).unwrap_err();
        assert!(
            e.contains("cfs_weights.grouped-5.n-5.guest: expected a CPU share"),
            "{e}"
        );
        let e = load(
            &GuestSource {
                results: Some(dir.join("none.json")),
                run: false,
            },
            &crate::NoProgress,
        )
        .unwrap_err();
        assert!(
            e.message.contains("none.json: cannot read"),
            "{}",
            e.message
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
