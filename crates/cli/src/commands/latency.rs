//! `schedlab latency`: cyclictest on the real kernel (threads per CPU, SCHED_FIFO,
//! `clock_nanosleep` ABSTIME, mlockall), with optional background load and CPU shield;
//! or `--simulate FILE`: the latency probes of a workload in the simulator, printed the
//! same way. `-h N` prints cyclictest's histogram layout. docs/latency.md.

use crate::commands::emit;
use crate::failure::Failure;
use crate::progress::Progress;
use clap::{ArgAction, Args};
use schedlab_linux::latency::{self, LatencyConfig, LatencyError, LatencyResult, ProbePolicy};
use schedlab_model::{format_ns, parse_duration, Ns, Overrides, Workload};
use schedlab_sim::{simulate, SimOptions, SimResult};
use serde::Serialize;
use std::fmt::Write;
use std::path::PathBuf;
use std::time::Duration;

/// Examples shown by `--help`.
pub const EXAMPLES: &str = "\
Examples:
  sudo schedlab latency --duration 10s                  # one SCHED_FIFO 99 thread per CPU
  sudo schedlab latency --load 2 --shield 1 -h 200      # load and IRQs off CPU 1, histogram
  sudo schedlab latency --policy other --load 4 --json | jq '.threads[] | {cpu, max_ns}'
  schedlab latency --simulate examples/latency-shield.yaml -h 100   # simulated probes

Needs CAP_SYS_NICE for fifo/rr (root), and root for --shield. Exit status: 0; 2 on bad
input or a missing capability; 130/143 when interrupted by SIGINT/SIGTERM (the partial
result is printed and everything is restored first).";

/// `schedlab latency`
#[derive(Debug, Args)]
#[command(disable_help_flag = true, after_help = EXAMPLES)]
pub struct LatencyArgs {
    /// Length of the run (with a unit: 3s, 500ms; at most 1 h).
    #[arg(long, value_name = "TIME", value_parser = parse_duration, default_value = "10s")]
    pub duration: Ns,

    /// Wake-up interval of every thread (100us..1s).
    #[arg(long, value_name = "TIME", value_parser = parse_duration, default_value = "1ms")]
    pub interval: Ns,

    /// Policy of the probe threads: fifo, rr or other (SCHED_OTHER).
    #[arg(long, value_name = "fifo|rr|other", default_value = "fifo")]
    pub policy: String,

    /// RT priority of fifo/rr threads (1..99).
    #[arg(long, value_name = "N", default_value_t = 99)]
    pub priority: u8,

    /// Nice value of `--policy other` threads.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 0,
        allow_hyphen_values = true
    )]
    pub nice: i8,

    /// CPUs to measure, one thread each (e.g. 0,1 or 0-3). Default: every CPU available.
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,

    /// Background load started and stopped by schedlab: N CPU hogs (stress-ng --cpu N if
    /// installed, else N busy threads at SCHED_OTHER), on every CPU but the shielded one.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub load: usize,

    /// Shield CPU for the run: every other thread that may move, every IRQ that may move
    /// and the unbound workqueues go to the other CPUs; all restored afterwards.
    #[arg(long, value_name = "CPU")]
    pub shield: Option<usize>,

    /// Print a histogram of US one-microsecond bins in cyclictest's `-h` layout. `-h`
    /// without a number prints this help, as in every other command.
    #[arg(short = 'h', long = "histogram", value_name = "US", num_args = 0..=1)]
    pub histogram: Option<Option<usize>>,

    /// Simulate the latency probes of a workload file instead of measuring this machine.
    #[arg(long, value_name = "FILE")]
    pub simulate: Option<PathBuf>,

    /// Print the result as one JSON object.
    #[arg(long)]
    pub json: bool,

    /// Write the output to OUT instead of stdout (atomically).
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub output: Option<PathBuf>,

    /// Print help.
    #[arg(long, action = ArgAction::Help)]
    pub help: Option<bool>,
}

