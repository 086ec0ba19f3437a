//! docs/errors.md cannot drift: every message it lists is printed by schedlab's code (or
//! by the library it names) and every test it names exists.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The first code span of a table cell (`...`).
fn code(cell: &str) -> Option<&str> {
    let start = cell.find('`')? + 1;
    let len = cell[start..].find('`')?;
    Some(&cell[start..start + len])
}

#[test]
fn every_listed_message_exists_and_every_named_test_exists() {
    let doc = std::fs::read_to_string(root().join("docs/errors.md")).unwrap();
    let mut files = Vec::new();
    rust_files(&root().join("crates"), &mut files);
    let texts: Vec<(PathBuf, String)> = files
        .into_iter()
        .map(|p| {
            let t = std::fs::read_to_string(&p).unwrap();
            (p, t)
        })
        .collect();
    // Code outside tests: files not under tests/ and not named tests.rs, up to their
    // `#[cfg(test)]` module.
    let source = |frag: &str| {
        texts.iter().any(|(p, t)| {
            let s = p.to_string_lossy();
            let body = t.split("#[cfg(test)]").next().unwrap_or("");
            !s.contains("/tests/") && !s.ends_with("tests.rs") && body.contains(frag)
        })
    };
    let test_exists = |name: &str| {
        let f = format!("fn {name}(");
        texts.iter().any(|(_, t)| t.contains(&f))
    };
    let mut rows = 0;
    for line in doc.lines().filter(|l| l.starts_with("| ")) {
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        if cells.len() < 5 || cells[0].contains("Exit") {
            continue;
        }
        let Some(msg) = code(cells[1]) else { continue };
        let from_library = cells[2].contains("(from serde");
        assert!(
            from_library || source(msg),
            "docs/errors.md lists `{msg}`, which no source file prints"
        );
        let test = code(cells[4]).unwrap_or_else(|| panic!("no test named for `{msg}`"));
        assert!(
            test_exists(test),
            "docs/errors.md names test `{test}`, which does not exist"
        );
        rows += 1;
    }
    assert!(rows >= 25, "only {rows} rows read from docs/errors.md");
}
