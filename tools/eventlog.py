#!/usr/bin/env python3
"""How big the event log grows when many busy panes log faster than its age limit lets go,
measured against a real `lookout serve` (build it first); prints figures, asserts nothing.

PANES hooked panes flip between working and blocked as fast as one pipelined client can
report; every few seconds the log's event count, newest number and database size (with its
WAL) are printed. With a count cap (`--max-events`) the size levels off once the cap is
reached; the bytes per event give the size of the default cap.

    python3 tools/eventlog.py [path/to/lookout] [--max-events N] [--seconds S]
        (defaults: target/release/lookout, 50000, 60)

Touches only a temp dir (socket, database, mirror) and the server it starts.
"""

import argparse
import json
import os
import socket
import sqlite3
import subprocess
import tempfile
import time

PANES = 1000


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("lookout", nargs="?", default="target/release/lookout")
    ap.add_argument("--max-events", type=int, default=50000)
    ap.add_argument("--seconds", type=float, default=60)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="lookout-eventlog-")
    sock, db, mirror = (os.path.join(tmp, n) for n in ("s.sock", "l.db", "mirror"))
    env = dict(os.environ, XDG_CONFIG_HOME=os.path.join(tmp, "config"),
               XDG_STATE_HOME=os.path.join(tmp, "state"))
    server = subprocess.Popen([args.lookout, "serve", "--socket", sock, "--db", db, "--mirror-dir",
                               mirror, "--max-events", str(args.max_events)],
                              env=env, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 30
        while not os.path.exists(sock) and time.time() < deadline:
            time.sleep(0.05)
        run(sock, db, args)
    finally:
        server.terminate()
        server.wait(timeout=10)


def run(sock, db, args):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sock)
    f = s.makefile("rwb")

    def calls(lines):
        f.write(b"".join(json.dumps(line).encode() + b"\n" for line in lines))
        f.flush()
        for _ in lines:
            f.readline()

    panes = [f"pane-{i}" for i in range(PANES)]
    calls([{"id": 1, "method": "pane.open", "params": {"pane": p, "rows": 24, "cols": 80}}
           for p in panes])
    calls([{"id": 1, "method": "pane.process",
            "params": {"pane": p, "event": "started", "pid": 4242, "argv": ["claude"]}}
           for p in panes])
    calls([{"id": 1, "method": "report.session",
            "params": {"pane": p, "source": "hook:claude", "session": "s1"}} for p in panes])
    print(f"{PANES} hooked panes, --max-events {args.max_events}; every pane flips state each round")
    print(f"{'s':>5} {'events':>9} {'newest':>9} {'db+wal MB':>10} {'bytes/event':>12}")
    start, seq, shown = time.time(), 0, 0.0
    while time.time() - start < args.seconds:
        seq += 1
        state = "working" if seq % 2 else "blocked"
        calls([{"id": 1, "method": "report.state",
                "params": {"pane": p, "source": "hook:claude", "seq": seq, "state": state}}
               for p in panes])
        if time.time() - start - shown >= 5:
            shown = time.time() - start
            show(db, shown)
    show(db, time.time() - start)


def show(db, at):
    count, newest = sqlite3.connect(db).execute("SELECT COUNT(*), MAX(seq) FROM events").fetchone()
    size = sum(os.path.getsize(db + ext) for ext in ("", "-wal") if os.path.exists(db + ext))
    per = size / count if count else 0
    print(f"{at:5.0f} {count:9d} {newest or 0:9d} {size / 1e6:10.1f} {per:12.0f}")


if __name__ == "__main__":
    main()
