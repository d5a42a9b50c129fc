//! EXEC-2 at the transport: every failure is a typed error or a result, nothing
//! hangs, and no command is left running where it can be stopped.

use std::sync::Arc;
use std::time::Duration;

use nomos_core::ports::exec::{ExecError, Executor};
use nomos_ssh::{Inventory, SshConfig, SshExecutor};
use nomos_test_support::sshd::Sshd;

use crate::{HOST, config, executor, limits, unique_sleep, wait_gone, wait_running};

// rule: EXEC-2
#[tokio::test]
async fn a_command_past_its_timeout_is_stopped_and_reported() {
    let sshd = Sshd::shared_or_start();
    let sleep = unique_sleep(1);
    let executor = executor(&sshd);
    let error = executor
        .run(HOST, &format!("{sleep}; echo never"), limits(1_000))
        .await
        .unwrap_err();
    assert_eq!(error, ExecError::Timeout { after_ms: 1_000 });
    assert!(
        wait_gone(&sleep).await,
        "`{sleep}` is still running on the server"
    );
    // The connection is still good for the next command.
    assert_eq!(
        executor
            .run(HOST, "echo next", limits(10_000))
            .await
            .unwrap()
            .stdout,
        "next\n"
    );
    assert_eq!(executor.stats().connects, 1);
}

// rule: EXEC-2
#[tokio::test]
async fn a_dropped_caller_closes_the_channel_and_stops_the_command() {
    let sshd = Sshd::shared_or_start();
    let sleep = unique_sleep(2);
    let executor = executor(&sshd);
    let mut call = Box::pin(executor.run(HOST, &sleep, limits(120_000)));
    // Poll the call until the command is running on the server, then drop it.
    let running = tokio::select! {
        result = &mut call => panic!("the command ended early: {result:?}"),
        running = wait_running(&sleep) => running,
    };
    assert!(running, "`{sleep}` never started");
    drop(call);
    assert!(wait_gone(&sleep).await, "`{sleep}` survived its caller");
    // The channel was released: a full set of channels can still be opened.
    let runs = (0..10).map(|_| executor.run(HOST, "true", limits(10_000)));
    for result in futures_join(runs).await {
        result.unwrap();
    }
}

async fn futures_join<F: std::future::Future>(futures: impl Iterator<Item = F>) -> Vec<F::Output> {
    let mut outputs = Vec::new();
    for future in futures {
        outputs.push(future.await);
    }
    outputs
}

// rule: EXEC-2
#[tokio::test]
async fn a_closed_port_is_a_connect_error() {
    let sshd = Sshd::shared_or_start();
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let text = format!(
        "[[host]]\nslug='host:down'\naddress='127.0.0.1'\nport={port}\nuser='root'\nkey_file='{}'\n",
        sshd.client_key_path.display()
    );
    let inventory = Inventory::parse(&text, "down.toml").unwrap();
    let executor = SshExecutor::new(Arc::new(inventory), config(&sshd));
    let error = executor
        .run("host:down", "true", limits(10_000))
        .await
        .unwrap_err();
    let ExecError::Connect { host, message } = &error else {
        panic!("expected a connect error, got {error:?}");
    };
    assert_eq!(host, "host:down");
    assert!(message.contains(&format!("127.0.0.1:{port}")), "{message}");
}

// rule: EXEC-2
#[tokio::test]
async fn an_unresolvable_name_is_a_connect_error() {
    let sshd = Sshd::shared_or_start();
    let text = format!(
        "[[host]]\nslug='host:nowhere'\naddress='nowhere.invalid'\nuser='root'\nkey_file='{}'\n",
        sshd.client_key_path.display()
    );
    let inventory = Inventory::parse(&text, "dns.toml").unwrap();
    let executor = SshExecutor::new(Arc::new(inventory), config(&sshd));
    let error = executor
        .run("host:nowhere", "true", limits(10_000))
        .await
        .unwrap_err();
    let ExecError::Connect { message, .. } = &error else {
        panic!("expected a connect error, got {error:?}");
    };
    assert!(message.contains("nowhere.invalid"), "{message}");
}

