//! Interrupts and kernel work (docs/latency.md): device interrupts, per-CPU timer wheels
//! and their cascades, softirq work, non-preemptible kernel sections of fair tasks, and
//! CPU isolation.
//!
//! All of them reduce to one mechanism: a stretch of **kernel work** on one CPU. While it
//! lasts, the CPU takes no scheduling decision (the `need_resched` it gets is acted on
//! when the work ends, as on return from an interrupt or at `preempt_enable`), and its
//! time is charged to the task running there as `overhead_left`, like the tick cost.
//! Kernel work arriving while other work runs queues behind it (an interrupt taken at the
//! end of an interrupts-off section, or nested in a softirq: either way the CPU is back
//! to tasks after the sum). Its end is the [`EventKind::KernelEnd`] event, which marks
//! the CPU for a decision.
//!
//! Sources:
//! - a device interrupt fires every `period` (+ seeded jitter) on one CPU of its
//!   effective affinity, round-robin (a model of lowest-priority delivery / irqbalance);
//!   a per-CPU interrupt fires on each of its CPUs;
//! - the timer softirq runs at every tick on every CPU with a wheel: the pre-4.8
//!   cascading wheel (`__run_timers`: tv1 256 slots, tv2..tv5 64 each, cascade when the
//!   tv1 index wraps, recursively up) costs `a + b × moved` for a cascade that moves
//!   timers and `expiry_cost` per expired timer; the v4.8+ wheel only the expiries;
//! - a kernel section starts about every `every` (gaps uniform in [every/2, 3·every/2])
//!   on each CPU whose current task is a runnable fair task (`length`, or uniform in
//!   `[length, max_length]`).

use super::{Engine, EventKind};
use crate::result::{KernelCpuStats, KernelStats};
use crate::state::{ClassId, CpuId};
use crate::SimError;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use schedlab_model::kernel::{Irq, KernelSections, TimerWheel, Timers};
use schedlab_model::time::S;
use schedlab_model::{Ns, Workload};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// `TVR_BITS` / `TVN_BITS` of the pre-4.8 wheel.
const TVR_BITS: u32 = 8;
const TVN_BITS: u32 = 6;
const TVR_SIZE: u64 = 1 << TVR_BITS;
const TVN_MASK: u64 = (1 << TVN_BITS) - 1;
/// `MAX_TVAL` on 64-bit.
const MAX_TVAL: u64 = (1 << 32) - 1;

/// One armed timer.
#[derive(Debug, Clone, Copy)]
struct Timer {
    /// Expiry (jiffies).
    expires: u64,
    /// Timeout in jiffies (re-armed with it when periodic).
    timeout: u64,
    periodic: bool,
}

/// A per-CPU timer base.
#[derive(Debug, Default)]
struct Wheel {
    timers: Vec<Timer>,
    /// Cascading wheel: `base->timer_jiffies`, the next jiffy to process.
    timer_jiffies: u64,
    /// tv1 (256 buckets), then tv2..tv5 (64 each) as 4 × 64 buckets; timer indices.
    tv1: Vec<Vec<u32>>,
    tvn: Vec<Vec<Vec<u32>>>,
    /// Hierarchical wheel: (bucket expiry, timer) in expiry order.
    heap: BinaryHeap<Reverse<(u64, u32)>>,
    /// `LVL_DEPTH` of the hierarchical wheel (9 for HZ > 100, else 8).
    depth: u32,
    hierarchical: bool,
}

impl Wheel {
    fn new(hierarchical: bool, hz: u32) -> Wheel {
        Wheel {
            tv1: vec![Vec::new(); TVR_SIZE as usize],
            tvn: vec![vec![Vec::new(); 64]; 4],
            depth: if hz > 100 { 9 } else { 8 },
            hierarchical,
            ..Wheel::default()
        }
    }

