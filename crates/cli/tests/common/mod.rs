//! Shared by the end-to-end tests: scratch directories and running the binary.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output};

/// The JSON a successful command printed; a failure shows its stderr.
pub fn json_of(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}
pub mod xml;

use std::sync::atomic::{AtomicUsize, Ordering};

/// The `schedlab` binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_schedlab");

/// A fresh directory under the system temp dir, removed on drop.
pub struct Scratch(pub PathBuf);

impl Scratch {
    /// A new empty directory named after `tag`, this process and a counter.
    pub fn new(tag: &str) -> Scratch {
        static N: AtomicUsize = AtomicUsize::new(0);
        let d = std::env::temp_dir().join(format!(
            "schedlab-test-{tag}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Scratch(d)
    }

    /// Write `text` to `name` in the directory and return its path.
    pub fn file(&self, name: &str, text: &str) -> PathBuf {
        let p = self.0.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    /// The path of `name` in the directory.
    pub fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Run `schedlab ARGS` without a backtrace in its messages.
pub fn schedlab(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .env_remove("RUST_BACKTRACE")
        .output()
        .expect("run schedlab")
}

/// A reproduce review's shape: every headline has a default row and at least one other
/// sensitivity row, each with values and a holds flag, and a verdict line that says
/// robust or names what it depends on; every claim has a verdict and a reason; the
/// assumptions and the steps not modelled are listed.
pub fn assert_review(v: &serde_json::Value, min_headlines: usize) {
    let headlines = v["headlines"].as_array().expect("headlines");
    assert!(headlines.len() >= min_headlines, "{}", headlines.len());
    for h in headlines {
        let rows = h["sensitivity"].as_array().unwrap();
        assert!(rows.len() >= 2, "{}", h["headline"]);
        assert_eq!(rows[0]["choice"], "default", "{}", h["headline"]);
        for r in rows {
            assert!(r["holds"].is_boolean(), "{r}");
            assert!(!r["values"].as_object().unwrap().is_empty(), "{r}");
            assert!(!r["setting"].as_str().unwrap().is_empty(), "{r}");
        }
        let verdict = h["verdict"].as_str().unwrap();
        let all_agree = rows.iter().all(|r| r["holds"] == rows[0]["holds"]);
        let expect = match (rows[0]["holds"].as_bool().unwrap(), all_agree) {
            (true, true) => "ROBUST",
            (false, true) => "DOES NOT REPRODUCE",
            _ => "DEPENDS ON A CHOICE",
        };
        assert!(verdict.starts_with(expect), "{}: {verdict}", h["headline"]);
        if !all_agree {
            // It names a choice and setting that flip the conclusion.
            let flip = rows
                .iter()
                .find(|r| r["holds"] != rows[0]["holds"])
                .unwrap();
            let named = format!(
                "{} = {}",
                flip["choice"].as_str().unwrap(),
                flip["setting"].as_str().unwrap()
            );
            assert!(verdict.contains(&named), "{verdict} should name {named}");
        }
    }
    let claims = v["claims"].as_array().expect("claims");
    assert!(!claims.is_empty());
    for c in claims {
        let verdict = c["verdict"].as_str().unwrap();
        assert!(
            ["holds", "does_not_hold", "not_testable"].contains(&verdict),
            "{c}"
        );
        assert!(!c["why"].as_str().unwrap().is_empty(), "{c}");
    }
    assert!(!v["assumptions"].as_array().unwrap().is_empty());
    for n in v["not_modelled"].as_array().unwrap() {
        assert!(!n["why"].as_str().unwrap().is_empty(), "{n}");
    }
}

/// The headline whose text starts with `prefix`.
pub fn headline<'a>(v: &'a serde_json::Value, prefix: &str) -> &'a serde_json::Value {
    v["headlines"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["headline"].as_str().unwrap().starts_with(prefix))
        .unwrap_or_else(|| panic!("no headline {prefix}"))
}

/// The values of the sensitivity row `choice: setting` (setting by prefix) of a headline.
pub fn row<'a>(h: &'a serde_json::Value, choice: &str, setting: &str) -> &'a serde_json::Value {
    let r = h["sensitivity"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["choice"] == choice && r["setting"].as_str().unwrap().starts_with(setting))
        .unwrap_or_else(|| panic!("no row {choice}: {setting} in {}", h["headline"]));
    &r["values"]
}

/// The verdict of the claim that starts with `prefix`.
pub fn claim_verdict<'a>(v: &'a serde_json::Value, prefix: &str) -> &'a str {
    v["claims"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["claim"].as_str().unwrap().starts_with(prefix))
        .unwrap_or_else(|| panic!("no claim {prefix}"))["verdict"]
        .as_str()
        .unwrap()
}

