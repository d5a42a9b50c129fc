//! Classifier tests: one-line behaviour tests per rule, the shipped corpus, the policy file,
//! and property tests (totality, determinism, wrappers never make a command less strict).

use proptest::prelude::*;

use super::corpus::parse_corpus;
use super::{Policy, PolicyErrorKind, Script, Shell, classify, classify_in};
use crate::class::CommandClass::{self, ConfigMutation, Destructive, ReadOnly};

const CORPUS: &str = include_str!("../../../fixtures/classify/corpus.tsv");
const EXAMPLE_POLICY: &str = include_str!("../../../fixtures/classify/policy.example.toml");

#[track_caller]
fn check(command: &str, expected: CommandClass) {
    let got = classify(command);
    assert_eq!(got.class, expected, "`{command}`: {}", got.reason);
}

/// Checks the class of `command` read for the pinned interpreter `shell` (CLASSIFY-8).
#[track_caller]
fn check_in(shell: Shell, command: &str, expected: CommandClass) {
    let got = classify_in(command, shell);
    assert_eq!(
        got.class, expected,
        "`{command}` in {shell}: {}",
        got.reason
    );
}

#[track_caller]
fn check_reason(command: &str, expected: CommandClass, reason: &str) {
    let got = classify(command);
    assert_eq!(got.class, expected, "`{command}`: {}", got.reason);
    assert!(
        got.reason.contains(reason),
        "`{command}`: reason `{}` lacks `{reason}`",
        got.reason
    );
}

// rule: CLASSIFY-1
#[test]
fn classify_1_reason_names_the_deciding_word_and_part() {
    check_reason(
        "ls; rm -rf /tmp/x",
        Destructive,
        "`rm` in part 2 (`rm -rf /tmp/x`) deletes files",
    );
}
// rule: CLASSIFY-1
#[test]
fn classify_1_unknown_command_is_config_mutation() {
    check_reason(
        "frobnicate --all",
        ConfigMutation,
        "unknown command `frobnicate`",
    );
}
// rule: CLASSIFY-1
#[test]
fn classify_1_path_qualified_reader_is_unknown() {
    check_reason(
        "./cat /etc/passwd",
        ConfigMutation,
        "unknown command `./cat`",
    );
}
// rule: CLASSIFY-7 (replaces CLASSIFY-1's "a path-qualified reader is unknown")
#[test]
fn classify_7_a_program_in_a_system_directory_is_its_basename() {
    check_reason(
        "/usr/bin/ls -la",
        ReadOnly,
        "`/usr/bin/ls` is read as `ls`, a program in a system directory",
    );
    check_reason("/usr/bin/rm -rf x", Destructive, "`rm`");
    check_reason("/bin/rm -rf x", Destructive, "`/bin/rm` is read as `rm`");
    for dir in ["/sbin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin"] {
        check(&format!("{dir}/reboot"), Destructive);
        check(&format!("sudo {dir}/cat /etc/shadow"), ReadOnly);
    }
}
// rule: CLASSIFY-1
#[test]
fn classify_1_program_known_only_at_run_time_is_unknown() {
    check_reason("$CMD --force", ConfigMutation, "unknown command `$CMD`");
}
// rule: CLASSIFY-1
#[test]
fn classify_1_read_only_reason_lists_every_part() {
    check_reason(
        "uptime; df -h",
        ReadOnly,
        "all 2 parts only read (`uptime`, `df`)",
    );
}
// rule: CLASSIFY-1
#[test]
fn classify_1_flag_sensitive_reader_with_a_dynamic_argument_is_a_mutation() {
    check("find . $FLAGS", ConfigMutation);
}
// rule: CLASSIFY-1
#[test]
fn classify_1_plain_reader_with_a_dynamic_argument_still_reads() {
    check("cat \"$FILE\"", ReadOnly);
}

