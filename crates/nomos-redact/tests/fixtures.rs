//! SECRET-2: every fixture of `tests/fixtures/` (one file per secret kind) through the
//! built-in scanner: each true positive reads exactly as its `=== as` block, and each
//! look-alike comes through unchanged.

use nomos_redact::Scanner;

enum Sample {
    Redact { input: String, expected: String },
    Keep(String),
}

fn samples(text: &str) -> Vec<Sample> {
    let mut out = Vec::new();
    let mut blocks: Vec<(&str, String)> = Vec::new();
    for line in text.lines() {
        if let Some(tag) = line.strip_prefix("=== ") {
            blocks.push((tag, String::new()));
        } else if let Some((_, body)) = blocks.last_mut() {
            body.push_str(line);
            body.push('\n');
        }
    }
    let mut blocks = blocks.into_iter().map(|(tag, mut body)| {
        body.pop();
        (tag, body)
    });
    while let Some((tag, body)) = blocks.next() {
        match tag {
            "redact" => {
                let Some(("as", expected)) = blocks.next() else {
                    panic!("a `=== redact` block needs its `=== as` block");
                };
                out.push(Sample::Redact {
                    input: body,
                    expected,
                });
            }
            "keep" => out.push(Sample::Keep(body)),
            other => panic!("unknown block `=== {other}`"),
        }
    }
    out
}

// rule: SECRET-2
#[test]
fn every_fixture_redacts_its_secrets_and_keeps_its_look_alikes() {
    let dir = std::path::PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR")
            .unwrap_or_else(|| panic!("CARGO_MANIFEST_DIR is not set: run this under cargo")),
    )
    .join("tests/fixtures");
    let scanner = Scanner::builtin();
    let mut files = 0;
    let mut failures = Vec::new();
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    paths.sort();
    for path in paths {
        let text = std::fs::read_to_string(&path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let (mut positives, mut keeps) = (0, 0);
        for sample in samples(&text) {
            match sample {
                Sample::Redact { input, expected } => {
                    positives += 1;
                    let got = scanner.redact(&input);
                    if got.text != expected || got.total() == 0 {
                        failures.push(format!("{name}: expected\n{expected}\ngot\n{}\n", got.text));
                    }
                }
                Sample::Keep(input) => {
                    keeps += 1;
                    let got = scanner.redact(&input);
                    if got.text != input || got.total() != 0 {
                        failures.push(format!("{name}: look-alike changed\n{}\n", got.text));
                    }
                }
            }
        }
        assert!(
            positives > 0 && keeps > 0,
            "{name} needs both kinds of sample"
        );
        files += 1;
    }
    assert!(files >= 12, "{files} fixture files");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// rule: SECRET-2
#[test]
fn counts_name_each_kind_once_with_its_number() {
    let text = "DB_PASSWORD=one\nAPI_TOKEN=two\nAKIAABCDEFGHIJKLMNOP\n";
    let got = Scanner::builtin().redact(text);
    let counts: Vec<(&str, usize)> = got
        .counts
        .iter()
        .map(|c| (c.kind.as_str(), c.count))
        .collect();
    assert_eq!(counts, [("aws key", 1), ("secret value", 2)]);
    assert_eq!(got.total(), 3);
}

#[test]
fn a_rule_file_with_a_bad_regex_is_refused_naming_the_rule() {
    let err = Scanner::from_toml(
        "[[rule]]\nid = \"broken\"\nkind = \"x\"\nsource = \"t\"\nregex = \"(\"\n",
    )
    .unwrap_err();
    assert!(err.to_string().contains("`broken`"), "{err}");
}

#[test]
fn every_built_in_rule_has_a_source() {
    let scanner = Scanner::builtin();
    assert!(scanner.rules().len() >= 30);
    for rule in scanner.rules() {
        assert!(!rule.source().is_empty(), "{}", rule.id());
    }
}
