//! `schedlab report`: one self-contained HTML page (inline CSS, SVG and a few lines of
//! JS; nothing fetched from the network) comparing policies on one workload:
//!
//! - the workload (platform, tasks) and the metrics side by side, best value in bold;
//! - small bar charts (deadline misses, context switches per CPU per second, preemptions,
//!   migrations), the distribution of response times (as a fraction of each job's
//!   relative deadline, one curve per policy) and a histogram of release-to-start
//!   latency;
//! - per policy: a Gantt chart of the chosen window (one row per CPU, one colour per
//!   task, red marks at missed deadlines, a tooltip on every run) and the per-task table.
//!
//! Stable hooks for tests and scripts: `section.policy[data-policy=P]` per policy, in it
//! `svg.gantt` with one `g.gantt-row[data-cpu=N]` per CPU and `table.tasks`;
//! `table.metrics`; `svg.chart` for each plot.

use crate::gantt::letter;
use crate::schedule::Schedule;
use schedlab_model::{format_ns, Ns, Workload};
use schedlab_sim::SimResult;
use std::fmt::Write;

/// One policy's run.
pub struct PolicyRun<'a> {
    /// The workload as simulated (overrides applied).
    pub workload: &'a Workload,
    /// Its results.
    pub result: &'a SimResult,
    /// Its schedule.
    pub schedule: &'a Schedule,
}

/// Everything the page shows.
pub struct Report<'a> {
    /// Where the workload came from (shown in the header).
    pub source: String,
    /// Runs, one per policy, in column order.
    pub runs: Vec<PolicyRun<'a>>,
    /// Gantt window `[from, to)`.
    pub window: (Ns, Ns),
    /// Simulated against real, per policy (`compare --real --report`); empty otherwise.
    pub prediction: Vec<PredictionTable>,
}

/// One policy's prediction table: metric, simulated, real, error (already formatted).
pub struct PredictionTable {
    /// Policy name.
    pub policy: String,
    /// Rows of four cells.
    pub rows: Vec<[String; 4]>,
}

const TASK_COLORS: [&str; 20] = [
    "#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#ff9da7", "#9c755f",
    "#bab0ac", "#2f4b7c", "#a0cbe8", "#ffbe7d", "#8cd17d", "#d4a6c8", "#499894", "#b6992d",
    "#d37295", "#79706e", "#17becf", "#bcbd22",
];
const POLICY_COLORS: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];
const MISS_COLOR: &str = "#d62728";

/// Colour of task `i`.
pub fn task_color(i: usize) -> String {
    match TASK_COLORS.get(i) {
        Some(c) => (*c).to_string(),
        // Golden-angle hues for long task lists.
        None => format!("hsl({:.0}, 55%, 62%)", (i as f64 * 137.508) % 360.0),
    }
}

/// Text colour readable on task `i`'s colour.
fn text_on(i: usize) -> &'static str {
    let Some(hex) = TASK_COLORS.get(i) else {
        return "#1b1f24";
    };
    let v = |k: usize| u8::from_str_radix(&hex[k..k + 2], 16).unwrap_or(128) as f64 / 255.0;
    let lum = 0.2126 * v(1) + 0.7152 * v(3) + 0.0722 * v(5);
    if lum < 0.42 {
        "#ffffff"
    } else {
        "#1b1f24"
    }
}

fn policy_color(i: usize) -> &'static str {
    POLICY_COLORS[i % POLICY_COLORS.len()]
}

/// Escape text for HTML/SVG content and attribute values.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Milliseconds with up to 3 decimals, for tables and tooltips.
fn ms(ns: f64) -> String {
    let t = format!("{:.3}", ns / 1e6);
    let t = t.trim_end_matches('0').trim_end_matches('.');
    t.to_string()
}

/// A "nice" tick step (1, 2 or 5 × 10^k) giving about `n` ticks over `span`.
fn tick_step(span: f64, n: f64) -> f64 {
    if span <= 0.0 {
        return 1.0;
    }
    let raw = span / n;
    let mag = 10f64.powf(raw.log10().floor());
    let norm = raw / mag;
    let nice = if norm < 1.5 {
        1.0
    } else if norm < 3.5 {
        2.0
    } else if norm < 7.5 {
        5.0
    } else {
        10.0
    };
    nice * mag
}

