//! RUN's reduction tree (Regnier, Lima, Massa, Levin & Brandt, "RUN: Optimal
//! Multiprocessor Real-Time Scheduling via Reduction to Uniprocessor", RTSS 2011), built
//! offline from the task set.
//!
//! Every task is a leaf server of rate `runtime / period`. PACK groups servers into EDF
//! servers of rate at most 1 (worst-fit decreasing, the packing the paper's evaluation
//! uses); DUAL replaces a server of rate ρ by its dual of rate 1 − ρ, which runs exactly
//! when its child does not. REDUCE = DUAL ∘ PACK is applied until every server is a *unit*
//! server (rate exactly 1): each unit server with its subtree is a proper subsystem,
//! scheduled on as many CPUs as its tasks' rates add up to.
//!
//! RUN assumes the rates add up to the number of CPUs; a set below that gets idle leaves
//! (no jobs, never picked: their parent idles instead) after the first packing: each
//! packed server is topped up to rate 1 in order while idle capacity remains, then new
//! servers hold the rest, at most 1 each (SimSo 0.8.5's `add_idle_tasks`; the paper leaves
//! the placement open). A server topped up to 1 is a subsystem on one CPU: RUN is then
//! partitioned EDF on it.
//!
//! Rates are exact fractions (u128): whether a server fits in a bin or is a unit server
//! depends on exact sums, which floating point gets wrong (0.1 + 0.2 + 0.7 ≠ 1.0). When
//! the periods make the common denominator overflow 128 bits (many unrelated periods),
//! each task's rate is rounded to the nearest multiple of 2^-60 and the tree is built
//! exactly in that arithmetic (task budgets stay the tasks' own runtimes).

use std::cmp::Ordering;
use std::fmt;

/// An exact non-negative rate `num / den`, kept reduced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    /// Numerator.
    pub num: u128,
    /// Denominator (> 0).
    pub den: u128,
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Rates whose common denominator does not fit in 128 bits.
const OVERFLOW: &str =
    "the task rates' common denominator overflows 128 bits (use periods with a smaller least common multiple)";

impl Rate {
    /// Zero.
    pub const ZERO: Rate = Rate { num: 0, den: 1 };
    /// One.
    pub const ONE: Rate = Rate { num: 1, den: 1 };

    /// `num / den` reduced; `den` must be positive.
    pub fn new(num: u128, den: u128) -> Rate {
        let g = gcd(num, den).max(1);
        Rate {
            num: num / g,
            den: den / g,
        }
    }

    /// `self + o`, or an error when the result does not fit.
    pub fn checked_add(self, o: Rate) -> Result<Rate, String> {
        let g = gcd(self.den, o.den);
        let den = (self.den / g).checked_mul(o.den).ok_or(OVERFLOW)?;
        let a = self.num.checked_mul(den / self.den).ok_or(OVERFLOW)?;
        let b = o.num.checked_mul(den / o.den).ok_or(OVERFLOW)?;
        Ok(Rate::new(a.checked_add(b).ok_or(OVERFLOW)?, den))
    }

    /// `self − o`, or an error when the result does not fit; `o` must be at most `self`.
    pub fn checked_sub(self, o: Rate) -> Result<Rate, String> {
        let g = gcd(self.den, o.den);
        let den = (self.den / g).checked_mul(o.den).ok_or(OVERFLOW)?;
        let a = self.num.checked_mul(den / self.den).ok_or(OVERFLOW)?;
        let b = o.num.checked_mul(den / o.den).ok_or(OVERFLOW)?;
        Ok(Rate::new(a - b, den))
    }

    /// `1 − self` (the dual's rate); `self` must be at most 1.
    pub fn complement(self) -> Rate {
        Rate::new(self.den - self.num, self.den)
    }

    /// Whether the rate is exactly 1.
    pub fn is_one(self) -> bool {
        self.num == self.den
    }

    /// `⌊rate × span⌋` in the span's unit (a budget in ns), exact.
    pub fn of(self, span: u64) -> u64 {
        let span = span as u128;
        // num × span may overflow for huge denominators: split span = q·den + r.
        let (q, r) = (span / self.den, span % self.den);
        let whole = q * self.num;
        let part = match r.checked_mul(self.num) {
            Some(p) => p / self.den,
            // r < den, num ≤ den: r·num/den < den; compute it in floating point only when
            // 256 bits would be needed (never with denominators below 2^64).
            None => ((r as f64) * (self.num as f64) / (self.den as f64)) as u128,
        };
        u64::try_from(whole + part).unwrap_or(u64::MAX)
    }

    fn cmp_exact(self, o: Rate) -> Ordering {
        match (self.num.checked_mul(o.den), o.num.checked_mul(self.den)) {
            (Some(a), Some(b)) => a.cmp(&b),
            _ => (self.num as f64 / self.den as f64)
                .partial_cmp(&(o.num as f64 / o.den as f64))
                .unwrap_or(Ordering::Equal),
        }
    }
}

