//! Time is a `u64` count of nanoseconds everywhere in schedlab.

/// Nanoseconds since the start of a simulation (or a duration in ns).
pub type Ns = u64;

/// Nanoseconds per microsecond, millisecond and second.
pub const US: Ns = 1_000;
/// Nanoseconds per millisecond.
pub const MS: Ns = 1_000_000;
/// Nanoseconds per second.
pub const S: Ns = 1_000_000_000;

/// Parse a duration written with a unit (`ns`, `us`, `ms`, `s`; decimals allowed, e.g.
/// `0.5ms`) into nanoseconds. A bare number is taken as nanoseconds.
///
/// Returns a message (without location) on nonsense, negative values, fractions of a
/// nanosecond or values above [`crate::limits::MAX_TIME_NS`] (about 31.7 years).
pub fn parse_duration(text: &str) -> Result<Ns, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err("empty duration".into());
    }
    if t.starts_with('-') {
        return Err(format!("negative duration `{text}`"));
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let unit = unit.trim();
    if num.is_empty() {
        return Err(format!("`{text}` is not a duration (expected e.g. 10ms)"));
    }
    let scale: u128 = match unit {
        "" | "ns" => 1,
        "us" | "µs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        _ => {
            return Err(format!(
                "unknown unit `{unit}` in duration `{text}` (use ns, us, ms or s)"
            ))
        }
    };
    let num = num.replace('_', "");
    if num.is_empty() {
        return Err(format!("`{text}` is not a duration (expected e.g. 10ms)"));
    }
    let (int, frac) = match num.split_once('.') {
        Some((i, f)) => (i, f),
        None => (num.as_str(), ""),
    };
    if int.is_empty() && frac.is_empty() || frac.contains('.') {
        return Err(format!("`{text}` is not a duration (expected e.g. 10ms)"));
    }
    let overflow = || format!("duration `{text}` {}", over_limit());
    let int_v: u128 = if int.is_empty() {
        0
    } else {
        int.parse::<u128>().map_err(|_| overflow())?
    };
    let mut total = int_v.checked_mul(scale).ok_or_else(overflow)?;
    if !frac.is_empty() {
        // Exact decimal arithmetic: 0.5ms is 500000 ns, never a float rounding.
        if frac.len() > 30 {
            return Err(format!("too many decimals in `{text}`"));
        }
        let frac_v: u128 = frac.parse().map_err(|_| overflow())?;
        let denom = 10u128.pow(frac.len() as u32);
        let num_ns = frac_v * scale;
        if num_ns % denom != 0 {
            return Err(format!("`{text}` is not a whole number of nanoseconds"));
        }
        total += num_ns / denom;
    }
    let total = u64::try_from(total).map_err(|_| overflow())?;
    check_time(total).map_err(|e| format!("duration `{text}` {e}"))
}

/// Cap of a `hyperperiod` duration written without one: 100 s of simulated time.
pub const HYPERPERIOD_CAP: Ns = 100 * S;

/// How long to simulate, as asked for: a fixed time, or the task set's feasibility
/// interval (see [`crate::horizon`]) up to a cap. [`crate::Workload::from_spec`] resolves
/// it to a number of nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SimDuration {
    /// Exactly this long.
    Fixed(Ns),
    /// The feasibility interval, or `cap` when that is longer (or undefined).
    Hyperperiod {
        /// Longest simulated time accepted.
        cap: Ns,
    },
}

impl From<Ns> for SimDuration {
    fn from(ns: Ns) -> Self {
        SimDuration::Fixed(ns)
    }
}

impl SimDuration {
    /// As written in a workload file (`10ms`, `hyperperiod<=20s`).
    pub fn text(self) -> String {
        match self {
            SimDuration::Fixed(ns) => format_ns(ns),
            SimDuration::Hyperperiod { cap } => format!("hyperperiod<={}", format_ns(cap)),
        }
    }
}

/// Parse a simulated duration: what [`parse_duration`] accepts, `hyperperiod` (capped at
/// [`HYPERPERIOD_CAP`]) or `hyperperiod<=DURATION` (an explicit cap, e.g.
/// `hyperperiod<=20s`).
pub fn parse_sim_duration(text: &str) -> Result<SimDuration, String> {
    let t = text.trim();
    let Some(rest) = t.strip_prefix("hyperperiod") else {
        return parse_duration(t).map(SimDuration::Fixed);
    };
    let rest = rest.trim();
    if rest.is_empty() {
        return Ok(SimDuration::Hyperperiod {
            cap: HYPERPERIOD_CAP,
        });
    }
    let Some(cap) = rest.strip_prefix("<=") else {
        return Err(format!(
            "`{text}` is not a duration (expected e.g. 10ms, `hyperperiod` or `hyperperiod<=20s`)"
        ));
    };
    let cap = parse_duration(cap).map_err(|e| format!("cap of `{text}`: {e}"))?;
    if cap == 0 {
        return Err(format!("cap of `{text}`: must be longer than 0"));
    }
    Ok(SimDuration::Hyperperiod { cap })
}

