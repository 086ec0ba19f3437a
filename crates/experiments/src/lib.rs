//! The seed papers' experiments and their reviews, as data and computation: each
//! experiment builds its workloads, simulates them (and, as root, measures this machine),
//! and returns typed results — cases with the seed's numbers next to ours, headlines with
//! their sensitivity rows, the seed's claims with verdicts, assumptions, steps not
//! modelled, and the figures to draw. Nothing here prints or draws: `schedlab reproduce`
//! renders a [`Report`] on the terminal, as JSON and as SVG, and the Python module hands
//! the same report out as DataFrames.
//!
//! Adding an experiment: one module with a `run` (and, for a seed with a headline, a
//! `review`), and one entry in [`EXPERIMENTS`] (docs/architecture.md walks through it).

pub mod bench;
pub mod bfs;
pub mod bfs_machines;
pub mod cfs_weights;
pub mod cfs_weights_review;
mod error;
pub mod fidelity;
pub mod figure;
pub mod illf;
pub mod interactive;
pub mod latency;
pub mod latency_review;
mod progress;
pub mod review;
pub mod scx_guest;
pub mod sensitivity_plot;
pub mod shield;
pub mod shield_review;
pub mod workloads;

pub use error::{Error, ErrorKind};
pub use progress::{NoProgress, Progress};

use figure::Figure;
use review::Review;
use schedlab_model::{Overrides, Policy, Workload};
use schedlab_sim::{simulate, SimOptions, SimResult};
use serde::Serialize;
use serde_json::Value;
use std::path::Path;

/// An experiment's own run: its cases and figures.
pub type RunFn = fn(&Options, &dyn Progress) -> Result<Outcome, Error>;
/// A seed's review: headlines with sensitivity, claims, assumptions, steps not modelled.
pub type ReviewFn = fn(&dyn Progress) -> Result<Review, Error>;
/// The sched_ext guest lane's case from its results.
pub type GuestFn = fn(&scx_guest::GuestResults) -> Result<scx_guest::GuestCase, Error>;

/// An experiment `reproduce` knows: its name, one line saying what it is, and how to run it.
pub struct Experiment {
    /// The name on the command line (`illf`, `cfs-weights`...).
    pub name: &'static str,
    /// One line for `reproduce --help` and the docs.
    pub about: &'static str,
    /// Its cases and figures.
    pub run: RunFn,
    /// Its review (headlines with sensitivity, claims...), for a seed that has one.
    pub review: Option<ReviewFn>,
    /// The sched_ext guest lane's case (`cfs-weights`, `bfs`), shown after the cases.
    pub guest: Option<GuestFn>,
}

/// Experiments `reproduce` knows, in the order `all` runs them.
pub const EXPERIMENTS: &[Experiment] = &[
    Experiment {
        name: "illf",
        about: "seed 000: ILLF vs EDF vs LLF (E1 Dhall, E2, Table 1, Fig. 4 and Fig. 5 sweeps)",
        run: |_, p| illf::run(p),
        review: Some(illf::review),
        guest: None,
    },
    Experiment {
        name: "cfs-weights",
        about: "seed 004: CFS under the linux, grouped-2, grouped-5 and extended-60 weight tables",
        run: |o, p| cfs_weights::run_all(p, o.real),
        review: Some(cfs_weights_review::review),
        guest: Some(scx_guest::cfs_case),
    },
    Experiment {
        name: "bfs",
        about: "seed 001: BFS vs CFS vs EEVDF on compile-, compression- and video-like workloads",
        run: |_, p| bfs::run(p),
        review: Some(bfs_machines::review),
        guest: Some(scx_guest::bfs_case),
    },
    Experiment {
        name: "latency",
        about: "seed 002: cyclictest latency through the article's tuning steps (CFS knobs, FIFO/RR, IRQ affinity, isolation)",
        run: |o, p| latency::run(p, o.real),
        review: Some(latency_review::review),
        guest: None,
    },
    Experiment {
        name: "shield",
        about: "seed 003: CPU shield with and without moving the RT core's timers (cascade spike)",
        run: |o, p| shield::run(p, o.real),
        review: Some(shield_review::review),
        guest: None,
    },
    Experiment {
        name: "fidelity",
        about: "the calibrated simulator against this kernel: table1-2cpu (EDF margin 0 and 5%, RM), an overloaded and a fair mix; prediction error per metric",
        run: |o, p| fidelity::run(p, o.real, o.record.as_deref()),
        review: None,
        guest: None,
    },
    Experiment {
        name: "interactive",
        about: "seeds 001/002/004: an interactive task among 1, 3 and 7 hogs, simulated EEVDF/CFS vs this kernel (share, wake-up latency, slices)",
        run: |o, p| interactive::run(p, o.real),
        review: None,
        guest: None,
    },
];

/// The experiment called `name`, or an error naming the known ones.
pub fn experiment(name: &str) -> Result<&'static Experiment, Error> {
    EXPERIMENTS.iter().find(|e| e.name == name).ok_or_else(|| {
        let known: Vec<&str> = EXPERIMENTS.iter().map(|e| e.name).collect();
        Error::input(format!(
            "unknown experiment `{name}` (known: {}, all)",
            known.join(", ")
        ))
    })
}

/// How to run the experiments.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Measure this machine where an experiment can (needs root); else `real` is null
    /// (fidelity: the recorded figures).
    pub real: bool,
    /// fidelity: the file the caller writes what was measured to ([`Report::record`]);
    /// an error if nothing is measured.
    pub record: Option<std::path::PathBuf>,
    /// Where the sched_ext guest lane's results come from.
    pub guest: scx_guest::GuestSource,
}

