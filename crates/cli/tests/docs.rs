//! The documentation cannot drift: every `sh` code block of README.md and docs/usage.md
//! is run, in order, in a fresh temporary directory holding a copy of `examples/`, with
//! the `schedlab` under test first on PATH. A block passes when every command exits 0
//! (`bash -e -o pipefail`), no `error:` line is printed, and every file it names as an
//! output (`-o`, `--trace-out`, `--jobs-csv`, `--out-dir`, `>`) exists and is not empty.
//! After all blocks, everything written must be under `out/` (the tour leaves nothing in
//! the working directory).
//!
//! A block that cannot run here is marked on the line before its fence with
//! `<!-- doc-test: skip REASON -->`, REASON one of [`REASONS`]; README.md ("This README
//! is tested") documents the convention for writers.

mod common;

use common::Scratch;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// Why a block may be skipped.
const REASONS: &[(&str, &str)] = &[
    ("root", "needs root (real runs, tracing, apt-get)"),
    ("sched_ext", "needs a sched_ext kernel"),
    ("network", "needs the network"),
    (
        "toolchain",
        "builds schedlab or runs the suite, which the suite does anyway",
    ),
    ("long", "runs for minutes (benchmarks)"),
];

/// One fenced `sh` block.
#[derive(Debug)]
struct Block {
    /// Line of the opening fence (1-based).
    line: usize,
    /// The skip reason, if marked.
    skip: Option<String>,
    /// The commands.
    code: String,
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The `sh` blocks of a Markdown text; an error for a bad or dangling marker.
fn blocks(text: &str) -> Result<Vec<Block>, String> {
    let mut out = Vec::new();
    let mut pending: Option<(usize, String)> = None;
    let mut lines = text.lines().enumerate();
    while let Some((i, line)) = lines.next() {
        let t = line.trim();
        if let Some(rest) = t
            .strip_prefix("<!-- doc-test:")
            .and_then(|r| r.strip_suffix("-->"))
        {
            let reason = rest
                .trim()
                .strip_prefix("skip ")
                .map(str::trim)
                .ok_or_else(|| format!("line {}: marker without `skip REASON`: {t}", i + 1))?;
            if !REASONS.iter().any(|r| r.0 == reason) {
                return Err(format!(
                    "line {}: unknown skip reason `{reason}` (known: {})",
                    i + 1,
                    REASONS.iter().map(|r| r.0).collect::<Vec<_>>().join(", ")
                ));
            }
            pending = Some((i + 1, reason.to_string()));
            continue;
        }
        if let Some(lang) = t.strip_prefix("```") {
            let mut code = String::new();
            for (_, l) in lines.by_ref() {
                if l.trim() == "```" {
                    break;
                }
                code.push_str(l);
                code.push('\n');
            }
            let skip = pending.take().map(|p| p.1);
            if lang == "sh" {
                out.push(Block {
                    line: i + 1,
                    skip,
                    code,
                });
            } else if skip.is_some() {
                return Err(format!(
                    "line {}: a skip marker before a `{lang}` block",
                    i + 1
                ));
            }
            continue;
        }
        if let Some((at, _)) = &pending {
            if !t.is_empty() {
                return Err(format!(
                    "line {at}: skip marker not followed by a code block"
                ));
            }
        }
    }
    match pending {
        Some((at, _)) => Err(format!("line {at}: skip marker at the end of the file")),
        None => Ok(out),
    }
}

/// Files a block says it writes: the word after `-o`, `--trace-out`, `--jobs-csv`,
/// `--out-dir` and `>` (relative paths only: they are under the scratch directory).
fn outputs(code: &str) -> Vec<String> {
    let mut found = Vec::new();
    for line in code.lines() {
        let line = line.split(" #").next().unwrap_or(line);
        let words: Vec<&str> = line.split_whitespace().collect();
        for w in words.windows(2) {
            if ["-o", "--trace-out", "--jobs-csv", "--out-dir", ">"].contains(&w[0])
                && !w[1].starts_with('/')
                && !w[1].starts_with('$')
            {
                found.push(w[1].trim_end_matches(';').to_string());
            }
        }
    }
    found
}

/// The binary to run: release when it was built after the debug one (a fresh tree),
/// else the debug binary cargo test just built.
fn binary() -> PathBuf {
    let debug = PathBuf::from(common::BIN);
    let release = repo().join("target/release/schedlab");
    let mtime = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    match (mtime(&release), mtime(&debug)) {
        (Some(r), Some(d)) if r > d => release,
        _ => debug,
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

/// Files under `dir`, relative to it.
fn files(dir: &Path, base: &Path, out: &mut Vec<String>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, base, out);
        } else {
            out.push(p.strip_prefix(base).unwrap().display().to_string());
        }
    }
}

/// A tool a block needs that this machine may lack: (word in the block, how to test).
fn missing_tool(code: &str) -> Option<&'static str> {
    let on_path = |t: &str| {
        std::env::var_os("PATH")
            .is_some_and(|ps| std::env::split_paths(&ps).any(|d| d.join(t).is_file()))
    };
    if code.contains("| jq") && !on_path("jq") {
        return Some("jq (apt-get install jq)");
    }
    if code.contains("/usr/share/doc/rt-app")
        && !Path::new("/usr/share/doc/rt-app/examples").exists()
    {
        return Some("rt-app's examples (apt-get install rt-app)");
    }
    None
}

