//! Repository-wide checks that a compiler cannot make: every Rust file opens with a `//!` doc
//! comment, no test hides behind `#[should_panic]` or `#[ignore]`, no file bakes in its
//! manifest directory at compile time, and `docs/RULES.md` lists
//! every rule ID the repository cites, each proved by a test unless it is under "Not built yet".

use std::collections::BTreeMap;
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
    let root = std::path::PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR")
            .unwrap_or_else(|| panic!("CARGO_MANIFEST_DIR is not set: run this under cargo")),
    )
    .join("../..");
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

// --- docs/RULES.md: every cited rule is listed, every listed rule is tested. ---

/// The heading of the section of rules that no test proves yet.
const NOT_BUILT_HEADING: &str = "## Not built yet";

/// Where the rule list lives, relative to the repository root.
const RULES_PATH: &str = "docs/RULES.md";

/// One rule line of `docs/RULES.md`.
#[derive(Debug)]
struct ListedRule {
    line: usize,
    built: bool,
}

/// The rules `docs/RULES.md` lists, by ID, or the problems with the file itself.
/// A path baked in at compile time (`env!` of the manifest directory) names the checkout that
/// built the binary: a target directory shared by two checkouts reuses the binary, and the
/// test then reads the other checkout's files (or fails where it is gone). Tests look it up
/// at run time instead, where cargo sets it for the package under test.
#[test]
fn no_file_bakes_in_the_manifest_directory_at_compile_time() {
    let needle = concat!("env!(\"", "CARGO_MANIFEST_DIR", "\")");
    let offenders: Vec<String> = workspace_files()
        .into_iter()
        .filter(|path| {
            std::fs::read_to_string(path)
                .unwrap_or_default()
                .contains(needle)
        })
        .map(|path| path.display().to_string())
        .collect();
    assert!(
        offenders.is_empty(),
        "files that bake in the manifest directory (use std::env::var_os(\"CARGO_MANIFEST_DIR\") at run time): {offenders:#?}"
    );
}

fn parse_rules(text: &str) -> Result<BTreeMap<String, ListedRule>, Vec<String>> {
    let mut rules: BTreeMap<String, ListedRule> = BTreeMap::new();
    let mut problems = Vec::new();
    let mut built = true;
    for (idx, line) in text.lines().enumerate() {
        let line_no = idx + 1;
        if line.starts_with("## ") {
            built = line.trim_end() != NOT_BUILT_HEADING;
            continue;
        }
        let Some(rest) = line.strip_prefix("- **") else {
            continue;
        };
        let Some((id, _)) = rest.split_once("**") else {
            problems.push(format!(
                "{RULES_PATH}:{line_no}: a rule line without a closing `**`"
            ));
            continue;
        };
        if rule_ids(id, None).as_slice() != [id] {
            problems.push(format!(
                "{RULES_PATH}:{line_no}: `{id}` is not a rule ID (FAMILY-N)"
            ));
            continue;
        }
        if let Some(first) = rules.get(id) {
            problems.push(format!(
                "{RULES_PATH}:{line_no}: {id} is listed twice (first on line {})",
                first.line
            ));
            continue;
        }
        rules.insert(
            id.to_owned(),
            ListedRule {
                line: line_no,
                built,
            },
        );
    }
    if rules.is_empty() {
        problems.push(format!(
            "{RULES_PATH} lists no rule (lines `- **FAMILY-N** ...`)"
        ));
    }
    if problems.is_empty() {
        Ok(rules)
    } else {
        Err(problems)
    }
}

/// The rule IDs in `text` (`GATE-4`, not `XGATE-4` or `GATE-4a`), in order; with `families`,
/// only IDs of those families.
fn rule_ids(text: &str, families: Option<&[String]>) -> Vec<String> {
    let bytes = text.as_bytes();
    let mut ids = Vec::new();
    let mut idx = 0;
    while idx < bytes.len() {
        let starts_word =
            idx == 0 || !(bytes[idx - 1].is_ascii_alphanumeric() || bytes[idx - 1] == b'_');
        if !(starts_word && bytes[idx].is_ascii_uppercase()) {
            idx += 1;
            continue;
        }
        let family_end = idx
            + bytes[idx..]
                .iter()
                .take_while(|b| b.is_ascii_uppercase())
                .count();
        let digits = bytes[family_end + 1..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        let is_id = family_end - idx >= 2
            && bytes.get(family_end) == Some(&b'-')
            && digits > 0
            && bytes
                .get(family_end + 1 + digits)
                .is_none_or(|b| !(b.is_ascii_alphanumeric() || *b == b'_'));
        if is_id {
            let family = &text[idx..family_end];
            if families.is_none_or(|families| families.iter().any(|f| f == family)) {
                ids.push(text[idx..family_end + 1 + digits].to_owned());
            }
            idx = family_end + 1 + digits;
        } else {
            idx = family_end.max(idx + 1);
        }
    }
    ids
}

/// The part of a file that is a test, if any: files under `tests/`, `*tests.rs`, the part of
/// a Rust file after its `mod tests`, the store contract suite, the golden manifest, the
/// browser tests and the UI's unit tests.
fn test_part<'a>(path: &str, text: &'a str) -> Option<&'a str> {
    let whole = path.split('/').rev().skip(1).any(|dir| dir == "tests")
        || path.ends_with("tests.rs")
        || path == "evals/golden.yaml"
        || path.starts_with("web/e2e/")
        || (path.starts_with("web/src/") && path.ends_with(".test.ts"))
        || path.starts_with("crates/nomos-test-support/src/store_contract/");
    if whole {
        return Some(text);
    }
    if path.ends_with(".rs") {
        return text.find("mod tests").map(|start| &text[start..]);
    }
    None
}