impl PartialOrd for Rate {
    fn partial_cmp(&self, o: &Rate) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl Ord for Rate {
    fn cmp(&self, o: &Rate) -> Ordering {
        self.cmp_exact(*o)
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.den == 1 {
            write!(f, "{}", self.num)
        } else {
            write!(f, "{}/{}", self.num, self.den)
        }
    }
}

/// What a server of the tree is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// The leaf of task `index` (its position in the task list given to [`Tree::build`]).
    Task(usize),
    /// Idle capacity added to reach full utilisation: never has a job.
    Idle,
    /// An EDF server of its children (PACK).
    Pack(Vec<usize>),
    /// The dual of its child (DUAL).
    Dual(usize),
}

/// One server of the reduction tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Server {
    /// What it is.
    pub kind: Kind,
    /// Its rate.
    pub rate: Rate,
    /// Its parent, `None` for a subsystem's root.
    pub parent: Option<usize>,
}

/// A proper subsystem: a unit server and the CPUs its tasks run on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subsystem {
    /// The unit server at its root.
    pub root: usize,
    /// Its first CPU.
    pub first_cpu: usize,
    /// Its number of CPUs (the sum of its leaves' rates, idle leaves included).
    pub cpus: usize,
}

/// The reduction tree of a task set (a forest: one tree per proper subsystem).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tree {
    /// Every server; leaves first, in task order, then each level's servers.
    pub servers: Vec<Server>,
    /// The proper subsystems, in the order the reduction found them; their CPUs are
    /// consecutive from 0 in that order.
    pub subsystems: Vec<Subsystem>,
    /// Task names, for display.
    pub names: Vec<String>,
}

impl Tree {
    /// The tree of tasks `(name, runtime, period)` on `cpus` CPUs. Errors: total rate
    /// above `cpus`, a runtime above its period, a zero period, a rate overflow.
    pub fn build(tasks: &[(String, u64, u64)], cpus: usize) -> Result<Tree, String> {
        match Tree::build_with(tasks, cpus, false) {
            Err(e) if e == OVERFLOW => Tree::build_with(tasks, cpus, true),
            other => other,
        }
    }

    /// [`Tree::build`] with exact rates, or (`fixed`) with every task's rate rounded to
    /// the nearest multiple of 2^-60: then every denominator divides 2^60 and no sum
    /// overflows, whatever the periods; the tree is still exact in that arithmetic.
    fn build_with(tasks: &[(String, u64, u64)], cpus: usize, fixed: bool) -> Result<Tree, String> {
        let mut tree = Tree {
            servers: Vec::new(),
            subsystems: Vec::new(),
            names: tasks.iter().map(|t| t.0.clone()).collect(),
        };
        let mut total = Rate::ZERO;
        let mut level = Vec::new();
        for (i, (name, c, t)) in tasks.iter().enumerate() {
            if *t == 0 || c > t {
                return Err(format!(
                    "task `{name}`: runtime {c} ns must be at most its period {t} ns"
                ));
            }
            let rate = if fixed {
                let (c, t) = (*c as u128, *t as u128);
                Rate::new(((c << 60) + t / 2) / t, 1 << 60)
            } else {
                Rate::new(*c as u128, *t as u128)
            };
            total = total.checked_add(rate)?;
            level.push(tree.push(Kind::Task(i), rate));
        }
        let m = Rate::new(cpus as u128, 1);
        if total > m {
            return Err(format!(
                "the tasks' total utilisation {total} exceeds the {cpus} CPUs"
            ));
        }
        let mut servers = tree.pack(&level)?;
        tree.fill_idle(&mut servers, m, total)?;
        tree.remove_units(&mut servers)?;
        while !servers.is_empty() {
            let before = servers.len();
            let duals: Vec<usize> = servers
                .iter()
                .map(|&s| {
                    let rate = tree.servers[s].rate.complement();
                    let d = tree.push(Kind::Dual(s), rate);
                    tree.servers[s].parent = Some(d);
                    d
                })
                .collect();
            servers = tree.pack(&duals)?;
            tree.remove_units(&mut servers)?;
            if !servers.is_empty() && servers.len() >= before {
                return Err("the reduction does not converge (internal error)".into());
            }
        }
        Ok(tree)
    }

    fn push(&mut self, kind: Kind, rate: Rate) -> usize {
        self.servers.push(Server {
            kind,
            rate,
            parent: None,
        });
        self.servers.len() - 1
    }

    /// PACK, worst-fit decreasing: servers by decreasing rate (ties in order), each into
    /// the least-loaded bin if it fits there (ties: the first bin), else a new bin.
    fn pack(&mut self, servers: &[usize]) -> Result<Vec<usize>, String> {
        let mut order = servers.to_vec();
        order.sort_by(|&a, &b| self.servers[b].rate.cmp(&self.servers[a].rate));
        let mut bins: Vec<(Rate, Vec<usize>)> = Vec::new();
        for s in order {
            let r = self.servers[s].rate;
            let least = (0..bins.len()).min_by(|&a, &b| bins[a].0.cmp(&bins[b].0));
            match least {
                Some(b) if bins[b].0.checked_add(r)? <= Rate::ONE => {
                    bins[b].0 = bins[b].0.checked_add(r)?;
                    bins[b].1.push(s);
                }
                _ => bins.push((r, vec![s])),
            }
        }
        Ok(bins
            .into_iter()
            .map(|(rate, children)| {
                let p = self.push(Kind::Pack(children.clone()), rate);
                children
                    .iter()
                    .for_each(|&c| self.servers[c].parent = Some(p));
                p
            })
            .collect())
    }

