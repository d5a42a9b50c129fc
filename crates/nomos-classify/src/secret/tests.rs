//! SECRET-1 at the classifier: the shared table, the defaults, and the policy's rows.

use crate::secret_table::{self, SecretExpectation};
use crate::{CommandClass, Policy, PolicyErrorKind, classify};

const TABLE: &str = include_str!("../../../../fixtures/classify/secret-reads.tsv");

// rule: SECRET-1
#[test]
fn every_secret_read_of_the_table_names_its_path_and_no_near_miss_does() {
    let cases = secret_table::parse(TABLE).unwrap();
    let secret = cases
        .iter()
        .filter(|c| matches!(c.expect, SecretExpectation::Secret(_)))
        .count();
    assert!(secret >= 80, "{secret} secret reads");
    assert!(
        cases.len() - secret >= 40,
        "{} near misses",
        cases.len() - secret
    );
    let mut wrong = Vec::new();
    for case in &cases {
        let found = classify(&case.command);
        match &case.expect {
            SecretExpectation::Secret(path) => {
                let named = found.secret_read() == Some(path.as_str())
                    && found.reason.contains("secret path")
                    && found.reason.contains("SECRET-1");
                if !named {
                    wrong.push(format!(
                        "line {}: `{}` should read `{path}`: {:?} ({})",
                        case.line,
                        case.command,
                        found.secret_read(),
                        found.reason
                    ));
                }
            }
            SecretExpectation::Ordinary => {
                if let Some(path) = found.secret_read() {
                    wrong.push(format!(
                        "line {}: `{}` reads no secret, got `{path}` ({})",
                        case.line, case.command, found.reason
                    ));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

// rule: SECRET-1
#[test]
fn a_secret_read_keeps_its_honest_class_and_its_reason_names_the_path() {
    let found = classify("cat /tmp/../etc/shadow");
    assert_eq!(found.class, CommandClass::ReadOnly);
    assert_eq!(found.secret_read(), Some("/etc/shadow"));
    assert!(
        found
            .reason
            .contains("`/tmp/../etc/shadow` (`/etc/shadow`)"),
        "{}",
        found.reason
    );
    let found = classify("cp /etc/shadow /tmp/x");
    assert_eq!(found.class, CommandClass::ConfigMutation);
    assert_eq!(found.secret_read(), Some("/etc/shadow"));
}

#[test]
fn a_malformed_table_line_is_named() {
    let err = secret_table::parse("secret\t-\tcat x\n").unwrap_err();
    assert_eq!(err.line, 1);
    let err = secret_table::parse("# c\nmaybe\t-\tcat x\n").unwrap_err();
    assert_eq!(err.line, 2);
    assert!(err.problem.contains("maybe"), "{}", err.problem);
}

// rule: SECRET-1
#[test]
fn policy_rows_add_and_remove_secret_paths_checked_at_load() {
    let policy = Policy::parse(
        r#"
[[secret]]
add = "/srv/app/config/credentials.yml"
match = ["cat /srv/app/config/credentials.yml"]
not_match = ["cat /srv/app/config/app.yml"]

[[secret]]
remove = "/root/.*"
not_match = ["cat /root/.profile"]
"#,
        "policy.toml",
    )
    .unwrap();
    assert_eq!(
        policy
            .classify("grep token /srv/app/config/credentials.yml")
            .secret_read(),
        Some("/srv/app/config/credentials.yml")
    );
    assert_eq!(policy.classify("cat /root/.profile").secret_read(), None);
    assert_eq!(
        policy.classify("cat /root/.bash_history").secret_read(),
        Some("/root/.bash_history")
    );
    assert_eq!(
        policy.classify("cat /etc/shadow").secret_read(),
        Some("/etc/shadow")
    );
    assert_eq!(
        classify("cat /root/.profile").secret_read(),
        Some("/root/.profile")
    );
}

// rule: SECRET-1
#[test]
fn a_secret_row_whose_examples_fail_stops_the_load_with_the_line() {
    let err = Policy::parse(
        "\n[[secret]]\nadd = \"/srv/x\"\nmatch = [\"cat /srv/y\"]\n",
        "p.toml",
    )
    .unwrap_err();
    assert_eq!(err.line, 2);
    assert_eq!(
        err.kind,
        PolicyErrorKind::SecretExampleNotSecret("cat /srv/y".to_owned())
    );
    let err = Policy::parse(
        "[[secret]]\nremove = \"/etc/nothing\"\nnot_match = [\"ls\"]\n",
        "p.toml",
    )
    .unwrap_err();
    assert_eq!(
        err.kind,
        PolicyErrorKind::SecretNotListed("/etc/nothing".to_owned())
    );
    let err = Policy::parse("[[secret]]\nadd = \"/srv/x\"\n", "p.toml").unwrap_err();
    assert!(err.to_string().contains("needs examples"), "{err}");
    let err = Policy::parse(
        "[[secret]]\nadd = \"/srv/x\"\nremove = \"/etc/shadow\"\nmatch = [\"cat /srv/x\"]\n",
        "p.toml",
    )
    .unwrap_err();
    assert!(err.to_string().contains("exactly one"), "{err}");
    let err = Policy::parse(
        "[[secret]]\nadd = \"/srv/x\"\nnot_match = [\"cat /etc/shadow\"]\n",
        "p.toml",
    )
    .unwrap_err();
    assert_eq!(
        err.kind,
        PolicyErrorKind::SecretExampleSecret {
            example: "cat /etc/shadow".to_owned(),
            path: "/etc/shadow".to_owned()
        }
    );
}

// rule: SECRET-1
#[test]
fn whole_scripts_that_print_secret_files_name_the_path() {
    let dir = std::path::PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR")
            .unwrap_or_else(|| panic!("CARGO_MANIFEST_DIR is not set: run this under cargo")),
    )
    .join("../../fixtures/classify/secret-scripts");
    let mut scripts: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    scripts.sort();
    assert!(scripts.len() >= 15, "{} scripts", scripts.len());
    let mut wrong = Vec::new();
    for script in &scripts {
        let text = std::fs::read_to_string(script).unwrap();
        let expected = text
            .lines()
            .find_map(|line| line.strip_prefix("# secret: "))
            .unwrap_or_else(|| panic!("{} names no `# secret:` path", script.display()));
        let found = classify(&text);
        if found.secret_read() != Some(expected) {
            wrong.push(format!(
                "{}: expected `{expected}`, got {:?} ({})",
                script.display(),
                found.secret_read(),
                found.reason
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
