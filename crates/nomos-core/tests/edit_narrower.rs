//! GATE-11's judge against a reference model written from SPEC: commands are built from
//! parts whose class, knowledge and secret reads SPEC fixes (CLASSIFY-1, CLASSIFY-7,
//! SECRET-1), joined with `;` (the class is the strictest part's, a command is unknown when
//! one part is, it reads every part's secrets); the real classifier reads them, and no edit
//! the judge accepts is broader in the model.

use std::collections::BTreeSet;

use nomos_core::CommandClass;
use nomos_core::classify::classify;
use nomos_core::edit::{Broadening, Requested, edit_is_narrower};
use proptest::prelude::*;

/// A part of a command as SPEC reads it: (text, class, unknown program, secret path read).
const PARTS: &[(&str, CommandClass, bool, Option<&str>)] = &[
    ("df -h", CommandClass::ReadOnly, false, None),
    ("cat /var/log/syslog", CommandClass::ReadOnly, false, None),
    (
        "sed -i s/a/b/ /etc/app.conf",
        CommandClass::ConfigMutation,
        false,
        None,
    ),
    (
        "systemctl restart nginx",
        CommandClass::ConfigMutation,
        false,
        None,
    ),
    (
        "rm -rf /var/cache/app",
        CommandClass::Destructive,
        false,
        None,
    ),
    (
        "./deploy.sh --now",
        CommandClass::ConfigMutation,
        true,
        None,
    ),
    (
        "cat /etc/shadow",
        CommandClass::ReadOnly,
        false,
        Some("/etc/shadow"),
    ),
    (
        "cat /etc/ssh/ssh_host_rsa_key",
        CommandClass::ReadOnly,
        false,
        Some("/etc/ssh/ssh_host_rsa_key"),
    ),
];

const HOSTS: &[&str] = &["web-1", "web-2", "db-1", "db-2"];

/// The reference model of one command.
struct Model {
    text: String,
    class: CommandClass,
    unknown: bool,
    secrets: BTreeSet<&'static str>,
}

fn model(parts: &[usize]) -> Model {
    let mut model = Model {
        text: String::new(),
        class: CommandClass::ReadOnly,
        unknown: false,
        secrets: BTreeSet::new(),
    };
    let texts: Vec<&str> = parts.iter().map(|&i| PARTS[i].0).collect();
    model.text = texts.join("; ");
    for &i in parts {
        let (_, class, unknown, secret) = PARTS[i];
        model.class = model.class.max(class);
        model.unknown |= unknown;
        model.secrets.extend(secret);
    }
    model
}

fn hosts(mask: u8) -> Vec<String> {
    HOSTS
        .iter()
        .enumerate()
        .filter(|(i, _)| mask & (1 << i) != 0)
        .map(|(_, h)| (*h).to_owned())
        .collect()
}

/// SPEC GATE-11: broader is a stricter class, a host the request did not cover, no host at
/// all, an unknown program, or a secret the request did not read.
fn broader_in_model(original: &Model, on: &[String], edited: &Model, to: &[String]) -> bool {
    edited.class > original.class
        || to.is_empty()
        || to.iter().any(|h| !on.contains(h))
        || edited.unknown
        || !edited.secrets.is_subset(&original.secrets)
}

fn parts() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(0..PARTS.len(), 1..4)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    // rule: GATE-11
    #[test]
    fn gate_11_no_accepted_edit_is_broader_than_the_request(
        original in parts(),
        edited in parts(),
        keep_text in any::<bool>(),
        on in 1u8..16,
        to in 0u8..16,
    ) {
        let edited = if keep_text { model(&original) } else { model(&edited) };
        let original = model(&original);
        let (on, to) = (hosts(on), hosts(to));
        let was = classify(&original.text);
        let now = classify(&edited.text);
        let verdict = edit_is_narrower(
            Requested { command: &original.text, hosts: &on, classification: &was },
            Requested { command: &edited.text, hosts: &to, classification: &now },
        );
        if verdict.is_ok() {
            prop_assert!(
                !broader_in_model(&original, &on, &edited, &to),
                "accepted a broader edit: `{}` on {:?} -> `{}` on {:?}",
                original.text, on, edited.text, to
            );
        }
    }
}

fn judge(original: &str, on: &[&str], edited: &str, to: &[&str]) -> Result<(), Broadening> {
    let on: Vec<String> = on.iter().map(|h| (*h).to_owned()).collect();
    let to: Vec<String> = to.iter().map(|h| (*h).to_owned()).collect();
    let (was, now) = (classify(original), classify(edited));
    edit_is_narrower(
        Requested {
            command: original,
            hosts: &on,
            classification: &was,
        },
        Requested {
            command: edited,
            hosts: &to,
            classification: &now,
        },
    )
}

// rule: GATE-11
#[test]
fn gate_11_narrowing_edits_are_accepted() {
    // The same class, another expression.
    judge(
        "sed -i s/a/b/ /etc/app.conf",
        &["web-1"],
        "sed -i s/a/c/ /etc/app.conf",
        &["web-1"],
    )
    .unwrap();
    // A lower class.
    judge(
        "rm -rf /var/cache/app",
        &["web-1"],
        "ls /var/cache/app",
        &["web-1"],
    )
    .unwrap();
    // A host dropped from a group; a secret read kept as asked.
    judge(
        "cat /etc/shadow",
        &["web-1", "web-2"],
        "cat /etc/shadow",
        &["web-2"],
    )
    .unwrap();
}

// rule: GATE-11
#[test]
fn gate_11_each_broadening_is_refused_saying_what_broadened() {
    let stricter = judge(
        "systemctl restart nginx",
        &["web-1"],
        "rm -rf /etc/nginx",
        &["web-1"],
    )
    .unwrap_err();
    assert!(
        matches!(
            stricter,
            Broadening::StricterClass {
                original: CommandClass::ConfigMutation,
                edited: CommandClass::Destructive
            }
        ),
        "{stricter:?}"
    );
    assert!(
        stricter
            .to_string()
            .contains("stricter than the request's config_mutation"),
        "{stricter}"
    );
    let added = judge("df -h", &["web-1"], "df -h", &["web-1", "db-1"]).unwrap_err();
    assert_eq!(
        added,
        Broadening::NewHosts {
            added: "db-1".into()
        }
    );
    assert!(added.to_string().contains("may only drop hosts"), "{added}");
    assert_eq!(
        judge("df -h", &["web-1"], "df -h", &[]).unwrap_err(),
        Broadening::NoHosts
    );
    let unknown = judge(
        "rm -rf /var/cache/app",
        &["web-1"],
        "./cleanup.sh",
        &["web-1"],
    )
    .unwrap_err();
    assert!(
        matches!(unknown, Broadening::UnknownProgram { .. }),
        "{unknown:?}"
    );
    let secret = judge(
        "cat /var/log/syslog",
        &["web-1"],
        "cat /etc/shadow",
        &["web-1"],
    )
    .unwrap_err();
    assert!(
        matches!(&secret, Broadening::NewSecret { path, .. } if path == "/etc/shadow"),
        "{secret:?}"
    );
    // A second secret behind the first is a new secret too.
    let hidden = judge(
        "cat /etc/shadow",
        &["web-1"],
        "cat /etc/shadow; cat /etc/ssh/ssh_host_rsa_key",
        &["web-1"],
    )
    .unwrap_err();
    assert!(matches!(hidden, Broadening::NewSecret { .. }), "{hidden:?}");
    assert_eq!(
        judge("df -h", &["web-1"], "  ", &["web-1"]).unwrap_err(),
        Broadening::EmptyCommand
    );
}