    /// Idle leaves up to full utilisation (see the module documentation).
    fn fill_idle(&mut self, servers: &mut Vec<usize>, m: Rate, total: Rate) -> Result<(), String> {
        let mut idle = m.checked_sub(total)?;
        for &s in servers.iter() {
            let rate = self.servers[s].rate;
            if idle == Rate::ZERO {
                break;
            }
            if rate < Rate::ONE {
                let add = rate.complement().min(idle);
                self.add_idle(s, add)?;
                idle = idle.checked_sub(add)?;
            }
        }
        while idle > Rate::ZERO {
            let add = idle.min(Rate::ONE);
            let p = self.push(Kind::Pack(Vec::new()), Rate::ZERO);
            self.add_idle(p, add)?;
            servers.push(p);
            idle = idle.checked_sub(add)?;
        }
        Ok(())
    }

    fn add_idle(&mut self, pack: usize, rate: Rate) -> Result<(), String> {
        let leaf = self.push(Kind::Idle, rate);
        self.servers[leaf].parent = Some(pack);
        let s = &mut self.servers[pack];
        s.rate = s.rate.checked_add(rate)?;
        if let Kind::Pack(children) = &mut s.kind {
            children.push(leaf);
        }
        Ok(())
    }

    /// Unit servers become proper subsystems and leave the list.
    fn remove_units(&mut self, servers: &mut Vec<usize>) -> Result<(), String> {
        for &s in servers.iter() {
            if self.servers[s].rate.is_one() {
                let mut sum = Rate::ZERO;
                for leaf in self.leaves(s) {
                    sum = sum.checked_add(self.servers[leaf].rate)?;
                }
                if sum.den != 1 {
                    return Err(format!(
                        "a unit server's leaves add up to {sum}, not a whole number of CPUs (internal error)"
                    ));
                }
                let first_cpu = self.subsystems.iter().map(|x| x.cpus).sum();
                self.subsystems.push(Subsystem {
                    root: s,
                    first_cpu,
                    cpus: sum.num as usize,
                });
            }
        }
        servers.retain(|&s| !self.servers[s].rate.is_one());
        Ok(())
    }

    /// The leaves (task and idle) under server `s`, in tree order.
    pub fn leaves(&self, s: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut stack = vec![s];
        while let Some(x) = stack.pop() {
            match &self.servers[x].kind {
                Kind::Task(_) | Kind::Idle => out.push(x),
                Kind::Dual(c) => stack.push(*c),
                Kind::Pack(children) => stack.extend(children.iter().rev()),
            }
        }
        out
    }

    /// The server's label: `τname` for a task leaf, `idle` for idle capacity, `S<n>` for
    /// a packed server, `S<n>*` for a dual (n = its index in [`Tree::servers`]).
    pub fn label(&self, s: usize) -> String {
        match &self.servers[s].kind {
            Kind::Task(i) => self.names[*i].clone(),
            Kind::Idle => format!("idle{s}"),
            Kind::Pack(_) => format!("S{s}"),
            Kind::Dual(_) => format!("S{s}*"),
        }
    }

    fn write_server(&self, f: &mut fmt::Formatter<'_>, s: usize, indent: usize) -> fmt::Result {
        let srv = &self.servers[s];
        let what = match &srv.kind {
            Kind::Task(_) => "task",
            Kind::Idle => "idle",
            Kind::Pack(_) => "pack",
            Kind::Dual(_) => "dual",
        };
        writeln!(
            f,
            "{:indent$}{} {what} rate {}",
            "",
            self.label(s),
            srv.rate,
            indent = indent
        )?;
        match &srv.kind {
            Kind::Pack(children) => children
                .iter()
                .try_for_each(|&c| self.write_server(f, c, indent + 2)),
            Kind::Dual(c) => self.write_server(f, *c, indent + 2),
            _ => Ok(()),
        }
    }
}

/// One block per subsystem: its CPUs, then its servers as an indented tree, the root
/// first, each line `label kind rate` with the rate as an exact fraction.
impl fmt::Display for Tree {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for sub in &self.subsystems {
            let last = sub.first_cpu + sub.cpus - 1;
            if sub.cpus == 1 {
                writeln!(f, "subsystem on cpu {}:", sub.first_cpu)?;
            } else {
                writeln!(f, "subsystem on cpus {}-{last}:", sub.first_cpu)?;
            }
            self.write_server(f, sub.root, 2)?;
        }
        Ok(())
    }
}
