//! Progress on stderr: a one-line status that rewrites itself, shown only when stderr is a
//! terminal and `--quiet` was not given (nothing when piped, redirected or in CI), so
//! that scripts see nothing on stderr but errors.
//!
//! Three shapes: [`Progress::step`] (a status line, with the time spent so far),
//! [`Progress::item`] (`[3/8] ...` with an estimate of the time left from the items
//! done), and [`Progress::countdown`] (a real run of known length: time left, updated by
//! a thread while the caller blocks in the run).

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Set once from `--quiet` before any command runs.
static QUIET: AtomicBool = AtomicBool::new(false);

/// Turn every progress display off (`--quiet`).
pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
}

/// Whether `--quiet` was given (informational stderr lines such as `wrote FILE` are
/// left out too).
pub fn quiet() -> bool {
    QUIET.load(Ordering::Relaxed)
}

/// Real runs shorter than this get no countdown: they are over before it would help.
pub const COUNTDOWN_FROM: Duration = Duration::from_secs(2);

/// A one-line status that rewrites itself.
pub struct Progress {
    on: bool,
    start: Instant,
    /// Put before every status line (`[2/5] ` while `reproduce all` runs its second).
    prefix: std::cell::RefCell<String>,
}

impl Progress {
    /// Enabled when stderr is a terminal and `--quiet` was not given.
    pub fn new() -> Progress {
        Progress {
            on: !quiet() && std::io::stderr().is_terminal(),
            start: Instant::now(),
            prefix: Default::default(),
        }
    }

    /// Whether anything is shown (stderr is a terminal, no `--quiet`).
    pub fn on(&self) -> bool {
        self.on
    }

    /// Put `prefix` before the status lines from now on.
    pub fn set_prefix(&self, prefix: &str) {
        *self.prefix.borrow_mut() = prefix.to_string();
    }

    /// Replace the status line with `msg` and the time spent since the start.
    pub fn step(&self, msg: &str) {
        if self.on {
            show(&format!(
                "{}{msg}  [{}]",
                self.prefix.borrow(),
                seconds(self.start.elapsed().as_secs_f64())
            ));
        }
    }

    /// `[i/n] msg`, item `i` (1-based) of `n` starting now, with the time left estimated
    /// from the items already done.
    pub fn item(&self, i: usize, n: usize, msg: &str) {
        if !self.on {
            return;
        }
        let done = i.saturating_sub(1);
        let spent = self.start.elapsed().as_secs_f64();
        let left = if done == 0 {
            String::new()
        } else {
            let per = spent / done as f64;
            format!(", ~{} left", seconds(per * (n - done) as f64))
        };
        show(&format!(
            "{} {done}/{n} {msg}  [{}{left}]",
            bar(done, n),
            seconds(spent)
        ));
    }

    /// While the returned guard lives, show `label` with the time left of a run of
    /// length `total` (refreshed four times a second). Nothing for runs shorter than
    /// [`COUNTDOWN_FROM`] or when progress is off.
    pub fn countdown(&self, label: &str, total: Duration) -> Countdown {
        if !self.on || total < COUNTDOWN_FROM {
            return Countdown { stop: None };
        }
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let label = label.to_string();
        let start = Instant::now();
        let handle = std::thread::Builder::new()
            .name("progress".into())
            .spawn(move || {
                while !flag.load(Ordering::Relaxed) {
                    let t = start.elapsed().min(total);
                    let frac = t.as_secs_f64() / total.as_secs_f64();
                    show(&format!(
                        "{} {:3.0}% {label}: {} of {}, {} left",
                        bar((frac * 20.0) as usize, 20),
                        frac * 100.0,
                        seconds(t.as_secs_f64()),
                        seconds(total.as_secs_f64()),
                        seconds((total - t).as_secs_f64())
                    ));
                    std::thread::sleep(Duration::from_millis(250));
                }
            })
            .ok();
        Countdown {
            stop: handle.map(|h| (stop, h)),
        }
    }

    /// Clear the status line.
    pub fn done(&self) {
        if self.on {
            show("");
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.done();
    }
}

/// The countdown of a real run; dropping it stops the display.
pub struct Countdown {
    stop: Option<(Arc<AtomicBool>, std::thread::JoinHandle<()>)>,
}

impl Drop for Countdown {
    fn drop(&mut self) {
        if let Some((flag, handle)) = self.stop.take() {
            flag.store(true, Ordering::Relaxed);
            let _ = handle.join();
            show("");
        }
    }
}

/// Rewrite the status line (`\r`, clear line).
fn show(line: &str) {
    let mut e = std::io::stderr().lock();
    let _ = write!(e, "\r\x1b[2K{line}");
    let _ = e.flush();
}

/// `[#####.....]`: `done` of `n` as a bar of at most 20 cells.
fn bar(done: usize, n: usize) -> String {
    let cells = n.clamp(1, 20);
    let full = (done.min(n) * cells).checked_div(n).unwrap_or(0);
    format!("[{}{}]", "#".repeat(full), ".".repeat(cells - full))
}

/// `4.2s`, `1m05s`.
fn seconds(s: f64) -> String {
    if s < 60.0 {
        format!("{s:.1}s")
    } else {
        let s = s.round() as u64;
        format!("{}m{:02}s", s / 60, s % 60)
    }
}

/// Experiments report their steps here (the library knows no terminal).
impl schedlab_experiments::Progress for Progress {
    fn step(&self, msg: &str) {
        Progress::step(self, msg);
    }

    fn countdown(&self, label: &str, total: Duration) -> Box<dyn std::any::Any> {
        Box::new(Progress::countdown(self, label, total))
    }

    fn set_prefix(&self, prefix: &str) {
        Progress::set_prefix(self, prefix);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bar_fills_in_proportion() {
        assert_eq!(bar(0, 4), "[....]");
        assert_eq!(bar(2, 4), "[##..]");
        assert_eq!(bar(40, 40), "[####################]");
        assert_eq!(bar(10, 40), "[#####...............]");
        assert_eq!(bar(0, 0), "[.]");
    }

    #[test]
    fn seconds_switch_to_minutes() {
        assert_eq!(seconds(4.25), "4.2s");
        assert_eq!(seconds(65.0), "1m05s");
    }

    #[test]
    fn quiet_turns_progress_off() {
        set_quiet(true);
        assert!(!Progress::new().on());
        // A countdown while off starts no thread.
        assert!(Progress::new()
            .countdown("x", Duration::from_secs(10))
            .stop
            .is_none());
        set_quiet(false);
    }
}