    /// `internal_add_timer` (cascading) or `calc_wheel_index` (hierarchical), relative to
    /// the base's clock `clk`.
    fn add(&mut self, id: u32, clk: u64) {
        let expires = self.timers[id as usize].expires;
        if self.hierarchical {
            let at = self.bucket_expiry(expires, clk);
            self.heap.push(Reverse((at, id)));
            return;
        }
        let idx = expires as i64 - self.timer_jiffies as i64;
        let bucket = if idx < 0 {
            &mut self.tv1[(self.timer_jiffies & (TVR_SIZE - 1)) as usize]
        } else if (idx as u64) < TVR_SIZE {
            &mut self.tv1[(expires & (TVR_SIZE - 1)) as usize]
        } else {
            let idx = idx as u64;
            let mut level = 0;
            while level < 3 && idx >= 1 << (TVR_BITS + (level + 1) * TVN_BITS) {
                level += 1;
            }
            let e = if level == 3 && idx > MAX_TVAL {
                let e = self.timer_jiffies + MAX_TVAL;
                self.timers[id as usize].expires = e;
                e
            } else {
                expires
            };
            let slot = (e >> (TVR_BITS + level * TVN_BITS)) & TVN_MASK;
            &mut self.tvn[level as usize][slot as usize]
        };
        bucket.push(id);
    }

    /// v4.8+: the jiffy at which a timer due at `expires` fires when armed at `clk`
    /// (`calc_index` rounds up to the level's granularity, 8× coarser per level).
    fn bucket_expiry(&self, expires: u64, clk: u64) -> u64 {
        let delta = expires.saturating_sub(clk);
        let lvl_start = |n: u32| 63u64 << ((n - 1) * 3);
        let mut lvl = 0;
        while lvl + 1 < self.depth && delta >= lvl_start(lvl + 1) {
            lvl += 1;
        }
        let shift = 3 * lvl;
        // WHEEL_TIMEOUT_CUTOFF / WHEEL_TIMEOUT_MAX: longer timeouts fire at the limit.
        let cutoff = lvl_start(self.depth);
        let e = if lvl + 1 == self.depth && delta >= cutoff {
            clk + cutoff - (1 << (3 * (self.depth - 1)))
        } else {
            expires
        };
        ((e + (1 << shift)) >> shift) << shift
    }

    /// Process jiffy `now_j` (the timer softirq at that tick). Returns (timers moved by
    /// cascades, timers expired).
    fn run(&mut self, now_j: u64) -> (u64, u64) {
        let (mut moved, mut expired) = (0u64, 0u64);
        if self.hierarchical {
            while let Some(&Reverse((at, id))) = self.heap.peek() {
                if at > now_j {
                    break;
                }
                self.heap.pop();
                expired += 1;
                self.rearm(id, now_j, now_j);
            }
            return (0, expired);
        }
        while self.timer_jiffies <= now_j {
            let index = self.timer_jiffies & (TVR_SIZE - 1);
            if index == 0 {
                // Cascade tv2's next bucket into tv1; when that bucket index is 0 too,
                // tv3's into tv2, and so on (`__run_timers`).
                for level in 0..4u32 {
                    let i = (self.timer_jiffies >> (TVR_BITS + level * TVN_BITS)) & TVN_MASK;
                    let list = std::mem::take(&mut self.tvn[level as usize][i as usize]);
                    moved += list.len() as u64;
                    for id in list {
                        self.add(id, self.timer_jiffies);
                    }
                    if i != 0 {
                        break;
                    }
                }
            }
            self.timer_jiffies += 1;
            let list = std::mem::take(&mut self.tv1[index as usize]);
            expired += list.len() as u64;
            for id in list {
                self.rearm(id, now_j, self.timer_jiffies);
            }
        }
        (moved, expired)
    }

    /// A periodic timer's callback re-arms it (`mod_timer(jiffies + timeout)`).
    fn rearm(&mut self, id: u32, now_j: u64, clk: u64) {
        let t = &mut self.timers[id as usize];
        if t.periodic {
            t.expires = now_j + t.timeout;
            self.add(id, clk);
        }
    }
}

