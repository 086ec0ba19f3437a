//! Policy options declared as data.
//!
//! A policy's `scheduler.<name>:` block is a list of [`OptionDecl`]s in its registry entry
//! ([`crate::registry::POLICIES`]): name, type, default, range and one line of
//! documentation. From that one declaration the block is parsed (unknown and mistyped
//! fields are syntax errors with their line and column, as for every other block),
//! validated (a value out of range or not in the list is an error naming
//! `scheduler.<name>.<field>`), listed among the format's fields
//! ([`crate::fields::field_paths`]) and documented (docs/format.md's table for the block
//! is [`options_table`], checked by a test). The validated block is a [`PolicyOptions`]
//! the policy's class reads by name ([`PolicyOptions::word`], [`PolicyOptions::duration`],
//! ...); a workload holds one for every policy that declares options
//! ([`crate::workload::Scheduler::options`]), defaults filled in.

use crate::spec::Dur;
use crate::time::{format_ns, Ns};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;

/// The type, default and accepted values of one option.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum OptionKind {
    /// A duration (`10ms`, or an integer in ns) in `min..=max`.
    Duration {
        /// Value when the field is absent.
        default: Ns,
        /// Smallest accepted value (1 = "longer than 0").
        min: Ns,
        /// Largest accepted value.
        max: Ns,
    },
    /// `true` or `false`.
    Bool {
        /// Value when the field is absent.
        default: bool,
    },
    /// One word of `values`; the first is the default.
    Enum {
        /// The accepted words, default first.
        values: &'static [&'static str],
        /// What a value is called in the error for an unknown one (`mode`, `tie-break`):
        /// ``unknown mode `x` (known: tick, exact)``.
        noun: &'static str,
    },
    /// An integer in `min..=max`.
    Int {
        /// Value when the field is absent.
        default: i64,
        /// Smallest accepted value.
        min: i64,
        /// Largest accepted value.
        max: i64,
    },
    /// A number in `min..=max`.
    Float {
        /// Value when the field is absent.
        default: f64,
        /// Smallest accepted value.
        min: f64,
        /// Largest accepted value.
        max: f64,
    },
    /// A set of integers in `min..=max`, written as a list (`[1, 2, 3]`; repeats are
    /// ignored); default: all of them.
    IntSet {
        /// Smallest member.
        min: i64,
        /// Largest member.
        max: i64,
        /// What a member is called in the error for one out of range: ``rule 5 does not
        /// exist (the paper has rules 1-4)``.
        member: &'static str,
        /// Why the range is what it is (the parenthesis of that error).
        why: &'static str,
    },
}

/// One option of a policy's `scheduler.<name>:` block.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OptionDecl {
    /// Field name (lowercase, `_` between words).
    pub name: &'static str,
    /// Type, default and accepted values.
    pub kind: OptionKind,
    /// One line for docs/format.md's table (no `|`, no newline).
    pub doc: &'static str,
}

/// A cross-field rule of a block, run after every field is valid: `Err((field, problem))`
/// is reported as `scheduler.<name>.<field>: <problem>`.
pub type OptionsCheck = fn(&PolicyOptions) -> Result<(), (&'static str, String)>;

/// One validated option value.
#[derive(Debug, Clone, PartialEq)]
pub enum OptionValue {
    /// A duration in ns.
    Duration(Ns),
    /// A flag.
    Bool(bool),
    /// One of the declared words.
    Enum(&'static str),
    /// An integer.
    Int(i64),
    /// A number.
    Float(f64),
    /// The members of a set, ascending.
    IntSet(Vec<i64>),
}

impl Serialize for OptionValue {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            OptionValue::Duration(v) => s.serialize_u64(*v),
            OptionValue::Bool(v) => s.serialize_bool(*v),
            OptionValue::Enum(v) => s.serialize_str(v),
            OptionValue::Int(v) => s.serialize_i64(*v),
            OptionValue::Float(v) => s.serialize_f64(*v),
            OptionValue::IntSet(v) => v.serialize(s),
        }
    }
}

