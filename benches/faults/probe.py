#!/usr/bin/env python3
"""Fault probe of nomos-server on loopback, Python standard library only.

Runs the real server binary and replays the faults of EXEC-8, EXEC-9, TURN-11 and TURN-12,
each bounded in time, then prints one table:

* disk full and back: the data directory is a 6 MiB tmpfs; a turn runs a command while
  the disk fills; writes must fail with JSON 5xx and /readyz must say not ready; once the
  space is freed, writes must succeed again without a restart and the turn must end.
* kill -9 at five moments (each --rounds times): idle, mid model stream, mid local
  command, mid remote command (a loopback sshd), mid approval (the decision's commit and
  its command racing the kill); then a restart.
* SIGTERM mid model stream: the shutdown must end the turn it stops.
* a trickling model: the reply deadline must end the turn and free the session.

Columns (all must be 0): writes failing after recovery, turns left open, commands
surviving the server, outcomes misreported (an execution left running, an interrupted one
that does not say its outcome is unknown, or one whose record contradicts its effect).

Needs root (the tmpfs mount), /usr/sbin/sshd and ssh-keygen.
Usage: benches/faults/probe.py [--server PATH] [--rounds 3]
"""

import argparse
import http.client
import http.server
import json
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

INTERRUPTED = "interrupted: outcome unknown"


# ---------------------------------------------------------------- helpers


def wait_for(bound, check, step=0.05):
    deadline = time.time() + bound
    while time.time() < deadline:
        if check():
            return True
        time.sleep(step)
    return check()


def processes_matching(needle):
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if needle in cmdline and state != "Z":
            found.append(int(pid))
    return found


class Server:
    """One nomos-server process on a data directory."""

    def __init__(self, binary, workdir, env):
        self.workdir = workdir
        full = {k: v for k, v in os.environ.items() if not k.startswith("NOMOS_")}
        full.update(env)
        full["RUST_LOG"] = "warn"
        self.log = open(os.path.join(workdir, "server.log"), "ab")
        self.proc = subprocess.Popen(
            [binary, "--listen", "127.0.0.1:0", "--data-dir", os.path.join(workdir, "data")],
            cwd=workdir, env=full, stdout=subprocess.PIPE, stderr=self.log)
        line = self.proc.stdout.readline().decode()
        if not line:
            raise RuntimeError(f"the server did not start; see {workdir}/server.log")
        url = line.strip().rsplit(" ", 1)[-1]
        self.host, port = url.split("//", 1)[1].split("/", 1)[0].split(":")
        self.port = int(port)
        with open(os.path.join(workdir, "data", "operator-token")) as f:
            self.token = f.read().strip()

    def request(self, method, path, body=None):
        conn = http.client.HTTPConnection(self.host, self.port, timeout=15)
        headers = {"authorization": f"Bearer {self.token}"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["content-type"] = "application/json"
        try:
            conn.request(method, path, body=data, headers=headers)
            response = conn.getresponse()
            raw = response.read()
            try:
                parsed = json.loads(raw) if raw else None
            except ValueError:
                parsed = None
            return response.status, parsed
        finally:
            conn.close()

    def chat(self, text):
        status, session = self.request("POST", "/api/sessions", {})
        assert status == 201, (status, session)
        sid = session["id"]
        status, body = self.request("POST", f"/api/sessions/{sid}/messages", {"text": text})
        assert status == 202, (status, body)
        return sid

    def kill_9(self):
        self.proc.kill()
        self.proc.wait(timeout=30)
        self.log.close()

    def terminate(self):
        self.proc.terminate()
        self.proc.wait(timeout=60)
        self.log.close()


def db(workdir):
    path = os.path.join(workdir, "data", "nomos.db")
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10)