/// Runtime state of one interrupt source.
struct IrqRt {
    spec: Irq,
    /// CPUs it is delivered to.
    targets: Vec<CpuId>,
    /// Round-robin position among `targets` (device interrupts).
    next: usize,
    rng: ChaCha8Rng,
}

/// The engine's interrupt and kernel-work state.
pub(super) struct KernelState {
    /// Per CPU: end of the kernel work in progress (≤ now: none).
    busy_until: Vec<Ns>,
    irqs: Vec<IrqRt>,
    /// Per CPU (empty without `platform.timers`).
    wheels: Vec<Wheel>,
    /// Timers registered during the run: (jiffy of registration, CPU, timer with its
    /// expiry relative to that jiffy), in registration order.
    pending: VecDeque<(u64, CpuId, Timer)>,
    timers: Option<Timers>,
    sections: Option<KernelSections>,
    section_rng: ChaCha8Rng,
    tick_ns: Ns,
    /// Ticks so far (jiffies).
    jiffies: u64,
    stats: Vec<KernelCpuStats>,
    enabled: bool,
}

impl KernelState {
    /// Build the sources of `w`'s platform. Kernel work needs per-CPU run queues (a CPU
    /// in an interrupt cannot take part in a global decision).
    pub(super) fn new(w: &Workload, class_global: &[bool; 3]) -> Result<KernelState, SimError> {
        let p = &w.platform;
        let ncpu = p.cpus;
        let enabled = p.has_kernel_work();
        if enabled && class_global.iter().any(|&g| g) {
            return Err(SimError::Unsupported(
                "interrupts, timers and kernel sections are simulated with per-CPU run queues \
                 only (placement linux or partitioned, fair policy cfs or eevdf)"
                    .into(),
            ));
        }
        let tick_ns = if p.hz == 0 { 0 } else { S / p.hz as u64 };
        let irqs = p
            .irqs
            .iter()
            .enumerate()
            .map(|(i, q)| IrqRt {
                targets: q.effective_cpus(&p.isolated),
                spec: q.clone(),
                next: 0,
                rng: ChaCha8Rng::seed_from_u64(w.seed ^ 0x1A2B_0000 ^ i as u64),
            })
            .collect();
        let mut wheels = Vec::new();
        let mut pending = Vec::new();
        if let Some(t) = &p.timers {
            let hier = t.wheel == TimerWheel::Hierarchical;
            wheels = (0..ncpu).map(|_| Wheel::new(hier, p.hz)).collect();
            let housekeeping: Vec<CpuId> = (0..ncpu).filter(|c| !p.isolated.contains(c)).collect();
            let mut rr = 0usize;
            for (gi, g) in t.groups.iter().enumerate() {
                let mut rng = ChaCha8Rng::seed_from_u64(w.seed ^ 0x7133_0000 ^ gi as u64);
                // Seed 003's technique: timers of an isolated CPU armed at the start are
                // moved to the housekeeping CPUs (`migrate`), and those registered later
                // are registered there instead (`forbid_new`).
                let moved = if g.offset == 0 {
                    t.migrate
                } else {
                    t.forbid_new
                };
                for &cpu in &g.cpus {
                    for _ in 0..g.count {
                        let target = if moved && p.isolated.contains(&cpu) {
                            rr += 1;
                            housekeeping[(rr - 1) % housekeeping.len()]
                        } else {
                            cpu
                        };
                        let ns = g.timeout
                            + if g.spread > 0 {
                                rng.random_range(0..=g.spread)
                            } else {
                                0
                            };
                        let timeout = ns.div_ceil(tick_ns).max(1);
                        if g.offset > 0 {
                            let at = g.offset.div_ceil(tick_ns);
                            let timer = Timer {
                                expires: timeout,
                                timeout,
                                periodic: g.periodic,
                            };
                            pending.push((at, target, timer));
                            continue;
                        }
                        // A periodic timer is in its steady state at the start (next expiry
                        // anywhere in its period); a one-shot timer was armed at the start.
                        let expires = if g.periodic {
                            rng.random_range(1..=timeout)
                        } else {
                            timeout
                        };
                        let wh = &mut wheels[target];
                        wh.timers.push(Timer {
                            expires,
                            timeout,
                            periodic: g.periodic,
                        });
                        let id = (wh.timers.len() - 1) as u32;
                        wh.add(id, 0);
                    }
                }
            }
        }
        // Stable: equal instants keep the groups' order.
        pending.sort_by_key(|p| p.0);
        Ok(KernelState {
            busy_until: vec![0; ncpu],
            irqs,
            wheels,
            pending: pending.into(),
            timers: p.timers.clone(),
            sections: p.kernel_sections,
            section_rng: ChaCha8Rng::seed_from_u64(w.seed ^ 0x5EC7_0000),
            tick_ns,
            jiffies: 0,
            stats: (0..ncpu)
                .map(|cpu| KernelCpuStats {
                    cpu,
                    ..KernelCpuStats::default()
                })
                .collect(),
            enabled,
        })
    }