/// One case of an experiment (DESIGN.md: case, paper, simulated, real).
#[derive(Debug, Clone, Serialize)]
pub struct Case {
    /// What was run.
    pub case: String,
    /// The numbers the seed reports (null when it reports none).
    pub paper: Value,
    /// What the simulator gives.
    pub simulated: Value,
    /// Measured on this machine (null: the real-kernel runner is not part of this command yet).
    pub real: Value,
    /// Values worked out by hand in the seeds digest, when there are some.
    #[serde(skip_serializing_if = "Value::is_null")]
    pub expected: Value,
    /// One line for a person: how ours compares.
    pub note: String,
}

/// A case as reported: with the "sched_ext guest" column where the guest lane has one
/// ([`scx_guest`]).
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// The case.
    #[serde(flatten)]
    pub case: Case,
    /// The shares the sched_ext guest lane measured (null for other cases).
    #[serde(rename = "sched_ext_guest", skip_serializing_if = "Value::is_null")]
    pub guest: Value,
}

/// An experiment's own outcome: cases, figures, and (fidelity) what was measured.
pub struct Outcome {
    /// Cases in order.
    pub cases: Vec<Case>,
    /// Figures to draw.
    pub figures: Vec<Figure>,
    /// fidelity with [`Options::record`]: the real figures measured and the calibration.
    pub record: Option<fidelity::Record>,
}

impl Outcome {
    /// Cases and figures, nothing recorded.
    pub fn new(cases: Vec<Case>, figures: Vec<Figure>) -> Outcome {
        Outcome {
            cases,
            figures,
            record: None,
        }
    }
}

/// What `reproduce` returns for one experiment or `all`.
pub struct Report {
    /// The name asked for (`all` included).
    pub experiment: String,
    /// The cases of every experiment run (under `all`, prefixed `name: `).
    pub cases: Vec<Row>,
    /// Headlines, claims, assumptions and steps not modelled (same prefixes).
    pub review: Review,
    /// Figures in the order they are listed.
    pub figures: Vec<Figure>,
    /// Each experiment run with its number of sensitivity charts (the last figures of
    /// its own), so that charts of headlines no longer reviewed can be told apart.
    pub sensitivity_charts: Vec<(&'static str, usize)>,
    /// fidelity with [`Options::record`]: what was measured, to be written.
    pub record: Option<fidelity::Record>,
}

impl Report {
    /// The report as `reproduce --json` prints it (before the provenance keys):
    /// experiment, cases, headlines, claims, assumptions, not_modelled, plots (file names).
    pub fn to_json(&self) -> Value {
        serde_json::json!({
            "experiment": self.experiment,
            "cases": self.cases,
            "headlines": self.review.headlines,
            "claims": self.review.claims,
            "assumptions": self.review.assumptions,
            "not_modelled": self.review.not_modelled,
            "plots": self.figures.iter().map(|f| f.file.as_str()).collect::<Vec<_>>(),
        })
    }
}

/// Run `name` (an experiment of [`EXPERIMENTS`], or `all`).
pub fn reproduce(name: &str, opts: &Options, progress: &dyn Progress) -> Result<Report, Error> {
    let list: Vec<&Experiment> = match name {
        "all" => EXPERIMENTS.iter().collect(),
        n => vec![experiment(n)?],
    };
    let mut report = Report {
        experiment: name.to_string(),
        cases: Vec::new(),
        review: Review::default(),
        figures: Vec::new(),
        sensitivity_charts: Vec::new(),
        record: None,
    };
    let mut guest = None;
    for (i, e) in list.iter().enumerate() {
        if list.len() > 1 {
            progress.set_prefix(&format!("[{}/{}] ", i + 1, list.len()));
        }
        let out = (e.run)(opts, progress)?;
        let guest_case = match e.guest {
            Some(case) => {
                if guest.is_none() {
                    guest = Some(scx_guest::load(&opts.guest, progress)?);
                }
                Some(case(guest.as_ref().expect("loaded above"))?)
            }
            None => None,
        };
        let prefix = if list.len() > 1 {
            format!("{}: ", e.name)
        } else {
            String::new()
        };
        let mut review = match e.review {
            Some(r) => r(progress)?,
            None => Review::default(),
        };
        let extra = std::mem::take(&mut review.cases);
        let plain = |case| Row {
            case,
            guest: Value::Null,
        };
        let guest_rows = guest_case.map(|g| Row {
            case: g.case,
            guest: g.guest,
        });
        let rows = out.cases.into_iter().map(plain);
        report.cases.extend(
            rows.chain(guest_rows)
                .chain(extra.into_iter().map(plain))
                .map(|mut r| {
                    r.case.case = format!("{prefix}{}", r.case.case);
                    r
                }),
        );
        // The review's own figures (Fig. 4's sensitivity) come first, as they always have.
        report.figures.append(&mut review.figures);
        report.figures.extend(out.figures);
        let charts = sensitivity_plot::figures(e.name, &review);
        report.sensitivity_charts.push((e.name, charts.len()));
        report.figures.extend(charts);
        report.record = report.record.or(out.record);
        report.review.extend(review, &prefix);
    }
    Ok(report)
}

/// Simulate a YAML workload under `policy`, optionally keeping the trace.
pub fn sim(yaml: &str, name: &str, policy: Policy, trace: bool) -> Result<SimResult, Error> {
    let ov = Overrides {
        policy: Some(policy),
        ..Overrides::default()
    };
    let w = Workload::parse_str(yaml, Path::new(name), &ov).map_err(Error::input)?;
    simulate(&w, &SimOptions { trace }).map_err(|e| Error::input(format!("{name}: {e}")))
}

/// A number for a person: integers without decimals, others with two.
pub fn fmt_num(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{x:.0}")
    } else {
        format!("{x:.2}")
    }
}

/// Round to 2 decimals for JSON (results stay deterministic; this is presentation).
pub fn r2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}