def open_turns(workdir):
    """Sessions whose last turn event is a turn.started."""
    last = {}
    with db(workdir) as conn:
        for sid, kind in conn.execute(
                "SELECT session_id, kind FROM events WHERE kind IN ('turn.started', 'turn.done') "
                "ORDER BY session_id, seq"):
            last[sid] = kind
    return sum(1 for kind in last.values() if kind == "turn.started")


def executions(workdir):
    with db(workdir) as conn:
        return list(conn.execute("SELECT id, status, error, command FROM executions"))


def misreported(workdir, effect_done=None):
    """Executions whose record is wrong after a restart (see the module docs)."""
    bad = 0
    for _id, status, error, command in executions(workdir):
        error = error or ""
        if status in ("running", "approved"):
            bad += 1
        elif status == "failed" and error.startswith("interrupted") and not error.startswith(INTERRUPTED):
            bad += 1
        elif effect_done is not None and status == "completed" and not effect_done(command):
            bad += 1
        elif effect_done is not None and status == "cancelled" and effect_done(command):
            bad += 1
    return bad


def script(workdir, replies):
    path = os.path.join(workdir, "replies.yaml")
    with open(path, "w") as f:
        f.write(replies)
    return path


def run_script(workdir, host, command):
    return script(workdir, (
        "- tool_calls:\n"
        f"    - {{name: run, arguments: {{host: \"{host}\", command: \"{command}\"}}}}\n"
        "- text: \"done\"\n"))


# ---------------------------------------------------------------- a trickling model


class Trickle:
    """An OpenAI-compatible endpoint that streams one chunk per interval, for up to 120 s."""

    def __init__(self, interval):
        self.requests = 0
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                self.rfile.read(int(self.headers.get("content-length", 0)))
                outer.requests += 1
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                chunk = {"id": "c", "object": "chat.completion.chunk",
                         "choices": [{"index": 0, "delta": {"content": "."}, "finish_reason": None}]}
                event = f"data: {json.dumps(chunk)}\n\n".encode()
                deadline = time.time() + 120
                try:
                    while time.time() < deadline:
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
                        self.wfile.flush()
                        time.sleep(interval)
                except OSError:
                    pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def env(self, **extra):
        env = {"NOMOS_LLM_BASE_URL": self.base_url, "NOMOS_LLM_MODEL": "trickle"}
        env.update(extra)
        return env

    def stop(self):
        self.httpd.shutdown()


# ---------------------------------------------------------------- a loopback sshd


class Sshd:
    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="nomos-probe-sshd.")
        for name in ("host", "client"):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f",
                            f"{self.dir}/{name}"], check=True)
        shutil.copy(f"{self.dir}/client.pub", f"{self.dir}/authorized_keys")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        with open(f"{self.dir}/sshd_config", "w") as f:
            f.write(f"Port {self.port}\nListenAddress 127.0.0.1\nHostKey {self.dir}/host\n"
                    f"PidFile {self.dir}/sshd.pid\nAuthorizedKeysFile {self.dir}/authorized_keys\n"
                    "PubkeyAuthentication yes\nPasswordAuthentication no\n"
                    "KbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\n"
                    "UsePAM no\nStrictModes no\nAcceptEnv LANG LC_*\n")
        os.makedirs("/run/sshd", exist_ok=True)
        subprocess.run(["/usr/sbin/sshd", "-f", f"{self.dir}/sshd_config", "-E",
                        f"{self.dir}/sshd.log"], check=True)
        wait_for(5, lambda: os.path.exists(f"{self.dir}/sshd.pid"))
        host_key = open(f"{self.dir}/host.pub").read().split()[:2]
        with open(f"{self.dir}/known_hosts", "w") as f:
            f.write(f"[127.0.0.1]:{self.port} {' '.join(host_key)}\n")

    def inventory(self, workdir):
        path = os.path.join(workdir, "inventory.toml")
        with open(path, "w") as f:
            f.write(f"[[host]]\nslug = \"local\"\n\n[[host]]\nslug = \"host:loopback\"\n"
                    f"address = \"127.0.0.1\"\nport = {self.port}\nuser = \"root\"\n"
                    f"key_file = \"{self.dir}/client\"\n")
        return {"NOMOS_INVENTORY": path, "NOMOS_KNOWN_HOSTS": f"{self.dir}/known_hosts"}

    def stop(self):
        try:
            with open(f"{self.dir}/sshd.pid") as f:
                os.kill(int(f.read().strip()), 15)
        except (OSError, ValueError):
            pass
        shutil.rmtree(self.dir, ignore_errors=True)