    /// Whether `cpu` is in interrupt or kernel work at `now` (decisions wait).
    pub(super) fn blocked(&self, cpu: CpuId, now: Ns) -> bool {
        self.busy_until[cpu] > now
    }

    /// When the kernel work on `cpu` ends (in the past when there is none).
    /// Whether some CPU has a timer wheel (run from the tick).
    pub(super) fn has_timer_wheels(&self) -> bool {
        !self.wheels.is_empty()
    }

    pub(super) fn busy_until(&self, cpu: CpuId) -> Ns {
        self.busy_until[cpu]
    }
}

impl Engine {
    /// Queue the first event of every interrupt source and kernel-section generator.
    pub(super) fn start_kernel_sources(&mut self) {
        for src in 0..self.kernel.irqs.len() {
            let at = self.kernel.irqs[src].spec.offset;
            if at < self.duration {
                self.push(at, EventKind::Irq { src: src as u32 });
            }
        }
        if let Some(ks) = self.kernel.sections {
            let n = self.cpus.len() as u64;
            for cpu in 0..self.cpus.len() {
                // Staggered over the CPUs so that they do not all enter at once.
                let at = ks.every + ks.every * cpu as u64 / n;
                if at < self.duration {
                    self.push(at, EventKind::Section { cpu: cpu as u32 });
                }
            }
        }
    }

    /// `len` ns of kernel work on `cpu` from now (behind any work in progress), charged
    /// to the task running there.
    fn kernel_work(&mut self, cpu: CpuId, len: Ns) -> Ns {
        if len == 0 {
            return 0;
        }
        let start = self.kernel.busy_until[cpu].max(self.now);
        let end = start + len;
        self.kernel.busy_until[cpu] = end;
        self.sync(cpu);
        let c = &mut self.cpus[cpu];
        if c.curr.is_some() {
            c.overhead_left += len;
            self.force_rearm(cpu); // the completion moved
        }
        let st = &mut self.kernel.stats[cpu];
        st.longest_block_ns = st.longest_block_ns.max(end - self.now);
        self.push(end, EventKind::KernelEnd { cpu: cpu as u32 });
        len
    }

    /// A device (or per-CPU) interrupt fires.
    pub(super) fn irq(&mut self, src: usize) {
        let now = self.now;
        let q = &mut self.kernel.irqs[src];
        let mut gap = q.spec.period;
        if q.spec.jitter > 0 {
            gap += q.rng.random_range(0..=q.spec.jitter);
        }
        if let Some(next) = now.checked_add(gap) {
            if next < self.duration {
                self.push(next, EventKind::Irq { src: src as u32 });
            }
        }
        let q = &mut self.kernel.irqs[src];
        let len = q.spec.handler + q.spec.softirq;
        let cpus: Vec<CpuId> = if q.spec.per_cpu {
            q.targets.clone()
        } else {
            let c = q.targets[q.next % q.targets.len()];
            q.next = (q.next + 1) % q.targets.len();
            vec![c]
        };
        for cpu in cpus {
            let n = self.kernel_work(cpu, len);
            let st = &mut self.kernel.stats[cpu];
            st.irqs += 1;
            st.irq_ns += n;
        }
    }

