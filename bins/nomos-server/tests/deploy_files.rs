//! The deployment files in `deploy/`, checked without building an image or starting a
//! service: the systemd unit with `systemd-analyze verify` when it is installed (and its
//! hardening keys statically in any case), the compose file's structure, and the
//! Dockerfile's stages (its build is documented in the file, not run here).

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

use yaml_serde::Value;

fn deploy(name: &str) -> PathBuf {
    std::path::PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR")
            .unwrap_or_else(|| panic!("CARGO_MANIFEST_DIR is not set: run this under cargo")),
    )
    .join("../../deploy")
    .join(name)
}

fn read(name: &str) -> String {
    std::fs::read_to_string(deploy(name)).unwrap()
}

/// The unit's `[Section]` -> key -> values (a key may repeat).
fn unit_keys(text: &str) -> BTreeMap<String, BTreeMap<String, Vec<String>>> {
    let mut sections: BTreeMap<String, BTreeMap<String, Vec<String>>> = BTreeMap::new();
    let mut current = String::new();
    for (idx, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            current = name.to_owned();
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            panic!("nomos.service line {}: not KEY=VALUE: {line}", idx + 1);
        };
        assert!(
            !current.is_empty(),
            "line {}: key outside a section",
            idx + 1
        );
        sections
            .entry(current.clone())
            .or_default()
            .entry(key.trim().to_owned())
            .or_default()
            .push(value.trim().to_owned());
    }
    sections
}

#[test]
fn the_systemd_unit_is_hardened_and_verifies() {
    let text = read("nomos.service");
    let sections = unit_keys(&text);
    assert_eq!(
        sections.keys().map(String::as_str).collect::<Vec<_>>(),
        ["Install", "Service", "Unit"]
    );
    let service = &sections["Service"];
    let one = |key: &str| -> &str {
        match service.get(key).map(Vec::as_slice) {
            Some([value]) => value,
            other => panic!("[Service] {key}: expected one value, found {other:?}"),
        }
    };
    assert_eq!(one("DynamicUser"), "yes");
    assert_eq!(one("StateDirectory"), "nomos");
    assert_eq!(one("StateDirectoryMode"), "0700");
    assert_eq!(one("ProtectSystem"), "strict");
    assert_eq!(one("NoNewPrivileges"), "yes");
    assert_eq!(one("ProtectHome"), "yes");
    assert_eq!(one("PrivateTmp"), "yes");
    assert_eq!(one("UMask"), "0077");
    assert_eq!(one("CapabilityBoundingSet"), "");
    assert!(one("ExecStart").ends_with("nomos-server --config /etc/nomos/nomos.toml serve"));
    assert!(one("ExecStartPre").ends_with("check-config"));
    assert!(
        service["Environment"].contains(&"NOMOS_DATA_DIR=/var/lib/nomos".to_owned()),
        "the data directory is the StateDirectory"
    );
    assert_eq!(sections["Install"]["WantedBy"], ["multi-user.target"]);

    // systemd-analyze checks every key and the binaries; point it at the built binary.
    let Ok(version) = Command::new("systemd-analyze").arg("--version").output() else {
        println!("systemd-analyze is not available: the unit's keys were checked statically only");
        return;
    };
    assert!(version.status.success());
    let dir = tempfile::tempdir().unwrap();
    let unit = dir.path().join("nomos.service");
    let binary = env!("CARGO_BIN_EXE_nomos-server");
    std::fs::write(&unit, text.replace("/usr/local/bin/nomos-server", binary)).unwrap();
    let verify = Command::new("systemd-analyze")
        .arg("verify")
        .arg(&unit)
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&verify.stdout),
        String::from_utf8_lossy(&verify.stderr)
    );
    assert!(verify.status.success(), "{said}");
    // Unknown keys are only warned about: any output at all is a finding.
    assert_eq!(said.trim(), "", "systemd-analyze verify: {said}");
    println!("systemd-analyze verify: the unit is valid");
}