# ---------------------------------------------------------------- scenarios


class Row:
    def __init__(self, name):
        self.name = name
        self.runs = 0
        self.writes_failing = 0
        self.open_turns = 0
        self.surviving = 0
        self.misreported = 0
        self.notes = []
        self.seen = []


def scenario_disk_full(binary, row):
    """A 6 MiB tmpfs as the data directory fills up mid-turn, then frees up."""
    workdir = tempfile.mkdtemp(prefix="nomos-probe.")
    os.makedirs(os.path.join(workdir, "data"))
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=6m", "nomos-probe",
                    os.path.join(workdir, "data")], check=True)
    try:
        env = {"NOMOS_MODEL_SCRIPT": run_script(workdir, "local", "sleep 2; echo slept")}
        server = Server(binary, workdir, env)
        sid = server.chat("run it")
        ballast = os.path.join(workdir, "data", "ballast")
        with open(ballast, "wb") as f:
            try:
                while True:
                    f.write(b"\0" * 65536)
                    f.flush()
                    os.fsync(f.fileno())
            except OSError:
                pass
        failed = None
        for _ in range(50):
            status, body = server.request("POST", "/api/sessions", {})
            if status >= 500:
                failed = (status, body)
                break
        if not failed or not (body and "error" in body):
            row.notes.append(f"writes on a full disk did not fail in JSON: {failed}")
            row.misreported += 1
        status, ready = server.request("GET", "/readyz")
        if status != 503:
            row.notes.append(f"/readyz said {status} on a full disk")
            row.misreported += 1
        time.sleep(3)  # the command ends and its commit fails meanwhile
        os.remove(ballast)
        wait_for(90, lambda: open_turns(workdir) == 0 and not any(
            e[1] == "running" for e in executions(workdir)), step=0.5)
        for _ in range(10):
            status, _ = server.request("POST", "/api/sessions", {})
            if status != 201:
                row.writes_failing += 1
        status, _ = server.request("GET", "/readyz")
        if status != 200:
            row.writes_failing += 1
            row.notes.append(f"/readyz said {status} after recovery")
        row.open_turns += open_turns(workdir)
        row.misreported += misreported(workdir)
        server.terminate()
        row.runs += 1
    finally:
        subprocess.run(["umount", "-l", os.path.join(workdir, "data")])
        shutil.rmtree(workdir, ignore_errors=True)


def restart_and_count(binary, workdir, env, row, needle=None, effect_done=None):
    server = Server(binary, workdir, env)
    if needle is not None:
        row.surviving += len(processes_matching(needle))
    row.open_turns += open_turns(workdir)
    row.misreported += misreported(workdir, effect_done)
    status, _ = server.request("POST", "/api/sessions", {})
    if status != 201:
        row.writes_failing += 1
    server.terminate()
    row.runs += 1