// rule: CLASSIFY-2
#[test]
fn classify_2_semicolon_list_takes_the_strictest_part() {
    check("ls; rm -rf /", Destructive);
}
// rule: CLASSIFY-2
#[test]
fn classify_2_and_list_is_read_part_by_part() {
    check("true && reboot", Destructive);
}
// rule: CLASSIFY-2
#[test]
fn classify_2_or_list_is_read_part_by_part() {
    check("false || systemctl restart nginx", ConfigMutation);
}
// rule: CLASSIFY-2
#[test]
fn classify_2_background_job_is_classified() {
    check("sleep 1 & rm x", Destructive);
}
// rule: CLASSIFY-2
#[test]
fn classify_2_pipeline_parts_are_each_classified() {
    check("ps aux | grep nginx | tee /etc/x", ConfigMutation);
}
// rule: CLASSIFY-2
#[test]
fn classify_2_command_substitution_is_classified() {
    check_reason("echo $(reboot)", Destructive, "`reboot` in part 2");
}
// rule: CLASSIFY-2
#[test]
fn classify_2_backtick_substitution_is_classified() {
    check("echo `rm -rf /tmp/x`", Destructive);
}
// rule: CLASSIFY-2
#[test]
fn classify_2_substitution_inside_double_quotes_is_classified() {
    check("echo \"now: $(shutdown -h now)\"", Destructive);
}
// rule: CLASSIFY-2
#[test]
fn classify_2_single_quotes_hide_substitutions() {
    check("echo '$(reboot)'", ReadOnly);
}
// rule: CLASSIFY-2
#[test]
fn classify_2_substitution_in_parameter_default_is_classified() {
    check("echo ${X:-$(reboot)}", Destructive);
}
// rule: CLASSIFY-2
#[test]
fn classify_2_process_substitution_is_classified() {
    check("diff <(rm -rf /tmp/a) /dev/null", Destructive);
}
// rule: CLASSIFY-2
#[test]
fn classify_2_subshell_is_classified() {
    check("(cd /tmp && rm -rf build)", Destructive);
}
// rule: CLASSIFY-2
#[test]
fn classify_2_brace_group_is_classified() {
    check("{ ls; rm x; }", Destructive);
}
// rule: CLASSIFY-2
#[test]
fn classify_2_if_condition_is_classified() {
    check("if rm -rf /tmp/x; then echo ok; fi", Destructive);
}
// rule: CLASSIFY-2
#[test]
fn classify_2_if_else_branch_is_classified() {
    check(
        "if true; then ls; elif false; then ls; else reboot; fi",
        Destructive,
    );
}
// rule: CLASSIFY-2
#[test]
fn classify_2_for_body_is_classified() {
    check("for f in /tmp/*.log; do rm \"$f\"; done", Destructive);
}
// rule: CLASSIFY-2
#[test]
fn classify_2_arithmetic_for_body_is_classified() {
    check_in(
        Shell::Bash,
        "for ((i=0; i<3; i++)); do echo $i > /tmp/f; done",
        ConfigMutation,
    );
}
// rule: CLASSIFY-2
#[test]
fn classify_2_while_loop_reading_lines_only_reads() {
    check(
        "while read -r l; do echo \"$l\"; done < /etc/hosts",
        ReadOnly,
    );
}
// rule: CLASSIFY-2
#[test]
fn classify_2_until_body_is_classified() {
    check("until false; do systemctl stop app; done", Destructive);
}
// rule: CLASSIFY-2
#[test]
fn classify_2_case_arms_are_classified() {
    check(
        "case $1 in start) ls;; stop) rm -f /run/app.pid;; esac",
        Destructive,
    );
}
// rule: CLASSIFY-2
#[test]
fn classify_2_function_body_is_classified() {
    check("cleanup() { rm -rf /tmp/x; }", Destructive);
}
// rule: CLASSIFY-2
#[test]
fn classify_2_calling_a_defined_reader_function_reads() {
    check("f() { ls; }; f", ReadOnly);
}
// rule: CLASSIFY-2
#[test]
fn classify_2_test_brackets_keep_their_operators() {
    check_in(
        Shell::Bash,
        "[[ -f /a && -d /b || $x =~ ^(a|b)$ ]] && echo yes",
        ReadOnly,
    );
}
// rule: CLASSIFY-2
#[test]
fn classify_2_redirection_to_a_file_is_a_mutation() {
    check_reason("echo x > /etc/motd", ConfigMutation, "`> /etc/motd`");
}
// rule: CLASSIFY-2
#[test]
fn classify_2_append_redirection_is_a_mutation() {
    check("echo x >> /etc/hosts", ConfigMutation);
}
// rule: CLASSIFY-2
#[test]
fn classify_2_redirection_of_both_streams_to_a_file_is_a_mutation() {
    check("ls &> /tmp/all", ConfigMutation);
}
// rule: CLASSIFY-2
#[test]
fn classify_2_redirection_to_dev_null_is_harmless() {
    check("ls > /dev/null 2>&1", ReadOnly);
}
// rule: CLASSIFY-2
#[test]
fn classify_2_fd_duplication_is_harmless() {
    check("ls 2>&1 >&2", ReadOnly);
}
// rule: CLASSIFY-2
#[test]
fn classify_2_redirection_to_a_block_device_is_destructive() {
    check("echo x > /dev/sda", Destructive);
}
// rule: CLASSIFY-2
#[test]
fn classify_2_redirection_to_a_device_mapper_volume_is_destructive() {
    check("cat img >> /dev/mapper/vg0-root", Destructive);
}
// rule: CLASSIFY-2
#[test]
fn classify_2_redirection_after_a_group_is_classified() {
    check("{ ls; } > /tmp/out", ConfigMutation);
}
// rule: CLASSIFY-2
#[test]
fn classify_2_tee_to_a_file_is_a_mutation() {
    check("echo x | tee /etc/x", ConfigMutation);
}
// rule: CLASSIFY-2
#[test]
fn classify_2_tee_to_dev_null_only_reads() {
    check("ls | tee /dev/null", ReadOnly);
}
// rule: CLASSIFY-2
#[test]
fn classify_2_here_document_fed_to_a_shell_is_classified() {
    check("bash <<EOF\nsystemctl stop nginx\nEOF", Destructive);
}
// rule: CLASSIFY-2
#[test]
fn classify_2_here_document_through_cat_to_a_shell_is_classified() {
    check("cat <<'EOF' | sh\nreboot\nEOF", Destructive);
}
// rule: CLASSIFY-2
#[test]
fn classify_2_here_document_substitution_is_classified() {
    check("cat <<EOF\n$(rm -rf /tmp/x)\nEOF", Destructive);
}
// rule: CLASSIFY-2
#[test]
fn classify_2_quoted_here_document_does_not_expand() {
    check("cat <<'EOF'\n$(rm -rf /tmp/x)\nEOF", ReadOnly);
}
// rule: CLASSIFY-2
#[test]
fn classify_2_here_document_of_sql_is_read() {
    check("psql app <<SQL\nDROP TABLE users;\nSQL", Destructive);
}
// rule: CLASSIFY-2
#[test]
fn classify_2_here_string_to_a_shell_is_classified() {
    check("sh <<< 'rm -rf /tmp/x'", Destructive);
}
// rule: CLASSIFY-2
#[test]
fn classify_2_assignment_prefix_is_unwrapped() {
    check("LANG=C ls", ReadOnly);
}
// rule: CLASSIFY-2
#[test]
fn classify_2_assignment_to_path_is_a_mutation() {
    check("PATH=/tmp/evil ls", ConfigMutation);
}
// rule: CLASSIFY-2
#[test]
fn classify_2_assignment_from_a_substitution_is_classified() {
    check("X=$(rm -rf /tmp/y)", Destructive);
}
// rule: CLASSIFY-2
#[test]
fn classify_2_env_wrapper_is_unwrapped() {
    check("env A=1 B=2 rm -rf /tmp/x", Destructive);
}
// rule: CLASSIFY-2
#[test]
fn classify_2_sudo_with_flags_is_unwrapped() {
    check("sudo -u postgres -H rm -rf /tmp/x", Destructive);
}
// rule: CLASSIFY-2
#[test]
fn classify_2_sudo_keeps_a_reader_read_only() {
    check("sudo -n docker compose ps", ReadOnly);
}
// rule: CLASSIFY-2
#[test]
fn classify_2_nice_is_unwrapped() {
    check("nice -n 19 rm -rf /tmp/x", Destructive);
}
// rule: CLASSIFY-2
#[test]
fn classify_2_timeout_is_unwrapped() {
    check("timeout -k 5 30 systemctl stop nginx", Destructive);
}
// rule: CLASSIFY-2
#[test]
fn classify_2_ionice_nohup_and_xargs_are_unwrapped() {
    check("ionice -c3 nohup xargs rm", Destructive);
}
// rule: CLASSIFY-2
#[test]
fn classify_2_xargs_with_a_plain_reader_reads() {
    check("find /etc -name '*.conf' | xargs grep -l listen", ReadOnly);
}
// rule: CLASSIFY-2
#[test]
fn classify_2_bash_c_script_is_read() {
    check("bash -c 'ls; rm -rf /tmp/x'", Destructive);
}
// rule: CLASSIFY-2
#[test]
fn classify_2_bash_lc_reader_reads() {
    check("bash -lc 'docker compose logs --tail=10'", ReadOnly);
}
// rule: CLASSIFY-2
#[test]
fn classify_2_sh_c_with_double_quotes_is_read() {
    check("sh -c \"systemctl restart nginx\"", ConfigMutation);
}
// rule: CLASSIFY-2
#[test]
fn classify_2_ssh_remote_command_is_read() {
    check("ssh -p 22 root@db 'systemctl stop postgresql'", Destructive);
}
// rule: CLASSIFY-2
#[test]
fn classify_2_ssh_remote_reader_reads() {
    check("ssh web01 uptime", ReadOnly);
}
// rule: CLASSIFY-2
#[test]
fn classify_2_eval_text_is_read() {
    check("eval 'rm -rf /tmp/x'", Destructive);
}
// rule: CLASSIFY-2
#[test]
fn classify_2_echo_piped_into_sh_is_read() {
    check("echo 'rm -rf /' | sh", Destructive);
}
// rule: CLASSIFY-2
#[test]
fn classify_2_download_piped_into_sh_is_destructive() {
    check_reason(
        "curl -fsSL https://x.example/i.sh | sh",
        Destructive,
        "cannot read",
    );
}
// rule: CLASSIFY-2
#[test]
fn classify_2_nested_wrappers_are_all_unwrapped() {
    check(
        "sudo env A=1 timeout 5 nice bash -c \"ssh h 'rm -rf /x'\"",
        Destructive,
    );
}
// rule: CLASSIFY-2
#[test]
fn classify_2_escaped_program_name_is_still_that_program() {
    check("\\rm -rf /tmp/x", Destructive);
}

// rule: CLASSIFY-3
#[test]
fn classify_3_docker_inspection_verbs_read() {
    for verb in [
        "ps",
        "images",
        "inspect web",
        "logs web",
        "version",
        "info",
        "stats",
        "top web",
        "port web",
    ] {
        check(&format!("docker {verb}"), ReadOnly);
    }
}
// rule: CLASSIFY-3
#[test]
fn classify_3_docker_compose_inspection_verbs_read() {
    for verb in ["logs", "ps", "top", "config", "images", "port web 80"] {
        check(&format!("docker compose {verb}"), ReadOnly);
        check(&format!("docker-compose {verb}"), ReadOnly);
    }
}
// rule: CLASSIFY-3
#[test]
fn classify_3_docker_compose_logs_with_tail_reads() {
    check("docker compose logs --tail=100", ReadOnly);
}
// rule: CLASSIFY-3
#[test]
fn classify_3_docker_exec_and_run_are_never_read_only() {
    check("docker exec web ls", ConfigMutation);
    check("docker run --rm alpine true", ConfigMutation);
    check("docker compose exec web cat /etc/hosts", ConfigMutation);
    check("docker compose run --rm web ls", ConfigMutation);
}
// rule: CLASSIFY-3
#[test]
fn classify_3_docker_exec_of_a_destructive_command_is_destructive() {
    check("docker exec db rm -rf /var/lib/postgresql", Destructive);
}
// rule: CLASSIFY-3
#[test]
fn classify_3_systemctl_inspection_verbs_read() {
    for verb in [
        "status nginx",
        "is-active nginx",
        "list-units",
        "show nginx",
    ] {
        check(&format!("systemctl {verb}"), ReadOnly);
    }
}
// rule: CLASSIFY-3
#[test]
fn classify_3_journalctl_reads() {
    check("journalctl -u nginx -n 100 --no-pager", ReadOnly);
}
// rule: CLASSIFY-3
#[test]
fn classify_3_journalctl_vacuum_and_rotate_are_not_read_only() {
    check("journalctl --vacuum-time=7d", Destructive);
    check("journalctl --rotate", ConfigMutation);
    check("journalctl --flush", ConfigMutation);
}
// rule: CLASSIFY-3
#[test]
fn classify_3_find_without_actions_reads() {
    check("find /var/log -name '*.gz' -mtime +7 -print", ReadOnly);
}
// rule: CLASSIFY-3
#[test]
fn classify_3_find_actions_are_not_read_only() {
    check("find . -exec cat {} \\;", ConfigMutation);
    check("find . -execdir ls {} +", ConfigMutation);
    check("find . -ok ls {} \\;", ConfigMutation);
    check("find / -fprint /tmp/list", ConfigMutation);
}
// rule: CLASSIFY-3
#[test]
fn classify_3_find_exec_of_rm_is_destructive() {
    check("find /tmp -exec rm {} \\;", Destructive);
}
// rule: CLASSIFY-3
#[test]
fn classify_3_sed_n_reads() {
    check("sed -n '1,10p' /etc/passwd", ReadOnly);
}
// rule: CLASSIFY-3
#[test]
fn classify_3_sed_in_place_is_a_mutation() {
    check("sed -i 's/a/b/' /etc/x", ConfigMutation);
}
// rule: CLASSIFY-3
#[test]
fn classify_3_sed_write_command_is_a_mutation() {
    check("sed -n 's/a/b/w /tmp/out' file", ConfigMutation);
}
// rule: CLASSIFY-3
#[test]
fn classify_3_package_queries_read() {
    check("apt list --installed", ReadOnly);
    check("apt-cache policy nginx", ReadOnly);
    check("dpkg -l", ReadOnly);
}
// rule: CLASSIFY-3
#[test]
fn classify_3_basic_readers_read() {
    for command in [
        "cat /etc/hosts",
        "head -5 f",
        "tail -n 5 f",
        "grep -r x /etc",
        "ls -la",
        "df -h",
        "du -sh /",
        "free -m",
        "uptime",
        "ps aux",
        "ss -tlnp",
        "ip addr show",
        "ip route show",
        "ip link show",
        "hostname",
        "uname -a",
        "id",
        "whoami",
        "sensors",
        "lsblk",
        "mount",
    ] {
        check(command, ReadOnly);
    }
}
// rule: CLASSIFY-3
#[test]
fn classify_3_mount_with_arguments_is_a_mutation() {
    check("mount /dev/sdb1 /mnt", ConfigMutation);
}
// rule: CLASSIFY-3
#[test]
fn classify_3_git_inspection_verbs_read() {
    for verb in ["status", "log --oneline", "diff HEAD~1", "show HEAD"] {
        check(&format!("git {verb}"), ReadOnly);
    }
}
// rule: CLASSIFY-3
#[test]
fn classify_3_git_c_makes_a_reader_a_mutation() {
    check("git -c core.pager=less log", ConfigMutation);
}
// rule: CLASSIFY-3
#[test]
fn classify_3_git_log_output_file_is_a_mutation() {
    check("git log --output=/tmp/x", ConfigMutation);
}
// rule: CLASSIFY-3
#[test]
fn classify_3_sort_output_file_is_a_mutation() {
    check("sort -o /tmp/s in.txt", ConfigMutation);
}