/// A policy's validated options: every declared option, in declaration order, with the
/// file's value or the default.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PolicyOptions {
    /// The block (the policy's name).
    #[serde(skip)]
    pub block: &'static str,
    /// `(option name, value)` for every declared option.
    #[serde(flatten, serialize_with = "as_map")]
    pub values: Vec<(&'static str, OptionValue)>,
}

fn as_map<S: Serializer>(v: &[(&'static str, OptionValue)], s: S) -> Result<S::Ok, S::Error> {
    s.collect_map(v.iter().map(|(k, v)| (*k, v)))
}

impl PolicyOptions {
    fn get(&self, name: &str) -> &OptionValue {
        match self.values.iter().find(|(n, _)| *n == name) {
            Some((_, v)) => v,
            // A class asking for an option its entry does not declare is a bug caught by
            // the simulator's registry test, which builds every policy.
            None => panic!("scheduler.{} declares no option `{name}`", self.block),
        }
    }

    fn wrong(&self, name: &str, want: &str) -> ! {
        panic!("scheduler.{}.{name} is not declared as {want}", self.block)
    }

    /// The value of a `Duration` option.
    pub fn duration(&self, name: &str) -> Ns {
        match self.get(name) {
            OptionValue::Duration(v) => *v,
            _ => self.wrong(name, "a duration"),
        }
    }

    /// The value of a `Bool` option.
    pub fn flag(&self, name: &str) -> bool {
        match self.get(name) {
            OptionValue::Bool(v) => *v,
            _ => self.wrong(name, "a bool"),
        }
    }

    /// The value of an `Enum` option (one of its declared words).
    pub fn word(&self, name: &str) -> &'static str {
        match self.get(name) {
            OptionValue::Enum(v) => v,
            _ => self.wrong(name, "an enum"),
        }
    }

    /// The value of an `Int` option.
    pub fn int(&self, name: &str) -> i64 {
        match self.get(name) {
            OptionValue::Int(v) => *v,
            _ => self.wrong(name, "an int"),
        }
    }

    /// The value of a `Float` option.
    pub fn float(&self, name: &str) -> f64 {
        match self.get(name) {
            OptionValue::Float(v) => *v,
            _ => self.wrong(name, "a float"),
        }
    }

    /// The members of an `IntSet` option, ascending.
    pub fn int_set(&self, name: &str) -> &[i64] {
        match self.get(name) {
            OptionValue::IntSet(v) => v,
            _ => self.wrong(name, "an int set"),
        }
    }

    /// Replace the value of option `name` (tests and ablations that build a workload in
    /// code); the value's type must be the declared one.
    pub fn set(&mut self, name: &str, value: OptionValue) {
        let block = self.block;
        let slot = self
            .values
            .iter_mut()
            .find(|(n, _)| *n == name)
            .unwrap_or_else(|| panic!("scheduler.{block} declares no option `{name}`"));
        assert_eq!(
            std::mem::discriminant(&slot.1),
            std::mem::discriminant(&value),
            "scheduler.{block}.{name}: wrong type"
        );
        slot.1 = value;
    }
}

/// An option as written, before validation.
#[derive(Debug, Clone, PartialEq)]
pub enum RawValue {
    /// A duration field.
    Duration(Ns),
    /// A bool field.
    Bool(bool),
    /// A word (an `Enum` field).
    Word(String),
    /// An integer field.
    Int(i64),
    /// A number field.
    Float(f64),
    /// A list of integers (an `IntSet` field).
    Ints(Vec<i64>),
}

/// A policy's block as written: the fields present (a `null` field is absent).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RawOptions(pub Vec<(&'static str, RawValue)>);

/// Reads one policy's block with the policy's declarations (`next_value_seed`).
pub struct OptionsSeed {
    /// The block's name (the policy's).
    pub block: &'static str,
    /// Its declarations.
    pub decls: &'static [OptionDecl],
    /// The declared names, for serde's unknown-field message.
    pub names: &'static [&'static str],
}

