#!/usr/bin/env bash
# Starts a throwaway OpenSSH sshd on 127.0.0.1 for the nomos-ssh tests and benches.
#
#   source scripts/sshd-up.sh      # exports NOMOS_TEST_SSHD_DIR and NOMOS_TEST_SSHD_PORT
#   cargo test -p nomos-ssh        # read-only tests reuse this server
#   scripts/sshd-down.sh           # stops it and removes its directory
#
# The directory holds the same files as nomos_test_support::sshd::Sshd::start():
# sshd_config, host_ed25519(.pub), client_ed25519(.pub), authorized_keys,
# known_hosts ([127.0.0.1]:PORT), sshd.pid, sshd.log. Set NOMOS_TEST_SSHD_PORT
# before sourcing to choose the port; otherwise a free one is picked.

nomos_sshd_up() {
    local sshd=/usr/sbin/sshd dir port
    if [ ! -x "$sshd" ]; then
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q openssh-server >/dev/null 2>&1 ||
            { apt-get update -q >/dev/null 2>&1 &&
              DEBIAN_FRONTEND=noninteractive apt-get install -y -q openssh-server >/dev/null; } ||
            { echo "sshd-up: could not install openssh-server" >&2; return 1; }
    fi
    port=${NOMOS_TEST_SSHD_PORT:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
    dir=$(mktemp -d /tmp/nomos-sshd.XXXXXX) || return 1
    ssh-keygen -q -t ed25519 -N '' -C nomos-test-host -f "$dir/host_ed25519" || return 1
    ssh-keygen -q -t ed25519 -N '' -C nomos-test-client -f "$dir/client_ed25519" || return 1
    cp "$dir/client_ed25519.pub" "$dir/authorized_keys"
    # A home of its own, so sessions do not run this machine's login files (~/.bashrc).
    mkdir -p "$dir/home"
    cat >"$dir/sshd_config" <<CFG
Port $port
ListenAddress 127.0.0.1
HostKey $dir/host_ed25519
PidFile $dir/sshd.pid
AuthorizedKeysFile $dir/authorized_keys
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
UsePAM no
StrictModes no
LogLevel VERBOSE
AcceptEnv LANG LC_*
SetEnv HOME=$dir/home
CFG
    mkdir -p /run/sshd && chmod 0755 /run/sshd
    "$sshd" -t -f "$dir/sshd_config" || { echo "sshd-up: config test failed" >&2; return 1; }
    "$sshd" -f "$dir/sshd_config" -E "$dir/sshd.log" || { echo "sshd-up: sshd did not start" >&2; return 1; }
    local i
    for i in $(seq 100); do
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
        sleep 0.1
    done
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null ||
        { echo "sshd-up: port $port did not open; see $dir/sshd.log" >&2; return 1; }
    echo "[127.0.0.1]:$port $(cut -d' ' -f1,2 "$dir/host_ed25519.pub")" >"$dir/known_hosts"
    export NOMOS_TEST_SSHD_DIR=$dir NOMOS_TEST_SSHD_PORT=$port
    echo "sshd up: pid=$(cat "$dir/sshd.pid") NOMOS_TEST_SSHD_PORT=$port NOMOS_TEST_SSHD_DIR=$dir"
}

nomos_sshd_up
