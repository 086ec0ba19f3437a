//! The policy registry: every scheduling policy schedlab knows, described once.
//!
//! [`POLICIES`] is the single source of truth for a policy's name, kernel class, one-line
//! summary, options block and real backends. Everything else is derived from it: name
//! parsing ([`Policy::parse`]), [`Policy::ALL`], the periodic policies ([`PERIODIC`], the
//! simulator's golden runs and `compare`'s default columns), the CLI's `--policy` help and
//! the runner's "can this backend run it?" answers. The simulator keeps the other half of
//! an entry, the constructor of the policy's class, in `schedlab_sim::registry`.
//!
//! Adding a policy: a variant of [`Policy`] and one entry in [`POLICIES`] here, one entry
//! in the simulator's registry, and the policy's file (docs/architecture.md).

use serde::Serialize;

/// Scheduling policies known to schedlab (see DESIGN.md "Policy names"); each has one
/// entry in [`POLICIES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Policy {
    /// Earliest deadline first (SCHED_DEADLINE's rule).
    Edf,
    /// Least laxity first.
    Llf,
    /// The seed paper's improved LLF (rules 1-4).
    Illf,
    /// EDF until zero laxity.
    Edzl,
    // SimSo's priority-driven global schedulers (issue 27).
    /// EDF-US[m/(2m−1)]: heavy tasks first, the rest by EDF.
    #[serde(rename = "edf-us")]
    EdfUs,
    /// PriD: EDF(k), the k − 1 heaviest tasks first, k chosen per set.
    Prid,
    /// Global fair lateness: EDF on priority points D − (m−1)/m·C.
    #[serde(rename = "g-fl")]
    GFl,
    /// G-FL with zero-laxity promotion (EDZL's rule on G-FL's priority points).
    #[serde(rename = "g-fl-zl")]
    GFlZl,
    // SimSo's laxity-driven global schedulers (issue 27, item 2).
    /// Modified LLF: laxity order at releases, completions and MLLF's inversion bound.
    Mllf,
    /// EDF with zero-laxity promotion evaluated at releases and completions only.
    Edcl,
    /// No virtual nodal laxity first: per-window budgets, work-conserving (optimal).
    Nvnlf,
    /// Semi-partitioned EDF: first-fit, split tasks run on top of each CPU's EDF in turn.
    Edhs,
    /// SCHED_FIFO with the tasks' priorities.
    Fifo,
    /// SCHED_RR with the tasks' priorities.
    Rr,
    /// Fixed priorities by period (rate monotonic).
    Rm,
    /// Fixed priorities by relative deadline (deadline monotonic).
    Dm,
    /// Completely fair scheduler.
    Cfs,
    /// Earliest eligible virtual deadline first.
    Eevdf,
    /// Brain Fuck Scheduler (single queue, virtual deadlines).
    Bfs,
}

/// Which kernel class a policy belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PolicyClass {
    /// The deadline class: periodic tasks are SCHED_DEADLINE-like entities.
    Deadline,
    /// The rt class: periodic tasks get fixed SCHED_FIFO/RR priorities.
    Rt,
    /// The fair class (policy for normal, batch and idle tasks).
    Fair,
    /// Replaces rt + fair for the tasks it schedules (BFS).
    Whole,
}

/// A Linux scheduling policy (`sched_attr.sched_policy`) that can run a schedlab policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchedPolicy {
    /// `SCHED_DEADLINE`.
    Deadline,
    /// `SCHED_FIFO`.
    Fifo,
    /// `SCHED_RR`.
    Rr,
    /// `SCHED_OTHER` (the host's fair class).
    Other,
}

impl SchedPolicy {
    /// The kernel's name (`SCHED_DEADLINE`, ...).
    pub fn name(self) -> &'static str {
        match self {
            SchedPolicy::Deadline => "SCHED_DEADLINE",
            SchedPolicy::Fifo => "SCHED_FIFO",
            SchedPolicy::Rr => "SCHED_RR",
            SchedPolicy::Other => "SCHED_OTHER",
        }
    }
}

