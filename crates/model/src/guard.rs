//! Checks on a document's shape and size that run before it becomes a workload, so that
//! no hostile or mistaken file can use unbounded memory or time (limits in
//! [`crate::limits`]):
//!
//! - [`check_nesting`] reads the raw text for the depth of nested flow lists and
//!   mappings (`[[[[...`), before the YAML parser, whose scanner slows down with the square
//!   of that depth;
//! - [`walk`] goes once over the parsed document, aliases expanded, without allocating:
//!   it counts every value against [`MAX_EXPANDED_NODES`], every list against
//!   [`MAX_LIST_LEN`], refuses YAML tags where the format gives them no meaning, and can
//!   pick out one task's name for an error message (instead of a second, unbounded
//!   parse of the whole file).

use crate::limits::{MAX_EXPANDED_NODES, MAX_LIST_LEN, MAX_NESTING};
use serde::de::{self, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, Visitor};
use std::cell::{Cell, RefCell};
use std::fmt;

/// Where the raw text nests deeper than [`MAX_NESTING`]: 1-based line and column, and
/// the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NestingError {
    /// 1-based line of the bracket that went too deep.
    pub line: usize,
    /// 1-based column (in characters).
    pub column: usize,
    /// What is wrong, naming the limit.
    pub message: String,
}

/// Refuse flow collections (`[`, `{`) nested deeper than [`MAX_NESTING`], reading the raw
/// text (YAML or JSON) in one linear pass.
///
/// Quoted scalars and comments are skipped, so a `[` inside `"..."` or after `#` does
/// not count. Every opening bracket outside them counts, while a closing one lowers the
/// depth; block indentation is not counted (it cannot nest deeper than the line is long,
/// and the YAML parser handles it in linear time).
pub fn check_nesting(text: &str) -> Result<(), NestingError> {
    let mut depth = 0usize;
    let (mut line, mut col) = (1usize, 0usize);
    // Whether a quote here would start a quoted scalar: at the start of a line, after an
    // indicator (`[ { , : - ?`) or after a property (`&anchor`, `!tag`) and blanks.
    let mut token_start = true;
    let mut chars = text.chars().peekable();
    let mut prev = '\n';
    while let Some(c) = chars.next() {
        col += 1;
        match c {
            '\n' => {
                line += 1;
                col = 0;
                token_start = true;
            }
            '#' if prev.is_whitespace() => {
                // A comment, to the end of the line.
                for d in chars.by_ref() {
                    if d == '\n' {
                        line += 1;
                        col = 0;
                        token_start = true;
                        break;
                    }
                }
                prev = '\n';
                continue;
            }
            '"' | '\'' if token_start => {
                // A quoted scalar: `\` escapes in double quotes, `''` in single quotes.
                let quote = c;
                while let Some(d) = chars.next() {
                    col += 1;
                    if d == '\n' {
                        line += 1;
                        col = 0;
                    } else if quote == '"' && d == '\\' {
                        if chars.next() == Some('\n') {
                            line += 1;
                            col = 0;
                        } else {
                            col += 1;
                        }
                    } else if d == quote {
                        if quote == '\'' && chars.peek() == Some(&'\'') {
                            chars.next();
                            col += 1;
                        } else {
                            break;
                        }
                    }
                }
                token_start = false;
            }
            '[' | '{' => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Err(NestingError {
                        line,
                        column: col,
                        message: format!(
                            "lists and mappings nested more than {MAX_NESTING} levels deep \
                             (the limit; the format needs at most 6)"
                        ),
                    });
                }
                token_start = true;
            }
            ']' | '}' => {
                depth = depth.saturating_sub(1);
                token_start = false;
            }
            // Indicators: `,` only inside flow collections, `:` there or before a blank,
            // `-` and `?` before a blank; elsewhere they are part of a plain scalar.
            ',' => token_start = depth > 0,
            ':' => token_start = depth > 0 || chars.peek().is_none_or(|d| d.is_whitespace()),
            '-' | '?' => token_start = chars.peek().is_none_or(|d| d.is_whitespace()),
            '&' | '!' if token_start => {
                // An anchor or a tag: a quote may follow after blanks.
                while chars.peek().is_some_and(|d| !d.is_whitespace()) {
                    chars.next();
                    col += 1;
                }
            }
            c if c.is_whitespace() => {}
            _ => token_start = false,
        }
        prev = c;
    }
    Ok(())
}