def scenario_kill_idle(binary, row, k):
    workdir = tempfile.mkdtemp(prefix="nomos-probe.")
    try:
        env = {"NOMOS_MODEL_SCRIPT": script(workdir, "- text: \"hello\"\n")}
        server = Server(binary, workdir, env)
        server.chat("hi")
        wait_for(20, lambda: open_turns(workdir) == 0)
        server.kill_9()
        restart_and_count(binary, workdir, env, row)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def scenario_kill_mid_stream(binary, row, k, trickle):
    workdir = tempfile.mkdtemp(prefix="nomos-probe.")
    try:
        env = trickle.env()
        before = trickle.requests
        server = Server(binary, workdir, env)
        server.chat("hi")
        if not wait_for(20, lambda: trickle.requests > before):
            row.notes.append("the model was never asked")
        time.sleep(0.5)
        server.kill_9()
        restart_and_count(binary, workdir, env, row)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def scenario_kill_mid_command(binary, row, k, host, extra_env):
    workdir = tempfile.mkdtemp(prefix="nomos-probe.")
    try:
        needle = f"sleep 3{k}{os.getpid() % 1000:03d}.5"
        env = {"NOMOS_MODEL_SCRIPT": run_script(workdir, host, f"{needle}; echo finished")}
        env.update(extra_env(workdir))
        server = Server(binary, workdir, env)
        server.chat("run it")
        if not wait_for(20, lambda: processes_matching(needle)):
            row.notes.append(f"`{needle}` never started")
        server.kill_9()
        if host == "local":
            # A local command dies with the server itself, before any restart.
            wait_for(5, lambda: not processes_matching(needle))
            row.surviving += len(processes_matching(needle))
        restart_and_count(binary, workdir, env, row, needle=needle)
        for pid in processes_matching(needle):
            os.kill(pid, 9)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def scenario_kill_mid_approval(binary, row, k):
    """Approve a destructive command and kill the server while the decision commits and
    the command runs; the record must match the effect."""
    workdir = tempfile.mkdtemp(prefix="nomos-probe.")
    try:
        mark = os.path.join(workdir, "MARK")
        open(mark, "w").close()
        command = f"rm {mark}"
        env = {"NOMOS_MODEL_SCRIPT": script(workdir, (
            "- tool_calls:\n"
            "    - {name: set_goal, arguments: {goal: \"remove the mark\"}}\n"
            "    - {name: propose_plan, arguments: {steps: [{title: \"remove the mark\"}]}}\n"
            "- text: \"Plan ready. Approve?\"\n"
            "- tool_calls:\n"
            "    - {name: update_plan_step, arguments: {seq: 1, status: running}}\n"
            f"    - {{name: run, arguments: {{host: local, command: \"{command}\"}}}}\n"
            "- text: \"Removing the mark needs your approval.\"\n"
            "- text: \"done\"\n"))}
        server = Server(binary, workdir, env)
        sid = server.chat("please remove the mark")
        wait_for(20, lambda: open_turns(workdir) == 0)
        server.request("POST", f"/api/sessions/{sid}/messages", {"text": "approved, go ahead"})
        approval = None

        def pending():
            nonlocal approval
            status, body = server.request("GET", f"/api/approvals?session_id={sid}")
            if status == 200 and body:
                approval = body[0]["id"]
            return approval is not None

        if not wait_for(20, pending, step=0.1):
            row.notes.append("no approval was requested")
        else:
            # The decision goes out and the kill follows at once, racing its commit.
            conn = http.client.HTTPConnection(server.host, server.port, timeout=5)
            conn.request("POST", f"/api/approvals/{approval}/decision",
                         body=json.dumps({"decision": "approve"}),
                         headers={"authorization": f"Bearer {server.token}",
                                  "content-type": "application/json"})
            # Three moments: before the decision commits, while its command runs, after.
            time.sleep((0.005, 0.03, 0.3)[k % 3])
        server.kill_9()
        restart_and_count(binary, workdir, env, row,
                          effect_done=lambda c: c != command or not os.path.exists(mark))
        states = [f"{status}" + (" (interrupted)" if (error or "").startswith(INTERRUPTED) else "")
                  for _id, status, error, cmd in executions(workdir) if cmd == command]
        row.seen.append(", ".join(states) or "no execution")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def scenario_sigterm(binary, row, trickle):
    workdir = tempfile.mkdtemp(prefix="nomos-probe.")
    try:
        env = trickle.env()
        before = trickle.requests
        server = Server(binary, workdir, env)
        server.chat("hi")
        wait_for(20, lambda: trickle.requests > before)
        server.terminate()
        # Counted before any restart: the shutdown itself must have ended the turn.
        row.open_turns += open_turns(workdir)
        restart_and_count(binary, workdir, env, row)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def scenario_trickle(binary, row, trickle):
    workdir = tempfile.mkdtemp(prefix="nomos-probe.")
    try:
        env = trickle.env(NOMOS_LLM_REPLY_DEADLINE_SECS="3", NOMOS_LLM_TIMEOUT_SECS="2")
        server = Server(binary, workdir, env)
        sid = server.chat("hi")
        if not wait_for(30, lambda: open_turns(workdir) == 0, step=0.2):
            row.open_turns += 1
        with db(workdir) as conn:
            errors = [json.loads(p).get("error") for (p,) in conn.execute(
                "SELECT payload FROM events WHERE kind = 'turn.done' AND session_id = ?", (sid,))]
        if not errors or "deadline" not in (errors[-1] or ""):
            row.misreported += 1
            row.notes.append(f"the turn did not end with the deadline: {errors}")
        status, _ = server.request("POST", f"/api/sessions/{sid}/messages", {"text": "again"})
        if status != 202:
            row.writes_failing += 1
            row.notes.append(f"the session was not free again: {status}")
        wait_for(30, lambda: open_turns(workdir) == 0, step=0.2)
        server.terminate()
        row.runs += 1
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


