//! Connection reuse: one connection per host, shared by concurrent commands,
//! replaced when dead, closed when idle.

use std::sync::Arc;
use std::time::Duration;

use nomos_core::ports::exec::Executor;
use nomos_ssh::SshExecutor;
use nomos_test_support::sshd::Sshd;

use crate::{HOST, config, executor, inventory, limits};

#[tokio::test]
async fn ten_concurrent_commands_share_one_connection() {
    let sshd = Sshd::start();
    let executor = executor(&sshd);
    let calls = (0..10).map(|i| {
        let executor = executor.clone();
        tokio::spawn(async move {
            executor
                .run(HOST, &format!("sleep 0.3; echo {i}"), limits(20_000))
                .await
        })
    });
    let mut outputs = Vec::new();
    for call in calls.collect::<Vec<_>>() {
        outputs.push(call.await.unwrap().unwrap());
    }
    for (i, output) in outputs.iter().enumerate() {
        assert_eq!(output.stdout, format!("{i}\n"));
    }
    let stats = executor.stats();
    assert_eq!(stats.connects, 1, "{stats:?}");
    assert_eq!(stats.channels, 10, "{stats:?}");
    assert_eq!(stats.open, 1, "{stats:?}");
    assert_eq!(sshd.accepted_logins(), 1);
}

#[tokio::test]
async fn more_commands_than_the_server_allows_per_connection_wait_their_turn() {
    // OpenSSH's MaxSessions is 10 by default; 25 commands go through in waves.
    let sshd = Sshd::start();
    let executor = executor(&sshd);
    let calls: Vec<_> = (0..25)
        .map(|i| {
            let executor = executor.clone();
            tokio::spawn(async move {
                executor
                    .run(HOST, &format!("sleep 0.2; echo {i}"), limits(30_000))
                    .await
            })
        })
        .collect();
    for (i, call) in calls.into_iter().enumerate() {
        assert_eq!(call.await.unwrap().unwrap().stdout, format!("{i}\n"));
    }
    assert_eq!(executor.stats().connects, 1);
    assert_eq!(sshd.accepted_logins(), 1);
}

#[tokio::test]
async fn sequential_commands_reuse_the_connection() {
    let sshd = Sshd::start();
    let executor = executor(&sshd);
    for i in 0..5 {
        let output = executor
            .run(HOST, &format!("echo {i}"), limits(10_000))
            .await
            .unwrap();
        assert_eq!(output.stdout, format!("{i}\n"));
    }
    assert_eq!(executor.stats().connects, 1);
    assert_eq!(sshd.accepted_logins(), 1);
}

#[tokio::test]
async fn a_restarted_server_gets_a_new_connection_on_the_next_command() {
    let mut sshd = Sshd::start();
    let executor = executor(&sshd);
    assert_eq!(
        executor
            .run(HOST, "echo one", limits(10_000))
            .await
            .unwrap()
            .stdout,
        "one\n"
    );
    sshd.restart();
    let output = executor
        .run(HOST, "echo two", limits(10_000))
        .await
        .unwrap();
    assert_eq!(output.stdout, "two\n");
    let stats = executor.stats();
    assert_eq!(stats.connects, 2, "{stats:?}");
    assert_eq!(stats.replaced, 1, "{stats:?}");
    assert_eq!(stats.open, 1, "{stats:?}");
}

#[tokio::test]
async fn an_idle_connection_is_closed_and_reopened_on_demand() {
    let sshd = Sshd::start();
    let config = config(&sshd).with_idle_timeout(Duration::from_millis(300));
    let executor = SshExecutor::new(Arc::new(inventory(&sshd)), config);
    executor.run(HOST, "true", limits(10_000)).await.unwrap();
    assert_eq!(executor.stats().open, 1);
    let mut closed = false;
    for _ in 0..200 {
        if executor.stats().open == 0 {
            closed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(closed, "idle connection still open: {:?}", executor.stats());
    assert_eq!(executor.stats().idle_closed, 1);
    assert_eq!(
        executor
            .run(HOST, "echo back", limits(10_000))
            .await
            .unwrap()
            .stdout,
        "back\n"
    );
    assert_eq!(executor.stats().connects, 2);
}

#[tokio::test]
async fn a_long_command_keeps_its_connection_past_the_idle_timeout() {
    let sshd = Sshd::start();
    let config = config(&sshd).with_idle_timeout(Duration::from_millis(200));
    let executor = SshExecutor::new(Arc::new(inventory(&sshd)), config);
    let output = executor
        .run(HOST, "sleep 1; echo finished", limits(10_000))
        .await
        .unwrap();
    assert_eq!(output.stdout, "finished\n");
    assert_eq!(executor.stats().connects, 1);
}

#[tokio::test]
async fn close_shuts_every_pooled_connection() {
    let sshd = Sshd::start();
    let executor = executor(&sshd);
    executor.run(HOST, "true", limits(10_000)).await.unwrap();
    assert_eq!(executor.stats().open, 1);
    executor.close().await;
    assert_eq!(executor.stats().open, 0);
}