    /// A CPU's kernel-section instant: a running fair task enters a non-preemptible
    /// section.
    pub(super) fn kernel_section(&mut self, cpu: CpuId) {
        let Some(ks) = self.kernel.sections else {
            return;
        };
        // Sections come at irregular instants (system calls of the running task), every
        // `every` on average: the gap is uniform in [every/2, 3·every/2], seeded.
        let gap = self
            .kernel
            .section_rng
            .random_range(ks.every / 2..=ks.every + ks.every / 2);
        let next = self.now + gap.max(1);
        if next < self.duration {
            self.push(next, EventKind::Section { cpu: cpu as u32 });
        }
        let fair_running = self.cpus[cpu]
            .curr
            .is_some_and(|t| self.tasks[t].runnable && self.tasks[t].class == ClassId::Fair);
        if !fair_running {
            return;
        }
        let len = if ks.max_length > ks.length {
            self.kernel
                .section_rng
                .random_range(ks.length..=ks.max_length)
        } else {
            ks.length
        };
        let n = self.kernel_work(cpu, len);
        let st = &mut self.kernel.stats[cpu];
        st.sections += 1;
        st.section_ns += n;
    }

    /// The timer softirq of this tick on every CPU with a wheel.
    pub(super) fn timer_softirq(&mut self) {
        if self.kernel.wheels.is_empty() {
            return;
        }
        self.kernel.jiffies = self.now / self.kernel.tick_ns.max(1);
        let j = self.kernel.jiffies;
        let (a, b, c) = match &self.kernel.timers {
            Some(t) => (t.cascade_cost, t.cascade_per_timer, t.expiry_cost),
            None => return,
        };
        // Timers registered at this tick (`mod_timer` from a running task).
        while self.kernel.pending.front().is_some_and(|p| p.0 <= j) {
            let Some((_, cpu, mut timer)) = self.kernel.pending.pop_front() else {
                break;
            };
            timer.expires += j;
            let wh = &mut self.kernel.wheels[cpu];
            wh.timers.push(timer);
            let id = (wh.timers.len() - 1) as u32;
            wh.add(id, j);
        }
        for cpu in 0..self.kernel.wheels.len() {
            let (moved, expired) = self.kernel.wheels[cpu].run(j);
            let cascade = if moved > 0 { a + b * moved } else { 0 };
            let len = cascade + c * expired;
            self.kernel_work(cpu, len);
            let st = &mut self.kernel.stats[cpu];
            if moved > 0 {
                st.cascades += 1;
                st.timers_moved += moved;
                if cascade > st.largest_cascade_ns {
                    st.largest_cascade_ns = cascade;
                    st.largest_cascade_timers = moved;
                    st.largest_cascade_at_ns = self.now;
                }
            }
            st.timer_expiries += expired;
            st.timer_ns += len;
        }
    }

    /// Kernel work on `cpu` ended: the CPU decides what it runs now.
    pub(super) fn kernel_end(&mut self, cpu: CpuId) {
        if self.kernel.busy_until[cpu] == self.now {
            self.mark_dirty(cpu);
        }
    }

    /// Per-CPU kernel-work figures (None when the platform has none).
    pub(super) fn kernel_stats(&self) -> Option<KernelStats> {
        self.kernel.enabled.then(|| KernelStats {
            per_cpu: self
                .kernel
                .stats
                .iter()
                .cloned()
                .map(|mut s| {
                    s.timers_armed = self.kernel.wheels.get(s.cpu).map_or(0, |w| {
                        w.timers
                            .iter()
                            .filter(|t| t.periodic || t.expires > self.kernel.jiffies)
                            .count() as u64
                    });
                    s
                })
                .collect(),
        })
    }
}
