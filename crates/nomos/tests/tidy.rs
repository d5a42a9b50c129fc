//! Checks that keep the embedding documentation honest: every example is run by the test
//! command and named in the crate guide, and the README's embedding snippet is the crate
//! README's, which runs as a doctest.

use std::path::{Path, PathBuf};

fn crate_dir() -> PathBuf {
    std::path::PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR")
            .unwrap_or_else(|| panic!("CARGO_MANIFEST_DIR is not set: run this under cargo")),
    )
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// The loop in `scripts/test.sh` runs `examples/*.rs`; anything else there would be skipped.
#[test]
fn every_file_in_examples_is_run_by_the_test_command() {
    let script = read(&crate_dir().join("../../scripts/test.sh"));
    assert!(
        script.contains("for example in crates/nomos/examples/*.rs; do")
            && script.contains("cargo run -q --locked -p nomos --example \"$name\""),
        "scripts/test.sh must run every crates/nomos/examples/*.rs"
    );
    let mut names = Vec::new();
    let entries = std::fs::read_dir(crate_dir().join("examples")).unwrap_or_else(|e| panic!("{e}"));
    for entry in entries {
        let path = entry.unwrap_or_else(|e| panic!("{e}")).path();
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        let stem = name.as_deref().and_then(|n| n.strip_suffix(".rs"));
        match stem {
            Some(stem) if path.is_file() => names.push(stem.to_owned()),
            _ => panic!(
                "{} is not a `.rs` file, so the test command's loop would not run it",
                path.display()
            ),
        }
    }
    assert!(
        names.len() >= 6,
        "expected the six examples, found {names:?}"
    );
    let guide = read(&crate_dir().join("src/lib.rs"));
    let unnamed: Vec<&String> = names
        .iter()
        .filter(|n| !guide.contains(&format!("`{n}`")))
        .collect();
    assert!(
        unnamed.is_empty(),
        "examples the crate guide does not name: {unnamed:?}"
    );
}

/// The first ```rust block of a markdown text, after `heading` when one is given.
fn rust_block(markdown: &str, heading: Option<&str>) -> String {
    let start = match heading {
        Some(h) => markdown
            .find(h)
            .unwrap_or_else(|| panic!("no {h:?} section")),
        None => 0,
    };
    let rest = &markdown[start..];
    let open = rest
        .find("```rust\n")
        .unwrap_or_else(|| panic!("no ```rust block"));
    let body = &rest[open + "```rust\n".len()..];
    let close = body
        .find("```")
        .unwrap_or_else(|| panic!("an unclosed ```rust block"));
    body[..close].to_owned()
}

#[test]
fn the_readme_embedding_snippet_is_the_crate_doctest() {
    let readme = read(&crate_dir().join("../../README.md"));
    let crate_readme = read(&crate_dir().join("README.md"));
    assert_eq!(
        rust_block(&readme, Some("## Embedding")),
        rust_block(&crate_readme, None),
        "README.md's Embedding snippet must be crates/nomos/README.md's (the doctest) verbatim"
    );
}

/// Every package that may be published says what it is, where it lives and how to find it.
#[test]
fn every_publishable_crate_has_complete_package_metadata() {
    let root = crate_dir().join("../..");
    let mut manifests = Vec::new();
    for dir in ["crates", "bins"] {
        let entries = std::fs::read_dir(root.join(dir)).unwrap_or_else(|e| panic!("{e}"));
        for entry in entries {
            let manifest = entry
                .unwrap_or_else(|e| panic!("{e}"))
                .path()
                .join("Cargo.toml");
            if manifest.is_file() {
                manifests.push(manifest);
            }
        }
    }
    assert!(manifests.len() >= 10, "found only {manifests:?}");
    let keys = [
        "description",
        "license",
        "repository",
        "readme",
        "keywords",
        "categories",
    ];
    let incomplete: Vec<String> = manifests
        .iter()
        .filter_map(|manifest| {
            let text = read(manifest);
            let package = text.split("\n[").next().unwrap_or_default().to_owned();
            if package.contains("publish = false") {
                return None;
            }
            let missing: Vec<&str> = keys
                .iter()
                .copied()
                .filter(|key| {
                    !package.contains(&format!("\n{key} = "))
                        && !package.contains(&format!("\n{key}.workspace = true"))
                })
                .collect();
            if missing.is_empty() {
                return None;
            }
            Some(format!("{}: {}", manifest.display(), missing.join(", ")))
        })
        .collect();
    assert!(
        incomplete.is_empty(),
        "package metadata missing: {incomplete:#?}"
    );
}