/// Every problem between the rule list and the files that cite rules, each naming the ID and
/// the file: (a) a cited ID the list lacks, (b) a listed rule above "Not built yet" that no
/// test names, (c) a rule under "Not built yet" that a test already names.
fn rule_problems(rules_text: &str, files: &[(String, String)]) -> Vec<String> {
    let rules = match parse_rules(rules_text) {
        Ok(rules) => rules,
        Err(problems) => return problems,
    };
    let mut families: Vec<String> = rules
        .keys()
        .filter_map(|id| id.split_once('-').map(|(family, _)| family.to_owned()))
        .collect();
    families.sort();
    families.dedup();
    let mut problems = Vec::new();
    let mut tested: BTreeMap<String, &str> = BTreeMap::new();
    let cited_in_rules = rule_ids(rules_text, Some(&families));
    let all_files = files
        .iter()
        .map(|(path, text)| (path.as_str(), text.as_str()))
        .chain(std::iter::once((RULES_PATH, rules_text)));
    for (path, text) in all_files {
        let ids = if path == RULES_PATH {
            cited_in_rules.clone()
        } else {
            rule_ids(text, Some(&families))
        };
        let mut reported = Vec::new();
        for id in ids {
            if !rules.contains_key(&id) && !reported.contains(&id) {
                problems.push(format!(
                    "{id} is cited in {path} but {RULES_PATH} does not list it"
                ));
                reported.push(id);
            }
        }
        if path == RULES_PATH {
            continue;
        }
        if let Some(test) = test_part(path, text) {
            for id in rule_ids(test, Some(&families)) {
                tested.entry(id).or_insert(path);
            }
        }
    }
    for (id, rule) in &rules {
        match (rule.built, tested.get(id)) {
            (true, None) => problems.push(format!(
                "{id} is listed in {RULES_PATH}:{} but no test names it: add `// rule: {id}` to \
                 the test that proves it, or move it under \"Not built yet\"",
                rule.line
            )),
            (false, Some(path)) => problems.push(format!(
                "{id} is under \"Not built yet\" in {RULES_PATH}:{} but {path} names it in a \
                 test: move it up to the section of the crate that owns it",
                rule.line
            )),
            _ => {}
        }
    }
    problems
}

/// Every text file of the repository (builds, dependencies and hidden directories aside), as
/// (path relative to the root, text).
fn citing_files() -> Vec<(String, String)> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, String)>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                if !["target", "node_modules", "dist"].contains(&name.as_str())
                    && !name.starts_with('.')
                {
                    walk(root, &path, out);
                }
                continue;
            }
            let relative = path
                .strip_prefix(root)
                .unwrap_or(&path)
                .to_string_lossy()
                .replace('\\', "/");
            // This file names example IDs in its own tests; the rule list is the reference.
            if relative == RULES_PATH || relative.ends_with("nomos-test-support/tests/tidy.rs") {
                continue;
            }
            if let Ok(text) = std::fs::read_to_string(&path) {
                out.push((relative, text));
            }
        }
    }
    let root = std::path::PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR")
            .unwrap_or_else(|| panic!("CARGO_MANIFEST_DIR is not set: run this under cargo")),
    )
    .join("../..");
    let mut files = Vec::new();
    walk(&root, &root, &mut files);
    files
}

#[test]
fn rules_md_lists_every_cited_rule_and_a_test_names_every_built_one() {
    let root = std::path::PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR")
            .unwrap_or_else(|| panic!("CARGO_MANIFEST_DIR is not set: run this under cargo")),
    )
    .join("../..");
    let rules_text = std::fs::read_to_string(root.join(RULES_PATH))
        .unwrap_or_else(|err| panic!("cannot read {RULES_PATH}: {err}"));
    let files = citing_files();
    assert!(
        files.len() > 100,
        "found only {} files; is the root right?",
        files.len()
    );
    let problems = rule_problems(&rules_text, &files);
    assert!(
        problems.is_empty(),
        "{RULES_PATH} and the code disagree:\n{}",
        problems.join("\n")
    );
}