// rule: CLASSIFY-4
#[test]
fn classify_4_rm_of_any_path_is_destructive() {
    check("rm /tmp/x", Destructive);
    check("rm -rf /", Destructive);
}
// rule: CLASSIFY-4
#[test]
fn classify_4_disk_tools_are_destructive() {
    for command in [
        "shred -u f",
        "truncate -s 0 f",
        "mkfs.ext4 /dev/sdb1",
        "mkfs -t xfs /dev/sdc",
        "dd if=/dev/zero of=/dev/sda",
        "wipefs -a /dev/sdb",
        "fdisk /dev/sda",
        "parted /dev/sda rm 1",
    ] {
        check(command, Destructive);
    }
}
// rule: CLASSIFY-4
#[test]
fn classify_4_partition_listing_only_reads() {
    check("fdisk -l", ReadOnly);
    check("parted /dev/sda print", ReadOnly);
}
// rule: CLASSIFY-4
#[test]
fn classify_4_power_commands_are_destructive() {
    for command in ["shutdown -h now", "reboot", "poweroff", "halt"] {
        check(command, Destructive);
    }
}
// rule: CLASSIFY-4
#[test]
fn classify_4_systemctl_stop_disable_mask_are_destructive() {
    for verb in ["stop", "disable", "mask"] {
        check(&format!("systemctl {verb} nginx"), Destructive);
    }
}
// rule: CLASSIFY-4
#[test]
fn classify_4_docker_removals_are_destructive() {
    for command in [
        "docker stop web",
        "docker rm web",
        "docker rmi img",
        "docker system prune -f",
        "docker volume rm data",
    ] {
        check(command, Destructive);
    }
}
// rule: CLASSIFY-4
#[test]
fn classify_4_docker_compose_stop_and_down_are_destructive() {
    check("docker compose stop", Destructive);
    check("docker compose down", Destructive);
    check("docker compose down -v", Destructive);
}
// rule: CLASSIFY-4
#[test]
fn classify_4_proxmox_and_zfs_destroy_are_destructive() {
    check("zfs destroy tank/x", Destructive);
    check("pct destroy 101", Destructive);
    check("qm destroy 100", Destructive);
}
// rule: CLASSIFY-4
#[test]
fn classify_4_sql_drop_and_truncate_are_destructive() {
    check("psql -c 'DROP TABLE users'", Destructive);
    check("mysql -e 'truncate sessions'", Destructive);
    check("sqlite3 db 'drop table t'", Destructive);
}
// rule: CLASSIFY-4
#[test]
fn classify_4_sql_select_reads() {
    check("psql -c 'SELECT * FROM users'", ReadOnly);
}
// rule: CLASSIFY-4
#[test]
fn classify_4_sql_keyword_inside_a_string_literal_is_ignored() {
    check("psql -c \"SELECT 'DROP TABLE x'\"", ReadOnly);
}
// rule: CLASSIFY-4
#[test]
fn classify_4_recursive_chmod_or_chown_of_root_is_destructive() {
    check("chmod -R 777 /", Destructive);
    check("chown -R nobody /", Destructive);
    check("chmod -R 755 /srv/app", ConfigMutation);
}
// rule: CLASSIFY-4
#[test]
fn classify_4_find_delete_is_destructive() {
    check("find /tmp -delete", Destructive);
}
// rule: CLASSIFY-4
#[test]
fn classify_4_kill_9_1_is_destructive() {
    check("kill -9 1", Destructive);
    check("kill 1234", ConfigMutation);
}
// rule: CLASSIFY-4
#[test]
fn classify_4_fork_bomb_is_destructive() {
    check_reason(":(){ :|:& };:", Destructive, "fork bomb");
}
// rule: CLASSIFY-4
#[test]
fn classify_4_state_changes_are_config_mutation() {
    for command in [
        "apt-get update",
        "apt-get upgrade -y",
        "apt-get install -y nginx",
        "docker compose pull",
        "docker compose up -d",
        "docker compose restart",
        "systemctl restart nginx",
        "sed -i s/a/b/ f",
        "cp a b",
        "echo x > f",
    ] {
        check(command, ConfigMutation);
    }
}

// rule: CLASSIFY-5
#[test]
fn classify_5_unterminated_quote_could_not_parse() {
    check_reason("echo 'oops", Destructive, "could not parse");
}
// rule: CLASSIFY-5
#[test]
fn classify_5_dangling_pipe_could_not_parse() {
    check_reason("ls |", Destructive, "could not parse");
}
// rule: CLASSIFY-5
#[test]
fn classify_5_missing_fi_could_not_parse() {
    check_reason("if true; then ls", Destructive, "could not parse");
}
// rule: CLASSIFY-5
#[test]
fn classify_5_unparseable_bash_c_script_is_destructive() {
    check_reason("bash -c 'echo \"oops'", Destructive, "could not parse");
}
// rule: CLASSIFY-5
#[test]
fn classify_5_deep_nesting_is_refused_not_overflowed() {
    let command = format!("{}ls{}", "( ".repeat(10_000), " )".repeat(10_000));
    check_reason(&command, Destructive, "could not parse");
}
// rule: CLASSIFY-5
#[test]
fn classify_5_deeply_nested_wrappers_are_refused() {
    check_reason(
        &format!("{}ls", "sudo ".repeat(40)),
        Destructive,
        "nested too deeply",
    );
    check_reason(
        &format!("{}ls", "eval ".repeat(40)),
        Destructive,
        "nested too deeply",
    );
}
// rule: CLASSIFY-5
#[test]
fn classify_5_shells_reading_shells_from_their_input_stay_bounded() {
    // Found by the fuzzer: each `sh` once re-read the whole input, exponentially.
    let line = "sh\n";
    let command = format!("cat <<EOF | sh\n{}EOF\nrcp", line.repeat(200));
    check(&command, ConfigMutation);
    let command = format!("cat <<EOF | sh\n{}EOF\n", "sh\nrm x\n".repeat(50));
    check(&command, Destructive);
}
// rule: CLASSIFY-5
#[test]
fn classify_5_many_parts_are_refused_not_walked_forever() {
    let command = "ls;".repeat(5000);
    check_reason(
        &command,
        Destructive,
        "more parts than the classifier reads",
    );
}
// rule: CLASSIFY-5
#[test]
fn classify_5_empty_command_runs_nothing() {
    check("", ReadOnly);
    check("   # just a comment", ReadOnly);
}

#[test]
fn parse_reads_words_after_quote_removal() {
    let script = Script::parse("echo 'a b' \"c$HOME\" d\\ e").unwrap();
    let super::ast::Command::Simple(simple) = &script.body.items[0].and_or.first.commands[0] else {
        panic!("expected a simple command");
    };
    let words: Vec<&str> = simple.words.iter().map(|word| word.text.as_str()).collect();
    assert_eq!(words, ["echo", "a b", "c$HOME", "d e"]);
    assert!(simple.words[2].literal().is_none());
}