/// `Ok` when `ns` is at most [`crate::limits::MAX_TIME_NS`]; else the end of a sentence
/// naming the limit (`is above the limit of ...`).
pub fn check_time(ns: Ns) -> Result<Ns, String> {
    if ns > crate::limits::MAX_TIME_NS {
        Err(over_limit())
    } else {
        Ok(ns)
    }
}

fn over_limit() -> String {
    use crate::limits::{MAX_TIME_NS, MAX_TIME_TEXT};
    format!(
        "is above the limit of {MAX_TIME_TEXT} ({MAX_TIME_NS} ns, about 31.7 years) for any time"
    )
}

/// Format nanoseconds with the largest unit that keeps the value exact (`100ms`, `1500us`).
pub fn format_ns(ns: Ns) -> String {
    if ns == 0 {
        return "0".into();
    }
    for (unit, scale) in [("s", S), ("ms", MS), ("us", US)] {
        if ns % scale == 0 {
            return format!("{}{unit}", ns / scale);
        }
    }
    format!("{ns}ns")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units_and_decimals() {
        assert_eq!(parse_duration("10ms"), Ok(10 * MS));
        assert_eq!(parse_duration("0.5ms"), Ok(500 * US));
        assert_eq!(parse_duration("1.25 s"), Ok(1_250 * MS));
        assert_eq!(parse_duration("250"), Ok(250));
        assert_eq!(parse_duration("3us"), Ok(3_000));
        assert_eq!(parse_duration("1_000ns"), Ok(1_000));
    }

    #[test]
    fn rejects_nonsense() {
        assert!(parse_duration("10 parsecs")
            .unwrap_err()
            .contains("unknown unit"));
        assert!(parse_duration("-5ms").unwrap_err().contains("negative"));
        assert!(parse_duration("ms").is_err());
        assert!(parse_duration("1.5ns")
            .unwrap_err()
            .contains("whole number"));
        assert!(parse_duration("99999999999999999999s")
            .unwrap_err()
            .contains("above the limit"));
        assert!(parse_duration("18446744074s")
            .unwrap_err()
            .contains("above the limit"));
        let over = parse_duration("18446744073s").unwrap_err();
        assert!(over.contains("above the limit of 1000000000s"), "{over}");
        assert_eq!(
            parse_duration("1000000000s"),
            Ok(crate::limits::MAX_TIME_NS)
        );
        assert!(parse_duration("1000000000000000001").is_err());
    }

    #[test]
    fn parses_hyperperiod_durations() {
        assert_eq!(
            parse_sim_duration("hyperperiod"),
            Ok(SimDuration::Hyperperiod {
                cap: HYPERPERIOD_CAP
            })
        );
        assert_eq!(
            parse_sim_duration("hyperperiod<=20s"),
            Ok(SimDuration::Hyperperiod { cap: 20 * S })
        );
        assert_eq!(
            parse_sim_duration(" hyperperiod <= 1.5ms "),
            Ok(SimDuration::Hyperperiod { cap: 1_500 * US })
        );
        assert_eq!(parse_sim_duration("10ms"), Ok(SimDuration::Fixed(10 * MS)));
        assert!(parse_sim_duration("hyperperiod<=0")
            .unwrap_err()
            .contains("longer than 0"));
        assert!(parse_sim_duration("hyperperiod<20s")
            .unwrap_err()
            .contains("hyperperiod<=20s"));
        assert!(parse_sim_duration("hyperperiod<=5 parsecs")
            .unwrap_err()
            .contains("unknown unit"));
        assert_eq!(
            SimDuration::Hyperperiod { cap: 20 * S }.text(),
            "hyperperiod<=20s"
        );
    }

    #[test]
    fn formats_exactly() {
        assert_eq!(format_ns(100 * MS), "100ms");
        assert_eq!(format_ns(1_500 * US), "1500us");
        assert_eq!(format_ns(7), "7ns");
        assert_eq!(format_ns(2 * S), "2s");
    }
}