/// Which real backends (`schedlab run --backend ...`) run a policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RealBackends {
    /// The kernel policy that runs it natively (`--backend kernel`), if the kernel has one.
    pub kernel: Option<SchedPolicy>,
    /// Whether the user-space dispatcher runs it (`--backend dispatcher`).
    pub dispatcher: bool,
    /// Whether one of schedlab's sched_ext BPF schedulers runs it (`--backend scx`).
    pub scx: bool,
}

impl RealBackends {
    /// Only the simulator runs it.
    const NONE: RealBackends = RealBackends {
        kernel: None,
        dispatcher: false,
        scx: false,
    };

    /// Only the kernel runs it, as `policy`.
    const fn kernel(policy: SchedPolicy) -> RealBackends {
        RealBackends {
            kernel: Some(policy),
            dispatcher: false,
            scx: false,
        }
    }
}

/// One policy's registry entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PolicyInfo {
    /// The enum value.
    pub policy: Policy,
    /// The CLI/spec name (lowercase, unique).
    pub name: &'static str,
    /// The kernel class it schedules in.
    pub class: PolicyClass,
    /// One line for `--help`.
    pub summary: &'static str,
    /// Its options block under `scheduler:` in a workload file (`llf:`, ...), if any.
    pub options: Option<&'static str>,
    /// Which real backends run it.
    pub real: RealBackends,
}

/// Number of entries of [`POLICIES`] (= number of [`Policy`] variants).
pub const POLICY_COUNT: usize = 19;