// rule: CLASSIFY-5
#[test]
fn parse_error_names_the_offset() {
    let err = Script::parse("ls; echo \"x").unwrap_err();
    assert_eq!(err.to_string(), "unterminated double quote at byte 9");
}

// rule: CLASSIFY-1
#[test]
fn the_shipped_corpus_is_classified_without_a_miss() {
    let entries = parse_corpus(CORPUS).unwrap();
    assert!(
        entries.len() >= 400,
        "corpus has only {} commands",
        entries.len()
    );
    let mut misses = Vec::new();
    for entry in &entries {
        let got = classify_in(&entry.command, entry.shell);
        if got.class != entry.expected {
            misses.push(format!(
                "line {}: expected {}, got {} for `{}` in {} ({})",
                entry.line, entry.expected, got.class, entry.command, entry.shell, got.reason
            ));
        }
    }
    assert!(
        misses.is_empty(),
        "{} misses:\n{}",
        misses.len(),
        misses.join("\n")
    );
}

// rule: GATE-8
#[test]
fn gate_8_example_policy_loads_and_applies() {
    let policy = Policy::parse(EXAMPLE_POLICY, "policy.example.toml").unwrap();
    assert!(!policy.rules().is_empty());
    assert_eq!(policy.classify("healthcheck --quick").class, ReadOnly);
    assert_eq!(
        policy.classify("docker compose restart web").class,
        Destructive
    );
    // GATE-10: the example's preview row.
    let form = policy.preview_form("ufw allow 443/tcp").unwrap();
    assert_eq!(form.commands, vec!["ufw status numbered"]);
}
// rule: GATE-8
#[test]
fn gate_8_empty_policy_is_the_built_in_classifier() {
    assert_eq!(Policy::empty().classify("rm x"), classify("rm x"));
}
// rule: GATE-8
#[test]
fn gate_8_rule_without_examples_only_makes_stricter() {
    let policy = Policy::parse(
        "[[rule]]\nprefix = [\"rm\"]\nclass = \"read_only\"\nreason = \"r\"\n",
        "p.toml",
    )
    .unwrap();
    assert_eq!(policy.classify("rm -rf /tmp/x").class, Destructive);
    let policy = Policy::parse(
        "[[rule]]\nprefix = [\"ls\"]\nclass = \"destructive\"\nreason = \"no\"\n",
        "p.toml",
    )
    .unwrap();
    let got = policy.classify("ls -la");
    assert_eq!(got.class, Destructive);
    assert!(
        got.reason.contains("policy rule `ls` (p.toml:1)"),
        "{}",
        got.reason
    );
}
// rule: AUTHZ-3
#[test]
fn a_named_rule_selects_the_commands_it_matches_wherever_they_stand() {
    let text = "[[rule]]\nname = \"restart-db\"\nprefix = [\"systemctl\", \"restart\", \"postgresql\"]\nclass = \"destructive\"\nreason = \"the database\"\n\n[[rule]]\nprefix = [\"deploy\"]\nclass = \"destructive\"\nreason = \"unnamed\"\n";
    let policy = Policy::parse(text, "p.toml").unwrap();
    assert!(policy.rule_named("restart-db").is_some());
    assert!(policy.rule_named("deploy").is_none());
    assert_eq!(
        policy.named_rules_matching("systemctl restart postgresql"),
        ["restart-db"]
    );
    assert_eq!(
        policy.named_rules_matching("sudo systemctl restart postgresql && echo ok"),
        ["restart-db"]
    );
    assert!(
        policy
            .named_rules_matching("systemctl restart nginx")
            .is_empty()
    );
    assert!(policy.named_rules_matching("deploy now").is_empty());
}
// rule: AUTHZ-3
#[test]
fn an_empty_or_repeated_rule_name_is_a_load_error_naming_the_line() {
    let repeated = "[[rule]]\nname = \"a\"\nprefix = [\"x\"]\nclass = \"destructive\"\nreason = \"r\"\n[[rule]]\nname = \"a\"\nprefix = [\"y\"]\nclass = \"destructive\"\nreason = \"r\"\n";
    let err = Policy::parse(repeated, "p.toml").unwrap_err();
    assert_eq!(err.line, 6, "{err}");
    assert!(
        err.to_string().contains("`a` names an earlier rule too"),
        "{err}"
    );
    let empty =
        "[[rule]]\nname = \" \"\nprefix = [\"x\"]\nclass = \"destructive\"\nreason = \"r\"\n";
    let err = Policy::parse(empty, "p.toml").unwrap_err();
    assert!(
        err.to_string()
            .starts_with("p.toml:1: rule `name` is empty"),
        "{err}"
    );
}
// rule: GATE-8
#[test]
fn gate_8_rule_with_examples_can_make_less_strict() {
    let text = "[[rule]]\nprefix = [\"deploy-status\"]\nclass = \"read_only\"\nreason = \"our tool\"\nmatch = [\"deploy-status --all\"]\nnot_match = [\"deploy --all\"]\n";
    let policy = Policy::parse(text, "p.toml").unwrap();
    assert_eq!(policy.classify("deploy-status").class, ReadOnly);
    assert_eq!(policy.classify("sudo deploy-status").class, ReadOnly);
    assert_eq!(policy.classify("deploy-status; rm x").class, Destructive);
}
// rule: GATE-8
#[test]
fn gate_8_relaxing_rule_never_hides_what_a_wrapped_command_runs() {
    let text = "[[rule]]\nprefix = [\"docker\", \"exec\"]\nclass = \"read_only\"\nreason = \"r\"\nmatch = [\"docker exec web cat /etc/hosts\"]\n";
    let policy = Policy::parse(text, "p.toml").unwrap();
    assert_eq!(policy.classify("docker exec web cat /x").class, ReadOnly);
    assert_eq!(
        policy.classify("docker exec web rm -rf /x").class,
        Destructive
    );
}
// rule: GATE-8
#[test]
fn gate_8_relaxing_a_shell_interpreter_sudo_env_or_ssh_is_a_load_error() {
    for program in ["bash", "python3", "sudo", "env", "ssh"] {
        let text = format!(
            "[[rule]]\nprefix = [\"{program}\"]\nclass = \"read_only\"\nreason = \"r\"\nmatch = [\"{program} x\"]\n"
        );
        let err = Policy::parse(&text, "p.toml").unwrap_err();
        assert_eq!(err.kind, PolicyErrorKind::CannotRelax(program.into()));
        assert_eq!(err.line, 1);
        assert!(err.to_string().starts_with("p.toml:1: rule for `"), "{err}");
    }
}
// rule: GATE-8
#[test]
fn gate_8_example_with_another_class_is_a_load_error() {
    let text = "# header\n\n[[rule]]\nprefix = [\"mytool\"]\nclass = \"read_only\"\nreason = \"r\"\nmatch = [\"mytool > /etc/x\"]\n";
    let err = Policy::parse(text, "ops.toml").unwrap_err();
    assert_eq!(err.line, 3, "{err}");
    assert!(
        matches!(
            err.kind,
            PolicyErrorKind::ExampleClass {
                got: ConfigMutation,
                ..
            }
        ),
        "{err}"
    );
}
// rule: GATE-8
#[test]
fn gate_8_unmatched_example_is_a_load_error() {
    let text = "[[rule]]\nprefix = [\"mytool\", \"status\"]\nclass = \"read_only\"\nreason = \"r\"\nmatch = [\"mytool stats\"]\n";
    let err = Policy::parse(text, "p.toml").unwrap_err();
    assert_eq!(
        err.kind,
        PolicyErrorKind::ExampleNotMatched("mytool stats".into())
    );
}
// rule: GATE-8
#[test]
fn gate_8_matched_counterexample_is_a_load_error() {
    let text = "[[rule]]\nprefix = [\"ls\"]\nclass = \"destructive\"\nreason = \"r\"\nnot_match = [\"sudo ls\"]\n";
    let err = Policy::parse(text, "p.toml").unwrap_err();
    assert_eq!(
        err.kind,
        PolicyErrorKind::CounterexampleMatched("sudo ls".into())
    );
}
// rule: GATE-8
#[test]
fn gate_8_broken_toml_names_file_and_line() {
    let err = Policy::parse("[[rule]]\nprefix = [\"ls\"\nclass = 1\n", "broken.toml").unwrap_err();
    assert_eq!(err.origin, "broken.toml");
    assert!(err.line >= 2, "{err}");
    assert!(err.to_string().starts_with("broken.toml:"), "{err}");
}
// rule: GATE-8
#[test]
fn gate_8_unknown_field_and_bad_class_are_load_errors() {
    let err = Policy::parse(
        "[[rule]]\nprefix = [\"ls\"]\nclass = \"safe\"\nreason = \"r\"\n",
        "p.toml",
    )
    .unwrap_err();
    assert!(matches!(err.kind, PolicyErrorKind::Syntax(_)), "{err}");
    let err = Policy::parse(
        "[[rule]]\nprefix = [\"ls\"]\nclass = \"read_only\"\nreason = \"r\"\nmatches = []\n",
        "p.toml",
    )
    .unwrap_err();
    assert!(matches!(err.kind, PolicyErrorKind::Syntax(_)), "{err}");
}
// rule: GATE-8
#[test]
fn gate_8_empty_prefix_is_a_load_error() {
    let err = Policy::parse(
        "[[rule]]\nprefix = []\nclass = \"read_only\"\nreason = \"r\"\n",
        "p.toml",
    )
    .unwrap_err();
    assert_eq!(err.kind, PolicyErrorKind::EmptyPrefix);
}

