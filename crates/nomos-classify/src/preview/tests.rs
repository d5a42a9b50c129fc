//! The preview table, row by row, and its readers (GATE-10).

use proptest::prelude::*;

use super::*;
use crate::{CommandClass, Policy, classify};

fn previews(command: &str) -> Vec<String> {
    preview_form(command)
        .map(|f| f.commands)
        .unwrap_or_default()
}

fn all_read_only(form: &PreviewForm) -> bool {
    form.commands
        .iter()
        .all(|c| classify(c).class == CommandClass::ReadOnly)
}

// rule: GATE-10
#[test]
fn apt_changes_preview_as_a_simulation() {
    for (command, preview) in [
        (
            "apt-get install -y nginx",
            "apt-get -s -o Dir::Log::Planner= install nginx",
        ),
        (
            "apt-get upgrade",
            "apt-get -s -o Dir::Log::Planner= upgrade",
        ),
        (
            "apt dist-upgrade -y",
            "apt-get -s -o Dir::Log::Planner= dist-upgrade",
        ),
        (
            "apt-get remove nano",
            "apt-get -s -o Dir::Log::Planner= remove nano",
        ),
        (
            "apt-get purge nano",
            "apt-get -s -o Dir::Log::Planner= purge nano",
        ),
        (
            "sudo apt-get install curl",
            "sudo apt-get -s -o Dir::Log::Planner= install curl",
        ),
    ] {
        let form = preview_form(command).expect(command);
        assert_eq!(form.commands, vec![preview.to_owned()], "{command}");
        assert_eq!(form.parser, PreviewParser::AptSimulation);
        assert!(all_read_only(&form), "{command}: {:?}", form.commands);
    }
    assert_eq!(previews("apt-get update"), Vec::<String>::new());
    assert_eq!(previews("apt-cache policy nginx"), Vec::<String>::new());
}

// rule: GATE-10
#[test]
fn compose_changes_preview_as_config_and_ps() {
    let form = preview_form("docker compose -f /srv/app/compose.yml up -d").unwrap();
    assert_eq!(
        form.commands,
        vec![
            "docker compose -f /srv/app/compose.yml config",
            "docker compose -f /srv/app/compose.yml ps"
        ]
    );
    for verb in ["up -d", "pull", "down", "restart web"] {
        let form = preview_form(&format!("docker compose {verb}")).unwrap();
        assert_eq!(
            form.commands,
            vec!["docker compose config", "docker compose ps"]
        );
        assert!(all_read_only(&form), "{verb}: {:?}", form.commands);
    }
    assert_eq!(previews("docker compose logs web"), Vec::<String>::new());
    assert_eq!(previews("docker compose --weird up"), Vec::<String>::new());
}

// rule: GATE-10
#[test]
fn unit_changes_preview_as_status() {
    for (command, preview) in [
        ("systemctl restart nginx", "systemctl status nginx"),
        (
            "systemctl stop nginx php-fpm",
            "systemctl status nginx php-fpm",
        ),
        ("systemctl disable --now nginx", "systemctl status nginx"),
    ] {
        let form = preview_form(command).unwrap();
        assert_eq!(form.commands, vec![preview.to_owned()]);
        assert_eq!(form.parser, PreviewParser::UnitStatus);
        assert!(all_read_only(&form), "{command}");
    }
    assert!(PreviewParser::UnitStatus.exit_ok(3));
    assert!(!PreviewParser::Raw.exit_ok(3));
    assert_eq!(previews("systemctl start nginx"), Vec::<String>::new());
    assert_eq!(previews("systemctl restart"), Vec::<String>::new());
}

// rule: GATE-10
#[test]
fn sed_in_place_previews_without_in_place_and_the_file() {
    for (command, sed) in [
        ("sed -i 's/a/b/' /etc/x.conf", "sed s/a/b/ /etc/x.conf"),
        (
            "sed -i.bak -e 's/a b/c/' /etc/x.conf",
            "sed -e 's/a b/c/' /etc/x.conf",
        ),
        ("sed -ni 'p' /etc/x.conf", "sed -n p /etc/x.conf"),
        (
            "sed --in-place=.orig -E 's/(a)/b/' f",
            "sed -E 's/(a)/b/' f",
        ),
    ] {
        let form = preview_form(command).expect(command);
        let file = form.file.clone().unwrap();
        assert_eq!(form.commands, vec![sed.to_owned(), format!("cat {file}")]);
        assert_eq!(form.parser, PreviewParser::SedDiff);
        assert!(all_read_only(&form), "{command}: {:?}", form.commands);
    }
    // Not in place, more than one file, or a file only known at run time: no preview.
    assert_eq!(previews("sed 's/a/b/' f"), Vec::<String>::new());
    assert_eq!(previews("sed -i 's/a/b/' f g"), Vec::<String>::new());
    assert_eq!(previews("sed -i 's/a/b/' $F"), Vec::<String>::new());
}

