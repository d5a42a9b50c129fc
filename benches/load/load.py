#!/usr/bin/env python3
"""Load check of nomos-server on loopback, Python standard library only.

Starts the real server binary (demo model, --no-auth, a temporary data directory, SQLite
or the PostgreSQL URL given) and measures, each part bounded in time:

* turns/s: N workers, each with its own session, post a message and wait for its
  `turn.done` on the session's event stream, again and again for --seconds seconds.
  One demo turn is six model calls, two commands run on `local` (`uptime`, `df -h`),
  and about fifty committed events.
* SSE fan-out: --subscribers clients hold the global stream `/api/events` open; the script
  then creates sessions one at a time and records, per event, when each subscriber got it.
  The delay is measured from the event's committed time (`at`, milliseconds) to receipt;
  "last" is the delay to the last of the subscribers to get it.

With --processes N (PostgreSQL only) it starts N servers on the same database: the turn
workers are spread over them, the subscribers too, and the fan-out's sessions are created
on the last one, so most subscribers hear of them through another process (REPLICA-3).
--compare-processes runs 1 and then N processes in the same run, on fresh databases.

Usage: benches/load/load.py [--server PATH] [--database-url postgres://...] [--processes N]
"""

import argparse
import asyncio
import http.client
import json
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(binary, database_url):
    data = tempfile.mkdtemp(prefix="nomos-load-")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("NOMOS_")}
    env["RUST_LOG"] = "warn"
    if database_url:
        env["NOMOS_DATABASE_URL"] = database_url
    proc = subprocess.Popen(
        [binary, "--no-auth", "--listen", f"127.0.0.1:{port}", "--data-dir", data],
        cwd=data,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
            conn.request("GET", "/healthz")
            if conn.getresponse().status == 200:
                return proc, port, data
        except OSError:
            time.sleep(0.1)
    proc.kill()
    sys.exit("the server did not become healthy within 30 s")


def stop_server(proc, data):
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
    shutil.rmtree(data, ignore_errors=True)


def request(port, method, path, body=None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Content-Type": "application/json"} if body is not None else {}
    conn.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
    response = conn.getresponse()
    data = response.read()
    if response.status >= 300:
        raise RuntimeError(f"{method} {path}: {response.status} {data[:200]!r}")
    return json.loads(data) if data else None


def sse_events(response):
    """Yields (id, event, data) from an http.client response."""
    event_id, kind, data = None, "message", []
    while True:
        line = response.readline()
        if not line:
            return
        line = line.decode().rstrip("\n")
        if line == "":
            if data or event_id is not None:
                yield event_id, kind, "\n".join(data)
            event_id, kind, data = None, "message", []
        elif line.startswith("id: "):
            event_id = int(line[4:])
        elif line.startswith("event: "):
            kind = line[7:]
        elif line.startswith("data: "):
            data.append(line[6:])


def worker(port, seconds, counts, conflicts, idx):
    session = request(port, "POST", "/api/sessions")["id"]
    last = 0
    deadline = time.time() + seconds
    turns = 0
    while time.time() < deadline:
        # `turn.done` is published a moment before the turn releases the session, so an
        # immediate next message can get TURN-8's 409; wait a little and send it again.
        while True:
            try:
                request(port, "POST", f"/api/sessions/{session}/messages", {"text": "how is the host?"})
                break
            except RuntimeError as error:
                if " 409 " not in str(error):
                    raise
                conflicts[idx] += 1
                time.sleep(0.001)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        conn.request("GET", f"/api/sessions/{session}/events", headers={"Last-Event-ID": str(last)})
        response = conn.getresponse()
        for event_id, kind, _ in sse_events(response):
            if event_id is not None:
                last = event_id
            if kind == "turn.done":
                turns += 1
                break
        conn.close()
    counts[idx] = turns


def measure_turns(ports, workers, seconds):
    counts = [0] * workers
    conflicts = [0] * workers
    threads = [
        threading.Thread(target=worker, args=(ports[i % len(ports)], seconds, counts, conflicts, i))
        for i in range(workers)
    ]
    started = time.time()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.time() - started
    return sum(counts), elapsed, sum(conflicts)


async def subscriber(port, ready, receipts, stop):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n".encode())
    await writer.drain()
    while (await reader.readline()) not in (b"\r\n", b""):
        pass
    ready.release()
    try:
        while not stop.is_set():
            line = await reader.readline()
            if not line:
                break
            # Chunked transfer: data lines arrive inside chunks; SSE fields start with a name.
            if line.startswith(b"data: "):
                received = time.time()
                try:
                    record = json.loads(line[6:])
                except ValueError:
                    continue
                if "global_seq" in record:
                    receipts.append((record["global_seq"], record["at"], received))
    finally:
        writer.close()


async def measure_fanout(ports, n_subscribers, n_events):
    ready = asyncio.Semaphore(0)
    stop = asyncio.Event()
    receipts = []
    tasks = [
        asyncio.create_task(subscriber(ports[i % len(ports)], ready, receipts, stop))
        for i in range(n_subscribers)
    ]
    port = ports[-1]
    for _ in range(n_subscribers):
        await asyncio.wait_for(ready.acquire(), timeout=60)
    loop = asyncio.get_running_loop()
    for _ in range(n_events):
        await loop.run_in_executor(None, request, port, "POST", "/api/sessions")
        await asyncio.sleep(0.2)
    await asyncio.sleep(2)
    stop.set()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    by_event = {}
    for seq, at, received in receipts:
        committed = datetime.fromisoformat(at.replace("Z", "+00:00")).timestamp()
        by_event.setdefault(seq, []).append((received - committed) * 1000)
    complete = {seq: d for seq, d in by_event.items() if len(d) == n_subscribers}
    counts = sorted(len(d) for d in by_event.values())
    if len(complete) < len(by_event):
        print(f"receipts per event (want {n_subscribers}): {counts}", file=sys.stderr)
    last = sorted(max(d) for d in complete.values())
    every = sorted(x for d in complete.values() for x in d)
    return len(complete), len(by_event), last, every


def pct(values, p):
    if not values:
        return float("nan")
    idx = min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))
    return values[idx]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    default = os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "release", "nomos-server")
    parser.add_argument("--server", default=default, help="the nomos-server binary")
    parser.add_argument("--database-url", default=None, help="postgres://... (default: SQLite)")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--subscribers", type=int, default=1000)
    parser.add_argument("--events", type=int, default=30)
    parser.add_argument("--skip-fanout", action="store_true")
    parser.add_argument("--processes", type=int, default=1, help="servers on the one PostgreSQL")
    parser.add_argument(
        "--compare-processes", action="store_true", help="run 1 process, then --processes, in one run"
    )
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, 4 * args.subscribers)), hard))

    if args.processes > 1 and not args.database_url:
        sys.exit("--processes needs --database-url: several servers share one PostgreSQL")
    counts = [1, args.processes] if args.compare_processes and args.processes > 1 else [args.processes]
    for n, processes in enumerate(counts):
        url = args.database_url
        if url and n > 0:
            url = fresh_database(url, f"nomos_load_{processes}p")
        run(args, url, processes)