/// Quotes `text` as one single-quoted shell word.
fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

fn metachar_string() -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(vec![
        " ", "\t", "\n", ";", ";;", "&", "&&", "|", "||", "|&", "(", ")", "{", "}", "<", ">", ">>",
        "<<", "<<-", "<<<", "2>&1", "&>", "'", "\"", "\\", "`", "$", "$(", "${", "$((", "))", "*",
        "?", "[", "]", "[[", "]]", "#", "=", "!", "~", "if", "then", "fi", "for", "in", "do",
        "done", "while", "case", "esac", "function", "ls", "rm", "sudo", "bash", "-c", "EOF", "x",
        "-rf",
    ]);
    prop::collection::vec(pieces, 0..24).prop_map(|pieces| pieces.concat())
}

fn base_command() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "ls -la /etc",
        "cat /etc/hosts | grep x",
        "docker compose logs --tail=5",
        "rm -rf /tmp/x",
        "systemctl restart nginx",
        "systemctl stop nginx",
        "echo x > /etc/x",
        "find . -delete",
        "git log --oneline",
        "sed -i s/a/b/ f",
        "frobnicate",
        "./cat x",
        "echo $(reboot)",
        "psql -c 'DROP TABLE t'",
        "apt-get install -y x",
        "df -h; free -m",
        "kill -9 1",
        "ls > /dev/sda",
        "echo 'unterminated",
        "for f in a b; do rm $f; done",
        "mkfs.ext4 /dev/sdb",
        "journalctl -u x",
    ])
}

// rule: CLASSIFY-6
#[test]
fn no_corpus_command_that_writes_executes_or_changes_state_is_read_only() {
    let entries = parse_corpus(CORPUS).unwrap();
    let changing: Vec<_> = entries
        .iter()
        .filter(|entry| entry.expected != ReadOnly)
        .collect();
    assert!(
        changing.len() >= 700,
        "only {} state-changing cases",
        changing.len()
    );
    let passed: Vec<String> = changing
        .iter()
        .filter(|entry| classify(&entry.command).class == ReadOnly)
        .map(|entry| format!("line {}: `{}`", entry.line, entry.command))
        .collect();
    assert!(
        passed.is_empty(),
        "read_only but labelled as changing state:\n{}",
        passed.join("\n")
    );
}

/// Every command of the shipped corpus.
fn corpus_command() -> impl Strategy<Value = String> {
    let commands: Vec<String> = parse_corpus(CORPUS)
        .unwrap_or_default()
        .into_iter()
        .map(|entry| entry.command)
        .collect();
    prop::sample::select(commands)
}

proptest! {
    // rule: CLASSIFY-2
    // rule: CLASSIFY-6
    #[test]
    fn classify_2_wrapping_or_adding_a_part_never_lowers_a_corpus_command(
        command in corpus_command(),
        other in corpus_command(),
        wrapper in 0usize..9,
    ) {
        let wrapped = match wrapper {
            0 => format!("sudo {command}"),
            1 => format!("env LC_ALL=C {command}"),
            2 => format!("timeout 30 {command}"),
            3 => format!("nice -n 10 {command}"),
            4 => format!("bash -c {}", shell_quote(&command)),
            5 => format!("sh -c {}", shell_quote(&command)),
            6 => format!("{command}; {other}"),
            7 => format!("{other}; {command}"),
            _ => format!("sudo -u root timeout 5 {command}"),
        };
        // CLASSIFY-8: `bash -c` reads its script as bash, whatever shell runs `bash`.
        let bare = if wrapper == 4 { classify_in(&command, Shell::Bash) } else { classify(&command) };
        // Text that does not parse on its own can parse once words are put in front of it
        // (`| ls` after `sudo`): that is another command, not a wrapped one.
        prop_assume!(!bare.reason.starts_with("could not parse"));
        // A leading assignment becomes the wrapper's environment (`sudo x=1; ...`): the
        // shell no longer assigns it, so the command is another one.
        let assigns_first = command
            .split_once('=')
            .is_some_and(|(name, _)| crate::ast::is_name(name));
        prop_assume!(!(assigns_first && matches!(wrapper, 0..=3 | 8)));
        let outer = classify(&wrapped);
        prop_assert!(outer.class >= bare.class, "`{}` is {} but `{}` is {} ({})", command, bare.class, wrapped, outer.class, outer.reason);
        // A trailing comment swallows a part written after it.
        if wrapper == 7 || wrapper == 6 && !command.contains('#') {
            let second = classify(&other);
            prop_assert!(outer.class >= second.class, "`{}` is {} but `{}` is {}", other, second.class, wrapped, outer.class);
        }
    }
}

proptest! {
    // rule: CLASSIFY-5
    #[test]
    fn classify_5_never_panics_and_is_deterministic_on_any_bytes(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let command = String::from_utf8_lossy(&bytes);
        prop_assert_eq!(classify(&command), classify(&command));
    }

    // rule: CLASSIFY-5
    #[test]
    fn classify_5_never_panics_and_is_deterministic_on_shell_metacharacters(command in metachar_string()) {
        let first = classify(&command);
        prop_assert_eq!(&first, &classify(&command));
        if first.reason.starts_with("could not parse") {
            prop_assert_eq!(first.class, Destructive);
        }
    }

    // rule: CLASSIFY-2
    #[test]
    fn classify_2_wrapping_never_makes_a_command_less_strict(command in base_command(), wrapper in 0usize..10) {
        let wrapped = match wrapper {
            0 => format!("sudo {command}"),
            1 => format!("bash -c {}", shell_quote(command)),
            2 => format!("{command}; true"),
            3 => format!("true && {command}"),
            4 => format!("({command})"),
            5 => format!("{command} | cat"),
            6 => format!("env A=1 {command}"),
            7 => format!("timeout 5 {command}"),
            8 => format!("sh -c {}", shell_quote(command)),
            _ => format!("nice -n 5 {command}"),
        };
        let bare = classify(command);
        let outer = classify(&wrapped);
        prop_assert!(outer.class >= bare.class, "`{}` is {} but `{}` is {} ({})", command, bare.class, wrapped, outer.class, outer.reason);
    }
}

// rule: CLASSIFY-6
#[test]
fn classify_6_an_option_that_writes_or_runs_a_program_is_never_read_only() {
    for (command, option) in [
        ("rg --pre cat foo", "--pre"),
        ("rg --pre=cat foo", "--pre=cat"),
        ("rg -n --hostname-bin /tmp/x foo", "--hostname-bin"),
        ("rg --search-zip foo", "--search-zip"),
        ("base64 -o out.txt in", "-o"),
        ("base64 -oout.txt in", "-oout.txt"),
        ("sort --out=x in", "--out=x"),
        ("less +!id x", "+!id"),
        ("less -O log x", "-O"),
        ("tree -o out /etc", "-o"),
        ("cat --frobnicate x", "--frobnicate"),
        ("grep --pre x y", "--pre"),
        ("lastlog -C -u bob", "-C"),
        ("ping -f host", "-f"),
        ("file -C -m magic", "-C"),
        ("find / -fls /tmp/x", "-fls"),
        ("find / -newer x -frob", "-frob"),
        ("git --exec-path=/tmp log", "--exec-path"),
        ("git --frob log", "--frob"),
        ("git diff --ext-diff", "--ext-diff"),
        ("git grep -Ovim x", "-Ovim"),
        ("git ls-remote --upload-pack=id origin", "--upload-pack=id"),
        ("git log --output=/tmp/x", "--output"),
        ("command -x ls", "-x"),
    ] {
        let got = classify(command);
        assert_eq!(got.class, ConfigMutation, "`{command}`: {}", got.reason);
        assert!(
            got.reason.contains(option),
            "`{command}`: reason `{}` does not name `{option}`",
            got.reason
        );
    }
}