/// Every policy, periodic ones first in the order `compare` shows them.
pub const POLICIES: [PolicyInfo; POLICY_COUNT] = [
    PolicyInfo {
        policy: Policy::Edf,
        name: "edf",
        class: PolicyClass::Deadline,
        summary: "earliest deadline first (SCHED_DEADLINE's rule)",
        options: None,
        real: RealBackends {
            kernel: Some(SchedPolicy::Deadline),
            dispatcher: true,
            scx: true,
        },
    },
    PolicyInfo {
        policy: Policy::Llf,
        name: "llf",
        class: PolicyClass::Deadline,
        summary: "least laxity first (laxities at ticks, or exact crossings)",
        options: Some("llf"),
        real: RealBackends {
            kernel: None,
            dispatcher: true,
            scx: true,
        },
    },
    PolicyInfo {
        policy: Policy::Illf,
        name: "illf",
        class: PolicyClass::Deadline,
        summary: "the seed paper's improved LLF (rules 1-4)",
        options: Some("illf"),
        real: RealBackends {
            kernel: None,
            dispatcher: true,
            scx: true,
        },
    },
    PolicyInfo {
        policy: Policy::Edzl,
        name: "edzl",
        class: PolicyClass::Deadline,
        summary: "EDF until a waiting job's laxity reaches zero",
        options: Some("edzl"),
        real: RealBackends::NONE,
    },
    // SimSo's priority-driven global schedulers (issue 27).
    PolicyInfo {
        policy: Policy::EdfUs,
        name: "edf-us",
        class: PolicyClass::Deadline,
        summary: "EDF-US[m/(2m-1)]: tasks above m/(2m-1) utilisation first, then EDF (global)",
        options: None,
        real: RealBackends::NONE,
    },
    PolicyInfo {
        policy: Policy::Prid,
        name: "prid",
        class: PolicyClass::Deadline,
        summary: "PriD: EDF(k), the k-1 heaviest tasks first with the best k (global)",
        options: None,
        real: RealBackends::NONE,
    },
    PolicyInfo {
        policy: Policy::GFl,
        name: "g-fl",
        class: PolicyClass::Deadline,
        summary: "global fair lateness: EDF on priority points d - (m-1)/m*C (global)",
        options: None,
        real: RealBackends::NONE,
    },
    PolicyInfo {
        policy: Policy::GFlZl,
        name: "g-fl-zl",
        class: PolicyClass::Deadline,
        summary: "G-FL until a waiting job's laxity reaches zero (EDZL's rule; global)",
        options: None,
        real: RealBackends::NONE,
    },
    // SimSo's laxity-driven global schedulers (issue 27, item 2).
    PolicyInfo {
        policy: Policy::Mllf,
        name: "mllf",
        class: PolicyClass::Deadline,
        summary: "modified LLF: least laxity at releases/completions, bounded inversion (global)",
        options: None,
        real: RealBackends::NONE,
    },
    PolicyInfo {
        policy: Policy::Edcl,
        name: "edcl",
        class: PolicyClass::Deadline,
        summary: "EDF, zero-laxity jobs promoted at releases and completions (global)",
        options: None,
        real: RealBackends::NONE,
    },
    PolicyInfo {
        policy: Policy::Nvnlf,
        name: "nvnlf",
        class: PolicyClass::Deadline,
        summary: "no virtual nodal laxity first: per-window budgets, optimal (global)",
        options: None,
        real: RealBackends::NONE,
    },
    PolicyInfo {
        policy: Policy::Edhs,
        name: "edhs",
        class: PolicyClass::Deadline,
        summary: "semi-partitioned EDF: first-fit, tasks that fit nowhere split over CPUs (global)",
        options: None,
        real: RealBackends::NONE,
    },
    PolicyInfo {
        policy: Policy::Rm,
        name: "rm",
        class: PolicyClass::Rt,
        summary: "rate monotonic: fixed priorities by period",
        options: None,
        real: RealBackends::kernel(SchedPolicy::Fifo),
    },
    PolicyInfo {
        policy: Policy::Dm,
        name: "dm",
        class: PolicyClass::Rt,
        summary: "deadline monotonic: fixed priorities by relative deadline",
        options: None,
        real: RealBackends::kernel(SchedPolicy::Fifo),
    },
    PolicyInfo {
        policy: Policy::Fifo,
        name: "fifo",
        class: PolicyClass::Rt,
        summary: "SCHED_FIFO with the tasks' priorities",
        options: None,
        real: RealBackends::kernel(SchedPolicy::Fifo),
    },
    PolicyInfo {
        policy: Policy::Rr,
        name: "rr",
        class: PolicyClass::Rt,
        summary: "SCHED_RR with the tasks' priorities",
        options: None,
        real: RealBackends::kernel(SchedPolicy::Rr),
    },
    PolicyInfo {
        policy: Policy::Cfs,
        name: "cfs",
        class: PolicyClass::Fair,
        summary: "completely fair scheduler (fair class)",
        options: Some("cfs"),
        real: RealBackends::kernel(SchedPolicy::Other),
    },
    PolicyInfo {
        policy: Policy::Eevdf,
        name: "eevdf",
        class: PolicyClass::Fair,
        summary: "earliest eligible virtual deadline first (fair class)",
        options: Some("eevdf"),
        real: RealBackends::kernel(SchedPolicy::Other),
    },
    PolicyInfo {
        policy: Policy::Bfs,
        name: "bfs",
        class: PolicyClass::Whole,
        summary: "Brain Fuck Scheduler: one queue, virtual deadlines (replaces the fair class)",
        options: Some("bfs"),
        real: RealBackends::NONE,
    },
];

impl PolicyClass {
    /// Whether policies of this class schedule the periodic (`deadline`-class) tasks.
    pub const fn is_periodic(self) -> bool {
        matches!(self, PolicyClass::Deadline | PolicyClass::Rt)
    }
}

const fn count_periodic() -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < POLICY_COUNT {
        if POLICIES[i].class.is_periodic() {
            n += 1;
        }
        i += 1;
    }
    n
}

/// Number of periodic policies.
pub const PERIODIC_COUNT: usize = count_periodic();

/// The policies for periodic tasks (deadline and rt classes), in registry order.
pub const PERIODIC: [Policy; PERIODIC_COUNT] = {
    let mut out = [Policy::Edf; PERIODIC_COUNT];
    let (mut i, mut k) = (0, 0);
    while i < POLICY_COUNT {
        if POLICIES[i].class.is_periodic() {
            out[k] = POLICIES[i].policy;
            k += 1;
        }
        i += 1;
    }
    out
};

