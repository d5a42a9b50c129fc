//! CLASSIFY-9 through the gate: readers the execution oracle saw write (`git status` without
//! the pinned `GIT_OPTIONAL_LOCKS=0`, `git describe --dirty`, BusyBox's `diff` of a pipe,
//! bash's `$(( ... ))` holding a `case`) are refused before a plan, and the reader the pinned
//! environment keeps a reader runs at once. The commands go through the real classifier.

use nomos_core::classify::{Shell, classify_in};
use nomos_core::session::{Action, Session, SessionConfig, ToolInput, ToolReply};
use nomos_core::{SessionId, Span, Timestamp};

/// A session with a goal and no plan, and the reply to running `command` on a host pinned
/// to `shell`.
fn run_before_a_plan(shell: Shell, command: &str) -> ToolReply {
    let now = Timestamp::from_millis(1_800_000_000_000);
    let id = SessionId::from(uuid::Uuid::from_u128(9));
    let mut session = Session::create(id, now, SessionConfig::spec_defaults());
    let now = now + Span::from_millis(10);
    session.handle_tool(
        now,
        "call_1",
        ToolInput::SetGoal {
            goal: "know what changed".to_owned(),
        },
    );
    session.handle_tool(
        now + Span::from_millis(10),
        "call_2",
        ToolInput::Run {
            host: "local".to_owned(),
            command: command.to_owned(),
            classification: classify_in(command, shell),
            preview: None,
        },
    )
}

// rule: CLASSIFY-9
#[test]
fn a_reader_the_oracle_saw_write_is_refused_before_a_plan() {
    for (shell, command) in [
        (Shell::Sh, "env -i git -C /srv/app status"),
        (Shell::Sh, "sudo git -C /srv/app status"),
        (Shell::Sh, "ssh web1 git -C /srv/app status"),
        (Shell::Sh, "GIT_OPTIONAL_LOCKS=1 git status"),
        (Shell::Sh, "git describe --always --dirty"),
        (Shell::Busybox, "cat new.conf | diff - /etc/app.conf"),
        (Shell::Bash, "busybox diff <(sort a) <(sort b)"),
        (
            Shell::Bash,
            "a=(1 2); echo $(( a[$(case x in x) which ls;; esac)] ))",
        ),
    ] {
        let reply = run_before_a_plan(shell, command);
        assert!(
            reply.text.contains("Propose a plan first"),
            "`{command}` in {shell}: {}",
            reply.text
        );
        assert!(reply.action.is_none(), "`{command}`: {:?}", reply.action);
    }
}

// rule: CLASSIFY-9
#[test]
fn git_status_under_the_pinned_environment_runs_at_once() {
    for shell in Shell::ALL {
        let reply = run_before_a_plan(shell, "git -C /srv/app status --short");
        assert!(
            matches!(reply.action, Some(Action::Dispatch { .. })),
            "{shell}: {} {:?}",
            reply.text,
            reply.action
        );
    }
}