/// What [`walk`] should look for besides checking limits.
#[derive(Debug, Clone, Copy, Default)]
pub struct WalkGoal {
    /// Pick out the `name` of `tasks[i]` (a string or a number), for error messages.
    pub task_name: Option<usize>,
}

/// Go once over a document (any serde deserializer: YAML with aliases expanded, or JSON)
/// without building it: refuse more than [`MAX_EXPANDED_NODES`] values, lists longer
/// than [`MAX_LIST_LEN`] and YAML tags anywhere but on a task's `exec`. Returns the task
/// name asked for in `goal`, when found.
pub fn walk<'de, D: Deserializer<'de>>(d: D, goal: WalkGoal) -> Result<Option<String>, D::Error> {
    let left = Cell::new(MAX_EXPANDED_NODES);
    let found = RefCell::new(None);
    let state = State {
        left: &left,
        goal,
        found: &found,
    };
    Walk {
        state: &state,
        place: Place::Root,
    }
    .deserialize(d)?;
    Ok(found.into_inner())
}

struct State<'s> {
    left: &'s Cell<u64>,
    goal: WalkGoal,
    found: &'s RefCell<Option<String>>,
}

/// Where in the workload format a value sits (only what the checks need).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    Root,
    /// The top-level `tasks` list.
    Tasks,
    /// `tasks[i]`.
    Task(usize),
    /// `tasks[i].exec`: the one place a tag (`!uniform`, `!wcet`) means something.
    Exec,
    /// `tasks[i].name` of the task whose name is wanted.
    WantedName,
    Other,
}

#[derive(Clone, Copy)]
struct Walk<'a, 's> {
    state: &'a State<'s>,
    place: Place,
}

impl Walk<'_, '_> {
    fn take<E: de::Error>(&self) -> Result<(), E> {
        let left = self.state.left.get();
        if left == 0 {
            return Err(E::custom(format!(
                "the document expands to more than {MAX_EXPANDED_NODES} values (YAML aliases \
                 counted at every use); that is the limit"
            )));
        }
        self.state.left.set(left - 1);
        Ok(())
    }

    fn at(&self, place: Place) -> Self {
        Walk {
            state: self.state,
            place,
        }
    }

    fn name<E: de::Error>(self, v: String) -> Result<(), E> {
        self.take()?;
        if self.place == Place::WantedName {
            *self.state.found.borrow_mut() = Some(v);
        }
        Ok(())
    }
}