impl Policy {
    /// Every policy with its CLI/spec name, in registry order.
    pub const ALL: [(Policy, &'static str); POLICY_COUNT] = {
        let mut out = [(Policy::Edf, ""); POLICY_COUNT];
        let mut i = 0;
        while i < POLICY_COUNT {
            out[i] = (POLICIES[i].policy, POLICIES[i].name);
            i += 1;
        }
        out
    };

    /// Parse a policy name (case and surrounding blanks ignored); the error lists the
    /// known names.
    pub fn parse(name: &str) -> Result<Policy, String> {
        let n = name.trim().to_ascii_lowercase();
        POLICIES
            .iter()
            .find(|e| e.name == n)
            .map(|e| e.policy)
            .ok_or_else(|| {
                let known: Vec<&str> = POLICIES.iter().map(|e| e.name).collect();
                format!("unknown policy `{name}` (known: {})", known.join(", "))
            })
    }

    /// This policy's registry entry.
    pub fn info(self) -> &'static PolicyInfo {
        POLICIES
            .iter()
            .find(|e| e.policy == self)
            .expect("every Policy has a registry entry (registry tests)")
    }

    /// The CLI/spec name.
    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// The kernel class this policy schedules in.
    pub fn class(self) -> PolicyClass {
        self.info().class
    }

    /// Whether it schedules the periodic tasks (deadline or rt class), as opposed to a
    /// fair-share policy.
    pub fn is_periodic(self) -> bool {
        self.class().is_periodic()
    }
}

/// The names of the registry's policies that pass `keep`, in registry order.
pub fn names_where(keep: impl Fn(&PolicyInfo) -> bool) -> Vec<&'static str> {
    POLICIES
        .iter()
        .filter(|e| keep(e))
        .map(|e| e.name)
        .collect()
}

