//! Repository-wide style checks that a compiler cannot make: every Rust file opens with a
//! `//!` doc comment, and no test hides behind `#[should_panic]` or `#[ignore]`.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if path.is_dir() {
            if name != "target" && name != "node_modules" && !name.starts_with('.') {
                rust_files(&path, out);
            }
        } else if name.ends_with(".rs") {
            out.push(path);
        }
    }
}

fn workspace_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    for dir in ["crates", "bins", "benches", "fuzz/fuzz_targets"] {
        rust_files(&root.join(dir), &mut files);
    }
    assert!(
        files.len() > 50,
        "found only {} Rust files; is the root right?",
        files.len()
    );
    files
}

#[test]
fn every_rust_file_starts_with_a_module_doc_comment() {
    let missing: Vec<String> = workspace_files()
        .into_iter()
        .filter(|path| {
            let text = std::fs::read_to_string(path).unwrap_or_default();
            !text.trim_start().starts_with("//!")
        })
        .map(|path| path.display().to_string())
        .collect();
    assert!(
        missing.is_empty(),
        "files without a `//!` line: {missing:#?}"
    );
}

#[test]
fn no_test_is_ignored_or_expects_a_panic() {
    let banned = ["#[should_panic", "#[ignore"];
    let offenders: Vec<String> = workspace_files()
        .into_iter()
        .filter(|path| !path.ends_with("tidy.rs"))
        .filter(|path| {
            let text = std::fs::read_to_string(path).unwrap_or_default();
            banned.iter().any(|b| text.contains(b))
        })
        .map(|path| path.display().to_string())
        .collect();
    assert!(
        offenders.is_empty(),
        "tests must assert, not hide: {offenders:#?}"
    );
}