fn fmt_tick(v: f64) -> String {
    if v.abs() >= 1000.0 || v == v.round() {
        format!("{v:.0}")
    } else {
        let t = format!("{v:.3}");
        t.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

const CSS: &str = r#"
:root { --fg:#1b1f24; --muted:#5b6470; --line:#d8dde3; --bg:#ffffff; --band:#f5f7f9; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: var(--fg); background: var(--bg); }
main { max-width: 1180px; margin: 0 auto; padding: 24px 28px 48px; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 19px; margin: 36px 0 10px; padding-bottom: 4px; border-bottom: 2px solid var(--line); }
h3 { font-size: 15px; margin: 18px 0 8px; }
p.sub { color: var(--muted); margin: 0 0 14px; }
table { border-collapse: collapse; margin: 6px 0 12px; font-variant-numeric: tabular-nums; }
th, td { padding: 4px 10px; border-bottom: 1px solid var(--line); text-align: right; white-space: nowrap; }
th:first-child, td:first-child, th.l, td.l { text-align: left; }
thead th { background: var(--band); font-weight: 600; border-bottom: 1px solid #c3cad3; }
tbody tr:hover { background: #fafbfc; }
td.best { font-weight: 700; }
td.bad { color: #b42318; font-weight: 600; }
.swatch { display: inline-block; width: 11px; height: 11px; border-radius: 2px; margin-right: 6px; vertical-align: -1px; }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(250px, 1fr)); gap: 14px; }
.grid2 { display: grid; grid-template-columns: repeat(auto-fit, minmax(480px, 1fr)); gap: 14px; }
figure { margin: 0; border: 1px solid var(--line); border-radius: 6px; padding: 8px 10px 6px; background: #fff; }
figcaption { font-weight: 600; font-size: 13px; margin-bottom: 2px; }
figure .note { color: var(--muted); font-size: 12px; }
svg { display: block; width: 100%; height: auto; }
svg text { font-family: inherit; fill: #333; }
section.policy { margin-top: 30px; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 14px; margin: 6px 0 4px; font-size: 13px; }
.legend span.item { cursor: default; }
.legend .key { display: inline-block; min-width: 17px; height: 17px; border-radius: 3px; margin-right: 5px; font-size: 11px; line-height: 17px; text-align: center; font-weight: 600; vertical-align: 0; }
svg.gantt rect.run { stroke: #fff; stroke-width: 0.6; }
svg.gantt.focus rect.run { opacity: 0.18; }
svg.gantt.focus rect.run.on { opacity: 1; }
.meta { color: var(--muted); font-size: 12px; margin-top: 28px; }
"#;

const JS: &str = r#"
for (const item of document.querySelectorAll('.legend .item')) {
  const sec = item.closest('section');
  const svg = sec && sec.querySelector('svg.gantt');
  if (!svg) continue;
  item.addEventListener('mouseenter', () => {
    svg.classList.add('focus');
    for (const r of svg.querySelectorAll('rect.run[data-task="' + item.dataset.task + '"]')) r.classList.add('on');
  });
  item.addEventListener('mouseleave', () => {
    svg.classList.remove('focus');
    for (const r of svg.querySelectorAll('rect.run.on')) r.classList.remove('on');
  });
}
document.documentElement.dataset.ready = "1";
"#;

/// Render the page.
pub fn render(r: &Report) -> String {
    let mut h = String::with_capacity(200_000);
    let w = r.runs[0].workload;
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>schedlab report: {}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<main>\n",
        esc(&w.name)
    );
    let policies: Vec<String> = r.runs.iter().map(|p| p.result.policy.clone()).collect();
    let _ = writeln!(h, "<h1>{}</h1>", esc(&w.name));
    let _ = writeln!(
        h,
        "<p class=\"sub\">{} · {} CPU{} · {} simulated · placement {} · policies {}</p>",
        esc(&r.source),
        w.platform.cpus,
        if w.platform.cpus == 1 { "" } else { "s" },
        format_ns(w.duration),
        esc(&r.runs[0].result.placement),
        esc(&policies.join(", "))
    );

    workload_section(&mut h, w);
    prediction_section(&mut h, &r.prediction);
    metrics_section(&mut h, r);
    plots_section(&mut h, r);
    for (i, run) in r.runs.iter().enumerate() {
        policy_section(&mut h, run, i, r.window);
    }
    let _ = writeln!(
        h,
        "<p class=\"meta\">Made by schedlab {}. Definitions (context switch, preemption, \
         migration, deadline miss, response time) as in schedlab's docs/usage.md; times in ms.</p>",
        env!("CARGO_PKG_VERSION")
    );
    let _ = write!(h, "</main>\n<script>{JS}</script>\n</body>\n</html>\n");
    h
}

/// `table.prediction[data-policy=P]`: the simulator's prediction against the real run.
fn prediction_section(h: &mut String, tables: &[PredictionTable]) {
    if tables.is_empty() {
        return;
    }
    let _ = writeln!(
        h,
        "<section class=\"prediction\"><h2>Prediction against the kernel</h2>\n\
         <p class=\"sub\">The same metrics counted the same way on the simulated schedule and \
         on the real run's kernel trace; error = (simulated − real) / real.</p>"
    );
    for t in tables {
        let _ = writeln!(
            h,
            "<h3>{}</h3>\n<table class=\"prediction\" data-policy=\"{}\">\n\
             <thead><tr><th>metric</th><th>simulated</th><th>real</th><th>error</th></tr></thead><tbody>",
            esc(&t.policy),
            esc(&t.policy)
        );
        for row in &t.rows {
            let _ = writeln!(
                h,
                "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
                esc(&row[0]),
                esc(&row[1]),
                esc(&row[2]),
                esc(&row[3])
            );
        }
        let _ = writeln!(h, "</tbody></table>");
    }
    let _ = writeln!(h, "</section>");
}

fn workload_section(h: &mut String, w: &Workload) {
    let _ = writeln!(h, "<h2>Workload</h2>");
    let util = w.utilisation();
    let _ = writeln!(
        h,
        "<p>{} task{}, total utilisation {:.3} ({:.1}% of {} CPU{}); tick {} Hz; seed {}; on miss: {}.</p>",
        w.tasks.len(),
        if w.tasks.len() == 1 { "" } else { "s" },
        util,
        100.0 * util / w.platform.cpus as f64,
        w.platform.cpus,
        if w.platform.cpus == 1 { "" } else { "s" },
        w.platform.hz,
        w.seed,
        match w.on_miss {
            schedlab_model::OnMiss::Continue => "continue",
            schedlab_model::OnMiss::Abort => "abort",
        }
    );
    let _ = writeln!(
        h,
        "<table class=\"workload\"><thead><tr><th>task</th><th class=\"l\">class</th><th>runtime ms</th>\
         <th>period ms</th><th>deadline ms</th><th>offset ms</th><th>utilisation</th>\
         <th class=\"l\">behaviour</th></tr></thead><tbody>"
    );
    for (i, t) in w.tasks.iter().enumerate() {
        let periodic = t.period.is_some();
        let dash = || "-".to_string();
        let behaviour = if periodic {
            match t.release {
                schedlab_model::Release::Periodic => "periodic".to_string(),
                schedlab_model::Release::Sporadic { jitter } => {
                    format!("sporadic, jitter {} ms", ms(jitter as f64))
                }
            }
        } else if !t.phases.is_empty() {
            let parts: Vec<String> = t
                .phases
                .iter()
                .map(|p| match p {
                    schedlab_model::Phase::Run(d) => format!("run {}", ms(*d as f64)),
                    schedlab_model::Phase::Sleep(d) => {
                        format!("sleep {}", ms(*d as f64))
                    }
                })
                .collect();
            format!("{} ms, repeated", parts.join(", "))
        } else if let Some(wk) = t.work {
            format!("CPU-bound for {} ms of work", ms(wk as f64))
        } else {
            "CPU-bound".to_string()
        };
        let _ = writeln!(
            h,
            "<tr><td><span class=\"swatch\" style=\"background:{}\"></span>{}</td><td class=\"l\">{}</td>\
             <td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td></tr>",
            task_color(i),
            esc(&t.name),
            t.class.name(),
            if periodic { ms(t.runtime as f64) } else { dash() },
            t.period.map_or_else(dash, |p| ms(p as f64)),
            if periodic { ms(t.deadline as f64) } else { dash() },
            ms(t.offset as f64),
            if periodic {
                format!("{:.3}", t.utilisation())
            } else {
                dash()
            },
            esc(&behaviour)
        );
    }
    let _ = writeln!(h, "</tbody></table>");
}

/// One row of the metrics table: label, values, and whether lower is better.
struct Metric {
    label: &'static str,
    values: Vec<f64>,
    lower_better: Option<bool>,
    digits: usize,
}

fn metrics_section(h: &mut String, r: &Report) {
    let res: Vec<&SimResult> = r.runs.iter().map(|p| p.result).collect();
    let col = |f: &dyn Fn(&SimResult) -> f64| res.iter().map(|x| f(x)).collect::<Vec<f64>>();
    let rows = vec![
        Metric {
            label: "deadline misses",
            values: col(&|x| x.deadline_misses as f64),
            lower_better: Some(true),
            digits: 0,
        },
        Metric {
            label: "jobs released",
            values: col(&|x| x.jobs_released as f64),
            lower_better: None,
            digits: 0,
        },
        Metric {
            label: "jobs completed",
            values: col(&|x| x.jobs_completed as f64),
            lower_better: Some(false),
            digits: 0,
        },
        Metric {
            label: "context switches",
            values: col(&|x| x.context_switches as f64),
            lower_better: Some(true),
            digits: 0,
        },
        Metric {
            label: "switches / CPU / s",
            values: col(&|x| x.context_switches_per_cpu_per_s),
            lower_better: Some(true),
            digits: 1,
        },
        Metric {
            label: "switches / CPU / s, without idle",
            values: col(&|x| x.task_switches_per_cpu_per_s),
            lower_better: Some(true),
            digits: 1,
        },
        Metric {
            label: "preemptions",
            values: col(&|x| x.preemptions as f64),
            lower_better: Some(true),
            digits: 0,
        },
        Metric {
            label: "migrations",
            values: col(&|x| x.migrations as f64),
            lower_better: Some(true),
            digits: 0,
        },
        Metric {
            label: "laxity evaluations",
            values: col(&|x| x.laxity_evaluations as f64),
            lower_better: Some(true),
            digits: 0,
        },
        Metric {
            label: "scheduler calls",
            values: col(&|x| x.scheduler_invocations as f64),
            lower_better: Some(true),
            digits: 0,
        },
        Metric {
            label: "CBS throttles",
            values: col(&|x| x.throttles as f64),
            lower_better: None,
            digits: 0,
        },
        Metric {
            label: "worst response / deadline",
            values: r.runs.iter().map(worst_ratio).collect(),
            lower_better: Some(true),
            digits: 3,
        },
    ];
    let _ = writeln!(h, "<h2>Metrics</h2>");
    let _ = write!(h, "<table class=\"metrics\"><thead><tr><th>measure</th>");
    for (i, x) in res.iter().enumerate() {
        let _ = write!(
            h,
            "<th><span class=\"swatch\" style=\"background:{}\"></span>{}</th>",
            policy_color(i),
            esc(&x.policy)
        );
    }
    let _ = writeln!(h, "</tr></thead><tbody>");
    for m in rows {
        let best = m.lower_better.map(|lower| {
            m.values
                .iter()
                .copied()
                .fold(if lower { f64::MAX } else { f64::MIN }, |a, b| {
                    if lower {
                        a.min(b)
                    } else {
                        a.max(b)
                    }
                })
        });
        let all_equal = m.values.windows(2).all(|p| p[0] == p[1]);
        let _ = write!(h, "<tr><td>{}</td>", esc(m.label));
        for &v in &m.values {
            let mut class = "";
            if best == Some(v) && !all_equal {
                class = " class=\"best\"";
            }
            if m.label == "deadline misses" && v > 0.0 {
                class = " class=\"bad\"";
            }
            let _ = write!(h, "<td{class}>{:.*}</td>", m.digits, v);
        }
        let _ = writeln!(h, "</tr>");
    }
    let _ = writeln!(h, "</tbody></table>");
}

fn worst_ratio(run: &PolicyRun) -> f64 {
    run.schedule
        .jobs
        .iter()
        .filter(|j| j.has_deadline())
        .filter_map(|j| {
            let rel = j.deadline - j.release;
            j.response()
                .filter(|_| rel > 0)
                .map(|r| r as f64 / rel as f64)
        })
        .fold(0.0, f64::max)
}

// ----- plots --------------------------------------------------------------------------

fn plots_section(h: &mut String, r: &Report) {
    let _ = writeln!(h, "<h2>Plots</h2>\n<div class=\"grid\">");
    let names: Vec<String> = r.runs.iter().map(|p| p.result.policy.clone()).collect();
    fn misses(x: &SimResult) -> f64 {
        x.deadline_misses as f64
    }
    fn switches(x: &SimResult) -> f64 {
        x.context_switches_per_cpu_per_s
    }
    fn preemptions(x: &SimResult) -> f64 {
        x.preemptions as f64
    }
    fn migrations(x: &SimResult) -> f64 {
        x.migrations as f64
    }
    type Measure = fn(&SimResult) -> f64;
    let bars: [(&str, Measure); 4] = [
        ("Deadline misses", misses),
        ("Context switches / CPU / s", switches),
        ("Preemptions", preemptions),
        ("Migrations", migrations),
    ];
    for (title, f) in bars.iter() {
        let vals: Vec<f64> = r.runs.iter().map(|p| f(p.result)).collect();
        let _ = writeln!(
            h,
            "<figure><figcaption>{title}</figcaption>{}</figure>",
            bar_chart(&names, &vals)
        );
    }
    let _ = writeln!(h, "</div>\n<div class=\"grid2\" style=\"margin-top:14px\">");
    let _ = writeln!(
        h,
        "<figure><figcaption>Response time distribution</figcaption>{}\
         <div class=\"note\">Share of jobs (y) that completed within x × their relative deadline; \
         a curve that reaches 1 left of the dashed line met every deadline. Jobs that never \
         completed keep a curve below 1. Jobs without a deadline (fair tasks) are left out.</div></figure>",
        response_cdf(r)
    );
    let _ = writeln!(
        h,
        "<figure><figcaption>Release-to-start latency</figcaption>{}\
         <div class=\"note\">Histogram of the time from each job's release to its first run \
         (the scheduling latency of a periodic task); bars side by side per policy.</div></figure>",
        latency_histogram(r)
    );
    let _ = writeln!(h, "</div>");
}

/// Vertical bars, one per policy.
fn bar_chart(names: &[String], vals: &[f64]) -> String {
    let (w, hgt, left, bottom, top) = (300.0, 190.0, 46.0, 30.0, 18.0);
    let max = vals.iter().copied().fold(0.0, f64::max);
    let (step, ymax) = if max > 0.0 {
        let step = tick_step(max, 4.0);
        (step, (max / step).ceil().max(1.0) * step)
    } else {
        (1.0, 1.0)
    };
    let ph = hgt - top - bottom;
    let pw = w - left - 8.0;
    let mut s = format!("<svg class=\"chart bars\" viewBox=\"0 0 {w} {hgt}\" role=\"img\">");
    let mut v = 0.0;
    while v <= ymax + step * 0.01 {
        let y = top + ph * (1.0 - v / ymax);
        if max > 0.0 || v == 0.0 {
            let _ = write!(
                s,
                "<line x1=\"{left}\" x2=\"{}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#e6e9ed\"/>\
                 <text x=\"{}\" y=\"{:.1}\" font-size=\"12\" text-anchor=\"end\">{}</text>",
                w - 8.0,
                left - 5.0,
                y + 4.0,
                fmt_tick(v)
            );
        }
        v += step;
    }
    if max == 0.0 {
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"13\" text-anchor=\"middle\" fill=\"#5b6470\">none under any policy</text>",
            left + (w - 8.0 - left) / 2.0,
            top + (hgt - top - bottom) / 2.0
        );
    }
    let n = vals.len().max(1) as f64;
    let slot = pw / n;
    let bw = (slot * 0.62).min(46.0);
    for (i, (&val, name)) in vals.iter().zip(names).enumerate() {
        let x = left + slot * i as f64 + (slot - bw) / 2.0;
        let bh = ph * val / ymax;
        let y = top + ph - bh;
        let _ = write!(
            s,
            "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{bw:.1}\" height=\"{bh:.1}\" fill=\"{}\" rx=\"2\">\
             <title>{}: {}</title></rect>\
             <text x=\"{:.1}\" y=\"{:.1}\" font-size=\"12\" text-anchor=\"middle\">{}</text>\
             <text x=\"{:.1}\" y=\"{:.1}\" font-size=\"13\" text-anchor=\"middle\">{}</text>",
            policy_color(i),
            esc(name),
            fmt_tick((val * 10.0).round() / 10.0),
            x + bw / 2.0,
            y - 4.0,
            fmt_tick((val * 10.0).round() / 10.0),
            x + bw / 2.0,
            hgt - bottom + 17.0,
            esc(name)
        );
    }
    let _ = write!(
        s,
        "<line x1=\"{left}\" x2=\"{}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"#888\"/></svg>",
        w - 8.0,
        top + ph,
        top + ph
    );
    s
}

/// Frame of an x/y chart: returns (svg head with axes, x→px, y→px closures' parameters).
struct Frame {
    w: f64,
    h: f64,
    left: f64,
    right: f64,
    top: f64,
    bottom: f64,
    x0: f64,
    x1: f64,
    y1: f64,
}

impl Frame {
    fn px(&self, x: f64) -> f64 {
        self.left + (self.w - self.left - self.right) * (x - self.x0) / (self.x1 - self.x0)
    }
    fn py(&self, y: f64) -> f64 {
        self.top + (self.h - self.top - self.bottom) * (1.0 - y / self.y1)
    }
    fn axes(&self, s: &mut String, x_label: &str, y_label: &str, xstep: f64, ystep: f64) {
        let mut v = 0.0;
        while v <= self.y1 + ystep * 0.01 {
            let y = self.py(v);
            let _ = write!(
                s,
                "<line x1=\"{}\" x2=\"{}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#e6e9ed\"/>\
                 <text x=\"{}\" y=\"{:.1}\" font-size=\"10\" text-anchor=\"end\">{}</text>",
                self.left,
                self.w - self.right,
                self.left - 5.0,
                y + 3.5,
                fmt_tick(v)
            );
            v += ystep;
        }
        let mut v = (self.x0 / xstep).ceil() * xstep;
        while v <= self.x1 + xstep * 0.01 {
            let x = self.px(v);
            let _ = write!(
                s,
                "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{}\" y2=\"{}\" stroke=\"#888\"/>\
                 <text x=\"{x:.1}\" y=\"{}\" font-size=\"10\" text-anchor=\"middle\">{}</text>",
                self.h - self.bottom,
                self.h - self.bottom + 4.0,
                self.h - self.bottom + 15.0,
                fmt_tick(v)
            );
            v += xstep;
        }
        let _ = write!(
            s,
            "<line x1=\"{x0}\" x2=\"{x1}\" y1=\"{yb}\" y2=\"{yb}\" stroke=\"#888\"/>\
             <text x=\"{xm}\" y=\"{yl}\" font-size=\"11\" text-anchor=\"middle\">{xt}</text>\
             <text transform=\"translate(12 {ym}) rotate(-90)\" font-size=\"11\" text-anchor=\"middle\">{yt}</text>",
            x0 = self.left,
            x1 = self.w - self.right,
            yb = self.h - self.bottom,
            xm = (self.left + self.w - self.right) / 2.0,
            yl = self.h - 6.0,
            xt = esc(x_label),
            ym = (self.top + self.h - self.bottom) / 2.0,
            yt = esc(y_label)
        );
    }
}

fn legend_svg(s: &mut String, f: &Frame, names: &[String]) {
    for (i, n) in names.iter().enumerate() {
        let y = f.top + 4.0 + 15.0 * i as f64;
        let x = f.w - f.right + 12.0;
        let _ = write!(
            s,
            "<line x1=\"{x}\" x2=\"{}\" y1=\"{y}\" y2=\"{y}\" stroke=\"{}\" stroke-width=\"2.5\"/>\
             <text x=\"{}\" y=\"{}\" font-size=\"11\">{}</text>",
            x + 16.0,
            policy_color(i),
            x + 21.0,
            y + 4.0,
            esc(n)
        );
    }
}

/// Empirical CDF of response / relative deadline, one step curve per policy.
fn response_cdf(r: &Report) -> String {
    let names: Vec<String> = r.runs.iter().map(|p| p.result.policy.clone()).collect();
    let mut curves = Vec::new();
    let mut xmax = 1.0f64;
    for run in &r.runs {
        let with_deadline = || run.schedule.jobs.iter().filter(|j| j.has_deadline());
        let total = with_deadline().count().max(1) as f64;
        let mut v: Vec<f64> = with_deadline()
            .filter_map(|j| {
                let rel = (j.deadline - j.release).max(1);
                j.response().map(|x| x as f64 / rel as f64)
            })
            .collect();
        v.sort_by(f64::total_cmp);
        if let Some(&m) = v.last() {
            xmax = xmax.max(m);
        }
        curves.push((v, total));
    }
    let xmax = (xmax * 1.05).max(1.1);
    let f = Frame {
        w: 560.0,
        h: 280.0,
        left: 46.0,
        right: 86.0,
        top: 12.0,
        bottom: 40.0,
        x0: 0.0,
        x1: xmax,
        y1: 1.0,
    };
    let mut s = format!(
        "<svg class=\"chart cdf\" viewBox=\"0 0 {} {}\" role=\"img\">",
        f.w, f.h
    );
    f.axes(
        &mut s,
        "response time / relative deadline",
        "share of jobs",
        tick_step(xmax, 6.0),
        0.25,
    );
    let x1 = f.px(1.0);
    let _ = write!(
        s,
        "<line x1=\"{x1:.1}\" x2=\"{x1:.1}\" y1=\"{}\" y2=\"{}\" stroke=\"{MISS_COLOR}\" stroke-dasharray=\"4 3\"/>",
        f.top,
        f.h - f.bottom
    );
    for (i, (v, total)) in curves.iter().enumerate() {
        let mut pts = format!("{:.1},{:.1}", f.px(0.0), f.py(0.0));
        // At most ~600 steps per curve.
        let stride = (v.len() / 600).max(1);
        let mut k = 0;
        while k < v.len() {
            let k2 = (k + stride).min(v.len());
            let x = f.px(v[k2 - 1]);
            let _ = write!(
                pts,
                " {x:.1},{:.1} {x:.1},{:.1}",
                f.py(k as f64 / total),
                f.py(k2 as f64 / total)
            );
            k = k2;
        }
        let _ = write!(
            pts,
            " {:.1},{:.1}",
            f.px(xmax),
            f.py(v.len() as f64 / total)
        );
        let _ = write!(
            s,
            "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1.8\" points=\"{pts}\"/>",
            policy_color(i)
        );
    }
    legend_svg(&mut s, &f, &names);
    s.push_str("</svg>");
    s
}

/// Histogram of release-to-start latency (ms), one step outline per policy.
fn latency_histogram(r: &Report) -> String {
    let names: Vec<String> = r.runs.iter().map(|p| p.result.policy.clone()).collect();
    let lat: Vec<Vec<f64>> = r
        .runs
        .iter()
        .map(|run| {
            run.schedule
                .jobs
                .iter()
                .filter_map(|j| j.start.map(|s| (s - j.release) as f64 / 1e6))
                .collect()
        })
        .collect();
    let max = lat.iter().flatten().copied().fold(0.0, f64::max);
    let bins = 20usize;
    let width = if max > 0.0 { max / bins as f64 } else { 1.0 };
    let counts: Vec<Vec<usize>> = lat
        .iter()
        .map(|v| {
            let mut c = vec![0usize; bins];
            for &x in v {
                let b = ((x / width) as usize).min(bins - 1);
                c[b] += 1;
            }
            c
        })
        .collect();
    let cmax = counts.iter().flatten().copied().max().unwrap_or(1).max(1) as f64;
    let ystep = tick_step(cmax, 4.0);
    let f = Frame {
        w: 560.0,
        h: 280.0,
        left: 52.0,
        right: 86.0,
        top: 12.0,
        bottom: 40.0,
        x0: 0.0,
        x1: width * bins as f64,
        y1: (cmax / ystep).ceil() * ystep,
    };
    let mut s = format!(
        "<svg class=\"chart latency\" viewBox=\"0 0 {} {}\" role=\"img\">",
        f.w, f.h
    );
    f.axes(
        &mut s,
        "release-to-start latency (ms)",
        "jobs",
        tick_step(f.x1, 6.0),
        ystep,
    );
    // Grouped bars: within each bin one bar per policy, side by side.
    let k = counts.len().max(1) as f64;
    let bin_px = f.px(width) - f.px(0.0);
    let bar = (bin_px * 0.86 / k).max(0.5);
    for (i, c) in counts.iter().enumerate() {
        for (b, &n) in c.iter().enumerate() {
            if n == 0 {
                continue;
            }
            let x = f.px(b as f64 * width) + bin_px * 0.07 + bar * i as f64;
            let y = f.py(n as f64);
            let _ = write!(
                s,
                "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{bar:.1}\" height=\"{:.1}\" fill=\"{}\">\
                 <title>{}: {n} jobs with latency {}–{} ms</title></rect>",
                f.py(0.0) - y,
                policy_color(i),
                esc(&names[i]),
                fmt_tick(b as f64 * width),
                fmt_tick((b + 1) as f64 * width)
            );
        }
    }
    legend_svg(&mut s, &f, &names);
    s.push_str("</svg>");
    s
}

// ----- per policy ---------------------------------------------------------------------

fn policy_section(h: &mut String, run: &PolicyRun, index: usize, window: (Ns, Ns)) {
    let res = run.result;
    let _ = writeln!(
        h,
        "<section class=\"policy\" id=\"policy-{0}\" data-policy=\"{0}\">",
        esc(&res.policy)
    );
    let _ = writeln!(
        h,
        "<h2><span class=\"swatch\" style=\"background:{}\"></span>{}</h2>",
        policy_color(index),
        esc(&res.policy)
    );
    let _ = writeln!(
        h,
        "<p class=\"sub\">{} deadline miss{} · {} context switches ({:.1} per CPU per s) · {} preemptions · {} migrations</p>",
        res.deadline_misses,
        if res.deadline_misses == 1 { "" } else { "es" },
        res.context_switches,
        res.context_switches_per_cpu_per_s,
        res.preemptions,
        res.migrations
    );
    if let Some(text) = res
        .scheduler_structure
        .as_ref()
        .and_then(|s| s["text"].as_str())
    {
        let _ = writeln!(
            h,
            "<details><summary>scheduler structure</summary><pre>{}</pre></details>",
            esc(text)
        );
    }
    let _ = writeln!(
        h,
        "<h3>Schedule {} – {}</h3>",
        format_ns(window.0),
        format_ns(window.1)
    );
    h.push_str(&gantt_svg(run.schedule, window));
    // Legend of the tasks that appear in the window.
    let mut seen = vec![false; run.schedule.tasks.len()];
    for g in &run.schedule.segments {
        if g.end > window.0 && g.start < window.1 {
            seen[g.task] = true;
        }
    }
    let _ = write!(h, "<div class=\"legend\">");
    for (i, t) in run.schedule.tasks.iter().enumerate() {
        if seen[i] {
            let _ = write!(
                h,
                "<span class=\"item\" data-task=\"{i}\"><span class=\"key\" style=\"background:{};color:{}\">{}</span>{}</span>",
                task_color(i),
                text_on(i),
                letter(i),
                esc(&t.name)
            );
        }
    }
    let misses_in_window = run
        .schedule
        .jobs
        .iter()
        .any(|j| j.missed && j.deadline >= window.0 && j.deadline < window.1);
    if misses_in_window {
        let _ = write!(
            h,
            "<span><span class=\"key\" style=\"background:{MISS_COLOR};color:#fff\">▼</span>missed deadline</span>"
        );
    }
    let _ = writeln!(h, "</div>");

    let _ = writeln!(h, "<h3>Tasks</h3>");
    let _ = writeln!(
        h,
        "<table class=\"tasks\" data-policy=\"{}\"><thead><tr><th>task</th><th>jobs</th><th>completed</th>\
         <th>misses</th><th>mean resp ms</th><th>max resp ms</th><th>max tardiness ms</th>\
         <th>preemptions</th><th>migrations</th><th>cpu time ms</th></tr></thead><tbody>",
        esc(&res.policy)
    );
    for (i, t) in res.tasks.iter().enumerate() {
        let _ = writeln!(
            h,
            "<tr><td><span class=\"swatch\" style=\"background:{}\"></span>{}</td><td>{}</td><td>{}</td>\
             <td{}>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            task_color(i),
            esc(&t.name),
            t.jobs,
            t.completed,
            if t.misses > 0 { " class=\"bad\"" } else { "" },
            t.misses,
            if t.completed > 0 {
                ms(t.mean_response_ns)
            } else {
                "-".into()
            },
            if t.completed > 0 {
                ms(t.max_response_ns as f64)
            } else {
                "-".into()
            },
            ms(t.max_tardiness_ns as f64),
            t.preemptions,
            t.migrations,
            ms(t.cpu_time_ns as f64)
        );
    }
    let _ = writeln!(h, "</tbody></table>\n</section>");
}

/// The Gantt chart of `[from, to)`: one row per CPU.
pub fn gantt_svg(s: &Schedule, (from, to): (Ns, Ns)) -> String {
    let (w, left, right, top, row_h, gap, bottom) = (1100.0, 58.0, 14.0, 18.0, 30.0, 8.0, 34.0);
    let rows = s.cpus as f64;
    let hgt = top + rows * (row_h + gap) - gap + bottom;
    let pw = w - left - right;
    let span = (to - from) as f64;
    let px = |t: Ns| left + pw * (t.saturating_sub(from)) as f64 / span;
    let mut out = format!(
        "<svg class=\"gantt\" viewBox=\"0 0 {w} {hgt:.0}\" role=\"img\" data-from=\"{from}\" data-to=\"{to}\">"
    );
    // Time grid.
    let step_ms = tick_step(span / 1e6, 10.0);
    let mut v = (from as f64 / 1e6 / step_ms).ceil() * step_ms;
    let axis_y = top + rows * (row_h + gap) - gap;
    while v * 1e6 <= to as f64 + 1.0 {
        let x = left + pw * (v * 1e6 - from as f64) / span;
        let _ = write!(
            out,
            "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{}\" y2=\"{:.1}\" stroke=\"#edf0f3\"/>\
             <text x=\"{x:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"middle\">{}</text>",
            top - 4.0,
            axis_y + 4.0,
            axis_y + 17.0,
            fmt_tick(v)
        );
        v += step_ms;
    }
    let _ = write!(
        out,
        "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"middle\" fill=\"#5b6470\">time (ms)</text>",
        left + pw / 2.0,
        hgt - 3.0
    );
    for cpu in 0..s.cpus {
        let y = top + cpu as f64 * (row_h + gap);
        let _ = write!(
            out,
            "<g class=\"gantt-row\" data-cpu=\"{cpu}\"><rect x=\"{left}\" y=\"{y:.1}\" width=\"{pw:.1}\" height=\"{row_h}\" fill=\"#f5f7f9\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" font-size=\"12\" text-anchor=\"end\">CPU {cpu}</text>",
            left - 8.0,
            y + row_h / 2.0 + 4.0
        );
        for g in s.segments.iter().filter(|g| g.cpu == cpu) {
            if g.end <= from || g.start >= to {
                continue;
            }
            let (a, b) = (g.start.max(from), g.end.min(to));
            let (xa, xb) = (px(a), px(b));
            let name = &s.tasks[g.task].name;
            let _ = write!(
                out,
                "<rect class=\"run\" data-task=\"{}\" x=\"{xa:.2}\" y=\"{:.1}\" width=\"{:.2}\" height=\"{:.1}\" fill=\"{}\">\
                 <title>{} #{} on CPU {cpu}: {} – {} ms</title></rect>",
                g.task,
                y + 2.0,
                (xb - xa).max(0.4),
                row_h - 4.0,
                task_color(g.task),
                esc(name),
                g.job,
                ms(g.start as f64),
                ms(g.end as f64)
            );
            let label = if name.len() as f64 * 6.4 + 6.0 < xb - xa {
                Some(name.clone())
            } else if 14.0 < xb - xa {
                Some(letter(g.task).to_string())
            } else {
                None
            };
            if let Some(l) = label {
                let _ = write!(
                    out,
                    "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"middle\" fill=\"{}\" pointer-events=\"none\">{}</text>",
                    (xa + xb) / 2.0,
                    y + row_h / 2.0 + 4.0,
                    text_on(g.task),
                    esc(&l)
                );
            }
        }
        let _ = write!(out, "</g>");
    }
    // Missed deadlines: a red tick across the rows and a triangle on top.
    for j in s
        .jobs
        .iter()
        .filter(|j| j.missed && j.deadline >= from && j.deadline < to)
    {
        let x = px(j.deadline);
        let _ = write!(
            out,
            "<g class=\"miss\"><line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{top}\" y2=\"{axis_y:.1}\" stroke=\"{MISS_COLOR}\" stroke-width=\"1.2\" stroke-dasharray=\"3 2\"/>\
             <path d=\"M{:.1} {:.1} L{:.1} {:.1} L{x:.1} {top:.1} Z\" fill=\"{MISS_COLOR}\"/>\
             <title>{} #{} missed its deadline at {} ms</title></g>",
            x - 5.0,
            top - 8.0,
            x + 5.0,
            top - 8.0,
            esc(&s.tasks[j.task].name),
            j.job,
            ms(j.deadline as f64)
        );
    }
    out.push_str("</svg>\n");
    out
}