// rule: GATE-10
#[test]
fn a_preview_that_would_write_is_not_read_only() {
    // `w FILE` in the script writes even without -i: the caller must not run it.
    let form = preview_form("sed -i 's/a/b/w /tmp/out' /etc/x.conf").unwrap();
    assert_ne!(classify(&form.commands[0]).class, CommandClass::ReadOnly);
}

#[test]
fn lists_pipes_and_redirections_have_no_preview() {
    for command in [
        "apt-get install x && rm -rf /",
        "apt-get install x > /tmp/log",
        "A=1 systemctl restart nginx",
        "systemctl restart nginx | cat",
        "echo 'open",
    ] {
        assert_eq!(previews(command), Vec::<String>::new(), "{command}");
    }
}

// rule: GATE-10
#[test]
fn apt_simulation_lines_name_the_packages_that_would_change() {
    // The form Debian's apt-get prints for `-s` (apt-pkg's simulation: "Inst", "Conf",
    // "Remv" and "Purg" lines, installed version in brackets, candidate in parentheses).
    let text = "\
NOTE: This is only a simulation!
      apt-get needs root privileges for real execution.
Reading package lists...
Building dependency tree...
The following NEW packages will be installed:
  curl libcurl4
The following packages will be upgraded:
  libssl3
1 upgraded, 2 newly installed, 1 to remove and 0 not upgraded.
Remv nano [7.2-1]
Inst libssl3 [3.0.11-1~deb12u1] (3.0.11-1~deb12u2 Debian-Security:12/stable-security [amd64])
Inst libcurl4 (7.88.1-10+deb12u5 Debian:12.5/stable [amd64])
Inst curl (7.88.1-10+deb12u5 Debian:12.5/stable [amd64])
Conf libssl3 (3.0.11-1~deb12u2 Debian-Security:12/stable-security [amd64])
Conf libcurl4 (7.88.1-10+deb12u5 Debian:12.5/stable [amd64])
Conf curl (7.88.1-10+deb12u5 Debian:12.5/stable [amd64])
Purg vim-tiny [2:9.0.1378-2]
";
    let changes = parse_apt_simulation(text);
    let summary: Vec<(PackageAction, &str, Option<&str>, Option<&str>)> = changes
        .iter()
        .map(|c| {
            (
                c.action,
                c.name.as_str(),
                c.from.as_deref(),
                c.to.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            (PackageAction::Remove, "nano", Some("7.2-1"), None),
            (
                PackageAction::Upgrade,
                "libssl3",
                Some("3.0.11-1~deb12u1"),
                Some("3.0.11-1~deb12u2")
            ),
            (
                PackageAction::Install,
                "libcurl4",
                None,
                Some("7.88.1-10+deb12u5")
            ),
            (
                PackageAction::Install,
                "curl",
                None,
                Some("7.88.1-10+deb12u5")
            ),
            (PackageAction::Purge, "vim-tiny", Some("2:9.0.1378-2"), None),
        ]
    );
    assert!(parse_apt_simulation("E: Unable to locate package nope\n").is_empty());
}

// rule: GATE-10
#[test]
fn a_unified_diff_shows_the_changed_lines_with_context() {
    let old = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm\n";
    let new = "a\nb\nc\nd\nE\nf\ng\nh\ni\nj\nk\nl\nm\nn\n";
    assert_eq!(
        unified_diff(old, new, "etc/x"),
        "--- a/etc/x\n+++ b/etc/x\n\
         @@ -2,7 +2,7 @@\n b\n c\n d\n-e\n+E\n f\n g\n h\n\
         @@ -11,3 +11,4 @@\n k\n l\n m\n+n\n"
    );
    assert_eq!(unified_diff(old, old, "x"), "");
    assert_eq!(
        unified_diff("", "new\n", "x"),
        "--- a/x\n+++ b/x\n@@ -0,0 +1 @@\n+new\n"
    );
}

/// Applies a unified diff to `old`, as `patch` would (a reference reader for the property).
fn apply(old: &str, diff: &str) -> String {
    let a: Vec<&str> = old.lines().collect();
    let mut out: Vec<String> = Vec::new();
    let mut at = 0;
    for line in diff.lines().skip(2) {
        if let Some(header) = line.strip_prefix("@@ -") {
            let range = header.split(' ').next().unwrap();
            let mut parts = range.split(',');
            let start: usize = parts.next().unwrap().parse().unwrap();
            let len: usize = parts.next().map_or(1, |l| l.parse().unwrap());
            let first = if len == 0 { start } else { start - 1 };
            while at < first {
                out.push(a[at].to_owned());
                at += 1;
            }
        } else if let Some(kept) = line.strip_prefix(' ') {
            assert_eq!(a[at], kept);
            out.push(kept.to_owned());
            at += 1;
        } else if let Some(gone) = line.strip_prefix('-') {
            assert_eq!(a[at], gone);
            at += 1;
        } else if let Some(added) = line.strip_prefix('+') {
            out.push(added.to_owned());
        }
    }
    out.extend(a[at..].iter().map(|s| (*s).to_owned()));
    out.join("\n")
}

proptest! {
    #[test]
    fn a_unified_diff_applied_to_the_old_text_gives_the_new(
        old in proptest::collection::vec("[abc]", 0..12),
        new in proptest::collection::vec("[abc]", 0..12),
    ) {
        let (old, new) = (old.join("\n"), new.join("\n"));
        let diff = unified_diff(&old, &new, "f");
        prop_assert_eq!(apply(&old, &diff), new);
    }
}

/// A reference model of "this command changes something", written from SPEC GATE-10 and
/// CLASSIFY-4 for the programs the table previews, not from the table. A sed preview is
/// judged by running it with the real `sed` in an empty directory holding one file: it
/// mutates if the directory changed in any way.
fn mutates(preview: &str, words: &[String]) -> bool {
    let words: Vec<&str> = words
        .iter()
        .map(String::as_str)
        .skip_while(|w| *w == "sudo")
        .collect();
    match words.first().copied() {
        Some("apt-get" | "apt") => !words.contains(&"-s"),
        Some("systemctl") => words.get(1) != Some(&"status"),
        Some("docker") => !matches!(words.last().copied(), Some("config" | "ps")),
        Some("cat") => false,
        Some("sed") => sed_changes_its_directory(preview.trim_start_matches("sudo ")),
        _ => true,
    }
}

fn sed_changes_its_directory(preview: &str) -> bool {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("nomos-preview-oracle-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("x.conf"), "a\nb\n").unwrap();
    let _ = std::process::Command::new("sh")
        .arg("-c")
        .arg(preview)
        .current_dir(&dir)
        .stdin(std::process::Stdio::null())
        .output();
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let same =
        names == ["x.conf"] && std::fs::read_to_string(dir.join("x.conf")).unwrap() == "a\nb\n";
    std::fs::remove_dir_all(&dir).unwrap();
    !same
}

fn word() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("-i".to_owned()),
        Just("-i.bak".to_owned()),
        Just("-ni".to_owned()),
        Just("-in".to_owned()),
        Just("-Ei".to_owned()),
        Just("-e".to_owned()),
        Just("-n".to_owned()),
        Just("-s".to_owned()),
        Just("-y".to_owned()),
        Just("--in-place".to_owned()),
        Just("--in-place=.orig".to_owned()),
        Just("--now".to_owned()),
        Just("-f".to_owned()),
        Just("s/a/b/".to_owned()),
        Just("s/a/b/w out".to_owned()),
        Just("x.conf".to_owned()),
        Just("nginx".to_owned()),
        Just("install".to_owned()),
        Just("up".to_owned()),
        Just("restart".to_owned()),
        Just("status".to_owned()),
        Just("config".to_owned()),
        Just(";".to_owned()),
        Just("$(rm -rf /)".to_owned()),
    ]
}