/// One column of the histogram / one summary line, real or simulated.
pub struct Column<'a> {
    /// Label (thread index or task name).
    pub label: String,
    /// cyclictest's `(tid)` or the CPU.
    pub ident: String,
    /// Samples.
    pub samples: u64,
    /// Exact per-µs counts.
    pub hist: &'a [[u64; 2]],
    /// Min, mean, max, p50, p99, p99.9 in ns.
    pub min: u64,
    /// Mean.
    pub mean: f64,
    /// Max.
    pub max: u64,
    /// Percentiles (p50, p99, p99.9).
    pub pct: [u64; 3],
    /// Cycle numbers of samples over the histogram (real runs).
    pub overflow_cycles: Option<&'a [u64]>,
}

/// cyclictest's `-h N` block: one row per microsecond `000000 count\tcount...`, then the
/// totals, min/avg/max (whole µs, the average truncated), overflows and their cycles.
pub fn cyclictest_histogram(cols: &[Column], bins: usize) -> String {
    let mut s = String::from("# Histogram\n");
    let count = |c: &Column, us: usize| -> u64 {
        c.hist
            .iter()
            .find(|b| b[0] == us as u64)
            .map_or(0, |b| b[1])
    };
    let mut totals = vec![0u64; cols.len()];
    for us in 0..bins {
        let _ = write!(s, "{us:06} ");
        let cells: Vec<String> = cols
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let n = count(c, us);
                totals[i] += n;
                format!("{n:06}")
            })
            .collect();
        s.push_str(&cells.join("\t"));
        s.push('\n');
    }
    let line = |name: &str, f: &dyn Fn(usize, &Column) -> String| {
        let v: Vec<String> = cols.iter().enumerate().map(|(i, c)| f(i, c)).collect();
        format!("# {name}: {}\n", v.join(" "))
    };
    s.push_str(&line("Total", &|i, _| format!("{:09}", totals[i])));
    s.push_str(&line("Min Latencies", &|_, c| {
        format!("{:05}", c.min / 1000)
    }));
    s.push_str(&line("Avg Latencies", &|_, c| {
        format!("{:05}", (c.mean / 1000.0) as u64)
    }));
    s.push_str(&line("Max Latencies", &|_, c| {
        format!("{:05}", c.max / 1000)
    }));
    let overflow = |c: &Column| {
        c.samples
            - c.hist
                .iter()
                .filter(|b| b[0] < bins as u64)
                .map(|b| b[1])
                .sum::<u64>()
    };
    s.push_str(&line("Histogram Overflows", &|_, c| {
        format!("{:05}", overflow(c))
    }));
    s.push_str("# Histogram Overflow at cycle number:\n");
    for (i, c) in cols.iter().enumerate() {
        let _ = write!(s, "# Thread {i}:");
        let shown = c.overflow_cycles.unwrap_or(&[]);
        for cy in shown.iter().take(bins) {
            let _ = write!(s, " {cy:05}");
        }
        let n = overflow(c);
        let listed = shown.len().min(bins) as u64;
        if listed < n {
            let _ = write!(s, " # {:05} others", n - listed);
        }
        s.push('\n');
    }
    s
}

fn us(ns: u64) -> String {
    let x = ns as f64 / 1000.0;
    if x >= 100.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}

/// Summary lines, cyclictest's `T:` lines with the percentiles beside them (µs).
fn summary(cols: &[Column], policy: &str, prio: &str, interval: Ns) -> String {
    let mut s = String::new();
    for c in cols {
        let _ = writeln!(
            s,
            "T:{:>2} ({}) P:{prio} I:{} C:{:>8} Min:{:>7} Avg:{:>7} Max:{:>8}   p50 {} p99 {} p99.9 {} us  [{policy}]",
            c.label,
            c.ident,
            interval / 1000,
            c.samples,
            c.min / 1000,
            (c.mean / 1000.0) as u64,
            c.max / 1000,
            us(c.pct[0]),
            us(c.pct[1]),
            us(c.pct[2]),
        );
    }
    s
}

fn parse_cpus(s: &str) -> Result<Vec<usize>, Failure> {
    let ok = s
        .split(',')
        .all(|p| p.split('-').all(|x| x.trim().parse::<usize>().is_ok()));
    let v = latency::shield::parse_list(s);
    if !ok || v.is_empty() {
        return Err(Failure::input(format!(
            "--cpus: `{s}` is not a CPU list (e.g. 0,1 or 0-3)"
        )));
    }
    Ok(v)
}

