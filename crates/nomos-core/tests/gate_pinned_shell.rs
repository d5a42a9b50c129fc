//! CLASSIFY-8 through the gate: a command that another reading of the pinned shell, an
//! evaluation context, or an option of a reader turns into a change is refused before a
//! plan, on a host pinned to each shell; its plain reader runs at once. The commands go
//! through the real classifier.

use nomos_core::classify::{Shell, classify_in};
use nomos_core::session::{Action, Session, SessionConfig, ToolInput, ToolReply};
use nomos_core::{SessionId, Span, Timestamp};

/// A session with a goal and no plan, and the reply to running `command` on a host pinned
/// to `shell`.
fn run_before_a_plan(shell: Shell, command: &str) -> ToolReply {
    let now = Timestamp::from_millis(1_800_000_000_000);
    let id = SessionId::from(uuid::Uuid::from_u128(8));
    let mut session = Session::create(id, now, SessionConfig::spec_defaults());
    session.handle_tool(
        now + Span::from_millis(10),
        "call_1",
        ToolInput::SetGoal {
            goal: "look around".to_owned(),
        },
    );
    session.handle_tool(
        now + Span::from_millis(20),
        "call_2",
        ToolInput::Run {
            host: "local".to_owned(),
            command: command.to_owned(),
            classification: classify_in(command, shell),
            preview: None,
        },
    )
}

#[track_caller]
fn assert_refused(shell: Shell, command: &str) {
    let reply = run_before_a_plan(shell, command);
    assert!(
        reply.text.contains("Propose a plan first") && reply.action.is_none(),
        "`{command}` in {shell}: {} {:?}",
        reply.text,
        reply.action
    );
}

// rule: CLASSIFY-8
#[test]
fn a_reading_of_the_pinned_shell_that_changes_state_is_refused_before_a_plan() {
    // `[[` and `((` are a redirection and two subshells in dash.
    assert_refused(Shell::Sh, "[[ a > /etc/motd ]] && echo ok");
    assert_refused(Shell::Sh, "((rm -rf /srv/www))");
    // Evaluation contexts run the code of a subscript.
    for command in [
        "x='a[$(touch /tmp/p)]'; echo $((x))",
        "let 'a[$(touch /tmp/p)]=1'",
        "printf -v 'a[$(touch /tmp/p)]' %s x",
        "[[ 1 -eq 'a[$(touch /tmp/p)]' ]]",
    ] {
        assert_refused(Shell::Bash, command);
        assert_refused(Shell::Sh, command);
    }
}

// rule: CLASSIFY-8
#[test]
fn a_reader_whose_options_or_operands_run_code_is_refused_before_a_plan() {
    for shell in Shell::ALL {
        for command in [
            "sed -n ':a;e touch /tmp/p' /etc/hosts",
            "sed -n -e p -e 'w /etc/motd' /etc/hosts",
            "apt-get -s update",
            "tar tvf backup:/srv/web.tar",
            "git ls-remote 'ext::sh -c touch% /tmp/p'",
            "hostnamectl hostname web2",
            "chroot /srv/root hostname",
        ] {
            assert_refused(shell, command);
        }
    }
}

// rule: CLASSIFY-8
#[test]
fn the_plain_readers_run_at_once_in_every_pinned_shell() {
    for shell in Shell::ALL {
        for command in [
            "sed -n p /etc/hosts",
            "tar tvf /srv/web.tar",
            "hostnamectl hostname",
        ] {
            let reply = run_before_a_plan(shell, command);
            assert!(
                matches!(reply.action, Some(Action::Dispatch { .. })),
                "`{command}` in {shell}: {}",
                reply.text
            );
        }
    }
}