fn map<'a>(value: &'a Value, key: &str) -> &'a Value {
    match value.get(key) {
        Some(found) => found,
        None => panic!("compose.yaml: `{key}` is missing in {value:?}"),
    }
}

fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => panic!("compose.yaml: expected a string, found {other:?}"),
    }
}

#[test]
fn the_compose_file_runs_nomos_on_postgres_with_volumes_and_health_checks() {
    let compose: Value = yaml_serde::from_str(&read("compose.yaml")).unwrap();
    let services = map(&compose, "services");
    let Value::Mapping(all) = services else {
        panic!("services is not a mapping");
    };
    let names: Vec<String> = all.keys().map(text).collect();
    assert_eq!(names, ["postgres", "nomos"]);

    let postgres = map(services, "postgres");
    assert!(text(map(postgres, "image")).starts_with("postgres:"));
    let test = format!("{:?}", map(map(postgres, "healthcheck"), "test"));
    assert!(test.contains("pg_isready"), "{test}");

    let nomos = map(services, "nomos");
    assert!(!text(map(nomos, "image")).is_empty());
    assert_eq!(
        text(map(map(nomos, "build"), "dockerfile")),
        "deploy/Dockerfile"
    );
    let condition = map(map(map(nomos, "depends_on"), "postgres"), "condition");
    assert_eq!(text(condition), "service_healthy");
    let url = text(map(map(nomos, "environment"), "NOMOS_DATABASE_URL"));
    assert!(
        url.starts_with("postgres://nomos:${POSTGRES_PASSWORD"),
        "{url}"
    );
    assert!(url.ends_with("@postgres:5432/nomos"), "{url}");
    let test = format!("{:?}", map(map(nomos, "healthcheck"), "test"));
    assert!(test.contains("/readyz"), "{test}");
    let ports = format!("{:?}", map(nomos, "ports"));
    assert!(ports.contains("127.0.0.1:8092:8092"), "{ports}");

    // Every named volume a service mounts is declared, and nomos keeps /data in one.
    let declared = map(&compose, "volumes");
    let mut mounted = Vec::new();
    for service in [postgres, nomos] {
        let Value::Sequence(volumes) = map(service, "volumes") else {
            panic!("volumes is not a list");
        };
        for volume in volumes {
            let volume = text(volume);
            let (source, target) = volume.split_once(':').unwrap();
            if !source.starts_with('.') && !source.starts_with('/') {
                assert!(
                    declared.get(source).is_some(),
                    "volume {source} is not declared"
                );
            }
            mounted.push(target.to_owned());
        }
    }
    assert!(mounted.contains(&"/data".to_owned()), "{mounted:?}");
}

#[test]
fn the_dockerfile_builds_in_one_stage_and_runs_unprivileged_in_a_slim_one() {
    let text = read("Dockerfile");
    let instructions: Vec<&str> = text
        .lines()
        .filter(|line| !line.trim_start().starts_with('#') && !line.trim().is_empty())
        .filter(|line| !line.starts_with(' '))
        .collect();
    let from: Vec<&&str> = instructions
        .iter()
        .filter(|l| l.starts_with("FROM "))
        .collect();
    assert_eq!(from.len(), 2, "{from:?}");
    assert!(from[0].starts_with("FROM rust:") && from[0].ends_with(" AS build"));
    assert_eq!(*from[1], "FROM debian:bookworm-slim");
    // The image is a deployment (the compose file runs it on PostgreSQL): every part.
    assert!(
        text.contains(
            "cargo build --release --locked -p nomos-server --features postgres,mcp,oidc,otlp"
        ),
        "the image builds the server with every feature"
    );
    assert!(text.contains("COPY --from=build "));
    let user = instructions
        .iter()
        .find(|l| l.starts_with("USER "))
        .expect("a USER line");
    assert!(!user.contains("root") && !user.ends_with(" 0"), "{user}");
    assert!(instructions.contains(&"VOLUME [\"/data\"]"));
    assert!(text.contains("HEALTHCHECK ") && text.contains("http://127.0.0.1:8092/readyz"));
    assert!(text.contains("NOMOS_DATA_DIR=/data"));
}