fn config(args: &LatencyArgs) -> Result<LatencyConfig, Failure> {
    let policy = match args.policy.trim().to_ascii_lowercase().as_str() {
        "fifo" => ProbePolicy::Fifo(args.priority),
        "rr" => ProbePolicy::Rr(args.priority),
        "other" | "normal" => ProbePolicy::Other(args.nice),
        p => {
            return Err(Failure::input(format!(
                "--policy: unknown policy `{p}` (known: fifo, rr, other)"
            )))
        }
    };
    if !(-20..=19).contains(&args.nice) {
        return Err(Failure::input(format!(
            "--nice: {} is outside -20..19",
            args.nice
        )));
    }
    let cpus = match &args.cpus {
        Some(s) => parse_cpus(s)?,
        None => schedlab_linux::runner::host_cpus(),
    };
    Ok(LatencyConfig {
        duration: Duration::from_nanos(args.duration),
        interval: Duration::from_nanos(args.interval),
        policy,
        cpus,
        load: args.load,
        shield: args.shield,
        shield_irqs_only: false,
        histogram: args.histogram.flatten(),
    })
}

/// Columns of a real run.
pub fn real_columns(r: &LatencyResult) -> Vec<Column<'_>> {
    r.threads
        .iter()
        .map(|t| Column {
            label: t.thread.to_string(),
            ident: format!("{:>5}", t.tid),
            samples: t.samples,
            hist: &t.histogram_us,
            min: t.min_ns,
            mean: t.mean_ns,
            max: t.max_ns,
            pct: [t.p50_ns, t.p99_ns, t.p999_ns],
            overflow_cycles: Some(&t.overflow_cycles),
        })
        .collect()
}

/// The text of a real run.
pub fn render_real(r: &LatencyResult, histogram: Option<usize>) -> String {
    let mut s = String::new();
    let cols = real_columns(r);
    if let Some(bins) = histogram {
        s.push_str(&cyclictest_histogram(&cols, bins));
    }
    let _ = writeln!(
        s,
        "# schedlab latency: kernel {}{}, CPUs {}; {} {}, interval {}, {}{}",
        r.kernel,
        r.hz.map_or(String::new(), |h| format!(" HZ={h}")),
        latency::shield::format_list(&r.cpus_online),
        r.policy,
        r.nice
            .map_or(r.priority.to_string(), |n| format!("nice {n}")),
        format_ns(r.interval_ns),
        format_ns(r.duration_ns),
        if r.partial { " (partial)" } else { "" }
    );
    let prio = r.nice.map_or(r.priority.to_string(), |_| "0".into());
    s.push_str(&summary(&cols, r.policy, &prio, r.interval_ns));
    for t in &r.threads {
        if t.overruns > 0 {
            let _ = writeln!(
                s,
                "thread {} on CPU {}: {} periods overrun (woke after the next target)",
                t.thread, t.cpu, t.overruns
            );
        }
    }
    if let Some(l) = &r.load {
        let _ = writeln!(
            s,
            "load       {} × {} on CPUs {}",
            l.workers,
            if l.kind == "stress-ng" {
                "stress-ng --cpu"
            } else {
                "busy thread (SCHED_OTHER)"
            },
            latency::shield::format_list(&l.cpus)
        );
    }
    if let Some(sh) = &r.shield {
        let refused: Vec<String> = sh
            .irqs_refused
            .iter()
            .map(|(i, e)| format!("{i}: {e}"))
            .collect();
        let _ = writeln!(
            s,
            "shield     CPU {}: {} IRQs moved{}, {} threads moved ({} pinned stay), default IRQ affinity {}, workqueues {}; restored {}",
            sh.cpu,
            sh.irqs_moved.len(),
            if refused.is_empty() {
                String::new()
            } else {
                format!(", refused {}", refused.join(", "))
            },
            sh.tasks_moved,
            sh.tasks_pinned,
            if sh.default_irq_affinity { "moved" } else { "kept" },
            if sh.workqueue_cpumask { "moved" } else { "kept" },
            if sh.restored { "yes" } else { "NO" }
        );
        for e in &sh.restore_errors {
            let _ = writeln!(s, "warning    not restored: {e}");
        }
    }
    if let Some(st) = &r.steal_ns {
        let v: Vec<String> = r
            .cpus_online
            .iter()
            .zip(st)
            .map(|(c, ns)| format!("CPU{c} {:.1} ms", *ns as f64 / 1e6))
            .collect();
        let _ = writeln!(
            s,
            "steal      {} (time the hypervisor ran something else)",
            v.join(", ")
        );
    }
    let _ = writeln!(s, "restored   {}", if r.restored { "yes" } else { "NO" });
    for w in &r.warnings {
        let _ = writeln!(s, "warning    {w}");
    }
    s
}