// rule: CLASSIFY-6
#[test]
fn classify_6_writing_forms_of_the_readers_are_not_read_only() {
    for command in [
        "sed -n 'w /tmp/f' x",
        "sed -n 's/a/b/w /tmp/f' x",
        "sed -n '1e id' x",
        "sed 's/a/id/e' x",
        "sed -n 'W /tmp/f' x",
        "find . -fprint /tmp/x",
        "find . -fprintf /tmp/x %p",
        "sort -o out in",
        "git -c core.pager=id log",
        "git -ccore.pager=id log",
        "git --config-env=core.pager=X log",
        "tar -cf x.tar dir",
        "tar -xf x.tar",
        "tar -tf x.tar --to-command=id",
        "curl -o x http://a",
        "curl -ox http://a",
        "curl -O http://a/x",
        "curl -K cfg http://a",
        "curl -d a=b http://a",
        "date -s 10:00",
        "date --set=10:00",
        "date 010101012020",
        "hostname newname",
        "hostname -F /etc/x",
        "ip link set eth0 up",
        "uniq in out",
        "xxd in out",
        "dmesg -C",
        "journalctl --rotate",
    ] {
        let got = classify(command);
        assert!(got.class >= ConfigMutation, "`{command}`: {}", got.reason);
    }
    check("journalctl --vacuum-size=1G", Destructive);
}

// rule: CLASSIFY-6
#[test]
fn classify_6_every_getopt_form_of_an_allowed_option_stays_read_only() {
    for command in [
        "rg -n foo src",
        "rg -i --glob '*.rs' -C 3 foo",
        "rg --glob=*.rs -C3 foo",
        "grep -rnE 'a|b' /etc",
        "grep -A 2 -B2 --context=3 --max-count 5 x f",
        "sort -u -k2,2 -t: x",
        "sort -nrk 3 x",
        "uniq -c",
        "date +%s",
        "date -u -d yesterday +%F",
        "hostname -s",
        "base64 -d x",
        "base64 -w0 x",
        "ss -tln -A inet",
        "git log --oneline -n 5",
        "git --no-pager -C /srv/app log -1",
        "tar -tvf x.tar",
        "find /var -name '*.log' -mtime +7 -size +1M -print",
        "find . -type f -newermt 2024-01-01 -printf '%p\\n'",
        "ls -la /etc",
        "ls --sort=size -lh",
        "ps aux",
        "ps -eo pid,comm --sort=-%mem",
        "df -hT",
        "du -sh --max-depth=1 /var",
        "tail -n 100 -f /var/log/syslog",
        "head -20 x",
        "less +F /var/log/syslog",
        "less -R x",
        "sed -n '1,20p' x",
        "sed -n -e '/x/p' x",
        "set",
        "export",
        "export FOO=bar",
        "declare -p",
        "shopt",
        "alias",
        "trap -p",
        "command -v ls",
        "printf -v line '%s' x",
        "read -r line",
    ] {
        check(command, ReadOnly);
    }
}

// rule: CLASSIFY-6
#[test]
fn classify_6_a_variable_that_changes_what_runs_is_config_mutation_however_set() {
    for (command, name) in [
        ("export PS4='$(touch /tmp/x)'; set -x; true", "PS4"),
        (
            "export GIT_SSH_COMMAND='touch /tmp/x'; git ls-remote origin",
            "GIT_SSH_COMMAND",
        ),
        ("declare -x PAGER=id; man ls", "PAGER"),
        ("typeset PATH=/tmp; ls", "PATH"),
        ("readonly IFS=x", "IFS"),
        ("local LD_PRELOAD=/tmp/x.so", "LD_PRELOAD"),
        ("export LD_LIBRARY_PATH=/tmp", "LD_LIBRARY_PATH"),
        ("PS4='$(id)' bash -x -c true", "PS4"),
        ("PROMPT_COMMAND=id true", "PROMPT_COMMAND"),
        ("BASH_ENV=/tmp/x bash -c true", "BASH_ENV"),
        ("ENV=/tmp/x sh -c true", "ENV"),
        ("env GIT_PAGER=id git log", "GIT_PAGER"),
        ("env GIT_EXTERNAL_DIFF=id git diff", "GIT_EXTERNAL_DIFF"),
        ("export GIT_EDITOR=id", "GIT_EDITOR"),
        ("export GIT_ASKPASS=/tmp/x", "GIT_ASKPASS"),
        ("export GIT_CONFIG_GLOBAL=/tmp/x", "GIT_CONFIG_GLOBAL"),
        ("export GIT_SSH=/tmp/x", "GIT_SSH"),
        ("export EDITOR=id VISUAL=id", "EDITOR"),
        ("export LESSOPEN='|id %s'; less x", "LESSOPEN"),
        ("LESSOPEN='|id %s' less x", "LESSOPEN"),
        ("MANPAGER=id man ls", "MANPAGER"),
        ("SYSTEMD_PAGER=id systemctl status x", "SYSTEMD_PAGER"),
        ("declare -g PATH+=:/tmp", "PATH"),
        ("export -n FOO PATH=/tmp", "PATH"),
        ("printf -v PATH %s /tmp", "PATH"),
        ("read PATH", "PATH"),
        ("read -a IFS", "IFS"),
        ("unset PATH", "PATH"),
        ("getopts ab PATH", "PATH"),
        ("let IFS=1", "IFS"),
        ("export BASH_FUNC_ls%%='() { id; }'", "BASH_FUNC_ls"),
        (
            "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0=id git log",
            "GIT_CONFIG",
        ),
        ("HOME=/tmp/evil git log", "HOME"),
    ] {
        let got = classify(command);
        assert_eq!(got.class, ConfigMutation, "`{command}`: {}", got.reason);
        assert!(got.reason.contains(name), "`{command}`: {}", got.reason);
    }
}

// rule: CLASSIFY-6
#[test]
fn classify_6_builtins_that_change_the_shell_are_never_read_only() {
    for command in [
        "set -x",
        "set -o xtrace",
        "set -e; ls",
        "set -- a b",
        "shopt -s extdebug",
        "shopt -u expand_aliases",
        "trap 'id' EXIT",
        "trap - DEBUG; trap 'echo' DEBUG",
        "alias ls='id'",
        "enable -n echo",
        "enable -f ./x.so x",
        "source x",
        ". x",
        "eval true",
        "eval ls",
        "exec ls",
        "exec 3>&1",
        "builtin echo",
        "hash -p /tmp/x ls",
        "umask 000",
        "ulimit -n 10",
        "history -c",
        "history -w /tmp/h",
        "complete -C id ls",
        "compgen -C id x",
        "mapfile -C id -c 1 arr",
        "unalias ls",
        "declare -n ref=PATH",
    ] {
        let got = classify(command);
        assert!(got.class >= ConfigMutation, "`{command}`: {}", got.reason);
    }
}

// rule: CLASSIFY-7
#[test]
fn classify_7_the_classification_says_whether_anything_knew_the_program() {
    use crate::Knowledge;
    for (command, knowledge) in [
        ("ls -la", Knowledge::Rule),
        ("/usr/bin/ls -la", Knowledge::Rule),
        ("/usr/local/sbin/reboot", Knowledge::Rule),
        ("sudo systemctl restart nginx", Knowledge::Rule),
        ("frobnicate --all", Knowledge::Unknown),
        ("./cat /etc/passwd", Knowledge::Unknown),
        ("/tmp/x/cat /etc/passwd", Knowledge::Unknown),
        ("~/bin/ls", Knowledge::Unknown),
        ("/usr/bin/../../tmp/cat x", Knowledge::Unknown),
        ("$CMD x", Knowledge::Unknown),
        ("ls; sudo ./install.sh", Knowledge::Unknown),
        ("bash -c 'frobnicate'", Knowledge::Unknown),
    ] {
        let got = classify(command);
        assert_eq!(got.knowledge, knowledge, "`{command}`: {}", got.reason);
        if knowledge == Knowledge::Unknown {
            assert_ne!(got.class, ReadOnly, "`{command}`: {}", got.reason);
            assert!(got.program_unknown());
        }
    }
}

// rule: CLASSIFY-7
#[test]
fn classify_7_a_policy_rule_with_examples_knows_an_unknown_program_and_a_floor_does_not() {
    use crate::Knowledge;
    let known = Policy::parse(
        "[[rule]]\nprefix = [\"frobnicate\"]\nclass = \"read_only\"\nreason = \"ours\"\n\
         match = [\"frobnicate --list\"]\n",
        "p.toml",
    )
    .unwrap();
    let got = known.classify("frobnicate --list");
    assert_eq!(
        (got.class, got.knowledge),
        (ReadOnly, Knowledge::Policy),
        "{}",
        got.reason
    );
    let floor = Policy::parse(
        "[[rule]]\nprefix = [\"frobnicate\"]\nclass = \"destructive\"\nreason = \"no\"\n",
        "p.toml",
    )
    .unwrap();
    let got = floor.classify("frobnicate --list");
    assert_eq!(
        (got.class, got.knowledge),
        (Destructive, Knowledge::Unknown),
        "{}",
        got.reason
    );
}