/// Run every block of `doc` (relative to the repository) and return the failures.
fn run_doc(doc: &str, min_run: usize) -> Vec<String> {
    let text = std::fs::read_to_string(repo().join(doc)).unwrap();
    let blocks = blocks(&text).unwrap_or_else(|e| panic!("{doc}: {e}"));
    let dir = Scratch::new(&format!("doc-{}", doc.replace('/', "-")));
    copy_dir(&repo().join("examples"), &dir.path("examples"));
    let bin = dir.path(".bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(binary(), bin.join("schedlab")).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let in_ci = std::env::var("CI").is_ok_and(|v| v == "true");

    let mut failures = Vec::new();
    let mut ran = 0;
    for b in &blocks {
        let at = format!("{doc}:{}", b.line);
        if let Some(reason) = &b.skip {
            eprintln!("{at}: skipped (marked `{reason}`)");
            continue;
        }
        if let Some(tool) = missing_tool(&b.code) {
            if in_ci {
                failures.push(format!(
                    "{at}: {tool} is missing in CI (.ci/test installs it as root)"
                ));
            } else {
                eprintln!("{at}: skipped: {tool} is not installed");
            }
            continue;
        }
        let t = Instant::now();
        let o = Command::new("bash")
            .args(["-e", "-o", "pipefail", "-c", &b.code])
            .current_dir(&dir.0)
            .env("PATH", &path)
            .env_remove("RUST_BACKTRACE")
            .output()
            .expect("bash");
        ran += 1;
        let stdout = String::from_utf8_lossy(&o.stdout);
        let stderr = String::from_utf8_lossy(&o.stderr);
        eprintln!("{at}: ran in {:.1}s", t.elapsed().as_secs_f64());
        let tail = |s: &str| {
            s.lines()
                .rev()
                .take(12)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect::<Vec<_>>()
                .join("\n")
        };
        if !o.status.success() {
            failures.push(format!(
                "{at}: exit {:?}\n--- block\n{}--- stderr (end)\n{}\n--- stdout (end)\n{}",
                o.status.code(),
                b.code,
                tail(&stderr),
                tail(&stdout)
            ));
            continue;
        }
        if let Some(l) = stderr
            .lines()
            .chain(stdout.lines())
            .find(|l| l.starts_with("error:"))
        {
            failures.push(format!("{at}: printed `{l}`\n--- block\n{}", b.code));
        }
        if stdout.trim().is_empty() && outputs(&b.code).is_empty() {
            failures.push(format!(
                "{at}: printed nothing and wrote nothing\n{}",
                b.code
            ));
        }
        for f in outputs(&b.code) {
            let p = dir.path(&f);
            let size = std::fs::metadata(&p).map(|m| if m.is_dir() { 1 } else { m.len() });
            if !matches!(size, Ok(n) if n > 0) {
                failures.push(format!("{at}: `{f}` was not written (or is empty)"));
            }
        }
    }
    // Only out/ (plus the copied examples and the binary's link) may have appeared.
    let mut all = Vec::new();
    files(&dir.0, &dir.0, &mut all);
    let stray: Vec<&String> = all
        .iter()
        .filter(|f| {
            !f.starts_with("out/") && !f.starts_with("examples/") && !f.starts_with(".bin/")
        })
        .collect();
    if !stray.is_empty() {
        failures.push(format!("{doc}: files written outside out/: {stray:?}"));
    }
    if ran < min_run {
        failures.push(format!(
            "{doc}: only {ran} blocks ran (expected at least {min_run}): are the markers right?"
        ));
    }
    failures
}

#[test]
fn markers_are_checked() {
    let ok = "text\n<!-- doc-test: skip root -->\n```sh\nsudo x\n```\n```sh\necho hi\n```\n";
    let b = blocks(ok).unwrap();
    assert_eq!(b.len(), 2);
    assert_eq!(b[0].skip.as_deref(), Some("root"));
    assert_eq!(b[0].line, 3);
    assert_eq!(b[1].skip, None);
    assert_eq!(b[1].code, "echo hi\n");
    let unknown = "<!-- doc-test: skip slow -->\n```sh\nx\n```\n";
    assert!(blocks(unknown)
        .unwrap_err()
        .contains("unknown skip reason `slow`"));
    let dangling = "<!-- doc-test: skip root -->\nsome prose\n```sh\nx\n```\n";
    assert!(blocks(dangling)
        .unwrap_err()
        .contains("not followed by a code block"));
    let yaml = "<!-- doc-test: skip root -->\n```yaml\na: 1\n```\n";
    assert!(blocks(yaml).is_err());
    // Blocks in other languages are not run, and a `sh` fence inside them is not a block.
    let nested = "```\n```sh\n```\n";
    assert!(blocks(nested).unwrap().is_empty());
}

#[test]
fn outputs_are_found_in_commands() {
    assert_eq!(
        outputs("schedlab x --trace-out out/a.pftrace --jobs-csv out/j.csv   # -o no\n"),
        vec!["out/a.pftrace", "out/j.csv"]
    );
    assert_eq!(
        outputs("a > out/t.txt && b -o out/m.yaml"),
        vec!["out/t.txt", "out/m.yaml"]
    );
    assert!(outputs("a -o /tmp/x > $HOME/y").is_empty());
}

#[test]
fn readme_commands_work_on_a_fresh_directory() {
    let failures = run_doc("README.md", 10);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn usage_examples_work_on_a_fresh_directory() {
    let failures = run_doc("docs/usage.md", 6);
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