impl<'de> DeserializeSeed<'de> for OptionsSeed {
    type Value = RawOptions;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<RawOptions, D::Error> {
        d.deserialize_struct(self.block, self.names, self)
    }
}

impl<'de> Visitor<'de> for OptionsSeed {
    type Value = RawOptions;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "a mapping of {} options", self.block)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<RawOptions, A::Error> {
        let mut out = RawOptions::default();
        let mut seen: Vec<&str> = Vec::new();
        while let Some(key) = m.next_key_seed(FieldSeed(self.names))? {
            let Some(decl) = self.decls.iter().find(|d| d.name == key) else {
                return Err(de::Error::unknown_field(key, self.names));
            };
            if seen.contains(&decl.name) {
                return Err(de::Error::duplicate_field(decl.name));
            }
            seen.push(decl.name);
            if let Some(v) = m.next_value_seed(ValueSeed(decl.kind))? {
                out.0.push((decl.name, v));
            }
        }
        Ok(out)
    }
}

/// Reads a mapping's key as one of `fields`, failing inside the key as the derive does, so
/// the error's path ends with the unknown name (`scheduler.llf.mod`).
pub(crate) struct FieldSeed(pub &'static [&'static str]);

impl<'de> DeserializeSeed<'de> for FieldSeed {
    type Value = &'static str;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<&'static str, D::Error> {
        d.deserialize_identifier(self)
    }
}

impl<'de> Visitor<'de> for FieldSeed {
    type Value = &'static str;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("field identifier")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<&'static str, E> {
        self.0
            .iter()
            .find(|f| **f == v)
            .copied()
            .ok_or_else(|| E::unknown_field(v, self.0))
    }
}

/// Reads one field's value as its declared type (`null` = absent).
struct ValueSeed(OptionKind);

impl<'de> DeserializeSeed<'de> for ValueSeed {
    type Value = Option<RawValue>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<RawValue>, D::Error> {
        Ok(match self.0 {
            OptionKind::Duration { .. } => {
                Option::<Dur>::deserialize(d)?.map(|v| RawValue::Duration(v.0))
            }
            OptionKind::Bool { .. } => Option::<bool>::deserialize(d)?.map(RawValue::Bool),
            OptionKind::Enum { .. } => Option::<String>::deserialize(d)?.map(RawValue::Word),
            OptionKind::Int { .. } => Option::<i64>::deserialize(d)?.map(RawValue::Int),
            OptionKind::Float { .. } => Option::<f64>::deserialize(d)?.map(RawValue::Float),
            OptionKind::IntSet { .. } => Option::<Vec<i64>>::deserialize(d)?.map(RawValue::Ints),
        })
    }
}

/// Validate a block as written (`None`: absent) against its declarations; errors are
/// `scheduler.<block>.<field>: <problem>`.
pub fn resolve(
    block: &'static str,
    decls: &'static [OptionDecl],
    check: Option<OptionsCheck>,
    raw: Option<&RawOptions>,
) -> Result<PolicyOptions, String> {
    let mut values = Vec::with_capacity(decls.len());
    for d in decls {
        let written = raw.and_then(|r| r.0.iter().find(|(n, _)| *n == d.name).map(|(_, v)| v));
        let v = value(d, written).map_err(|e| format!("scheduler.{block}.{}: {e}", d.name))?;
        values.push((d.name, v));
    }
    let o = PolicyOptions { block, values };
    if let Some(check) = check {
        check(&o).map_err(|(field, e)| format!("scheduler.{block}.{field}: {e}"))?;
    }
    Ok(o)
}

