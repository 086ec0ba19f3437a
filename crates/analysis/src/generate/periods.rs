//! Periods: their text form ([`Periods::parse`]), their checks, and drawing them.

use super::Periods;
use rand::Rng;
use schedlab_model::{format_ns, parse_duration, Ns};

/// Largest `hyperperiod / granularity` of [`Periods::Divisors`]: its divisors are found
/// by trial division up to the square root (10^6 steps at most).
pub const MAX_DIVISOR_QUOTIENT: u64 = 1_000_000_000_000;

impl Periods {
    /// Parse the text form that `schedlab generate --periods`, grids and Python share:
    ///
    /// - `MIN..MAX`: log-uniform in `[MIN, MAX]`, multiples of `granularity`;
    /// - `P1,P2,...`: uniform over the list;
    /// - `divisors:H` or `divisors:H:MIN..MAX`: uniform over the divisors of `H` that are
    ///   multiples of `granularity` (0: 1 ns) and lie in `[MIN, MAX]` (default: from the
    ///   granularity to `H`), so every set's hyperperiod divides `H`.
    ///
    /// Times take the workload format's units (`10ms`, `1s`, `250us`). The message names
    /// the part that is wrong; callers prefix the option or key.
    pub fn parse(text: &str, granularity: Ns) -> Result<Periods, String> {
        let t = text.trim();
        let lower = t.to_ascii_lowercase();
        if let Some(rest) = lower.strip_prefix("divisors:") {
            let (h, range) = match rest.split_once(':') {
                Some((h, r)) => (h, Some(r)),
                None => (rest, None),
            };
            let hyperperiod =
                parse_duration(h).map_err(|e| format!("divisors: hyperperiod: {e}"))?;
            let (min, max) = match range {
                Some(r) => {
                    let (a, b) = r.split_once("..").ok_or_else(|| {
                        format!("divisors:{h}:{r}: the range after the hyperperiod is MIN..MAX")
                    })?;
                    (parse_duration(a)?, parse_duration(b)?)
                }
                None => (granularity.max(1), hyperperiod),
            };
            return Ok(Periods::Divisors {
                hyperperiod,
                min,
                max,
                granularity,
            });
        }
        if let Some((a, b)) = t.split_once("..") {
            return Ok(Periods::LogUniform {
                min: parse_duration(a)?,
                max: parse_duration(b)?,
                granularity,
            });
        }
        let list = t
            .split(',')
            .map(parse_duration)
            .collect::<Result<Vec<Ns>, String>>()?;
        Ok(Periods::Choice(list))
    }

    /// Check the periods; the message names the problem.
    pub(super) fn validate(&self) -> Result<(), String> {
        let max_time = schedlab_model::limits::MAX_TIME_NS;
        match self {
            Periods::LogUniform {
                min,
                max,
                granularity,
            } => {
                if *min == 0 || min > max {
                    return Err(format!(
                        "{}..{}: need 0 < min ≤ max",
                        format_ns(*min),
                        format_ns(*max)
                    ));
                }
                if *max > max_time {
                    return Err(format!(
                        "{} is longer than the longest time a workload takes ({})",
                        format_ns(*max),
                        format_ns(max_time)
                    ));
                }
                if *granularity > 0 && *granularity > *max {
                    return Err(format!(
                        "period granularity {} is longer than the longest period {}",
                        format_ns(*granularity),
                        format_ns(*max)
                    ));
                }
            }
            Periods::Choice(list) => {
                if list.is_empty() || list.contains(&0) {
                    return Err("the period list must hold at least one period, all > 0".into());
                }
                if let Some(p) = list.iter().find(|&&p| p > max_time) {
                    return Err(format!(
                        "{} is longer than the longest time a workload takes ({})",
                        format_ns(*p),
                        format_ns(max_time)
                    ));
                }
            }
            Periods::Divisors { .. } => {
                self.divisors()?;
            }
        }
        Ok(())
    }

    /// The candidate periods of [`Periods::Divisors`], ascending (never empty).
    fn divisors(&self) -> Result<Vec<Ns>, String> {
        let Periods::Divisors {
            hyperperiod: h,
            min,
            max,
            granularity,
        } = *self
        else {
            return Ok(Vec::new());
        };
        let g = granularity.max(1);
        let max_time = schedlab_model::limits::MAX_TIME_NS;
        if h == 0 || h > max_time {
            return Err(format!(
                "divisors: hyperperiod {} must be above 0 and at most {}",
                format_ns(h),
                format_ns(max_time)
            ));
        }
        if min == 0 || min > max {
            return Err(format!(
                "divisors: periods {}..{}: need 0 < min ≤ max",
                format_ns(min),
                format_ns(max)
            ));
        }
        if h % g != 0 {
            return Err(format!(
                "divisors: hyperperiod {} is not a multiple of the granularity {}",
                format_ns(h),
                format_ns(g)
            ));
        }
        let q = h / g;
        if q > MAX_DIVISOR_QUOTIENT {
            return Err(format!(
                "divisors: hyperperiod {} is more than {MAX_DIVISOR_QUOTIENT} times the granularity {}; use a coarser granularity",
                format_ns(h),
                format_ns(g)
            ));
        }
        let list: Vec<Ns> = divisors_of(q)
            .into_iter()
            .map(|d| d * g)
            .filter(|p| (min..=max).contains(p))
            .collect();
        if list.is_empty() {
            return Err(format!(
                "divisors: no divisor of {} that is a multiple of {} lies in {}..{}",
                format_ns(h),
                format_ns(g),
                format_ns(min),
                format_ns(max)
            ));
        }
        Ok(list)
    }

