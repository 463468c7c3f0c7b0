#!/usr/bin/env python3
"""The flood a hostile or careless client can make, measured against a real `lookout serve`
(build it first: `cargo build --release -p lookout`), printing figures; it asserts nothing.

1000 panes are opened. Then, for 3 s: 11 clients pipeline `pane.list` without reading a byte,
then close; one well-behaved client keeps 256 `pane.list` in flight (reading its answers); a
quiet client asks `agent.get` in a loop (its latency is the figure); and `lookout report state`
runs for one hooked pane every 100 ms (each applied, or left in the mirror: never lost). The
quiet client and the reports go on 3 s past the flood, where a backlog's tail shows. Then one
client feeds 100 MB of output to one pane while the quiet client goes on asking.

    python3 tools/flood.py [path/to/lookout]     # default target/release/lookout

Touches only a temp dir (socket, database, mirror) and the processes it starts.
"""

import base64
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time

PANES = 1000
FLOODERS = 11
IN_FLIGHT = 256
FLOOD_FOR = 3.0
AFTER = 3.0
FEED_MB = 100
PIPELINE = 4


def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    return s


class Client:
    def __init__(self, path):
        self.sock = connect(path)
        self.buf = b""
        self.next_id = 0

    def send(self, method, params=None):
        self.next_id += 1
        line = {"id": self.next_id, "method": method}
        if params is not None:
            line["params"] = params
        self.sock.sendall((json.dumps(line) + "\n").encode())

    def line(self):
        while b"\n" not in self.buf:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise EOFError("server closed")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def call(self, method, params=None):
        self.send(method, params)
        return self.line()


def flooder(path, stop, written):
    s = connect(path)
    s.settimeout(0.1)
    lines = b'{"id":1,"method":"pane.list"}\n' * 64
    sent = 0
    while not stop.is_set():
        try:
            s.sendall(lines)
            sent += 64
        except (socket.timeout, OSError):
            pass
    s.close()  # whatever it asked for, unanswered
    written.append(sent)


def in_flight(path, stop, counts):
    c = Client(path)
    for _ in range(IN_FLIGHT):
        c.send("pane.list")
    while not stop.is_set():
        c.line()
        counts["answered"] += 1
        c.send("pane.list")
    c.sock.close()


def percentile(sorted_values, p):
    if not sorted_values:
        return 0.0
    return sorted_values[min(len(sorted_values) - 1, round((len(sorted_values) - 1) * p))]