/// One simulated probe, as `--simulate --json` prints it.
#[derive(Debug, Serialize)]
pub struct SimProbe {
    /// Probe index.
    pub thread: usize,
    /// Task name.
    pub name: String,
    /// CPUs it may run on.
    pub cpus: Option<Vec<usize>>,
    /// Its latency figures (with `histogram_us`).
    #[serde(flatten)]
    pub latency: schedlab_sim::result::LatencyStats,
}

/// The probes of a simulated run (tasks with `probe:`).
pub fn sim_probes(w: &Workload, r: &SimResult) -> Vec<SimProbe> {
    w.tasks
        .iter()
        .zip(&r.tasks)
        .filter(|(t, _)| t.probe.is_some())
        .enumerate()
        .filter_map(|(k, (t, tr))| {
            Some(SimProbe {
                thread: k,
                name: t.name.clone(),
                cpus: t.affinity.clone(),
                latency: tr.latency.clone()?,
            })
        })
        .collect()
}

fn sim_columns(p: &[SimProbe]) -> Vec<Column<'_>> {
    p.iter()
        .map(|p| Column {
            label: p.thread.to_string(),
            ident: p.name.clone(),
            samples: p.latency.samples,
            hist: p.latency.histogram_us.as_deref().unwrap_or(&[]),
            min: p.latency.min_ns,
            mean: p.latency.mean_ns,
            max: p.latency.max_ns,
            pct: [p.latency.p50_ns, p.latency.p99_ns, p.latency.p999_ns],
            overflow_cycles: None,
        })
        .collect()
}

fn run_simulated(args: &LatencyArgs, file: &std::path::Path) -> Result<(), Failure> {
    let w = Workload::load(file, &Overrides::default()).map_err(Failure::input)?;
    if !w.tasks.iter().any(|t| t.probe.is_some()) {
        return Err(Failure::input(format!(
            "{}: no task has a `probe:` (docs/format.md, latency probes)",
            file.display()
        )));
    }
    let r = simulate(&w, &SimOptions::default())
        .map_err(|e| Failure::input(format!("{}: {e}", file.display())))?;
    let probes = sim_probes(&w, &r);
    let text = if args.json {
        let v = serde_json::json!({
            "mode": "simulated",
            "workload": r.workload,
            "cpus": r.cpus,
            "duration_ns": r.duration_ns,
            "wakeup_cost_ns": w.platform.wakeup_cost,
            "threads": probes,
            "kernel": r.kernel,
        });
        format!(
            "{}\n",
            serde_json::to_string(&v).map_err(|e| Failure::output(e.to_string()))?
        )
    } else {
        let mut s = String::new();
        let cols = sim_columns(&probes);
        if let Some(bins) = args.histogram.flatten() {
            s.push_str(&cyclictest_histogram(&cols, bins));
        }
        let _ = writeln!(
            s,
            "# schedlab latency --simulate {}: {} CPUs, {}, wake-up cost {}",
            file.display(),
            r.cpus,
            format_ns(r.duration_ns),
            format_ns(w.platform.wakeup_cost)
        );
        for (p, c) in probes.iter().zip(&cols) {
            let t = w
                .tasks
                .iter()
                .find(|t| t.name == p.name)
                .expect("probe task");
            let prio = t
                .priority
                .map_or(format!("nice {}", t.nice), |p| p.to_string());
            s.push_str(&summary(
                std::slice::from_ref(c),
                t.class.name(),
                &prio,
                t.period.unwrap_or(0),
            ));
        }
        if let Some(k) = &r.kernel {
            for c in &k.per_cpu {
                let _ = writeln!(
                    s,
                    "CPU {}: {} IRQs ({} us), {} cascades (largest {} timers, {} us), {} kernel sections ({} us), longest block {} us",
                    c.cpu,
                    c.irqs,
                    c.irq_ns / 1000,
                    c.cascades,
                    c.largest_cascade_timers,
                    c.largest_cascade_ns / 1000,
                    c.sections,
                    c.section_ns / 1000,
                    c.longest_block_ns / 1000
                );
            }
        }
        s
    };
    emit(&text, args.output.as_deref())
}