def fresh_database(url, name):
    """A new database on the same server as `url` (for the second part of a comparison)."""
    base, _, _ = url.rpartition("/")
    admin = base + "/postgres"
    subprocess.run(["psql", admin, "-qc", f"DROP DATABASE IF EXISTS {name}"], check=True)
    subprocess.run(["psql", admin, "-qc", f"CREATE DATABASE {name}"], check=True)
    return f"{base}/{name}"


def run(args, database_url, processes):
    store = ("postgres" if database_url else "sqlite") + (f" x{processes}" if processes > 1 else "")
    servers = [start_server(args.server, database_url) for _ in range(processes)]
    ports = [port for _, port, _ in servers]
    try:
        turns, elapsed, conflicts = measure_turns(ports, args.workers, args.seconds)
        print(
            f"[{store}] turns: {turns} in {elapsed:.1f} s with {args.workers} workers = "
            f"{turns / elapsed:.1f} turns/s ({conflicts} immediate re-sends refused with 409)"
        )
        if not args.skip_fanout:
            complete, seen, last, every = asyncio.run(measure_fanout(ports, args.subscribers, args.events))
            print(
                f"[{store}] SSE fan-out to {args.subscribers} subscribers: {complete}/{seen} events reached all; "
                f"delay to the last subscriber p50 {pct(last, 50):.1f} ms, p99 {pct(last, 99):.1f} ms; "
                f"any subscriber p50 {pct(every, 50):.1f} ms, p99 {pct(every, 99):.1f} ms"
            )
    finally:
        for proc, _, data in servers:
            stop_server(proc, data)


if __name__ == "__main__":
    main()