def main():
    lookout = sys.argv[1] if len(sys.argv) > 1 else "target/release/lookout"
    tmp = tempfile.mkdtemp(prefix="lookout-flood-")
    sock, db, mirror = (os.path.join(tmp, n) for n in ("s.sock", "l.db", "mirror"))
    env = dict(os.environ, XDG_CONFIG_HOME=os.path.join(tmp, "config"),
               XDG_STATE_HOME=os.path.join(tmp, "state"))
    server = subprocess.Popen([lookout, "serve", "--socket", sock, "--db", db, "--mirror-dir",
                               mirror], env=env, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 30
        while not os.path.exists(sock) and time.time() < deadline:
            time.sleep(0.05)
        run(lookout, sock, mirror, env)
        feed_flood(lookout, sock, env)
    finally:
        server.terminate()
        server.wait(timeout=10)


def run(lookout, sock, mirror, env):
    c = Client(sock)
    for i in range(PANES):
        c.send("pane.open", {"pane": f"pane-{i}", "rows": 24, "cols": 80})
    for _ in range(PANES):
        assert "error" not in c.line()
    c.call("pane.open", {"pane": "hooked", "rows": 24, "cols": 80})
    c.call("pane.process", {"pane": "hooked", "event": "started", "argv": ["claude"]})
    stop_flood, stop_flight = threading.Event(), threading.Event()
    counts = {"answered": 0}
    written = []
    floods = [threading.Thread(target=flooder, args=(sock, stop_flood, written))
              for _ in range(FLOODERS)]
    flight = threading.Thread(target=in_flight, args=(sock, stop_flight, counts))
    reports = []

    def reporter():
        end = time.time() + FLOOD_FOR + AFTER
        while time.time() < end:
            t0 = time.time()
            out = subprocess.run([lookout, "report", "--pane", "hooked", "--agent", "claude",
                                  "--socket", sock, "--mirror-dir", mirror, "state", "working"],
                                 env=env, capture_output=True, text=True)
            reports.append((time.time() - t0, out.returncode, out.stdout, out.stderr))
            time.sleep(0.1)

    rep = threading.Thread(target=reporter)
    for t in floods + [flight, rep]:
        t.start()
    start, gets = time.time(), []
    while time.time() - start < FLOOD_FOR + AFTER:
        if time.time() - start >= FLOOD_FOR:
            stop_flood.set()
            stop_flight.set()
        t0 = time.time()
        c.call("agent.get", {"pane": "pane-7"})
        gets.append(time.time() - t0)
    for t in floods + [flight, rep]:
        t.join()
    gets.sort()
    applied = sum(1 for r in reports if '"applied":true' in r[2].replace(" ", ""))
    mirrored = sum(1 for r in reports if "left in" in r[3])
    lost = len(reports) - applied - mirrored
    slowest = max((r[0] for r in reports), default=0.0)
    print(f"flood: {PANES} panes, {FLOODERS} pipelining pane.list for {FLOOD_FOR:.0f} s then "
          f"closing ({sum(written)} lines written), one client keeping {IN_FLIGHT} in flight ({counts['answered']} answered)")
    print(f"agent.get (quiet client, {len(gets)} calls): p50 {percentile(gets, 0.5) * 1e3:.1f} ms, "
          f"p99 {percentile(gets, 0.99) * 1e3:.1f} ms, max {gets[-1] * 1e3:.1f} ms")
    print(f"lookout report: {len(reports)} run, {applied} applied, {mirrored} mirrored, "
          f"{lost} neither; slowest {slowest * 1e3:.0f} ms")
    for r in reports:
        if '"applied":true' not in r[2].replace(" ", "") and "left in" not in r[3]:
            print("  neither:", r[1], r[2].strip()[:200], r[3].strip()[:200])


def feed_flood(lookout, sock, env):
    """One client feeds FEED_MB of terminal output to one pane as fast as the server takes it
    (requests just under the 1 MiB line limit, PIPELINE in flight) while a quiet client asks
    `agent.get` of another pane; the quiet client's latency is the figure."""
    c, feeder = Client(sock), Client(sock)
    c.call("pane.open", {"pane": "quiet", "rows": 24, "cols": 80})
    feeder.call("pane.open", {"pane": "fed", "rows": 50, "cols": 200})
    row = b"\x1b[32m+ \x1b[0mcompiling lookout v0.2.0 (/home/dev/project) src/lib.rs:42:7 ok\r\n"
    chunk = base64.b64encode(row * (700_000 // len(row))).decode()
    chunks = FEED_MB * 1_000_000 // (700_000 // len(row) * len(row))
    done = threading.Event()

    def feed():
        sent = answered = 0
        while answered < chunks:
            while sent < chunks and sent - answered < PIPELINE:
                feeder.send("pane.feed", {"pane": "fed", "data": chunk})
                sent += 1
            feeder.line()
            answered += 1
        done.set()

    t0 = time.time()
    t = threading.Thread(target=feed)
    t.start()
    gets = []
    while not done.is_set():
        g0 = time.time()
        c.call("agent.get", {"pane": "quiet"})
        gets.append(time.time() - g0)
    t.join()
    took = time.time() - t0
    gets.sort()
    print(f"feed: {FEED_MB} MB fed to one pane in {took:.1f} s ({chunks} requests, {PIPELINE} in flight)")
    print(f"agent.get of another pane meanwhile ({len(gets)} calls): p50 {percentile(gets, 0.5) * 1e3:.1f} ms, "
          f"p99 {percentile(gets, 0.99) * 1e3:.1f} ms, max {gets[-1] * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
