//! The policy registry: every scheduling policy schedlab knows, described once.
//!
//! [`POLICIES`] is the single source of truth for a policy's name, kernel class, one-line
//! summary, options, default-column flag and real backends; the [`Policy`] enum is
//! written from the same list. Everything else is derived from it: name parsing
//! ([`Policy::parse`]), [`Policy::ALL`], the periodic policies ([`PERIODIC`], the
//! simulator's golden runs), `compare`'s default columns ([`DEFAULT_COLUMNS`]), the
//! `scheduler.<name>:` blocks ([`crate::options`]), the CLI's `--policy` help and the
//! runner's "can this backend run it?" answers. The simulator finds a policy's class in
//! the policy's own file (`schedlab_sim::policy`), which names the variant it builds.
//!
//! Adding a policy: its file in the simulator and one entry here (docs/architecture.md).

use crate::options::{OptionDecl, OptionKind, OptionsCheck, PolicyOptions};
use serde::Serialize;

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
#[derive(Debug, Clone, Copy)]
pub struct PolicyInfo {
    /// The enum value.
    pub policy: Policy,
    /// The CLI/spec name (lowercase, unique).
    pub name: &'static str,
    /// The kernel class it schedules in.
    pub class: PolicyClass,
    /// One line for `--help`.
    pub summary: &'static str,
    /// The options of its `scheduler.<name>:` block (none: the block does not exist),
    /// parsed, validated and documented from here ([`crate::options`]); its class reads
    /// them from [`crate::workload::Scheduler::options_of`].
    pub options: &'static [OptionDecl],
    /// A rule across its options, checked once each is valid.
    pub check: Option<OptionsCheck>,
    /// Whether `compare` and `report` show it when `--policies` is not given (periodic
    /// policies only; the others are opt-in).
    pub default_column: bool,
    /// Which real backends run it.
    pub real: RealBackends,
}

/// What an entry does not say: no options, no default column, no real backend.
const DEFAULTS: PolicyInfo = PolicyInfo {
    policy: Policy::Edf,
    name: "",
    class: PolicyClass::Deadline,
    summary: "",
    options: &[],
    check: None,
    default_column: false,
    real: RealBackends::NONE,
};

