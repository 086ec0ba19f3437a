//! What `schedlab simulate` can write besides its summary: a trace for Perfetto or in
//! ftrace text (`--trace-out`), a terminal Gantt chart (`--gantt`) and every job as CSV
//! (`--jobs-csv`). All are drawn from one [`Schedule`], so they agree with each other and
//! with the counted metrics.

use crate::atomic::write_atomic;
use crate::failure::Failure;
use clap::{Args, ValueEnum};
use schedlab_model::Workload;
use schedlab_sim::SimResult;
use schedlab_trace::gantt::{self, parse_window, Window};
use schedlab_trace::Schedule;
use std::path::{Path, PathBuf};

/// Trace file formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TraceFormat {
    /// Perfetto protobuf (.pftrace): opens in ui.perfetto.dev and trace_processor.
    Perfetto,
    /// ftrace text as `trace-cmd report` prints it (ns timestamps).
    Ftrace,
}

/// Extra outputs of `schedlab simulate` (and of the traced real runs of `schedlab run`
/// and `compare --real`).
#[derive(Debug, Args, Clone, Default)]
pub struct ExportArgs {
    /// Write the schedule as a trace: Perfetto protobuf (open it in ui.perfetto.dev) or,
    /// with --trace-format ftrace (or a .txt file name), trace-cmd report text.
    #[arg(long, value_name = "FILE")]
    pub trace_out: Option<PathBuf>,

    /// Format of --trace-out. Default: ftrace for names ending in .txt/.ftrace/.report,
    /// else perfetto.
    #[arg(long, value_name = "perfetto|ftrace", requires = "trace_out")]
    pub trace_format: Option<TraceFormat>,

    /// Draw a terminal Gantt chart of a time window, e.g. 0ms..200ms (`..200ms` from the
    /// start, `1s..` to the end): one row per CPU, one letter per task. Printed after the
    /// summary (on stderr with --json).
    #[arg(long, value_name = "FROM..TO", value_parser = parse_window)]
    pub gantt: Option<Window>,

    /// Write every job as CSV (task, job, release, start, finish, deadline, cpu,
    /// response, missed, aborted; ns), e.g. for pandas.read_csv.
    #[arg(long, value_name = "FILE")]
    pub jobs_csv: Option<PathBuf>,

    /// Columns of the Gantt chart.
    #[arg(long, value_name = "N", default_value_t = 100, requires = "gantt",
          value_parser = clap::value_parser!(u16).range(10..=1000))]
    pub gantt_width: u16,
}

impl ExportArgs {
    /// Whether the simulation must record its trace.
    pub fn wants_trace(&self) -> bool {
        self.trace_out.is_some() || self.gantt.is_some() || self.jobs_csv.is_some()
    }

    /// Refuse, before a run, a --gantt window that a schedule of `duration` ns cannot
    /// show (a real run would otherwise be lost to the error at its end).
    pub fn check_window(&self, duration: schedlab_model::Ns) -> Result<(), Failure> {
        match self.gantt {
            Some(win) => win
                .clip(duration)
                .map(|_| ())
                .map_err(|e| Failure::input(format!("--gantt: {e}"))),
            None => Ok(()),
        }
    }

    fn format(&self, path: &Path) -> TraceFormat {
        self.trace_format.unwrap_or_else(|| {
            let ext = path
                .extension()
                .map(|e| e.to_string_lossy().to_ascii_lowercase());
            match ext.as_deref() {
                Some("txt" | "ftrace" | "report") => TraceFormat::Ftrace,
                _ => TraceFormat::Perfetto,
            }
        })
    }
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    write_atomic(path, bytes)
        .map_err(|e| Failure::output(format!("cannot write {}: {e}", path.display())))
}

/// Write the requested files (atomically, each complete or absent) and return the
/// requested terminal drawings (the Gantt chart), to print after the summary.
pub fn write_files(
    w: &Workload,
    r: &SimResult,
    args: &ExportArgs,
) -> Result<Option<String>, Failure> {
    if !args.wants_trace() {
        return Ok(None);
    }
    let s = Schedule::from_sim(w, r)
        .ok_or_else(|| Failure::output("internal error: the simulation recorded no trace"))?;
    write_schedule(&s, args, None)
}

/// The path of one of several schedules written to `path`: `-SUFFIX` before the
/// extension (`t.pftrace` → `t-edf.pftrace`); `path` itself without a suffix.
pub fn suffixed(path: &Path, suffix: Option<&str>) -> PathBuf {
    let Some(sfx) = suffix else {
        return path.to_path_buf();
    };
    let stem = path
        .file_stem()
        .map_or_else(String::new, |s| s.to_string_lossy().to_string());
    let name = match path.extension() {
        Some(e) => format!("{stem}-{sfx}.{}", e.to_string_lossy()),
        None => format!("{stem}-{sfx}"),
    };
    path.with_file_name(name)
}

/// Write the requested files of one schedule (a simulated or a traced real run; with
/// `suffix`, to [`suffixed`] paths) and return the requested Gantt chart.
pub fn write_schedule(
    s: &Schedule,
    args: &ExportArgs,
    suffix: Option<&str>,
) -> Result<Option<String>, Failure> {
    if let Some(path) = &args.trace_out {
        let path = &suffixed(path, suffix);
        match args.format(path) {
            TraceFormat::Perfetto => write(path, &schedlab_trace::perfetto::encode(s))?,
            TraceFormat::Ftrace => write(path, schedlab_trace::ftrace::render(s).as_bytes())?,
        }
    }
    if let Some(path) = &args.jobs_csv {
        write(
            &suffixed(path, suffix),
            schedlab_trace::jobs::render(s).as_bytes(),
        )?;
    }
    match args.gantt {
        Some(win) => {
            let (from, to) = win
                .clip(s.duration)
                .map_err(|e| Failure::input(format!("--gantt: {e}")))?;
            Ok(Some(gantt::render(s, from, to, args.gantt_width as usize)))
        }
        None => Ok(None),
    }
}

/// Put the terminal drawings after the summary, or on stderr when stdout carries JSON.
pub fn append(drawing: Option<String>, json: bool, text: &mut String) {
    let Some(d) = drawing else { return };
    if json {
        eprint!("{d}");
    } else {
        text.push('\n');
        text.push_str(&d);
    }
}