fn value(d: &OptionDecl, written: Option<&RawValue>) -> Result<OptionValue, String> {
    // The seed read each field as its declared type, so kind and raw value agree.
    let mismatch = || -> ! { unreachable!("option {} read as another type", d.name) };
    Ok(match d.kind {
        OptionKind::Duration { default, min, max } => {
            let v = match written {
                None => default,
                Some(RawValue::Duration(v)) => *v,
                Some(_) => mismatch(),
            };
            if v < min && min == 1 {
                return Err("must be longer than 0".into());
            }
            if !(min..=max).contains(&v) {
                return Err(format!(
                    "{} is outside {}..{}",
                    format_ns(v),
                    format_ns(min),
                    format_ns(max)
                ));
            }
            OptionValue::Duration(v)
        }
        OptionKind::Bool { default } => OptionValue::Bool(match written {
            None => default,
            Some(RawValue::Bool(v)) => *v,
            Some(_) => mismatch(),
        }),
        OptionKind::Enum { values, noun } => match written {
            None => OptionValue::Enum(values[0]),
            Some(RawValue::Word(w)) => match values.iter().find(|v| **v == w.as_str()) {
                Some(v) => OptionValue::Enum(v),
                None => {
                    return Err(format!(
                        "unknown {noun} `{w}` (known: {})",
                        values.join(", ")
                    ))
                }
            },
            Some(_) => mismatch(),
        },
        OptionKind::Int { default, min, max } => {
            let v = match written {
                None => default,
                Some(RawValue::Int(v)) => *v,
                Some(_) => mismatch(),
            };
            if !(min..=max).contains(&v) {
                return Err(format!("{v} is outside {min}..{max}"));
            }
            OptionValue::Int(v)
        }
        OptionKind::Float { default, min, max } => {
            let v = match written {
                None => default,
                Some(RawValue::Float(v)) => *v,
                Some(_) => mismatch(),
            };
            if !(min..=max).contains(&v) {
                return Err(format!("{v} is outside {min}..{max}"));
            }
            OptionValue::Float(v)
        }
        OptionKind::IntSet {
            min,
            max,
            member,
            why,
        } => {
            let mut v = match written {
                None => (min..=max).collect(),
                Some(RawValue::Ints(v)) => v.clone(),
                Some(_) => mismatch(),
            };
            if let Some(bad) = v.iter().find(|r| !(min..=max).contains(*r)) {
                return Err(format!("{member} {bad} does not exist ({why})"));
            }
            v.sort_unstable();
            v.dedup();
            OptionValue::IntSet(v)
        }
    })
}

/// The "values" column of docs/format.md for an option.
pub fn values_text(kind: &OptionKind) -> String {
    match kind {
        OptionKind::Duration { min, max, .. } => {
            format!("duration {}..{}", format_ns(*min), format_ns(*max))
        }
        OptionKind::Bool { .. } => "bool".into(),
        OptionKind::Enum { values, .. } => values
            .iter()
            .map(|v| format!("`{v}`"))
            .collect::<Vec<_>>()
            .join(", "),
        OptionKind::Int { min, max, .. } => format!("integer {min}..{max}"),
        OptionKind::Float { min, max, .. } => format!("number {min}..{max}"),
        OptionKind::IntSet { min, max, .. } => format!("list of integers {min}..{max}"),
    }
}

/// The "default" column of docs/format.md for an option.
pub fn default_text(kind: &OptionKind) -> String {
    match kind {
        OptionKind::Duration { default, .. } => format!("`{}`", format_ns(*default)),
        OptionKind::Bool { default } => format!("`{default}`"),
        OptionKind::Enum { values, .. } => format!("`{}`", values[0]),
        OptionKind::Int { default, .. } => format!("`{default}`"),
        OptionKind::Float { default, .. } => format!("`{default}`"),
        OptionKind::IntSet { min, max, .. } => {
            let all: Vec<String> = (*min..=*max).map(|i| i.to_string()).collect();
            format!("`[{}]`", all.join(", "))
        }
    }
}

