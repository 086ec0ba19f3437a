//! Every size and time limit of the input formats, in one place.
//!
//! Each limit is checked while reading or validating the input, *before* the memory it
//! protects is allocated, and a file beyond it gets an error that names the limit (the
//! docs' limits table, docs/format.md "Limits", lists the same values). They keep a
//! hostile or mistaken file from exhausting memory or time: a YAML alias bomb, a list
//! nested a hundred thousand levels deep, `count: 1000000000`, a duration near 2^64 ns.
//!
//! The values leave ample room for real experiments: the largest shipped example has
//! 20 tasks on 4 CPUs, schedulability sweeps use a few hundred tasks.

use crate::time::{Ns, S};

/// Largest workload file read (bytes). Checked on the file's size before reading it.
pub const MAX_FILE_BYTES: u64 = 32 * 1024 * 1024;

/// Deepest nesting of lists and mappings. The format itself needs at most six levels
/// (`tasks` → task → `phases` → phase → value); checked on the raw text before the YAML
/// parser sees it, because libyaml's flow-collection scanner slows down with the square
/// of the depth (a 400 KB file of nested `[` took over a minute).
pub const MAX_NESTING: usize = 32;

/// Largest number of values (scalars, lists and mappings) in a document once YAML
/// aliases are expanded. Counted in a pass that allocates nothing, before the document
/// is turned into a workload, so a 50 KB alias bomb that would expand to a hundred
/// million values is refused in milliseconds.
pub const MAX_EXPANDED_NODES: u64 = 4_000_000;

/// Longest list anywhere in the document (after alias expansion): `tasks`, `affinity`,
/// `phases`, `platform.irqs`, CPU lists, ...
pub const MAX_LIST_LEN: u64 = 100_000;

/// Largest number of CPUs (`platform.cpus`, `--cpus`, an imported trace's CPUs).
pub const MAX_CPUS: u64 = 1024;

/// Largest number of tasks after `count:` expansion (the sum over all entries, checked
/// before any task is built).
pub const MAX_TASKS: u64 = 100_000;

/// Largest tasks × CPUs product: per-task, per-CPU state (affinity lists, the
/// simulator's per-task allowed-CPU maps) grows with it. Set at the corner of the two
/// limits above, which `schedlab bench`'s `scale-100k` row measures (100,000 tasks on
/// 1024 CPUs for 10 s: 264 MB peak under `global`, 353 MB under `linux`); checked on
/// its own so that raising one of them cannot silently raise it.
pub const MAX_TASK_CPUS: u64 = MAX_TASKS * MAX_CPUS;

/// Largest time value accepted anywhere (durations, periods, offsets, jitter, phases,
/// scheduler tunables, `--duration`): 10^18 ns, about 31.7 years.
///
/// Why this value: it is far beyond any experiment, and far enough below 2^63 ns
/// (9.2 × 10^18) that the sum of any nine times still fits a signed 64-bit count and
/// the sum of eighteen an unsigned one (an offset plus a run's duration plus a jitter
/// plus a deadline, the kernel's signed lag arithmetic), so the engine's saturating
/// arithmetic is a safety net, never the normal path.
pub const MAX_TIME_NS: Ns = 1_000_000_000 * S;

/// Largest scheduler tunable (`scheduler.rr_timeslice`, `migration_cost`, the `cfs`,
/// `eevdf` and `bfs` slices and granularities): 1000 s. The fair classes scale them by
/// weight ratios of up to ~1000 into virtual time, which must stay far inside 64 bits;
/// the kernel's own tunables are milliseconds.
pub const MAX_TUNABLE_NS: Ns = 1000 * S;

/// [`MAX_TIME_NS`] as the duration text users write.
pub const MAX_TIME_TEXT: &str = "1000000000s";