/// This process's effective capabilities (`CapEff` of /proc/self/status; 0 if unknown).
pub fn cap_eff() -> u64 {
    schedlab_linux::privileges::effective_mask()
}

/// Bar colours of the sensitivity charts: the seed's conclusion holds / does not hold.
const HOLDS: &str = "#1f77b4";
const FAILS: &str = "#d62728";

/// `reproduce`'s sensitivity charts of one experiment in `dir`: one per headline (and no
/// more), listed in the JSON's plots, each well-formed SVG titled with its headline, with
/// a panel per value key of the rows in the rows' order and, in each panel whose key has
/// numbers, one bar per row with a number, coloured by whether that row holds.
pub fn assert_sensitivity_plots(v: &serde_json::Value, dir: &std::path::Path, experiment: &str) {
    let headlines = v["headlines"].as_array().expect("headlines");
    let listed: Vec<&str> = v["plots"]
        .as_array()
        .expect("plots")
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    let file = |n: usize| format!("{experiment}-sensitivity-{n}.svg");
    assert!(!dir.join(file(headlines.len() + 1)).exists());
    for (n, h) in headlines.iter().enumerate() {
        let name = file(n + 1);
        assert!(listed.contains(&name.as_str()), "{name} not in {listed:?}");
        let svg = std::fs::read_to_string(dir.join(&name)).unwrap();
        xml::well_formed(&svg).unwrap_or_else(|e| panic!("{name}: {e}"));
        let escape = |s: &str| {
            s.replace('&', "&amp;")
                .replace('<', "&lt;")
                .replace('>', "&gt;")
                .replace('"', "&quot;")
        };
        // Under `all` the headline carries the experiment's name; the chart does not.
        let text = h["headline"].as_str().unwrap();
        let text = text
            .strip_prefix(&format!("{experiment}: "))
            .unwrap_or(text);
        assert!(
            svg.contains(&format!("<title>{}</title>", escape(text))),
            "{name}: title"
        );
        let rows = h["sensitivity"].as_array().unwrap();
        let mut keys: Vec<&str> = Vec::new();
        for r in rows {
            for k in r["values"].as_object().unwrap().keys() {
                if !keys.contains(&k.as_str()) {
                    keys.push(k);
                }
            }
        }
        let panels: Vec<&str> = svg.split(r#"<g class="panel">"#).skip(1).collect();
        assert_eq!(panels.len(), keys.len(), "{name}: panels");
        let colour = |r: &serde_json::Value| {
            if r["holds"].as_bool().unwrap() {
                HOLDS
            } else {
                FAILS
            }
        };
        for (key, panel) in keys.iter().zip(&panels) {
            let panel = &panel[..panel.find("</g>").unwrap()];
            let want: Vec<(usize, &str)> = rows
                .iter()
                .enumerate()
                .filter(|(_, r)| r["values"][key].is_number())
                .map(|(i, r)| (i, colour(r)))
                .collect();
            assert_eq!(bars(panel, "bar"), want, "{name}: bars of {key}");
        }
        // A swatch per row in the row's colour (the first band's).
        let swatches = bars(&svg, "swatch");
        let want: Vec<(usize, &str)> = rows
            .iter()
            .enumerate()
            .map(|(i, r)| (i, colour(r)))
            .collect();
        assert_eq!(swatches[..rows.len()], want[..], "{name}: swatches");
    }
}

/// The (row, fill) of every element of `class` in `svg`, in order.
fn bars<'a>(svg: &'a str, class: &str) -> Vec<(usize, &'a str)> {
    let tag = format!(r#"class="{class}" data-row=""#);
    svg.match_indices(&tag)
        .map(|(at, _)| {
            let rest = &svg[at + tag.len()..];
            let row = rest[..rest.find('"').unwrap()].parse().unwrap();
            let fill = &rest[rest.find(r#"fill=""#).unwrap() + 6..];
            (row, &fill[..fill.find('"').unwrap()])
        })
        .collect()
}

/// libcap's capsh (to run a command with a capability dropped), as build.rs found it; it
/// sets `cfg(capsh)` then, so tests using it are ignored with the reason, not passed,
/// where it is missing.
#[cfg(capsh)]
pub fn capsh() -> &'static str {
    env!("SCHEDLAB_TEST_CAPSH")
}

/// Without capsh the tests that call this are ignored; run anyway, they say why.
#[cfg(not(capsh))]
pub fn capsh() -> &'static str {
    panic!("no capsh was found when this was built (apt-get install libcap2-bin, rebuild)")
}