impl<'de> DeserializeSeed<'de> for Walk<'_, '_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a workload document")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        self.take()
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<(), E> {
        self.name(v.to_string())
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<(), E> {
        self.name(v.to_string())
    }
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<(), E> {
        self.name(v.to_string())
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<(), E> {
        self.name(v.to_string())
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<(), E> {
        self.name(v.to_string())
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        if self.place == Place::WantedName {
            self.name(v.to_string())
        } else {
            self.take()
        }
    }
    fn visit_bytes<E: de::Error>(self, _: &[u8]) -> Result<(), E> {
        self.take()
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.take()
    }
    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        self.take()
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        self.deserialize(d)
    }
    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        self.deserialize(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<(), A::Error> {
        self.take()?;
        let mut n: u64 = 0;
        loop {
            let place = match self.place {
                Place::Tasks => Place::Task(n as usize),
                _ => Place::Other,
            };
            if s.next_element_seed(self.at(place))?.is_none() {
                return Ok(());
            }
            n += 1;
            if n > MAX_LIST_LEN {
                return Err(de::Error::custom(format!(
                    "a list of more than {MAX_LIST_LEN} entries (the limit for any list)"
                )));
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<(), A::Error> {
        self.take()?;
        let mut n: u64 = 0;
        while let Some(key) = m.next_key_seed(Key(self))? {
            let place = match (self.place, key.as_deref()) {
                (Place::Root, Some("tasks")) => Place::Tasks,
                (Place::Task(_), Some("exec")) => Place::Exec,
                (Place::Task(i), Some("name")) if self.state.goal.task_name == Some(i) => {
                    Place::WantedName
                }
                _ => Place::Other,
            };
            m.next_value_seed(self.at(place))?;
            n += 1;
            if n > MAX_LIST_LEN {
                return Err(de::Error::custom(format!(
                    "a mapping of more than {MAX_LIST_LEN} entries (the limit for any list)"
                )));
            }
        }
        Ok(())
    }

    fn visit_enum<A: EnumAccess<'de>>(self, e: A) -> Result<(), A::Error> {
        use de::VariantAccess;
        let (tag, v) = e.variant::<String>()?;
        if self.place != Place::Exec {
            return Err(de::Error::custom(format!(
                "the YAML tag `!{tag}` has no meaning here (a tag is accepted only on a task's \
                 exec: `exec: !uniform [min, max]`)"
            )));
        }
        self.take()?;
        v.newtype_variant_seed(self.at(Place::Other))
    }
}

/// A mapping key: counted like any value; its text returned when it is a string.
struct Key<'a, 's>(Walk<'a, 's>);

impl<'de> DeserializeSeed<'de> for Key<'_, '_> {
    type Value = Option<String>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<String>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Key<'_, '_> {
    type Value = Option<String>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a mapping key")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Option<String>, E> {
        self.0.take()?;
        // Only the few keys the walk cares about are kept.
        Ok(matches!(v, "tasks" | "exec" | "name").then(|| v.to_string()))
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Option<String>, E> {
        self.0.at(Place::Other).visit_bool(v).map(|_| None)
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Option<String>, E> {
        self.0.at(Place::Other).visit_i64(v).map(|_| None)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Option<String>, E> {
        self.0.at(Place::Other).visit_u64(v).map(|_| None)
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Option<String>, E> {
        self.0.at(Place::Other).visit_f64(v).map(|_| None)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Option<String>, E> {
        self.0.at(Place::Other).visit_unit().map(|_| None)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, s: A) -> Result<Option<String>, A::Error> {
        self.0.at(Place::Other).visit_seq(s).map(|_| None)
    }
    fn visit_map<A: MapAccess<'de>>(self, m: A) -> Result<Option<String>, A::Error> {
        self.0.at(Place::Other).visit_map(m).map(|_| None)
    }
    fn visit_enum<A: EnumAccess<'de>>(self, e: A) -> Result<Option<String>, A::Error> {
        self.0.at(Place::Other).visit_enum(e).map(|_| None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_counts_flow_brackets_outside_quotes_and_comments() {
        assert!(check_nesting("tasks: [{ name: a, affinity: [0, 1] }]").is_ok());
        let deep = format!("x: {}{}", "[".repeat(MAX_NESTING + 1), "]".repeat(40));
        let e = check_nesting(&deep).unwrap_err();
        assert_eq!((e.line, e.column), (1, 4 + MAX_NESTING));
        assert!(e.message.contains("nested more than 32 levels"), "{e:?}");
        let exact = format!("x: {}{}", "[".repeat(MAX_NESTING), "]".repeat(MAX_NESTING));
        assert!(check_nesting(&exact).is_ok());
        // Brackets in quoted scalars and comments are text.
        let quoted = format!(
            "name: \"{}\"\n# {}\nb: '{}'",
            "[".repeat(99),
            "{".repeat(99),
            "[''".repeat(99)
        );
        assert!(
            check_nesting(&quoted).is_ok(),
            "{:?}",
            check_nesting(&quoted)
        );
        // ...but a quote inside a plain scalar does not hide what follows.
        let plain = format!("name: it's\nx: {}", "[".repeat(MAX_NESTING + 1));
        assert_eq!(check_nesting(&plain).unwrap_err().line, 2);
    }
}