# ---------------------------------------------------------------- main


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    target = os.environ.get("CARGO_TARGET_DIR", "target")
    parser.add_argument("--server", default=os.path.join(target, "release", "nomos-server"))
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    binary = os.path.abspath(args.server)
    if not os.path.exists(binary):
        sys.exit(f"no server binary at {binary}; build it with cargo build --release -p nomos-server")

    trickle = Trickle(0.2)
    sshd = Sshd()
    rows = []
    started = time.time()
    try:
        row = Row("disk full and back")
        scenario_disk_full(binary, row)
        rows.append(row)
        moments = [
            ("kill -9 idle", lambda k, r: scenario_kill_idle(binary, r, k)),
            ("kill -9 mid model stream", lambda k, r: scenario_kill_mid_stream(binary, r, k, trickle)),
            ("kill -9 mid local command", lambda k, r: scenario_kill_mid_command(
                binary, r, k, "local", lambda w: {})),
            ("kill -9 mid remote command", lambda k, r: scenario_kill_mid_command(
                binary, r, k, "host:loopback", sshd.inventory)),
            ("kill -9 mid approval", lambda k, r: scenario_kill_mid_approval(binary, r, k)),
        ]
        for name, run in moments:
            row = Row(name)
            for k in range(args.rounds):
                run(k, row)
            rows.append(row)
        row = Row("SIGTERM mid model stream")
        scenario_sigterm(binary, row, trickle)
        rows.append(row)
        row = Row("trickling model")
        scenario_trickle(binary, row, trickle)
        rows.append(row)
    finally:
        trickle.stop()
        sshd.stop()

    print(f"| probe | runs | writes failing after recovery | open turns | commands surviving | misreported outcomes |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        print(f"| {row.name} | {row.runs} | {row.writes_failing} | {row.open_turns} | "
              f"{row.surviving} | {row.misreported} |")
    total = sum(r.writes_failing + r.open_turns + r.surviving + r.misreported for r in rows)
    print(f"\n{sum(r.runs for r in rows)} runs in {time.time() - started:.0f} s; "
          f"{'all zero' if total == 0 else f'{total} faults'}")
    for row in rows:
        if row.seen:
            print(f"- {row.name}: the execution after the restart: {'; '.join(row.seen)}")
        for note in row.notes:
            print(f"- {row.name}: {note}")
    return 0 if total == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
