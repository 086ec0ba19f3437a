//! Every field of the workload format, as a path (`platform.irqs[].period`), read from the
//! serde definitions of the [`crate::spec`] types themselves: the names are the ones the
//! parser accepts, so a field added to a spec struct appears here without anyone listing
//! it. Consumers that must decide something for every field (the real runner: run it,
//! warn about it or refuse it) test against this list, so a new field cannot be ignored
//! without a word. A policy's `scheduler.<name>:` block comes from its registry entry's
//! declarations.

use crate::spec::{
    option_names, BfsSpec, CfsSpec, EevdfSpec, IrqSpec, KernelSectionsSpec, PhaseSpec,
    PlatformSpec, ProbeSpec, SchedulerSpec, TaskSpec, TimerGroupSpec, TimersSpec, WorkloadSpec,
};
use serde::de::{self, Deserialize, Deserializer, Visitor};
use std::fmt;

/// The field names serde's derive gives `deserialize_struct` for `T` (in declaration
/// order), captured by a deserializer that answers nothing else.
pub fn struct_fields<'de, T: Deserialize<'de>>() -> &'static [&'static str] {
    #[derive(Debug)]
    struct Captured(&'static [&'static str]);
    impl fmt::Display for Captured {
        fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("field list captured")
        }
    }
    impl std::error::Error for Captured {}
    impl de::Error for Captured {
        fn custom<M: fmt::Display>(_: M) -> Self {
            Captured(&[])
        }
    }
    struct Probe;
    impl<'de> Deserializer<'de> for Probe {
        type Error = Captured;
        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Captured> {
            Err(Captured(&[]))
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _name: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Captured> {
            Err(Captured(fields))
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
            byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map enum
            identifier ignored_any
        }
    }
    match T::deserialize(Probe) {
        Err(Captured(fields)) => fields,
        Ok(_) => &[],
    }
}

/// The spec structs nested under a field, by path: a field whose value is one of these
/// blocks (or a list of them, `[]`) contributes the block's fields instead of itself.
fn nested(path: &str) -> Option<&'static [&'static str]> {
    Some(match path {
        "platform" => struct_fields::<PlatformSpec>(),
        "platform.irqs[]" => struct_fields::<IrqSpec>(),
        "platform.timers" => struct_fields::<TimersSpec>(),
        "platform.timers.groups[]" => struct_fields::<TimerGroupSpec>(),
        "platform.kernel_sections" => struct_fields::<KernelSectionsSpec>(),
        "scheduler" => struct_fields::<SchedulerSpec>(),
        "scheduler.cfs" => struct_fields::<CfsSpec>(),
        "scheduler.eevdf" => struct_fields::<EevdfSpec>(),
        "scheduler.bfs" => struct_fields::<BfsSpec>(),
        "tasks[]" => struct_fields::<TaskSpec>(),
        "tasks[].phases[]" => struct_fields::<PhaseSpec>(),
        "tasks[].probe" => struct_fields::<ProbeSpec>(),
        // A policy's declared options (crate::options).
        p => match p.strip_prefix("scheduler.").map(option_names) {
            Some(names) if !names.is_empty() => names,
            _ => return None,
        },
    })
}

/// Fields whose value is a list of blocks (their children are under `path[]`).
const LISTS: &[&str] = &[
    "platform.irqs",
    "platform.timers.groups",
    "tasks",
    "tasks[].phases",
];

/// Every field of the workload format as a path, in declaration order: blocks are
/// listed (`platform.irqs`) and so are their fields (`platform.irqs[].period`).
pub fn field_paths() -> Vec<String> {
    fn walk(prefix: &str, fields: &[&str], out: &mut Vec<String>) {
        for f in fields {
            let path = if prefix.is_empty() {
                f.to_string()
            } else {
                format!("{prefix}.{f}")
            };
            out.push(path.clone());
            let inner = if LISTS.contains(&path.as_str()) {
                format!("{path}[]")
            } else {
                path
            };
            if let Some(children) = nested(&inner) {
                walk(&inner, children, out);
            }
        }
    }
    let mut out = Vec::new();
    walk("", struct_fields::<WorkloadSpec>(), &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_names_come_from_the_parser() {
        assert_eq!(
            struct_fields::<PhaseSpec>(),
            ["run", "sleep"],
            "PhaseSpec's serde fields"
        );
        let all = field_paths();
        for p in [
            "name",
            "platform.irqs",
            "platform.irqs[].period",
            "platform.isolated",
            "platform.timers.groups[].count",
            "scheduler.eevdf.base_slice",
            "scheduler.illf.swap_at",
            "scheduler.llf.tie",
            "scheduler.edzl.mode",
            "tasks[].run",
            "tasks[].phases[].sleep",
            "tasks[].probe.interval",
        ] {
            assert!(all.iter().any(|x| x == p), "{p} missing from {all:?}");
        }
        // Unique, and every block's fields are found (none is empty).
        let mut sorted = all.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), all.len());
        for block in [
            "platform",
            "platform.irqs[]",
            "platform.timers",
            "platform.timers.groups[]",
            "platform.kernel_sections",
            "scheduler",
            "tasks[]",
            "tasks[].phases[]",
            "tasks[].probe",
        ] {
            assert!(!nested(block).unwrap().is_empty(), "{block}");
        }
    }

    /// Every spec block reachable from the top is walked: each nested path names a field
    /// that exists (a renamed field would leave its block unwalked).
    #[test]
    fn every_nested_block_hangs_off_a_real_field() {
        let all = field_paths();
        for block in [
            "platform",
            "platform.irqs",
            "platform.timers",
            "platform.timers.groups",
            "platform.kernel_sections",
            "scheduler",
            "scheduler.llf",
            "scheduler.illf",
            "scheduler.edzl",
            "scheduler.cfs",
            "scheduler.eevdf",
            "scheduler.bfs",
            "tasks",
            "tasks[].phases",
            "tasks[].probe",
        ] {
            assert!(all.iter().any(|x| x == block), "{block}");
            let inner = if LISTS.contains(&block) {
                format!("{block}[]")
            } else {
                block.to_string()
            };
            let prefix = format!("{inner}.");
            assert!(
                all.iter().any(|x| x.starts_with(&prefix)),
                "no field under {block}"
            );
        }
    }
}
