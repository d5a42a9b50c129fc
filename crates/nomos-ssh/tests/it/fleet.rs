//! The fleet executor routes by slug; jump hosts tunnel through another host.

use std::sync::Arc;

use nomos_core::ports::exec::{ExecError, Executor, HostInfo};
use nomos_ssh::{FleetExecutor, Inventory, SshExecutor};
use nomos_test_support::sshd::Sshd;

use crate::{HOST, config, inventory, limits};

#[tokio::test]
async fn local_runs_here_and_other_slugs_run_over_ssh() {
    let sshd = Sshd::shared_or_start();
    let fleet = FleetExecutor::new(inventory(&sshd), config(&sshd));
    let local = fleet.run("local", "echo $0", limits(10_000)).await.unwrap();
    assert_eq!(local.stdout, "/bin/sh\n");
    let remote = fleet
        .run(HOST, "echo $SSH_CONNECTION", limits(10_000))
        .await
        .unwrap();
    assert!(remote.stdout.starts_with("127.0.0.1 "), "{}", remote.stdout);
    assert_eq!(fleet.ssh().stats().connects, 1);
    let error = fleet
        .run("lxc:nope", "true", limits(1_000))
        .await
        .unwrap_err();
    assert_eq!(
        error,
        ExecError::UnknownHost {
            host: "lxc:nope".into(),
            known: vec!["local".into(), HOST.into()]
        }
    );
}

#[tokio::test]
async fn hosts_lists_the_inventory() {
    let sshd = Sshd::shared_or_start();
    let fleet = FleetExecutor::new(inventory(&sshd), config(&sshd));
    assert_eq!(
        fleet.hosts(),
        vec![
            HostInfo {
                slug: "local".into(),
                address: "local".into(),
                tags: vec![],
                host_keys: Vec::new(),
            },
            HostInfo {
                slug: HOST.into(),
                address: "127.0.0.1".into(),
                tags: vec!["test".into()],
                // rule: FLEET-4 — the fingerprint of the key known_hosts trusts for it.
                host_keys: vec![sshd.host_key_fingerprint()],
            },
        ]
    );
}

#[tokio::test]
async fn a_host_behind_a_jump_host_is_reached_through_a_tunnel() {
    let sshd = Sshd::shared_or_start();
    let key = sshd.client_key_path.display();
    let port = sshd.port;
    let text = format!(
        "[defaults]\nuser='root'\nkey_file='{key}'\n\
         [[host]]\nslug='host:bastion'\naddress='127.0.0.1'\nport={port}\n\
         [[host]]\nslug='vm:inner'\naddress='127.0.0.1'\nport={port}\njump='host:bastion'\n"
    );
    let inventory = Inventory::parse(&text, "jump.toml").unwrap();
    let executor = SshExecutor::new(Arc::new(inventory), config(&sshd));
    let output = executor
        .run(
            "vm:inner",
            "echo inner; echo $SSH_CONNECTION",
            limits(10_000),
        )
        .await
        .unwrap();
    let mut lines = output.stdout.lines();
    assert_eq!(lines.next(), Some("inner"));
    // The inner connection arrives from the bastion's sshd, over loopback.
    assert!(lines.next().unwrap_or_default().starts_with("127.0.0.1 "));
    let stats = executor.stats();
    assert_eq!(stats.connects, 2, "{stats:?}");
    assert_eq!(stats.open, 2, "{stats:?}");
    // Both pooled connections are reused.
    executor
        .run("vm:inner", "true", limits(10_000))
        .await
        .unwrap();
    executor
        .run("host:bastion", "true", limits(10_000))
        .await
        .unwrap();
    assert_eq!(executor.stats().connects, 2);
}