// rule: CLASSIFY-8
#[test]
fn classify_8_constructs_are_read_as_the_pinned_shell_reads_them() {
    // dash reads `((` as two subshells and `[[` as a program; bash reads arithmetic and tests.
    check_in(Shell::Sh, "((rm -rf /tmp/x))", Destructive);
    check_in(Shell::Bash, "((rm -rf /tmp/x))", ReadOnly);
    check_in(Shell::Sh, "[[ a > b ]]", ConfigMutation);
    check_in(Shell::Bash, "[[ a > b ]]", ReadOnly);
    // BusyBox ash reads `[[` as a command word, so `>` in it redirects (seen by the
    // execution oracle): never read-only there.
    check_in(Shell::Busybox, "[[ -n a ]]", ConfigMutation);
    check_in(Shell::Busybox, "[[ a > b ]]", ConfigMutation);
    // A syntax error in one of /bin/sh's shells is a command that cannot be read.
    check_in(Shell::Sh, "function f { ls; }", Destructive);
    check_in(Shell::Busybox, "function f { ls; }", ReadOnly);
    check_in(Shell::Sh, "cat <<< x", Destructive);
    check_in(Shell::Bash, "cat <<< x", ReadOnly);
    check_in(Shell::Sh, "ls |& cat", Destructive);
    check_in(Shell::Sh, "a=(x y)", Destructive);
    check_in(Shell::Sh, "cat <(echo hi)", Destructive);
    check_in(Shell::Busybox, "cat <(echo hi)", ReadOnly);
    // dash runs `echo hi &` and then `>> out`; bash appends both streams.
    check_in(Shell::Sh, "echo hi &>> out", Destructive);
    check_in(Shell::Bash, "echo hi &>> out", ConfigMutation);
    check_in(Shell::Busybox, "echo hi >& out", ConfigMutation);
    // bash expands braces into words known only when it runs.
    check_in(Shell::Bash, "{ls,/tmp}", ConfigMutation);
    check_in(Shell::Sh, "{rm,-rf,/tmp/x}", ConfigMutation);
}

// rule: CLASSIFY-8
#[test]
fn classify_8_the_reason_names_the_shell_when_readings_disagree() {
    check_reason("[[ -n a ]]", ConfigMutation, "(as dash reads it)");
    check_reason("((rm -rf /x))", Destructive, "(as dash reads it)");
}

// rule: CLASSIFY-8
#[test]
fn classify_8_code_in_evaluation_contexts_is_code() {
    for command in [
        "echo $(( '$(touch /tmp/p)' ))",
        "echo $(( a[$(touch /tmp/p)] ))",
        "x='a[$(touch /tmp/p)]'; echo $((x))",
        "let 'a[$(touch /tmp/p)]=1'",
        "declare -i x='a[$(touch /tmp/p)]'",
        "typeset x='a[$(touch /tmp/p)]'",
        "[[ a[$(touch /tmp/p)] -eq 1 ]]",
        "printf -v 'a[$(touch /tmp/p)]' x",
        "read 'a[$(touch /tmp/p)]' < /etc/hostname",
        "test -v 'a[$(touch /tmp/p)]'",
        "echo ${a['$(touch /tmp/p)']}",
        "declare -a x='([0]=$(touch /tmp/p))'",
        "unset 'a[$(touch /tmp/p)]'",
        "ls ${x:'$(touch /tmp/p)'}",
    ] {
        check_in(Shell::Sh, command, ConfigMutation);
        check_in(Shell::Bash, command, ConfigMutation);
    }
    // A value handed to a program's environment reaches any bash it starts.
    for command in [
        "env x='a[$(touch /tmp/p)]' bash -c 'echo $((x))'",
        "sudo x='a[$(touch /tmp/p)]' bash -c 'echo $((x))'",
        "x='a[$(touch /tmp/p)]' bash -c 'echo $((x))'",
        "export x='a[$(touch /tmp/p)]'",
    ] {
        check_in(Shell::Busybox, command, ConfigMutation);
    }
    // ash has no arrays: its `let` and `read` do not evaluate subscripts.
    check_in(
        Shell::Busybox,
        "x='a[$(touch /tmp/p)]'; echo $((x))",
        ReadOnly,
    );
    check("let x=1", ReadOnly);
    check("printf -v x %s y", ReadOnly);
}

// rule: CLASSIFY-8
#[test]
fn classify_8_a_variable_assigned_by_a_builtin_that_changes_what_runs_is_a_mutation() {
    for command in [
        "read PATH < /etc/hostname",
        "read -r -d x LD_PRELOAD < /etc/hosts",
        "getopts ab PATH",
        "for IFS in x; do ls; done",
        "printf -v PATH %s /tmp",
        "mapfile -t PATH < /etc/hosts",
    ] {
        check(command, ConfigMutation);
    }
    check_in(
        Shell::Bash,
        "select PATH in /tmp; do ls; done",
        ConfigMutation,
    );
    check("read -r x < /etc/hostname", ReadOnly);
    check("getopts ab opt", ReadOnly);
}

// rule: CLASSIFY-8
#[test]
fn classify_8_simulation_counts_only_where_the_subcommand_honours_it() {
    check("apt-get -s -o Dir::Log::Planner= install nginx", ReadOnly);
    check("apt-get -s -o Dir::Log::Planner= upgrade", ReadOnly);
    check("apt-get -s -o Dir::Log::Planner= update", ConfigMutation);
    check("apt-get -s update", ConfigMutation);
    check("apt-get --simulate download nginx", ConfigMutation);
    check("apt-get --dry-run source nginx", ConfigMutation);
    check("apt-get -s clean", ConfigMutation);
    check("modprobe -n nf_conntrack", ReadOnly);
    check("rmmod -n nf_conntrack", ConfigMutation);
    check("make -n all", ConfigMutation);
    check("rsync -n -a /a/ /b/", ReadOnly);
    check("rsync -n -a -e 'sh -c id' /a/ /b/", ConfigMutation);
    check("rsync -n --log-file=/tmp/l /a/ /b/", ConfigMutation);
}

// rule: CLASSIFY-8
#[test]
fn classify_8_remote_file_arguments_are_not_read_only() {
    for command in [
        "tar -tf backup:/x.tar",
        "tar -tfbackup:/x.tar",
        "tar --file=backup:/x.tar -t",
        "tar --file backup:/x.tar --list",
        "tar tvf backup:/x.tar",
        "tar tfC backup:/x.tar /tmp",
        "tar -tvC /tmp -f root@nas:/x.tar",
        "rsync -n backup:/etc/ /tmp/x",
        "rsync -n backup::module /tmp/x",
        "rsync -n rsync://backup/module /tmp/x",
        "git ls-remote 'ext::sh -c touch% /tmp/x'",
        "git fetch 'ext::sh -c id'",
        "git archive --remote=ext::x HEAD",
    ] {
        check(command, ConfigMutation);
    }
    check("tar -tvf ./a:b.tar", ReadOnly);
    check("tar -tvf /srv/x.tar", ReadOnly);
}

// rule: CLASSIFY-8
#[test]
fn classify_8_wrappers_running_another_root_are_never_read_only() {
    for command in [
        "chroot /srv/root ls",
        "chroot /srv/root",
        "nsenter -t 1 -m -u -i -n -p ls",
        "unshare -r id",
        "unshare --mount --pid --fork ls",
        "systemd-nspawn -D /srv/root ls",
        "ip netns exec blue ip addr",
        "sudo -R /srv/root ls",
    ] {
        check(command, ConfigMutation);
    }
    check("nsenter -t 1 -m -u -i -n -p rm -rf /x", Destructive);
    check("ip netns exec blue rm -rf /x", Destructive);
    // iproute2 reads objects and verbs by prefix, and `-all` names no namespace.
    check("ip -all netns exec rm -rf /x", Destructive);
    check("ip net e blue rm -rf /x", Destructive);
    check("ip vrf exec blue ls", ConfigMutation);
}

// rule: CLASSIFY-8
#[test]
fn classify_8_a_secret_read_in_any_reading_of_sh_is_one() {
    // dash cannot parse a here-string, bash reads the file through `xargs cat`.
    let found = classify("xargs cat <<< /etc/shadow");
    assert_eq!(found.class, Destructive, "{}", found.reason);
    assert_eq!(found.secret_read(), Some("/etc/shadow"), "{}", found.reason);
    assert!(found.reason.contains("SECRET-1"), "{}", found.reason);
    assert_eq!(
        classify_in("cat /etc/hostname", Shell::Sh).secret_read(),
        None
    );
}

// rule: CLASSIFY-6
#[test]
fn classify_6_what_the_execution_oracle_saw_write_or_run_is_not_read_only() {
    for command in [
        "service --status-all",
        "git ls-remote origin",
        "git --help log",
        "git help status",
        "file -p notes.txt",
        "pidof -w nginx",
        "sort -S 1 /etc/passwd",
        "sort -T /tmp /etc/passwd",
        "systemctl -H web status nginx",
        "hostnamectl -H web status",
        "timedatectl --host=web status",
        "busctl -H web list",
        "sqlite3 app.db 'SELECT 1'",
        "sqlite3 -readonly app.db '.shell id'",
        "wget -qO- -O out https://example.com",
        "zgrep -f patterns.txt x.gz",
        "man -a ls",
        "top -b -n 1",
        "su postgres -c 'psql -l'",
    ] {
        check(command, ConfigMutation);
    }
    check("git help", ReadOnly);
    check("sort -u /etc/passwd", ReadOnly);
    check("sqlite3 -readonly app.db 'SELECT 1'", ReadOnly);
    check("man -k nginx", ReadOnly);
}