fn demo_rules() -> String {
    "# Rules\n\n## demo crate\n\n- **DEMO-1** One.\n- **DEMO-2** Two (see DEMO-1).\n\n\
     ## Not built yet\n\n- **DEMO-3** Three.\n"
        .to_owned()
}

fn file(path: &str, text: &str) -> (String, String) {
    (path.to_owned(), text.to_owned())
}

#[test]
fn rule_check_passes_when_list_code_and_tests_agree() {
    let files = [
        file(
            "crates/demo/src/lib.rs",
            "//! DEMO-1 and DEMO-3 live here.\n",
        ),
        file(
            "crates/demo/tests/it.rs",
            "// rule: DEMO-1\n// rule: DEMO-2\n",
        ),
    ];
    assert_eq!(rule_problems(&demo_rules(), &files), Vec::<String>::new());
}

#[test]
fn a_cited_id_missing_from_the_list_is_named_with_its_file() {
    let files = [
        file(
            "crates/demo/tests/it.rs",
            "// rule: DEMO-1\n// rule: DEMO-2\n",
        ),
        file("docs/GUIDE.md", "See DEMO-9.\n"),
    ];
    assert_eq!(
        rule_problems(&demo_rules(), &files),
        ["DEMO-9 is cited in docs/GUIDE.md but docs/RULES.md does not list it"]
    );
}

#[test]
fn a_listed_rule_no_test_names_is_a_problem_even_when_code_cites_it() {
    let files = [file(
        "crates/demo/src/lib.rs",
        "// DEMO-2 is decided here\n#[cfg(test)]\nmod tests {\n// rule: DEMO-1\n}\n",
    )];
    let problems = rule_problems(&demo_rules(), &files);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].starts_with("DEMO-2 is listed in docs/RULES.md:6 but no test names it"),
        "{problems:?}"
    );
}

#[test]
fn a_not_built_rule_that_a_test_names_must_move_up() {
    let files = [
        file(
            "crates/demo/tests/it.rs",
            "// rule: DEMO-1\n// rule: DEMO-2\n",
        ),
        file("web/src/lib/demo.test.ts", "// rule: DEMO-3\n"),
    ];
    let problems = rule_problems(&demo_rules(), &files);
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].starts_with("DEMO-3 is under \"Not built yet\" in docs/RULES.md:10 but web/src/lib/demo.test.ts names it"),
        "{problems:?}"
    );
}

#[test]
fn a_rule_listed_twice_is_a_problem() {
    let rules = "## demo\n\n- **DEMO-1** One.\n- **DEMO-1** Again.\n";
    assert_eq!(
        rule_problems(rules, &[]),
        ["docs/RULES.md:4: DEMO-1 is listed twice (first on line 3)"]
    );
}

#[test]
fn rule_ids_are_whole_words_of_a_known_family() {
    let families = ["GATE".to_owned()];
    let text = "GATE-4, (GATE-10) XGATE-1 GATE-2a GATE- SHA-256 GATE-3/4 UTF-8";
    assert_eq!(
        rule_ids(text, Some(&families)),
        ["GATE-4", "GATE-10", "GATE-3"]
    );
    assert_eq!(rule_ids("SHA-256 and UTF-8", None), ["SHA-256", "UTF-8"]);
}

#[test]
fn only_test_code_counts_as_naming_a_rule() {
    let code = "fn decide() {}\n#[cfg(test)]\nmod tests {\n// rule: X\n}\n";
    assert_eq!(
        test_part("crates/a/src/lib.rs", code),
        Some("mod tests {\n// rule: X\n}\n")
    );
    assert_eq!(test_part("crates/a/src/lib.rs", "fn decide() {}\n"), None);
    assert_eq!(
        test_part("crates/a/src/session/tests/gate.rs", "x"),
        Some("x")
    );
    assert_eq!(test_part("crates/a/src/assent/tests.rs", "x"), Some("x"));
    assert_eq!(test_part("evals/golden.yaml", "x"), Some("x"));
    assert_eq!(test_part("evals/README.md", "x"), None);
    assert_eq!(test_part("web/e2e/board.spec.ts", "x"), Some("x"));
    assert_eq!(test_part("web/src/lib/plan.test.ts", "x"), Some("x"));
    assert_eq!(test_part("web/src/lib/plan.ts", "x"), None);
    assert_eq!(test_part("docs/tests.md", "x"), None);
}