/// Writes the [`Policy`] enum and [`POLICIES`] from one list: each entry is a variant
/// with its doc comment and the fields of its [`PolicyInfo`] that differ from
/// [`DEFAULTS`].
macro_rules! registry {
    ($( $(#[$doc:meta])* $variant:ident { $($field:ident: $value:expr),* $(,)? } )*) => {
        /// Scheduling policies known to schedlab (see DESIGN.md "Policy names"), in
        /// registry order; each is one entry of [`POLICIES`].
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, PartialOrd, Ord)]
        #[serde(rename_all = "lowercase")]
        pub enum Policy {
            $( $(#[$doc])* $variant, )*
        }

        /// Number of entries of [`POLICIES`] (= number of [`Policy`] variants).
        pub const POLICY_COUNT: usize = [$(Policy::$variant),*].len();

        /// Every policy, periodic ones first in the order `compare` shows them.
        pub const POLICIES: [PolicyInfo; POLICY_COUNT] = [$(
            PolicyInfo { policy: Policy::$variant, $($field: $value,)* ..DEFAULTS }
        ),*];
    };
}

/// `mode: tick | exact`, the zero-laxity detection of llf, illf and edzl.
const fn mode(doc: &'static str) -> OptionDecl {
    OptionDecl {
        name: "mode",
        kind: OptionKind::Enum {
            values: &["tick", "exact"],
            noun: "mode",
        },
        doc,
    }
}

registry! {
    /// Earliest deadline first (SCHED_DEADLINE's rule).
    Edf {
        name: "edf",
        summary: "earliest deadline first (SCHED_DEADLINE's rule)",
        default_column: true,
        real: RealBackends {
            kernel: Some(SchedPolicy::Deadline),
            dispatcher: true,
            scx: true,
        },
    }
    /// Least laxity first.
    Llf {
        name: "llf",
        summary: "least laxity first (laxities at ticks, or exact crossings)",
        options: &[
            mode("`tick`: laxities re-evaluated at every tick (as a kernel would); `exact`: decisions at the instants laxities cross, with no quantum (needs `linux` or `partitioned` placement)"),
            OptionDecl {
                name: "tie",
                kind: OptionKind::Enum { values: &["lrs", "fifo"], noun: "tie-break" },
                doc: "among equal laxities (tick mode): least recently scheduled, or queueing order",
            },
        ],
        default_column: true,
        real: RealBackends {
            kernel: None,
            dispatcher: true,
            scx: true,
        },
    }
    /// The seed paper's improved LLF (rules 1-4).
    Illf {
        name: "illf",
        summary: "the seed paper's improved LLF (rules 1-4)",
        options: &[
            OptionDecl {
                name: "rules",
                kind: OptionKind::IntSet {
                    min: 1,
                    max: 4,
                    member: "rule",
                    why: "the paper has rules 1-4",
                },
                doc: "the paper's rules in force (1 and 2 go together); e.g. `[1, 2, 3]` for ablation",
            },
            OptionDecl {
                name: "swap_at",
                kind: OptionKind::Enum { values: &["every-pick", "activation"], noun: "value" },
                doc: "when rule 4 (the swap) applies: at activations and every pick after a completion, as Algorithm 2 is called, or only at activations (the paper's narrative of example E2)",
            },
            OptionDecl {
                name: "strict",
                kind: OptionKind::Bool { default: false },
                doc: "the prose's strict `R_q < S_k` instead of Algorithm 2's `S_k >= R_q`",
            },
            mode("`tick`: a waiting task's zero laxity is seen at the first tick at or after it (rule 2, the paper's kernel); `exact`: at the instant it is reached (needs rule 3; the real runner's dispatcher refuses it)"),
        ],
        check: Some(illf_rules_agree),
        default_column: true,
        real: RealBackends {
            kernel: None,
            dispatcher: true,
            scx: true,
        },
    }
    /// EDF until zero laxity.
    Edzl {
        name: "edzl",
        summary: "EDF until a waiting job's laxity reaches zero",
        options: &[mode("`tick`: zero laxity seen when a job is queued and at ticks (as a kernel would); `exact`: at the instant it is reached")],
        default_column: true,
    }
    // Quantum-based (Pfair and boundary-fair) schedulers: they decide at platform.quantum.
    /// PD² (Pfair, Anderson & Srinivasan).
    Pd2 {
        name: "pd2",
        summary: "PD2 Pfair: per quantum, earliest pseudo-deadline, b-bit, group deadline",
    }
    /// PD² with early release (ERfair).
    #[serde(rename = "er-pd2")]
    ErPd2 {
        name: "er-pd2",
        summary: "PD2 with early release (ERfair): no quantum idles while a job has work",
    }
    /// Earliest pseudo-deadline first (Pfair).
    Epdf {
        name: "epdf",
        summary: "earliest pseudo-deadline first (Pfair, per quantum)",
    }
    /// Boundary fair (Zhu, Mossé & Melhem).
    Bf {
        name: "bf",
        summary: "boundary fair: quanta allotted at period boundaries (Zhu, Mosse & Melhem)",
    }
    // Server-based optimal schedulers: RUN's reduction tree, U-EDF's allotments.
    /// RUN: reduction to uniprocessor, EDF on a tree of servers (optimal)
    Run {
        name: "run",
        summary: "RUN: reduction to uniprocessor, EDF on a tree of servers (optimal)",
    }
    /// U-EDF: EDF on per-processor allotments computed at releases (optimal)
    #[serde(rename = "u-edf")]
    UEdf {
        name: "u-edf",
        summary: "U-EDF: EDF on per-processor allotments computed at releases (optimal)",
    }
    // Fluid / boundary schedulers (on the shared fluid.rs): DP-Wrap, LLREF, LRE-TL.
    /// DP-Wrap: fluid shares wrapped over the CPUs in every slice between deadlines
    #[serde(rename = "dp-wrap")]
    DpWrap {
        name: "dp-wrap",
        summary: "DP-Wrap: fluid shares wrapped over the CPUs in every slice between deadlines",
    }
    /// LLREF: largest local remaining execution first, in TL-planes
    Llref {
        name: "llref",
        summary: "LLREF: largest local remaining execution first, in TL-planes",
    }
    /// LRE-TL: TL-planes with a swap only where a local budget or laxity runs out
    #[serde(rename = "lre-tl")]
    LreTl {
        name: "lre-tl",
        summary: "LRE-TL: TL-planes with a swap only where a local budget or laxity runs out",
    }
    // Priority-driven global schedulers (sharing job_prio.rs).
    /// EDF-US[m/(2m-1)]: tasks above m/(2m-1) utilisation first, then EDF (global)
    #[serde(rename = "edf-us")]
    EdfUs {
        name: "edf-us",
        summary: "EDF-US[m/(2m-1)]: tasks above m/(2m-1) utilisation first, then EDF (global)",
    }
    /// PriD: EDF(k), the k-1 heaviest tasks first with the best k (global)
    Prid {
        name: "prid",
        summary: "PriD: EDF(k), the k-1 heaviest tasks first with the best k (global)",
    }
    /// global fair lateness: EDF on priority points d - (m-1)/m*C (global)
    #[serde(rename = "g-fl")]
    GFl {
        name: "g-fl",
        summary: "global fair lateness: EDF on priority points d - (m-1)/m*C (global)",
    }
    /// G-FL until a waiting job's laxity reaches zero (EDZL's rule; global)
    #[serde(rename = "g-fl-zl")]
    GFlZl {
        name: "g-fl-zl",
        summary: "G-FL until a waiting job's laxity reaches zero (EDZL's rule; global)",
    }
    // Laxity-driven global schedulers (rules as in SimSo 0.8.5).
    /// modified LLF: least laxity at releases/completions, bounded inversion (global)
    Mllf {
        name: "mllf",
        summary: "modified LLF: least laxity at releases/completions, bounded inversion (global)",
    }
    /// EDF, zero-laxity jobs promoted at releases and completions (global)
    Edcl {
        name: "edcl",
        summary: "EDF, zero-laxity jobs promoted at releases and completions (global)",
    }
    /// no virtual nodal laxity first: per-window budgets, optimal (global)
    Nvnlf {
        name: "nvnlf",
        summary: "no virtual nodal laxity first: per-window budgets, optimal (global)",
    }
    /// semi-partitioned EDF: first-fit, tasks that fit nowhere split over CPUs (global)
    Edhs {
        name: "edhs",
        summary: "semi-partitioned EDF: first-fit, tasks that fit nowhere split over CPUs (global)",
    }
    /// EKG: next-fit in groups of k CPUs, split tasks in slots between deadlines (global)
    Ekg {
        name: "ekg",
        summary: "EKG: next fit in groups of k CPUs, split tasks run in slots between deadlines (k = m: optimal; global)",
        options: &[OptionDecl {
            name: "k",
            kind: OptionKind::Int { default: 0, min: 0, max: crate::limits::MAX_CPUS as i64 },
            doc: "CPUs per group, 1..m (platform.cpus, checked when the simulation is built); `0` or absent: m, the optimal setting",
        }],
    }
    /// Fixed priorities by period (rate monotonic).
    Rm {
        name: "rm",
        class: PolicyClass::Rt,
        summary: "rate monotonic: fixed priorities by period",
        default_column: true,
        real: RealBackends::kernel(SchedPolicy::Fifo),
    }
    /// Fixed priorities by relative deadline (deadline monotonic).
    Dm {
        name: "dm",
        class: PolicyClass::Rt,
        summary: "deadline monotonic: fixed priorities by relative deadline",
        default_column: true,
        real: RealBackends::kernel(SchedPolicy::Fifo),
    }
    /// SCHED_FIFO with the tasks' priorities.
    Fifo {
        name: "fifo",
        class: PolicyClass::Rt,
        summary: "SCHED_FIFO with the tasks' priorities",
        default_column: true,
        real: RealBackends::kernel(SchedPolicy::Fifo),
    }
    /// SCHED_RR with the tasks' priorities.
    Rr {
        name: "rr",
        class: PolicyClass::Rt,
        summary: "SCHED_RR with the tasks' priorities",
        default_column: true,
        real: RealBackends::kernel(SchedPolicy::Rr),
    }
    /// Completely fair scheduler.
    Cfs {
        name: "cfs",
        class: PolicyClass::Fair,
        summary: "completely fair scheduler (fair class)",
        real: RealBackends::kernel(SchedPolicy::Other),
    }
    /// Earliest eligible virtual deadline first.
    Eevdf {
        name: "eevdf",
        class: PolicyClass::Fair,
        summary: "earliest eligible virtual deadline first (fair class)",
        real: RealBackends::kernel(SchedPolicy::Other),
    }
    /// Brain Fuck Scheduler (single queue, virtual deadlines).
    Bfs {
        name: "bfs",
        class: PolicyClass::Whole,
        summary: "Brain Fuck Scheduler: one queue, virtual deadlines (replaces the fair class)",
    }
}

/// ILLF's rules 1 and 2 replace per-tick refreshes together, and exact mode acts on
/// rule 3's zero laxity.
fn illf_rules_agree(o: &PolicyOptions) -> Result<(), (&'static str, String)> {
    let rules = o.int_set("rules");
    if rules.contains(&1) != rules.contains(&2) {
        return Err((
            "rules",
            "rules 1 and 2 go together (together they replace per-tick refreshes of every laxity)"
                .into(),
        ));
    }
    if o.word("mode") == "exact" && !rules.contains(&3) {
        return Err(("mode", "`exact` acts at the instant rule 3's zero laxity is reached, so it needs rule 3 in scheduler.illf.rules (without it ILLF preempts at laxity crossings, which have no tick-free form that does not thrash)".into()));
    }
    Ok(())
}

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

const fn count_default_columns() -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < POLICY_COUNT {
        if POLICIES[i].default_column {
            n += 1;
        }
        i += 1;
    }
    n
}

/// Number of default columns.
pub const DEFAULT_COLUMN_COUNT: usize = count_default_columns();

/// The policies `compare` and `report` show when `--policies` is not given: the entries
/// with `default_column`, in registry order. A new policy is opt-in (`--policies`).
pub const DEFAULT_COLUMNS: [Policy; DEFAULT_COLUMN_COUNT] = {
    let mut out = [Policy::Edf; DEFAULT_COLUMN_COUNT];
    let (mut i, mut k) = (0, 0);
    while i < POLICY_COUNT {
        if POLICIES[i].default_column {
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

    #[test]
    fn the_enum_and_the_entries_are_one_list() {
        for (i, e) in POLICIES.iter().enumerate() {
            assert_eq!(e.policy as usize, i, "{} out of place", e.name);
        }
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
        // The order the simulator's golden file was recorded in (policies added since
        // come between them, in registry order).
        let classic = ["edf", "llf", "illf", "edzl", "rm", "dm", "fifo", "rr"];
        let names: Vec<&str> = PERIODIC
            .iter()
            .map(|p| p.name())
            .filter(|n| classic.contains(n))
            .collect();
        assert_eq!(names, classic);
    }

    #[test]
    fn entries_are_coherent() {
        for e in &POLICIES {
            assert!(!e.summary.is_empty() && !e.summary.contains('\n'));
            assert!(!e.name.is_empty(), "an entry without a name");
            for (i, d) in e.options.iter().enumerate() {
                assert!(
                    e.options[..i].iter().all(|o| o.name != d.name),
                    "scheduler.{}.{} twice",
                    e.name,
                    d.name
                );
                assert_eq!(d.name, d.name.to_ascii_lowercase());
                assert!(
                    !d.doc.is_empty() && !d.doc.contains(['|', '\n']),
                    "{}",
                    d.name
                );
                if let OptionKind::Enum { values, .. } = d.kind {
                    assert!(!values.is_empty(), "{}.{} has no values", e.name, d.name);
                }
            }
            assert!(e.check.is_none() || !e.options.is_empty(), "{}", e.name);
            // Defaults pass the entry's own validation.
            crate::options::resolve(e.name, e.options, e.check, None)
                .unwrap_or_else(|m| panic!("{} defaults: {m}", e.name));
            // Only periodic policies are columns of `compare`.
            assert!(e.class.is_periodic() || !e.default_column, "{}", e.name);
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
            let has_block = !e.options.is_empty() || crate::spec::TYPED_BLOCKS.contains(&e.name);
            if has_block {
                let key = e.name;
                assert!(fields.iter().any(|f| f == key), "no `scheduler.{key}:`");
                let yaml = format!(
                    "scheduler: {{ {key}: {{}} }}\ntasks:\n  - {{ name: a, runtime: 1ms, period: 10ms }}\n"
                );
                assert!(parse_spec(&yaml, &inline_path()).is_ok(), "{yaml}");
            } else {
                assert!(
                    !fields.iter().any(|f| f == e.name),
                    "`scheduler.{}:` exists but the registry entry declares no options",
                    e.name
                );
            }
        }
    }

    /// docs/format.md documents each declared block with the table derived from its
    /// declarations, under a heading naming the block.
    #[test]
    fn format_md_has_the_derived_table_of_every_options_block() {
        let doc = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/format.md"),
        )
        .unwrap();
        let mut missing = Vec::new();
        for e in POLICIES.iter().filter(|e| !e.options.is_empty()) {
            let heading = format!("### `scheduler.{}:`", e.name);
            let table = crate::options::options_table(e.options);
            match doc.split_once(&heading) {
                None => missing.push(format!("no section {heading}, with the table\n{table}")),
                Some((_, rest)) => {
                    let section = rest.split("\n#").next().unwrap_or(rest);
                    if !section.contains(&table) {
                        missing.push(format!("{heading}: the table should read\n{table}"));
                    }
                }
            }
        }
        assert!(
            missing.is_empty(),
            "docs/format.md:\n{}",
            missing.join("\n")
        );
    }
}
