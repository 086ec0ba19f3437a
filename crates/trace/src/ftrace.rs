//! ftrace text export in the style of `trace-cmd report -t` (nanosecond timestamps):
//!
//! ```text
//! cpus=2
//!           <idle>-0     [000]     0.000000000: sched_wakeup_new:     big1:1001 [-1] CPU:000
//!           <idle>-0     [000]     0.000000000: sched_switch:         swapper/0:0 [120] R ==> big1:1001 [-1]
//!             big1-1001  [000]     0.060000000: sched_switch:         big1:1001 [-1] S ==> swapper/0:0 [120]
//! ```
//!
//! One line per event, all CPUs merged in time order; `sched_switch` prints
//! `prev_comm:prev_pid [prev_prio] STATE ==> next_comm:next_pid [next_prio]` with STATE
//! `R+` for a preempted task, `S` for one that stopped (job done or budget spent) and `R`
//! for idle; `sched_wakeup` / `sched_wakeup_new` print `comm:pid [prio] CPU:target`.
//! `schedlab trace import` reads this format back.

use crate::schedule::{KernelEvent, PrevState, Schedule};
use schedlab_model::Ns;
use std::fmt::Write;

fn stamp(t: Ns) -> String {
    format!("{:>5}.{:09}", t / 1_000_000_000, t % 1_000_000_000)
}

/// Render `s` as `trace-cmd report`-style text.
pub fn render(s: &Schedule) -> String {
    let mut out = String::with_capacity(64 + 110 * (s.switches.len() + s.wakeups.len()));
    let _ = writeln!(out, "cpus={}", s.cpus);
    let name = |t: Option<usize>, cpu: usize| match t {
        Some(t) => s.tasks[t].name.clone(),
        None => format!("swapper/{cpu}"),
    };
    let head = |t: Option<usize>| match t {
        Some(t) => (s.tasks[t].name.clone(), s.tasks[t].pid),
        None => ("<idle>".to_string(), 0),
    };
    let pid = |t: Option<usize>| t.map_or(0, |t| s.tasks[t].pid);
    let prio = |t: Option<usize>| t.map_or(120, |t| s.tasks[t].prio);
    for ev in s.kernel_events() {
        let (comm, cpid) = match ev {
            KernelEvent::Wakeup { current, .. } => head(current),
            KernelEvent::Switch(x) => head(x.prev),
        };
        let _ = write!(
            out,
            "{comm:>16}-{cpid:<5} [{:03}] {}: ",
            ev.cpu(),
            stamp(ev.time())
        );
        match ev {
            KernelEvent::Wakeup { wakeup: w, .. } => {
                let t = &s.tasks[w.task];
                let event = if w.first {
                    "sched_wakeup_new:"
                } else {
                    "sched_wakeup:"
                };
                let _ = writeln!(
                    out,
                    "{event:<21} {}:{} [{}] CPU:{:03}",
                    t.name, t.pid, t.prio, w.target_cpu
                );
            }
            KernelEvent::Switch(x) => {
                let state = match (x.prev, x.prev_state) {
                    (None, _) => "R",
                    (_, PrevState::Preempted) => "R+",
                    (_, PrevState::Sleeping) => "S",
                };
                let _ = writeln!(
                    out,
                    "{:<21} {}:{} [{}] {state} ==> {}:{} [{}]",
                    "sched_switch:",
                    name(x.prev, x.cpu),
                    pid(x.prev),
                    prio(x.prev),
                    name(x.next, x.cpu),
                    pid(x.next),
                    prio(x.next)
                );
            }
        }
    }
    out
}