fn command() -> impl Strategy<Value = String> {
    let program = prop_oneof![
        Just("sed"),
        Just("sudo sed"),
        Just("apt-get"),
        Just("apt"),
        Just("systemctl"),
        Just("docker compose"),
    ];
    (program, proptest::collection::vec(word(), 0..6)).prop_map(|(program, words)| {
        let mut command = program.to_owned();
        for word in words {
            command.push(' ');
            command.push_str(&quote(&word));
        }
        command
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]
    // rule: GATE-10
    #[test]
    fn the_preview_is_never_a_mutation(command in command()) {
        if let Some(form) = Policy::empty().preview_form(&command) {
            for preview in &form.commands {
                // What the runtime may run: a preview that classifies read_only.
                if classify(preview).class == CommandClass::ReadOnly {
                    let words = simple_words(preview).expect("a preview is one simple command");
                    prop_assert!(!mutates(preview, &words), "{command} -> {preview}");
                }
            }
        }
    }
}

// rule: GATE-10
#[test]
fn a_sed_preview_run_leaves_the_file_as_it_was() {
    let dir = std::env::temp_dir().join(format!("nomos-sed-preview-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("x.conf");
    std::fs::write(&file, "listen 80\nname a\n").unwrap();
    let command = format!("sed -i.bak -e 's/80/8080/' {}", file.display());
    let form = preview_form(&command).unwrap();
    let ran = std::process::Command::new("sh")
        .arg("-c")
        .arg(&form.commands[0])
        .output()
        .unwrap();
    assert!(ran.status.success());
    assert_eq!(
        String::from_utf8_lossy(&ran.stdout),
        "listen 8080\nname a\n"
    );
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "listen 80\nname a\n"
    );
    assert!(!dir.join("x.conf.bak").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

const POLICY: &str = r#"
[[preview]]
prefix = ["ufw", "allow"]
commands = ["ufw status numbered"]
examples = [{ command = "ufw allow 22/tcp", preview = ["ufw status numbered"] }]

[[rule]]
prefix = ["ufw", "status"]
class = "read_only"
reason = "firewall status only reads"
match = ["ufw status numbered"]
"#;

// rule: GATE-8
// rule: GATE-10
#[test]
fn a_policy_adds_preview_rows_checked_by_their_examples() {
    let policy = Policy::parse(POLICY, "policy.toml").unwrap();
    let form = policy.preview_form("ufw allow 443/tcp").unwrap();
    assert_eq!(form.commands, vec!["ufw status numbered"]);
    assert_eq!(form.parser, PreviewParser::Raw);
    // The built-in rows stay.
    assert!(policy.preview_form("systemctl restart nginx").is_some());
}

// rule: GATE-8
#[test]
fn a_preview_row_whose_example_is_wrong_or_writes_names_its_line() {
    let wrong = "\n[[preview]]\nprefix = [\"ufw\", \"allow\"]\ncommands = [\"ufw status {args}\"]\n\
                 examples = [{ command = \"ufw allow 22\", preview = [\"ufw status\"] }]\n";
    let err = Policy::parse(wrong, "p.toml").unwrap_err();
    assert_eq!(err.line, 2, "{err}");
    assert!(
        err.to_string()
            .starts_with("p.toml:2: preview example `ufw allow 22` gives [`ufw status 22`]"),
        "{err}"
    );

    let writes = "[[preview]]\nprefix = [\"ufw\", \"allow\"]\ncommands = [\"ufw reload\"]\n\
                  examples = [{ command = \"ufw allow 22\", preview = [\"ufw reload\"] }]\n";
    let err = Policy::parse(writes, "p.toml").unwrap_err();
    assert!(
        err.to_string().contains("a preview must be read_only"),
        "{err}"
    );

    let bare = "[[preview]]\nprefix = [\"ufw\"]\ncommands = [\"ufw status\"]\n";
    let err = Policy::parse(bare, "p.toml").unwrap_err();
    assert_eq!(err.kind, crate::PolicyErrorKind::PreviewIncomplete);
}

#[test]
fn the_sed_oracle_sees_a_write_and_a_new_file() {
    assert!(sed_changes_its_directory("sed -i s/a/b/ x.conf"));
    assert!(sed_changes_its_directory("sed 's/a/b/w out' x.conf"));
    assert!(!sed_changes_its_directory("sed s/a/b/ x.conf"));
}