// rule: EXEC-2
#[tokio::test]
async fn a_server_that_never_speaks_ssh_times_out_the_connect() {
    let sshd = Sshd::shared_or_start();
    // A listener that accepts and then says nothing.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = silent.local_addr().unwrap().port();
    let text = format!(
        "[[host]]\nslug='host:silent'\naddress='127.0.0.1'\nport={port}\nuser='root'\nkey_file='{}'\n",
        sshd.client_key_path.display()
    );
    let inventory = Inventory::parse(&text, "silent.toml").unwrap();
    let config = config(&sshd).with_connect_timeout(Duration::from_millis(500));
    let executor = SshExecutor::new(Arc::new(inventory), config);
    let error = executor
        .run("host:silent", "true", limits(10_000))
        .await
        .unwrap_err();
    let ExecError::Connect { message, .. } = &error else {
        panic!("expected a connect error, got {error:?}");
    };
    assert!(message.contains("timed out after 500 ms"), "{message}");
    drop(silent);
}

// rule: EXEC-2
#[tokio::test]
async fn a_connection_lost_mid_command_is_a_disconnected_error() {
    let mut sshd = Sshd::start();
    let sleep = unique_sleep(3);
    let executor = executor(&sshd);
    let command = format!("echo started; {sleep}");
    let mut call = Box::pin(executor.run(HOST, &command, limits(60_000)));
    let running = tokio::select! {
        result = &mut call => panic!("the command ended early: {result:?}"),
        running = wait_running(&sleep) => running,
    };
    assert!(running);
    sshd.stop();
    let error = call.await.unwrap_err();
    assert!(
        matches!(&error, ExecError::Disconnected { host, .. } if host == HOST),
        "expected a disconnect, got {error:?}"
    );
}

#[tokio::test]
async fn an_unknown_slug_lists_the_known_hosts() {
    let sshd = Sshd::shared_or_start();
    let error = executor(&sshd)
        .run("vm:ghost", "true", limits(1_000))
        .await
        .unwrap_err();
    assert_eq!(
        error,
        ExecError::UnknownHost {
            host: "vm:ghost".into(),
            known: vec!["local".into(), HOST.into()],
        }
    );
}

#[tokio::test]
async fn the_ssh_executor_does_not_run_the_local_host() {
    let sshd = Sshd::shared_or_start();
    let error = executor(&sshd)
        .run("local", "true", limits(1_000))
        .await
        .unwrap_err();
    assert_eq!(
        error,
        ExecError::Other("local: host local is not reached over ssh".into())
    );
}

#[tokio::test]
async fn a_config_pointing_at_a_missing_known_hosts_file_refuses_unknown_keys() {
    let sshd = Sshd::shared_or_start();
    let config = SshConfig::new(sshd.dir.join("absent_known_hosts"));
    let executor = SshExecutor::new(Arc::new(crate::inventory(&sshd)), config);
    let error = executor
        .run(HOST, "true", limits(10_000))
        .await
        .unwrap_err();
    assert!(
        matches!(error, ExecError::UnknownHostKey { .. }),
        "{error:?}"
    );
}

// rule: EXEC-2
#[tokio::test]
async fn commands_queued_behind_a_failing_connect_share_its_error() {
    let sshd = Sshd::shared_or_start();
    // A listener that accepts, counts and then says nothing.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = silent.local_addr().unwrap().port();
    let accepted = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = accepted.clone();
    let acceptor = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = silent.accept().await {
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            held.push(stream);
        }
    });
    let text = format!(
        "[[host]]\nslug='host:silent'\naddress='127.0.0.1'\nport={port}\nuser='root'\nkey_file='{}'\n",
        sshd.client_key_path.display()
    );
    let inventory = Inventory::parse(&text, "silent.toml").unwrap();
    let config = config(&sshd).with_connect_timeout(Duration::from_millis(500));
    let executor = SshExecutor::new(Arc::new(inventory), config);
    let calls: Vec<_> = (0..5)
        .map(|_| {
            let executor = executor.clone();
            tokio::spawn(async move { executor.run("host:silent", "true", limits(10_000)).await })
        })
        .collect();
    for call in calls {
        let error = call.await.unwrap().unwrap_err();
        let ExecError::Connect { message, .. } = &error else {
            panic!("expected a connect error, got {error:?}");
        };
        assert!(message.contains("timed out after 500 ms"), "{message}");
    }
    assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 1);
    // A later command tries again.
    executor
        .run("host:silent", "true", limits(10_000))
        .await
        .unwrap_err();
    assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 2);
    acceptor.abort();
}