/// `a`, `a and b`, `a, b and c`: a list for a sentence.
pub fn and_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => one.to_string(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{inline_path, parse_spec};

    /// Every variant, through a `match` without a wildcard: a new variant does not
    /// compile until it is named here, and then the test below fails until it has an
    /// entry in [`POLICIES`]. Variants are visited in declaration order.
    fn next_variant(p: Policy) -> Option<Policy> {
        match p {
            Policy::Edf => Some(Policy::Llf),
            Policy::Llf => Some(Policy::Illf),
            Policy::Illf => Some(Policy::Edzl),
            Policy::Edzl => Some(Policy::EdfUs),
            Policy::EdfUs => Some(Policy::Prid),
            Policy::Prid => Some(Policy::GFl),
            Policy::GFl => Some(Policy::GFlZl),
            Policy::GFlZl => Some(Policy::Mllf),
            Policy::Mllf => Some(Policy::Edcl),
            Policy::Edcl => Some(Policy::Nvnlf),
            Policy::Nvnlf => Some(Policy::Edhs),
            Policy::Edhs => Some(Policy::Fifo),
            Policy::Fifo => Some(Policy::Rr),
            Policy::Rr => Some(Policy::Rm),
            Policy::Rm => Some(Policy::Dm),
            Policy::Dm => Some(Policy::Cfs),
            Policy::Cfs => Some(Policy::Eevdf),
            Policy::Eevdf => Some(Policy::Bfs),
            Policy::Bfs => None,
        }
    }

    #[test]
    fn every_policy_variant_has_exactly_one_entry() {
        let mut seen = 0;
        let mut p = Some(Policy::Edf);
        while let Some(v) = p {
            assert_eq!(v as usize, seen, "next_variant skips or reorders {v:?}");
            let n = POLICIES.iter().filter(|e| e.policy == v).count();
            assert_eq!(n, 1, "{v:?} has {n} registry entries");
            seen += 1;
            p = next_variant(v);
        }
        assert_eq!(
            seen, POLICY_COUNT,
            "POLICIES has entries for unlisted variants"
        );
    }

    #[test]
    fn names_are_unique_lowercase_and_parse_back() {
        for (i, e) in POLICIES.iter().enumerate() {
            assert_eq!(e.name, e.name.to_ascii_lowercase());
            assert!(!e.name.is_empty() && !e.name.contains([',', ' ']));
            assert!(
                POLICIES[..i].iter().all(|o| o.name != e.name),
                "{} twice",
                e.name
            );
            assert_eq!(Policy::parse(e.name), Ok(e.policy));
            assert_eq!(Policy::parse(&e.name.to_ascii_uppercase()), Ok(e.policy));
            assert_eq!(e.policy.name(), e.name);
            assert_eq!(Policy::ALL[i], (e.policy, e.name));
        }
    }

    #[test]
    fn serde_names_are_the_registry_names() {
        for e in &POLICIES {
            assert_eq!(
                serde_json::to_string(&e.policy).unwrap(),
                format!("\"{}\"", e.name)
            );
        }
    }

    #[test]
    fn periodic_policies_are_the_deadline_and_rt_entries_in_order() {
        let want: Vec<Policy> = POLICIES
            .iter()
            .filter(|e| matches!(e.class, PolicyClass::Deadline | PolicyClass::Rt))
            .map(|e| e.policy)
            .collect();
        assert_eq!(PERIODIC.to_vec(), want);
        // The order the simulator's golden file was recorded in.
        assert_eq!(
            PERIODIC.map(Policy::name),
            [
                "edf", "llf", "illf", "edzl", "edf-us", "prid", "g-fl", "g-fl-zl", "mllf", "edcl",
                "nvnlf", "edhs", "rm", "dm", "fifo", "rr"
            ]
        );
    }

    #[test]
    fn entries_are_coherent() {
        for e in &POLICIES {
            assert!(!e.summary.is_empty() && !e.summary.contains('\n'));
            if let Some(k) = e.options {
                assert!(
                    POLICIES.iter().filter(|o| o.options == Some(k)).count() == 1,
                    "{k}"
                );
            }
            // A fair-share policy is never the kernel's RT or deadline policy.
            if let Some(k) = e.real.kernel {
                assert_eq!(e.class.is_periodic(), k != SchedPolicy::Other, "{}", e.name);
            }
            // Only periodic policies go through the dispatcher or sched_ext.
            assert!(e.class.is_periodic() || !(e.real.dispatcher || e.real.scx));
        }
    }

    #[test]
    fn and_list_reads_as_english() {
        assert_eq!(and_list(&[]), "");
        assert_eq!(and_list(&["edf"]), "edf");
        assert_eq!(and_list(&["edf", "llf"]), "edf and llf");
        assert_eq!(and_list(&["edf", "llf", "illf"]), "edf, llf and illf");
    }

    /// The fields a `scheduler:` block accepts, as serde lists them for an unknown one.
    fn scheduler_fields() -> Vec<String> {
        let msg = parse_spec("scheduler: { no_such_field: 1 }\n", &inline_path())
            .unwrap_err()
            .to_string();
        let list = msg
            .split_once("expected one of")
            .unwrap_or_else(|| panic!("{msg}"))
            .1;
        list.split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn options_keys_are_exactly_the_scheduler_blocks_named_after_policies() {
        let fields = scheduler_fields();
        assert!(fields.iter().any(|f| f == "deadline"), "{fields:?}");
        for e in &POLICIES {
            match e.options {
                Some(key) => {
                    assert!(fields.iter().any(|f| f == key), "no `scheduler.{key}:`");
                    let yaml = format!(
                        "scheduler: {{ {key}: {{}} }}\ntasks:\n  - {{ name: a, runtime: 1ms, period: 10ms }}\n"
                    );
                    assert!(parse_spec(&yaml, &inline_path()).is_ok(), "{yaml}");
                }
                None => assert!(
                    !fields.iter().any(|f| f == e.name),
                    "`scheduler.{}:` exists but the registry entry has no options key",
                    e.name
                ),
            }
        }
    }
}