/// Run `schedlab latency`.
pub fn run(args: &LatencyArgs) -> Result<(), Failure> {
    if args.histogram == Some(None) {
        // `-h` alone: the user asked for help (cyclictest's `-h` needs a number).
        let mut cmd = <crate::cli::Cli as clap::CommandFactory>::command();
        cmd.build();
        let help = cmd
            .find_subcommand_mut("latency")
            .map(|c| c.render_help().to_string())
            .unwrap_or_default();
        return emit(&help, None);
    }
    if let Some(file) = &args.simulate {
        return run_simulated(args, file);
    }
    let cfg = config(args)?;
    let progress = Progress::new();
    progress.step(&format!(
        "measuring wake-up latency on CPUs {} for {}{}...",
        latency::shield::format_list(&cfg.cpus),
        format_ns(args.duration),
        if cfg.load > 0 { " under load" } else { "" }
    ));
    let r = {
        let _countdown = progress.countdown("measuring wake-up latency", cfg.duration);
        latency::run(&cfg)
    };
    progress.done();
    let r = r.map_err(|e| match e {
        LatencyError::Input(m) => Failure::input(m),
        LatencyError::Privilege(m) => Failure::host(crate::failure::EXIT_INPUT, m),
        LatencyError::Setup(m) => Failure::host(1, m),
    })?;
    let text = if args.json {
        format!(
            "{}\n",
            serde_json::to_string(&r).map_err(|e| Failure::output(e.to_string()))?
        )
    } else {
        render_real(&r, args.histogram.flatten())
    };
    emit(&text, args.output.as_deref())?;
    match r.stopped_by.as_deref() {
        None => Ok(()),
        Some(why) => Err(Failure {
            code: match why {
                "SIGINT" => 130,
                "SIGTERM" => 143,
                "SIGHUP" => 129,
                _ => 1,
            },
            message: format!(
                "stopped by {why}: the result printed is partial{}",
                if r.restored {
                    " (everything was restored)"
                } else {
                    ""
                }
            ),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_histogram_has_cyclictests_layout() {
        let a = [[13u64, 2], [14, 24], [40, 1]];
        let b = [[14u64, 1]];
        let cols = vec![
            Column {
                label: "0".into(),
                ident: "1".into(),
                samples: 27,
                hist: &a,
                min: 13_200,
                mean: 15_900.0,
                max: 40_100,
                pct: [14_000, 14_000, 40_000],
                overflow_cycles: Some(&[7]),
            },
            Column {
                label: "1".into(),
                ident: "2".into(),
                samples: 1,
                hist: &b,
                min: 14_000,
                mean: 14_000.0,
                max: 14_000,
                pct: [14_000; 3],
                overflow_cycles: None,
            },
        ];
        let h = cyclictest_histogram(&cols, 30);
        let lines: Vec<&str> = h.lines().collect();
        assert_eq!(lines[0], "# Histogram");
        assert_eq!(lines[1], "000000 000000\t000000");
        assert_eq!(lines[15], "000014 000024\t000001");
        assert_eq!(lines.len(), 1 + 30 + 5 + 1 + 2);
        assert_eq!(lines[31], "# Total: 000000026 000000001");
        assert_eq!(lines[32], "# Min Latencies: 00013 00014");
        assert_eq!(lines[33], "# Avg Latencies: 00015 00014");
        assert_eq!(lines[34], "# Max Latencies: 00040 00014");
        assert_eq!(lines[35], "# Histogram Overflows: 00001 00000");
        assert_eq!(lines[36], "# Histogram Overflow at cycle number:");
        assert_eq!(lines[37], "# Thread 0: 00007");
        assert_eq!(lines[38], "# Thread 1:");
    }
}