#[tokio::test]
async fn commands_fan_out_to_hosts_in_their_own_network_namespaces() {
    let servers: Vec<Sshd> = (0..3).map(|_| Sshd::start_in_namespace()).collect();
    // One known_hosts file and one key for the whole fleet, as in production.
    let known_hosts = servers[0].dir.join("fleet_known_hosts");
    let mut recorded = String::new();
    let mut text = String::from("[[host]]\nslug='local'\n");
    for (i, server) in servers.iter().enumerate() {
        recorded.push_str(&std::fs::read_to_string(&server.known_hosts_path).unwrap());
        text.push_str(&format!(
            "[[host]]\nslug='vm:n{i}'\naddress='{}'\nport={}\nuser='root'\nkey_file='{}'\n",
            server.address,
            server.port,
            server.client_key_path.display()
        ));
    }
    std::fs::write(&known_hosts, recorded).unwrap();
    let inventory = Inventory::parse(&text, "netns.toml").unwrap();
    let config = config(&servers[0]).with_known_hosts(known_hosts);
    let fleet = Arc::new(FleetExecutor::new(inventory, config));

    let calls: Vec<_> = (0..3)
        .flat_map(|i| std::iter::repeat_n(i, 4))
        .map(|i| {
            let fleet = fleet.clone();
            tokio::spawn(async move {
                let slug = format!("vm:n{i}");
                let output = fleet
                    .run(&slug, "echo $SSH_CONNECTION", limits(20_000))
                    .await;
                (i, output)
            })
        })
        .collect();
    for call in calls {
        let (i, output) = call.await.unwrap();
        let output = output.unwrap();
        // SSH_CONNECTION is "client_ip client_port server_ip server_port".
        let fields: Vec<&str> = output.stdout.split_whitespace().collect();
        assert_eq!(
            fields.get(2),
            Some(&servers[i].address.as_str()),
            "{output:?}"
        );
    }
    let stats = fleet.ssh().stats();
    assert_eq!(stats.connects, 3, "{stats:?}");
    assert_eq!(stats.channels, 12, "{stats:?}");
}

/// Runs a command that prints over time through `run_streamed`; what the sink had seen
/// once the first line was in, and the stored output.
#[allow(clippy::unwrap_used, clippy::expect_used)]
async fn streamed(fleet: &FleetExecutor, host: &str) -> (Vec<String>, String) {
    use nomos_core::ports::exec::{OutputSink, OutputStream};
    let seen: Arc<std::sync::Mutex<Vec<String>>> = Arc::default();
    let sink: OutputSink = {
        let seen = seen.clone();
        Arc::new(move |stream, chunk: &[u8]| {
            assert_eq!(stream, OutputStream::Stdout);
            seen.lock()
                .unwrap()
                .push(String::from_utf8_lossy(chunk).into_owned());
        })
    };
    let probe = seen.clone();
    let watcher = tokio::spawn(async move {
        // What had arrived once the first line was in, while the command still sleeps.
        loop {
            let now = probe.lock().unwrap().clone();
            if now.concat().contains("line1") {
                return now;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    });
    let output = fleet
        .run_streamed(
            host,
            "for i in 1 2 3; do echo line$i; sleep 0.3; done",
            limits(10_000),
            "0f0f0f0f-0000-4000-8000-000000000001",
            sink,
        )
        .await
        .unwrap();
    let early = tokio::time::timeout(std::time::Duration::from_secs(5), watcher)
        .await
        .expect("the first line reached the sink")
        .unwrap();
    (early, output.stdout)
}

// rule: EXEC-10
#[tokio::test]
async fn output_streams_to_the_sink_while_the_command_runs_locally_and_over_ssh() {
    let sshd = Sshd::shared_or_start();
    let fleet = FleetExecutor::new(inventory(&sshd), config(&sshd));
    for host in ["local", HOST] {
        let (early, stored) = streamed(&fleet, host).await;
        assert!(
            !early.concat().contains("line3"),
            "{host}: the first line came only with the last: {early:?}"
        );
        assert_eq!(stored, "line1\nline2\nline3\n", "{host}");
    }
}
