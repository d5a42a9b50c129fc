//! `nomos-server hosts check`: connects to each inventory host the way commands will
//! (through its jump hosts, with its key or the ssh-agent), runs the read-only `true`,
//! and prints what it found. With `--trust-new`, host keys known_hosts does not have are
//! recorded after their fingerprints are printed, then the hosts are checked again (a
//! host behind a newly trusted jump host is reached only then).
//!
//! The check itself always refuses unknown keys, whatever `host_key_policy` says: trust
//! is given here explicitly or not at all.

use std::process::ExitCode;
use std::sync::Arc;

use nomos_ssh::{
    HostCheck, HostKeyPolicy, Inventory, KeyTrust, SeenKey, SshConfig, SshExecutor, Target,
};

use crate::config::Config;
use crate::runtime;

/// What to do with host keys known_hosts does not have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NewKeys {
    /// Only print them.
    Report,
    /// Print them, then record them.
    Record,
}

/// Checks every host; exit 0 when every SSH host is reachable with a trusted key.
pub async fn check(config: &Config, new_keys: NewKeys) -> ExitCode {
    let inventory = match runtime::load_inventory(config) {
        Ok(inventory) => Arc::new(inventory),
        Err(error) => {
            eprintln!("nomos-server: {error:#}");
            return ExitCode::from(crate::EXIT_CONFIG);
        }
    };
    let ssh_config =
        SshConfig::new(&config.known_hosts).with_host_key_policy(HostKeyPolicy::Strict);
    println!(
        "checking {} host(s) of {} against {}",
        inventory.hosts().len(),
        inventory.origin(),
        config.known_hosts.display()
    );
    // Each round can reach hosts behind a jump host trusted in the round before.
    for _ in 0..=inventory.hosts().len() {
        let checks = check_all(&inventory, &ssh_config).await;
        let unknown: Vec<(&HostCheck, &SeenKey)> = checks
            .iter()
            .filter_map(|check| match &check.host_key {
                Some(seen) if seen.trust == KeyTrust::Unknown => Some((check, seen)),
                _ => None,
            })
            .collect();
        if unknown.is_empty() || new_keys == NewKeys::Report {
            if !unknown.is_empty() {
                println!(
                    "{} host key(s) are not trusted; if the fingerprints above are the hosts', \
                     record them with `nomos-server hosts check --trust-new`",
                    unknown.len()
                );
            }
            let failed = checks.iter().filter(|c| c.outcome.is_err()).count();
            return if failed == 0 {
                println!("all hosts reachable");
                ExitCode::SUCCESS
            } else {
                println!("{failed} host(s) failed");
                ExitCode::FAILURE
            };
        }
        let mut recorded = std::collections::HashSet::new();
        for (check, seen) in unknown {
            if !recorded.insert((address_of(&inventory, check), seen.fingerprint())) {
                continue;
            }
            if let Err(message) = record(&inventory, &config.known_hosts, check, seen) {
                eprintln!("nomos-server: {message}");
                return ExitCode::FAILURE;
            }
        }
        println!("checking again");
    }
    ExitCode::FAILURE
}

async fn check_all(inventory: &Arc<Inventory>, config: &SshConfig) -> Vec<HostCheck> {
    // A fresh executor per round: nothing refused in a round before is remembered.
    let executor = SshExecutor::new(inventory.clone(), config.clone());
    let mut checks = Vec::new();
    for host in inventory.hosts() {
        let Target::Ssh(target) = &host.target else {
            println!(
                "{:<24} local        commands run on this machine",
                host.slug
            );
            continue;
        };
        let check = executor.check(&host.slug).await;
        let via = match &target.jump {
            Some(jump) => format!(" via {jump}"),
            None => String::new(),
        };
        let key = match &check.host_key {
            Some(seen) => format!("host key {} {}", seen.fingerprint(), trust(&seen.trust)),
            None => "host key not seen".to_owned(),
        };
        let at = format!("{}@{}:{}{via}", target.user, target.address, target.port);
        match &check.outcome {
            Ok(auth) => println!("{:<24} reachable    {at}; auth {auth}; {key}", host.slug),
            Err(error) => {
                let error = error.to_string();
                println!("{:<24} unreachable  {at}; {key}; {error}", host.slug);
            }
        }
        checks.push(check);
    }
    executor.close().await;
    checks
}

fn trust(trust: &KeyTrust) -> String {
    match trust {
        KeyTrust::Trusted => "trusted".to_owned(),
        KeyTrust::Learnt => "recorded now".to_owned(),
        KeyTrust::Unknown => "NOT TRUSTED (not in known_hosts)".to_owned(),
        KeyTrust::Changed { expected } => {
            format!("CHANGED (known_hosts has {expected}; refused, check the host)")
        }
    }
}

/// `address:port` of a checked host.
fn address_of(inventory: &Inventory, check: &HostCheck) -> String {
    match inventory.host(&check.slug).map(|h| &h.target) {
        Some(Target::Ssh(target)) => format!("{}:{}", target.address, target.port),
        _ => check.slug.clone(),
    }
}

fn record(
    inventory: &Inventory,
    known_hosts: &std::path::Path,
    check: &HostCheck,
    seen: &SeenKey,
) -> Result<(), String> {
    let Some(Target::Ssh(target)) = inventory.host(&check.slug).map(|h| &h.target) else {
        return Err(format!("{} is not an SSH host", check.slug));
    };
    nomos_ssh::trust_key(&target.address, target.port, &seen.key, known_hosts)
        .map_err(|e| e.to_string())?;
    println!(
        "recorded host key {} of {} ({}:{}) in {}",
        seen.fingerprint(),
        check.slug,
        target.address,
        target.port,
        known_hosts.display()
    );
    Ok(())
}
