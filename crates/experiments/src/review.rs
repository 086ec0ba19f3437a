//! What a reviewer asks of a reproduction, beside its cases: each headline's result across
//! the modelling choices that could change it (one choice varied at a time from the
//! default set-up) with a one-line verdict, every numbered or directional claim of the
//! seed with the program's verdict, the assumptions the set-up makes, and the seed's
//! steps that are not modelled, with the reason.

use crate::figure::Figure;
use serde::Serialize;
use serde_json::Value;

/// One row of a headline's sensitivity table: the result with one choice changed.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// The choice varied (`default` for the set-up the cases use).
    pub choice: String,
    /// Its setting in this row.
    pub setting: String,
    /// The numbers the headline is judged on (a flat object).
    pub values: Value,
    /// Whether the seed's conclusion holds in this row.
    pub holds: bool,
}

/// A headline result of a seed with its sensitivity and verdict.
#[derive(Debug, Clone, Serialize)]
pub struct Headline {
    /// The seed's conclusion, as a claim that can hold or not.
    pub headline: String,
    /// The seed's own figures for it (text).
    pub paper: String,
    /// The default set-up first, then one row per choice setting.
    pub sensitivity: Vec<Row>,
    /// One line: robust, or which choice it depends on.
    pub verdict: String,
}

/// A claim's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The model gives what the seed says.
    Holds,
    /// The model gives something else.
    DoesNotHold,
    /// The model cannot say (the reason is given).
    NotTestable,
}

impl Verdict {
    /// Holds or does not hold.
    pub fn of(holds: bool) -> Verdict {
        if holds {
            Verdict::Holds
        } else {
            Verdict::DoesNotHold
        }
    }

    /// How the terminal report writes it.
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Holds => "holds",
            Verdict::DoesNotHold => "does not hold",
            Verdict::NotTestable => "not testable here",
        }
    }
}

/// A claim of the seed with a number or a direction, and what the program finds.
#[derive(Debug, Clone, Serialize)]
pub struct Claim {
    /// The claim as the seed states it.
    pub claim: String,
    /// The program's verdict.
    pub verdict: Verdict,
    /// The evidence (numbers) or why it cannot be tested.
    pub why: String,
}

/// A step or effect of the seed that the model leaves out.
#[derive(Debug, Clone, Serialize)]
pub struct NotModelled {
    /// The seed's step.
    pub step: String,
    /// Why it is not modelled.
    pub why: String,
}

/// Everything of one experiment a reviewer reads beside the cases.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Review {
    /// Headlines with sensitivity tables and verdicts.
    pub headlines: Vec<Headline>,
    /// The seed's claims with verdicts.
    pub claims: Vec<Claim>,
    /// Every assumption the set-up makes that the seed does not state.
    pub assumptions: Vec<String>,
    /// Steps not modelled, with why.
    pub not_modelled: Vec<NotModelled>,
    /// Tables the review adds to the experiment's cases (a sweep laid out like the
    /// seed's own table); printed and written with the cases.
    #[serde(skip)]
    pub cases: Vec<super::Case>,
    /// Figures the review adds beside each headline's sensitivity chart (seed 000's
    /// Fig. 4 across its settings); listed before the experiment's own.
    #[serde(skip)]
    pub figures: Vec<Figure>,
}

impl Review {
    /// Add a headline; its verdict line is derived from the rows, and `why` (may be empty)
    /// follows it.
    pub fn headline(&mut self, headline: &str, paper: &str, rows: Vec<Row>, why: &str) {
        let mut verdict = verdict_line(&rows);
        if !why.is_empty() {
            verdict.push_str(": ");
            verdict.push_str(why);
        }
        self.headlines.push(Headline {
            headline: headline.into(),
            paper: paper.into(),
            sensitivity: rows,
            verdict,
        });
    }

    /// Add a claim.
    pub fn claim(&mut self, claim: &str, verdict: Verdict, why: impl Into<String>) {
        self.claims.push(Claim {
            claim: claim.into(),
            verdict,
            why: why.into(),
        });
    }

    /// Add assumptions.
    pub fn assume(&mut self, items: &[&str]) {
        self.assumptions.extend(items.iter().map(|s| s.to_string()));
    }

    /// Add steps not modelled: (step, why).
    pub fn not_modelled(&mut self, items: &[(&str, &str)]) {
        self.not_modelled
            .extend(items.iter().map(|(s, w)| NotModelled {
                step: s.to_string(),
                why: w.to_string(),
            }));
    }

    /// Append `other` (another experiment's review under `all`), each headline and claim
    /// prefixed with `prefix`.
    pub fn extend(&mut self, other: Review, prefix: &str) {
        let p = |s: String| format!("{prefix}{s}");
        self.headlines
            .extend(other.headlines.into_iter().map(|mut h| {
                h.headline = p(h.headline);
                h
            }));
        self.claims.extend(other.claims.into_iter().map(|mut c| {
            c.claim = p(c.claim);
            c
        }));
        self.assumptions
            .extend(other.assumptions.into_iter().map(p));
        self.not_modelled
            .extend(other.not_modelled.into_iter().map(|mut n| {
                n.step = p(n.step);
                n
            }));
    }
}

/// A sensitivity row.
pub fn row(choice: &str, setting: &str, values: Value, holds: bool) -> Row {
    Row {
        choice: choice.into(),
        setting: setting.into(),
        values,
        holds,
    }
}

/// The verdict from the rows: the first row is the default set-up; every other row
/// varies one choice. Robust when every row agrees with the default, else it names the
/// choices (and settings) that flip the conclusion.
pub fn verdict_line(rows: &[Row]) -> String {
    let Some(base) = rows.first() else {
        return "no rows".into();
    };
    let choices = |pred: &dyn Fn(&Row) -> bool| -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for r in rows[1..].iter().filter(|r| pred(r)) {
            let item = format!("{} = {}", r.choice, r.setting);
            if !out.contains(&item) {
                out.push(item);
            }
        }
        out
    };
    let flips = choices(&|r| r.holds != base.holds);
    let varied: Vec<&str> = {
        let mut v: Vec<&str> = Vec::new();
        for r in &rows[1..] {
            if !v.contains(&r.choice.as_str()) {
                v.push(&r.choice);
            }
        }
        v
    };
    match (base.holds, flips.is_empty()) {
        (true, true) => format!(
            "ROBUST: holds in the default set-up and under every choice varied ({})",
            varied.join(", ")
        ),
        (true, false) => format!(
            "DEPENDS ON A CHOICE: holds in the default set-up, not with {}",
            flips.join("; ")
        ),
        (false, true) => format!(
            "DOES NOT REPRODUCE: fails in the default set-up and under every choice varied ({})",
            varied.join(", ")
        ),
        (false, false) => format!(
            "DEPENDS ON A CHOICE: fails in the default set-up, holds only with {}",
            flips.join("; ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn verdicts_name_the_choices_that_flip_the_conclusion() {
        let rows = |b, a, c| {
            vec![
                row("default", "linux", json!({}), b),
                row("placement", "global", json!({}), a),
                row("metric", "task-only", json!({}), c),
            ]
        };
        assert!(verdict_line(&rows(true, true, true)).starts_with("ROBUST"));
        let v = verdict_line(&rows(true, false, true));
        assert!(v.contains("not with placement = global"), "{v}");
        assert!(!v.contains("metric"), "{v}");
        assert!(verdict_line(&rows(false, false, false)).starts_with("DOES NOT REPRODUCE"));
        let v = verdict_line(&rows(false, false, true));
        assert!(v.contains("holds only with metric = task-only"), "{v}");
    }
}