// rule: CLASSIFY-9
#[test]
fn classify_9_flock_creates_a_missing_lock_file_and_its_command_is_classified_too() {
    check_reason(
        "flock /tmp/lock uptime",
        ConfigMutation,
        "creates its lock file",
    );
    check("flock -w 5 /run/lock/job.lock cat x", ConfigMutation);
    check("flock /tmp/lock rm x", Destructive);
    check("flock 9", ReadOnly);
}

// rule: CLASSIFY-9
#[test]
fn classify_9_zgrep_file_writes_a_temporary_copy_and_diff_paginate_runs_pr() {
    check_reason(
        "zgrep --file=patterns.txt error x.gz",
        ConfigMutation,
        "--file",
    );
    check_reason("diff -l a b", ConfigMutation, "-l");
    check_reason("diff --paginate a b", ConfigMutation, "--paginate");
    check("zgrep -e error x.gz", ReadOnly);
    check("diff -u a b", ReadOnly);
}

// rule: CLASSIFY-9
#[test]
fn classify_9_pidof_reports_an_option_it_cannot_read_on_the_console() {
    check_reason("pidof -S, nginx", ConfigMutation, "-S");
    check_reason("pidof -o x nginx", ConfigMutation, "-o");
    check("pidof -o %PPID -o 12,13 nginx", ReadOnly);
    check("pidof -d, nginx", ReadOnly);
}

// rule: CLASSIFY-9
#[test]
fn classify_9_git_status_reads_only_where_the_pinned_environment_turns_optional_locks_off() {
    check("git status", ReadOnly);
    check("git -C repo status --short", ReadOnly);
    check("env git status", ReadOnly);
    check("sudo -E git status", ReadOnly);
    check("ssh web1 git --no-optional-locks status", ReadOnly);
    for command in [
        "env -i git status",
        "env --ignore-environment LC_ALL=C git status",
        "sudo git status",
        "doas git -C /srv/app status",
        "ssh web1 git status",
        "ssh web1 'cd /srv/app && git status --short'",
        "sh -c 'env -i git status'",
    ] {
        check_reason(command, ConfigMutation, "GIT_OPTIONAL_LOCKS=0");
    }
    for command in [
        "GIT_OPTIONAL_LOCKS=1 git status",
        "export GIT_OPTIONAL_LOCKS=1; git status",
        "unset GIT_OPTIONAL_LOCKS; git status",
        "env -u GIT_OPTIONAL_LOCKS git status",
        "env --unset=GIT_OPTIONAL_LOCKS git status",
    ] {
        check_reason(command, ConfigMutation, "GIT_OPTIONAL_LOCKS");
    }
    // Readers that take no optional lock stay readers wherever they run.
    check("env -i git log -1", ReadOnly);
    check("ssh web1 git log --oneline -5", ReadOnly);
}

// rule: CLASSIFY-9
#[test]
fn classify_9_git_describe_dirty_writes_the_index_whatever_the_environment() {
    for command in [
        "git describe --dirty",
        "git describe --always --dirty=-modified",
        "git describe --broken",
        "git -C repo describe --tags --dirt",
    ] {
        check_reason(command, ConfigMutation, "writes `.git/index`");
    }
    check("git describe --tags --always", ReadOnly);
    check("git describe --contains HEAD", ReadOnly);
}

// rule: CLASSIFY-9
#[test]
fn classify_9_busyboxs_diff_of_an_input_that_is_not_a_regular_file_writes_a_temporary_file() {
    for shell in Shell::ALL {
        check_in(shell, "echo x | busybox diff - notes.txt", ConfigMutation);
        check_in(shell, "busybox diff /dev/stdin b < a", ConfigMutation);
        check_in(shell, "busybox diff a.conf b.conf", ReadOnly);
    }
    check_in(
        Shell::Bash,
        "busybox diff <(ls /a) notes.txt",
        ConfigMutation,
    );
    // A BusyBox system's `diff` is BusyBox's: pinned `busybox`, or `/bin/sh` read as ash.
    for shell in [Shell::Busybox, Shell::Sh] {
        check_in(shell, "cat a | diff - b", ConfigMutation);
        check_in(shell, "diff -u -- /dev/fd/3 b 3<a", ConfigMutation);
        check_in(shell, "diff -u a b", ReadOnly);
    }
    check_in(Shell::Bash, "diff <(ls /a) <(ls /b)", ReadOnly);
    check_in(Shell::Bash, "cat a | diff - b", ReadOnly);
    check_in(
        Shell::Bash,
        "bash -c 'busybox sh -c \"diff - b\"' < a",
        ConfigMutation,
    );
}

// rule: CLASSIFY-9
#[test]
fn classify_9_tac_of_an_input_it_cannot_seek_writes_a_temporary_file() {
    for shell in Shell::ALL {
        check_in(shell, "journalctl -u nginx | tac", ConfigMutation);
        check_in(shell, "tac -s : -", ConfigMutation);
        check_in(shell, "tac /var/log/syslog /dev/stdin < a", ConfigMutation);
        check_in(shell, "tac", ConfigMutation);
        check_in(shell, "tac -r -s x /var/log/syslog", ReadOnly);
        check_in(shell, "tac --help", ReadOnly);
    }
    check_in(Shell::Bash, "tac <(journalctl -b)", ConfigMutation);
    let reason = classify_in("dmesg | tac", Shell::Sh).reason;
    assert!(
        reason.contains("`tac FILE` reads a file in place"),
        "{reason}"
    );
}

// rule: CLASSIFY-8
// rule: CLASSIFY-9
#[test]
fn classify_8_bash_reads_arithmetic_holding_a_case_as_a_subshell_whose_words_run() {
    for command in [
        "a=(1 2); echo $(( a[$(case x in x) which ls;; esac)] ))",
        "echo $(( 1 + $(case x in x) echo 2;; esac) ))",
        "echo $(( 1 + `case $v in (1) echo 2;; esac` ))",
        "echo $(( 1 + ${x:-$(case x in x) echo 2;; esac)} ))",
        "x=$(( $(case x in x) echo id;; esac) )); echo $x",
    ] {
        check_in(Shell::Bash, command, ConfigMutation);
        let sh = classify_in(command, Shell::Sh);
        assert_ne!(sh.class, ReadOnly, "`{command}` in sh: {}", sh.reason);
    }
    // Without a `case`, or as the `(( ))` command, bash computes it.
    check_in(Shell::Bash, "echo $(( 1 + $(echo 2) ))", ReadOnly);
    check_in(
        Shell::Bash,
        "(( x = 1 + $(case y in y) echo 2;; esac) ))",
        ReadOnly,
    );
    // Dash and BusyBox ash compute it too.
    check_in(
        Shell::Busybox,
        "echo $(( 1 + $(case x in x) echo 2;; esac) ))",
        ReadOnly,
    );
}

// rule: CLASSIFY-9
#[test]
fn classify_9_apts_simulation_is_read_only_only_with_its_planner_log_off() {
    // Found by running it: with the planner log on, every simulation rewrites
    // `/var/log/apt/eipp.log.xz`.
    for command in [
        "apt-get -s install nginx",
        "apt-get --simulate reinstall nginx",
        "apt-get -s upgrade",
        "apt -s remove nano",
        "apt-get -s -o Dir::Log::Planner=/tmp/plan.log install nginx",
        "apt-get -s -o Dir::Log::Planner=x install nginx",
        "apt-get -s -o Dir::Log=/tmp install nginx",
        "apt-get -s -o Dir::Log::Planner= -o Debug::pkgDPkgPM=1 install nginx",
        "apt-get -s -o Dir::Log::Planner= -c /tmp/apt.conf install nginx",
        "apt-get -s -o Dir::Log::Planner= -o Dir::Log::Planner=/tmp/p install nginx",
    ] {
        check(command, ConfigMutation);
    }
    for command in [
        "apt-get -s -o Dir::Log::Planner= install nginx",
        "apt-get -o Dir::Log::Planner= -s install nginx",
        "apt-get -s -oDir::Log::Planner= install nginx",
        "apt-get -s --option Dir::Log::Planner= install nginx",
        "apt-get -s --option=Dir::Log::Planner= upgrade",
        "apt-get -s -o 'dir::log::planner=' remove nano",
        "apt-get -s -o Dir::Log::Planner='' purge nano",
    ] {
        check(command, ReadOnly);
    }
    let verdict = classify("apt-get -s install nginx");
    assert!(
        verdict.reason.contains("-o Dir::Log::Planner="),
        "the refusal says how to simulate without writing: {}",
        verdict.reason
    );
}