/// docs/format.md's field table for a policy's `scheduler.<block>:` (header included,
/// one line per option, each ending in `\n`).
pub fn options_table(decls: &[OptionDecl]) -> String {
    let mut out = String::from("| field | values | default | meaning |\n|---|---|---|---|\n");
    for d in decls {
        out += &format!(
            "| `{}` | {} | {} | {} |\n",
            d.name,
            values_text(&d.kind),
            default_text(&d.kind),
            d.doc
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::MS;

    const DECLS: &[OptionDecl] = &[
        OptionDecl {
            name: "mode",
            kind: OptionKind::Enum {
                values: &["tick", "exact"],
                noun: "mode",
            },
            doc: "when",
        },
        OptionDecl {
            name: "quantum",
            kind: OptionKind::Duration {
                default: MS,
                min: 1,
                max: 1000 * MS,
            },
            doc: "how long",
        },
        OptionDecl {
            name: "set",
            kind: OptionKind::IntSet {
                min: 1,
                max: 3,
                member: "item",
                why: "three items",
            },
            doc: "which",
        },
        OptionDecl {
            name: "k",
            kind: OptionKind::Int {
                default: 2,
                min: 1,
                max: 8,
            },
            doc: "count",
        },
    ];

    fn raw(v: &[(&'static str, RawValue)]) -> RawOptions {
        RawOptions(v.to_vec())
    }

    #[test]
    fn defaults_fill_every_option_in_declaration_order() {
        let o = resolve("x", DECLS, None, None).unwrap();
        assert_eq!(o.word("mode"), "tick");
        assert_eq!(o.duration("quantum"), MS);
        assert_eq!(o.int_set("set"), [1, 2, 3]);
        assert_eq!(o.int("k"), 2);
        let names: Vec<&str> = o.values.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, ["mode", "quantum", "set", "k"]);
    }

    #[test]
    fn values_are_checked_and_errors_name_the_field() {
        let err = |r: RawOptions| resolve("x", DECLS, None, Some(&r)).unwrap_err();
        assert_eq!(
            err(raw(&[("mode", RawValue::Word("often".into()))])),
            "scheduler.x.mode: unknown mode `often` (known: tick, exact)"
        );
        assert_eq!(
            err(raw(&[("quantum", RawValue::Duration(0))])),
            "scheduler.x.quantum: must be longer than 0"
        );
        assert_eq!(
            err(raw(&[("quantum", RawValue::Duration(2000 * MS))])),
            "scheduler.x.quantum: 2s is outside 1ns..1s"
        );
        assert_eq!(
            err(raw(&[("set", RawValue::Ints(vec![1, 4]))])),
            "scheduler.x.set: item 4 does not exist (three items)"
        );
        assert_eq!(
            err(raw(&[("k", RawValue::Int(9))])),
            "scheduler.x.k: 9 is outside 1..8"
        );
        let o = resolve(
            "x",
            DECLS,
            None,
            Some(&raw(&[("set", RawValue::Ints(vec![3, 1, 3]))])),
        )
        .unwrap();
        assert_eq!(o.int_set("set"), [1, 3]);
    }

    #[test]
    fn the_check_runs_on_valid_values_and_names_its_field() {
        let check: OptionsCheck = |o| {
            if o.word("mode") == "exact" && o.int("k") > 4 {
                return Err(("k", "exact mode needs k <= 4".into()));
            }
            Ok(())
        };
        let r = raw(&[
            ("mode", RawValue::Word("exact".into())),
            ("k", RawValue::Int(5)),
        ]);
        assert_eq!(
            resolve("x", DECLS, Some(check), Some(&r)).unwrap_err(),
            "scheduler.x.k: exact mode needs k <= 4"
        );
        assert!(resolve("x", DECLS, Some(check), None).is_ok());
    }

    #[test]
    fn the_docs_table_is_derived_from_the_declarations() {
        assert_eq!(
            options_table(DECLS),
            "| field | values | default | meaning |\n|---|---|---|---|\n\
             | `mode` | `tick`, `exact` | `tick` | when |\n\
             | `quantum` | duration 1ns..1s | `1ms` | how long |\n\
             | `set` | list of integers 1..3 | `[1, 2, 3]` | which |\n\
             | `k` | integer 1..8 | `2` | count |\n"
        );
    }

    #[test]
    fn a_workload_carries_every_declared_block_and_serializes_it_by_name() {
        use crate::workload::{Overrides, Policy, Workload};
        let yaml = "scheduler: { illf: { rules: [3, 1, 2], swap_at: activation } }\n\
                    tasks: [{ name: a, runtime: 1ms, period: 10ms }]\n";
        let w = Workload::parse_str(yaml, std::path::Path::new("w.yaml"), &Overrides::default())
            .unwrap();
        let illf = w.scheduler.options_of(Policy::Illf).unwrap();
        assert_eq!(illf.int_set("rules"), [1, 2, 3]);
        assert_eq!(illf.word("swap_at"), "activation");
        // The typed copy the real runner reads agrees.
        assert_eq!(w.scheduler.illf.rules, [true, true, true, false]);
        assert!(w.scheduler.illf.swap_at_activation_only);
        // Blocks absent from the file are there with their defaults.
        assert_eq!(
            w.scheduler.options_of(Policy::Llf).unwrap().word("tie"),
            "lrs"
        );
        assert!(w.scheduler.options_of(Policy::Edf).is_none());
        let json = serde_json::to_string(&w.scheduler).unwrap();
        assert!(
            json.contains(r#""options":{"llf":{"mode":"tick","tie":"lrs"},"illf":{"rules":[1,2,3],"swap_at":"activation","strict":false,"mode":"tick"},"edzl":{"mode":"tick"},"ekg":{"k":0}}"#),
            "{json}"
        );
    }

    /// A declared block is read with the messages the derive gave the typed blocks:
    /// line and column, the path down to the field, serde's wording.
    #[test]
    fn a_declared_block_reports_syntax_errors_like_a_derived_one() {
        use crate::workload::{Overrides, Workload};
        let err = |sched: &str| {
            let yaml =
                format!("scheduler: {sched}\ntasks: [{{ name: a, runtime: 1ms, period: 10ms }}]\n");
            Workload::parse_str(&yaml, std::path::Path::new("w.yaml"), &Overrides::default())
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            err("{ llf: { mod: tick } }"),
            "w.yaml:1:21: scheduler.llf.mod: unknown field `mod`, expected `mode` or `tie`"
        );
        assert_eq!(
            err("{ illf: { strict: 1 } }"),
            "w.yaml:1:30: scheduler.illf.strict: invalid type: integer `1`, expected a boolean"
        );
        assert_eq!(
            err("{ llf: { mode: tick, mode: exact } }"),
            "w.yaml:1:19: scheduler.llf: duplicate field `mode`"
        );
        assert_eq!(
            err("{ edzl: 3 }"),
            "w.yaml:1:20: scheduler.edzl: invalid type: integer `3`, expected a mapping of edzl options"
        );
        assert_eq!(
            err("{ illf: { rules: [1, 2, 3, 4, 5] } }"),
            "w.yaml: scheduler.illf.rules: rule 5 does not exist (the paper has rules 1-4)"
        );
        // `~` is an absent block, as for an `Option` field.
        let yaml = "scheduler: { llf: ~, edzl: { mode: ~ } }\ntasks: [{ name: a, runtime: 1ms, period: 10ms }]\n";
        let w = Workload::parse_str(yaml, std::path::Path::new("w.yaml"), &Overrides::default())
            .unwrap();
        assert_eq!(w.scheduler.llf, crate::workload::LlfOptions::default());
        assert!(!w.scheduler.edzl.exact);
    }

    #[test]
    fn set_replaces_a_value_of_the_declared_type() {
        let mut o = resolve("x", DECLS, None, None).unwrap();
        o.set("mode", OptionValue::Enum("exact"));
        assert_eq!(o.word("mode"), "exact");
    }
}
