//! `dp-wrap`: DP-Wrap (Levin, Funk, Sadowski, Pye & Brandt, "DP-FAIR: A Simple Model for
//! Understanding Optimal Multiprocessor Scheduling", ECRTS 2010).
//!
//! Time is cut into *slices* at every job deadline (and release): a slice begins at an
//! event and ends at the earliest deadline of the active jobs. At the start of a slice
//! each active job gets its fluid share of it (DP-Fair's rule: work `u·(tf − t0)`;
//! computed from the job's absolute fluid target, see [`super::fluid`]), and the shares
//! are laid out by McNaughton's wrap-around rule: in task order, one after the other on
//! CPU 0 from the slice's start; a share that crosses the slice's end is cut, its rest
//! put at the start of the next CPU. Every CPU then runs its list in order and idles
//! after it. A task is split at most once per slice, and its two pieces never overlap
//! (its share is at most the slice's length), so each slice costs at most m − 1
//! migrations. A job that completes before its share is used up (an execution time
//! below its WCET) leaves its CPU idle until the next piece begins.
//!
//! The layout of the current slice is the policy's *allocation* ([`DpWrap::slice`]):
//! per CPU, the pieces `(task, start, end)` of the slice.
//!
//! Differences from SimSo 0.8.5's `DP_WRAP`: SimSo reverses every CPU's list in every
//! other slice ("mirroring", which saves a context switch where a task ends one slice
//! and begins the next on the same CPU) and rounds each share up to the next cycle;
//! this implementation lays out every slice the same way, as the paper's DP-Wrap does,
//! and rounds the fluid target down (the excess of rounded-up shares is what makes
//! SimSo print "didn't allowed enough time to last task").
//!
//! A new slice begins at every job release and at the end of the slice; the slice ends
//! at the earliest deadline of the active jobs. The plan changes only at slice
//! boundaries and at the ends of pieces: `laxity_evaluations` stays 0.

use super::fluid::{self, Plan};
use crate::state::{CpuId, Ctx, TaskId};
use schedlab_model::Ns;

/// One piece of a slice: `task` runs on its CPU over `[start, end)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Piece {
    /// The task.
    pub task: TaskId,
    /// Start (absolute ns).
    pub start: Ns,
    /// End (absolute ns).
    pub end: Ns,
}

/// The current slice: `[start, end)` and each CPU's pieces in time order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Slice {
    /// Start of the slice.
    pub start: Ns,
    /// End of the slice (the earliest deadline of the active jobs).
    pub end: Ns,
    /// Per CPU: its pieces, in time order.
    pub cpus: Vec<Vec<Piece>>,
}

/// DP-Wrap's plan.
#[derive(Default)]
pub struct DpWrap {
    /// Reflect every other slice in time, as SimSo does ([`DpWrap::mirrored`]).
    mirror: bool,
    /// Slices laid out so far.
    slices: u64,
    slice: Slice,
    /// The next piece boundary or slice end after the last update.
    next: Option<Ns>,
}

impl DpWrap {
    /// SimSo's variant: every other slice (the 2nd, 4th, ...) is reflected in time, each
    /// CPU running its list backwards and idling first. Not registered (the registry's
    /// `dp-wrap` is the paper's rule); kept to check job by job against SimSo.
    pub fn mirrored() -> DpWrap {
        DpWrap {
            mirror: true,
            ..DpWrap::default()
        }
    }

    /// The current slice's allocation.
    pub fn slice(&self) -> &Slice {
        &self.slice
    }

    /// McNaughton's wrap-around of `shares` (task, share) over `ncpu` CPUs in
    /// `[start, end)`.
    pub fn wrap(shares: &[(TaskId, Ns)], ncpu: usize, start: Ns, end: Ns) -> Vec<Vec<Piece>> {
        let mut cpus = vec![Vec::new(); ncpu];
        let (mut cpu, mut pos) = (0, start);
        for &(task, share) in shares {
            let mut left = share;
            while left > 0 && cpu < ncpu {
                let piece = left.min(end - pos);
                cpus[cpu].push(Piece {
                    task,
                    start: pos,
                    end: pos + piece,
                });
                left -= piece;
                pos += piece;
                if pos == end {
                    cpu += 1;
                    pos = start;
                }
            }
        }
        // The rest of a wrapped share sits at the start of its CPU: keep time order.
        for c in &mut cpus {
            c.sort_by_key(|p| p.start);
        }
        cpus
    }