    /// A sampler for these periods (the divisor list worked out once per set).
    pub(super) fn sampler(&self) -> Result<PeriodSampler<'_>, String> {
        Ok(match self {
            Periods::Divisors { .. } => {
                PeriodSampler::List(std::borrow::Cow::Owned(self.divisors()?))
            }
            Periods::Choice(list) => PeriodSampler::List(std::borrow::Cow::Borrowed(list)),
            Periods::LogUniform {
                min,
                max,
                granularity,
            } => PeriodSampler::LogUniform {
                min: *min,
                max: *max,
                granularity: *granularity,
            },
        })
    }
}

/// Draws periods (see [`Periods::sampler`]).
pub(super) enum PeriodSampler<'a> {
    LogUniform { min: Ns, max: Ns, granularity: Ns },
    List(std::borrow::Cow<'a, [Ns]>),
}

impl PeriodSampler<'_> {
    /// Draw one period.
    pub(super) fn draw<R: Rng + ?Sized>(&self, rng: &mut R) -> Ns {
        match self {
            PeriodSampler::LogUniform {
                min,
                max,
                granularity,
            } => {
                let g = *granularity;
                let top = if g > 0 { max + g } else { *max } as f64;
                let lo = (*min as f64).ln();
                let x = (lo + rng.random::<f64>() * (top.ln() - lo)).exp();
                let t = x as Ns;
                let t = t.checked_div(g).map_or(t, |q| q * g);
                t.clamp(*min, *max).max(1)
            }
            PeriodSampler::List(list) => list[rng.random_range(0..list.len())],
        }
    }
}

/// Every divisor of `q` (q ≥ 1), ascending, by trial division up to √q.
fn divisors_of(q: u64) -> Vec<u64> {
    let (mut small, mut large) = (Vec::new(), Vec::new());
    let mut d = 1u64;
    while d * d <= q {
        if q % d == 0 {
            small.push(d);
            if d * d != q {
                large.push(q / d);
            }
        }
        d += 1;
    }
    small.extend(large.into_iter().rev());
    small
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn divisors_by_hand() {
        assert_eq!(divisors_of(1), vec![1]);
        assert_eq!(divisors_of(12), vec![1, 2, 3, 4, 6, 12]);
        assert_eq!(divisors_of(49), vec![1, 7, 49]);
        // 3600 = 2^4·3^2·5^2: (4+1)(2+1)(2+1) = 45 divisors.
        assert_eq!(divisors_of(3600).len(), 45);
    }

    #[test]
    fn the_three_spellings_parse() {
        let ms = 1_000_000;
        assert_eq!(
            Periods::parse("10ms..1s", ms),
            Ok(Periods::LogUniform {
                min: 10 * ms,
                max: 1000 * ms,
                granularity: ms
            })
        );
        assert_eq!(
            Periods::parse("10ms,20ms", 0),
            Ok(Periods::Choice(vec![10 * ms, 20 * ms]))
        );
        assert_eq!(
            Periods::parse("Divisors:3600ms:10ms..1000ms", ms),
            Ok(Periods::Divisors {
                hyperperiod: 3600 * ms,
                min: 10 * ms,
                max: 1000 * ms,
                granularity: ms
            })
        );
        let p = Periods::parse("divisors:12ms", ms).unwrap();
        assert_eq!(
            p.divisors().unwrap(),
            [1, 2, 3, 4, 6, 12].map(|d| d * ms).to_vec()
        );
        let e = Periods::parse("divisors:1000ms:11ms..19ms", ms)
            .unwrap()
            .validate()
            .unwrap_err();
        assert!(e.contains("no divisor of 1s"), "{e}");
        let e = Periods::parse("divisors:1500us", ms)
            .unwrap()
            .validate()
            .unwrap_err();
        assert!(e.contains("not a multiple of the granularity 1ms"), "{e}");
        assert!(Periods::parse("divisors:1s:10ms", ms)
            .unwrap_err()
            .contains("MIN..MAX"));
    }
}