    fn new_slice(&mut self, ctx: &Ctx, wcet: &[Ns]) {
        let tasks = 0..ctx.tasks.len();
        let Some(end) = fluid::next_deadline(ctx, tasks.clone()) else {
            self.slice = Slice {
                start: ctx.now,
                end: ctx.now,
                cpus: vec![Vec::new(); ctx.cpus.len()],
            };
            return;
        };
        let active: Vec<TaskId> = tasks.filter(|&t| fluid::active(ctx, t)).collect();
        let shares = fluid::shares(ctx, wcet, &active, end);
        let mut cpus = Self::wrap(&shares, ctx.cpus.len(), ctx.now, end);
        if self.mirror && self.slices % 2 == 1 {
            for c in &mut cpus {
                for p in c.iter_mut() {
                    (p.start, p.end) = (ctx.now + end - p.end, ctx.now + end - p.start);
                }
                c.reverse();
            }
        }
        self.slices += 1;
        self.slice = Slice {
            start: ctx.now,
            end,
            cpus,
        };
    }
}

impl Plan for DpWrap {
    fn name(&self) -> &'static str {
        "dp-wrap"
    }

    fn update(&mut self, ctx: &Ctx, wcet: &[Ns], released: bool, _completed: bool) {
        if released || ctx.now >= self.slice.end {
            self.new_slice(ctx, wcet);
        }
        let now = ctx.now;
        let edges = self
            .slice
            .cpus
            .iter()
            .flatten()
            .flat_map(|p| [p.start, p.end]);
        self.next = edges.chain([self.slice.end]).filter(|&e| e > now).min();
    }

    fn slot(&self, ctx: &Ctx, cpu: CpuId) -> Option<TaskId> {
        let pieces = self.slice.cpus.get(cpu)?;
        pieces
            .iter()
            .find(|p| p.start <= ctx.now && ctx.now < p.end)
            .map(|p| p.task)
            .filter(|&t| fluid::active(ctx, t))
    }

    fn next_event(&self) -> Option<Ns> {
        self.next
    }

    /// The current slice's layout (asked at the first decision instant: the first
    /// slice): its bounds, and per CPU its pieces in time order.
    fn report(&self, _ctx: &Ctx, names: &[String]) -> Option<serde_json::Value> {
        use schedlab_model::format_ns;
        let s = &self.slice;
        let name = |t: TaskId| names.get(t).cloned().unwrap_or_default();
        let mut text = format!("slice [{}, {}):\n", format_ns(s.start), format_ns(s.end));
        let cpus: Vec<Vec<serde_json::Value>> = s
            .cpus
            .iter()
            .enumerate()
            .map(|(cpu, pieces)| {
                let shown: Vec<String> = pieces
                    .iter()
                    .map(|p| format!("{} [{}, {})", name(p.task), format_ns(p.start), format_ns(p.end)))
                    .collect();
                text += &format!("  cpu{cpu}: {}\n", shown.join(" "));
                pieces
                    .iter()
                    .map(|p| {
                        serde_json::json!({
                            "task": name(p.task),
                            "start_ns": p.start,
                            "end_ns": p.end,
                        })
                    })
                    .collect()
            })
            .collect();
        Some(serde_json::json!({
            "kind": "dp-wrap-slice",
            "start_ns": s.start,
            "end_ns": s.end,
            "cpus": cpus,
            "text": text,
        }))
    }
}

/// Its entry in the simulator: the registry policy this file's class runs, and how it is
/// built for a workload.
pub const SIM: &[crate::registry::SimPolicy] = &[crate::registry::SimPolicy {
    policy: schedlab_model::Policy::DpWrap,
    build: |w| Ok(Box::new(crate::policy::fluid::build(w, DpWrap::default())?)),
}];
