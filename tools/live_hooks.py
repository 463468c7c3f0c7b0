#!/usr/bin/env python3
"""Live proof that the Claude Code hook config in docs/hooks.md drives lookout, with the REAL CLI.

Usage
  tools/install_agents.sh          # once: the real CLIs into /opt/lookout-agents (outside the repo)
  cargo build                      # target/debug/lookout
  tools/live_hooks.py              # exit 0: the hooks drove working -> blocked -> working -> done
  options: --agents DIR (default /opt/lookout-agents or $LOOKOUT_AGENTS), --lookout PATH,
           --no-debug (run claude without --debug), --keep (leave the work dir for inspection)

What it does (stdlib only; reuses tools/capture.py for the mock, HOME and the CLI's config)
  * re-executes itself under `unshare -m -n`: a network namespace with only loopback (nothing but
    127.0.0.1 is reachable: no accounts, a dummy key, the mock is the only endpoint) and a mount
    namespace in which /home is a private directory, so the fresh HOME=/home/dev this run makes does
    not clobber a capture.py run using the real /home/dev at the same time,
  * starts `lookout serve --socket S --db D` in a temp dir and `lookout events` (the event log),
  * starts tools/mock_model.py on 127.0.0.1 (capture.Mock), makes HOME=/home/dev like capture.py
    (capture.fresh_home + capture.Claude.setup: pre-seeded ~/.claude.json, trusted project), and
    writes the Claude Code hooks block of docs/hooks.md, verbatim, into ~/.claude/settings.json
    (with `"permissions": {"defaultMode": "default"}`: 2.1.3xx's default auto mode never asks),
  * puts `lookout` (-> target/debug/lookout) and `claude` (-> the installed CLI) on PATH and runs
    `lookout run --socket S --pane live -- claude --debug` in tmux (its own server, -L lookouthooks),
  * drives one turn the mock answers with a Bash tool call that needs permission ("perm: …"),
    approves it (Enter), waits for the final answer, and quits claude,
  * meanwhile polls `lookout status --json --socket S` and records every change of the pane's
    (lifecycle, cause, hooked).
It prints the polled timeline, the lifecycle events of the pane, and the hook lines of Claude Code's
debug log. Exit 0 only if
  * the pane became hooked (`hooked: true`) while working, before any blocked: the UserPromptSubmit
    report. Claude draws its spinner before it runs that hook, so the screen usually says `working`
    first and the report, accepted, changes nothing (no event carries its cause);
  * the turn's events went working -> blocked -> working -> done, at least one of them caused by
    `hook:cli:claude` (the claude manifest's policy is `evidence`, see docs/behaviour.md: a report publishes at
    once, and the screen, often first, may decide a change too);
  * `blocked` (while hooked) came at most --max-blocked-delay (3 s) after the dialog appeared.
Every process it started is ended by PID. Files: /tmp/lookout-live-hooks/ (run/: serve.log,
events.jsonl, mock.log; home/dev is the private HOME, claude's debug log in home/dev/.claude/debug/).

Gaps the hooks leave (Claude Code 2.1.197 runs no hook for these), healed by the screen because the
claude policy is `evidence`; exit 1 if the pane still reads blocked/working afterwards:
  --deny       deny the permission with Esc: the pane must go idle
  --interrupt  interrupt a slow turn with Esc: the pane must leave working
  --hooks FILE try another settings.json instead of the docs/hooks.md block
"""
import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import capture  # noqa: E402  (the live capture harness: mock, HOME, Claude setup, tmux pane helpers)

WORK = "/tmp/lookout-live-hooks"
TMUX_SOCK = "lookouthooks"
TMUX_SESSION = "hooks"
PANE_ID = "live"
NS_FLAG = "LOOKOUT_LIVE_HOOKS_NS"
MARK = "LOOKOUT_LIVE_HOOKS"
SOURCE_CAUSE = "hook:cli:claude"

# capture.Pane / capture.tmux read these module globals at call time: point them at our own server
capture.SOCK = TMUX_SOCK
capture.SESSION = TMUX_SESSION


class Interrupted(Exception):
    """--interrupt: the scenario ends early on purpose."""


def log(*a):
    print("[live-hooks]", *a, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- isolation

def enter_namespaces(script=__file__):
    """Re-exec `script` under `unshare -m -n`: loopback-only network, private /home (WORK/home)."""
    if os.environ.get(NS_FLAG) == "1":
        return
    if not shutil.which("unshare"):
        sys.exit("live_hooks: needs unshare(1) (util-linux) for the loopback-only namespace")
    # a tmux server of ours started outside the namespace would be reused by new-session: end it
    subprocess.run(["tmux", "-L", TMUX_SOCK, "kill-server"], capture_output=True)
    os.makedirs(WORK + "/home", exist_ok=True)
    inner = "ip link set lo up && mount --bind %s /home && exec %s" % (
        shlex.quote(WORK + "/home"),
        " ".join(shlex.quote(a) for a in [sys.executable, os.path.abspath(script)] + sys.argv[1:]))
    r = subprocess.run(["unshare", "-m", "-n", "sh", "-c", inner], env=dict(os.environ, **{NS_FLAG: "1"}))
    sys.exit(r.returncode)


def check_isolated():
    """Refuse to run unless only loopback exists and /home is our private bind."""
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    names = [ln.split(":")[1].strip() for ln in links.splitlines() if ":" in ln]
    if names != ["lo"]:
        sys.exit("live_hooks: not in a loopback-only namespace (links: %s)" % names)
    if not os.path.samefile("/home", WORK + "/home"):
        sys.exit("live_hooks: /home is not the private bind of %s/home" % WORK)


# ---------------------------------------------------------------- processes

class LiveMock(capture.Mock):
    """capture.Mock with its log in our work dir (capture.Mock appends to /tmp/captures/mock.log)."""

    def __init__(self, logpath):
        a = [sys.executable, os.path.join(HERE, "mock_model.py"), "--port", "0"]
        self.log = open(logpath, "a")
        self.p = subprocess.Popen(a, stdout=subprocess.PIPE, stderr=self.log, text=True)
        self.port = int(self.p.stdout.readline().split()[1])


def descendants(pid):
    return capture.descendants(pid)


def marked_procs(run_id):
    """PIDs whose environment carries this run's marker (claude and anything it left behind)."""
    want = ("%s=%s" % (MARK, run_id)).encode() + b"\0"
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit() and int(d) != os.getpid():
            try:
                with open("/proc/%s/environ" % d, "rb") as f:
                    if want in f.read():
                        out.append(int(d))
            except OSError:
                pass
    return out


def stop(p, name):
    if p is None or p.poll() is not None:
        return
    p.terminate()
    try:
        p.wait(5)
    except subprocess.TimeoutExpired:
        log("%s (pid %d) ignored SIGTERM: SIGKILL" % (name, p.pid))
        p.kill()
        p.wait(5)


# ---------------------------------------------------------------- the hooks under test

def hooks_from_doc():
    """The JSON block under '## Claude Code' in docs/hooks.md, parsed (the doc is what we test)."""
    text = open(os.path.join(REPO, "docs", "hooks.md")).read()
    sec = text.split("## Claude Code", 1)[1]
    m = re.search(r"```json\n(.*?)```", sec, re.S)
    if not m:
        sys.exit("live_hooks: no ```json block under '## Claude Code' in docs/hooks.md")
    return json.loads(m.group(1))


class Poller(threading.Thread):
    """Polls `lookout status --json` and keeps every change of the pane's (lifecycle, cause, hooked)."""

    def __init__(self, lookout, sock, t0):
        super().__init__(daemon=True)
        self.lookout, self.sock, self.t0 = lookout, sock, t0
        self.timeline = []   # (t, lifecycle, cause, hooked, input_required, unread, labels)
        self.polls = 0
        self.halt = threading.Event()

    def run(self):
        last = None
        while not self.halt.is_set():
            r = subprocess.run([self.lookout, "status", "--json", "--socket", self.sock],
                               capture_output=True, text=True)
            self.polls += 1
            if r.returncode == 0:
                try:
                    doc = json.loads(r.stdout)
                except ValueError:
                    doc = {}
                for p in doc.get("panes", []):
                    if p.get("pane") == PANE_ID:
                        key = (p.get("lifecycle"), p.get("cause"), p.get("hooked"),
                               p.get("input_required"), p.get("unread"), tuple(p.get("labels") or []))
                        if key != last:
                            last = key
                            self.timeline.append((time.time() - self.t0,) + key)
            self.halt.wait(0.1)

    def seen(self, lifecycle, cause=None):
        return any(e[1] == lifecycle and (cause is None or e[2] == cause) for e in self.timeline)

    def wait_for(self, lifecycle, cause, timeout):
        deadline = time.time() + timeout
        while time.time() < deadline:
            last = self.timeline[-1] if self.timeline else None
            if last and last[1] == lifecycle and last[3] is True and cause in (None, last[2]):
                return True
            time.sleep(0.1)
        return False


def lifecycle_events(path):
    out = []
    try:
        with open(path) as f:
            for line in f:
                try:
                    e = json.loads(line)
                except ValueError:
                    continue
                e = e.get("event", e) if isinstance(e, dict) else {}  # lines are {"event": {…}}
                if e.get("pane") == PANE_ID and e.get("type") in ("lifecycle", "attention", "labels"):
                    out.append(e)
    except OSError:
        pass
    return out


def debug_hook_lines(home):
    """Hook-related lines from Claude Code's --debug log(s)."""
    lines = []
    d = os.path.join(home, ".claude", "debug")
    if os.path.isdir(d):
        for name in sorted(os.listdir(d)):
            p = os.path.join(d, name)
            if os.path.isfile(p) and not os.path.islink(p):
                with open(p, errors="replace") as f:
                    for ln in f:
                        if re.search(r"hook|completed with status", ln, re.I):
                            lines.append(ln.rstrip("\n"))
    return lines


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description="live Claude Code hooks -> lookout (see the module docstring)")
    ap.add_argument("--agents", default=os.environ.get("LOOKOUT_AGENTS", "/opt/lookout-agents"))
    ap.add_argument("--lookout", default=os.path.join(REPO, "target", "debug", "lookout"))
    ap.add_argument("--no-debug", action="store_true", help="run claude without --debug")
    ap.add_argument("--keep", action="store_true", help="keep the work dir's run files")
    ap.add_argument("--hooks", metavar="FILE", help="try this settings.json instead of docs/hooks.md's block")
    ap.add_argument("--deny", action="store_true",
                    help="explore: deny the permission instead (prints the timeline; expects no fixed path)")
    ap.add_argument("--interrupt", action="store_true",
                    help="explore: interrupt a slow turn with Esc (expects the pane to leave working)")
    ap.add_argument("--linger", type=int, default=10,
                    help="seconds to stay after the turn, for hooks that fire late (default 10)")
    ap.add_argument("--max-blocked-delay", type=float, default=3.0,
                    help="fail if the hooked 'blocked' comes later than this after the dialog (s)")
    args = ap.parse_args()
    lookout = os.path.abspath(args.lookout)
    if not os.access(lookout, os.X_OK):
        sys.exit("live_hooks: %s missing: cargo build" % lookout)
    agent = capture.Claude(args.agents)
    claude_bin = agent.argv()[0]
    if not os.access(claude_bin, os.X_OK):
        sys.exit("live_hooks: %s missing: tools/install_agents.sh" % claude_bin)
    hooks = json.load(open(args.hooks)) if args.hooks else hooks_from_doc()

    enter_namespaces()
    check_isolated()

    run_id = str(os.getpid())
    run = os.path.join(WORK, "run")
    shutil.rmtree(run, ignore_errors=True)
    os.makedirs(run + "/bin")
    sock, db = run + "/lookout.sock", run + "/lookout.db"
    os.symlink(lookout, run + "/bin/lookout")
    os.symlink(claude_bin, run + "/bin/claude")
    os.makedirs("/tmp/captures", exist_ok=True)  # capture.Pane.snap writes failure screens there

    procs = {}
    tmux_pid = None
    t0 = time.time()
    poller = None
    ok = False
    marks = {}
    try:
        # the server, on its own socket and database
        procs["serve"] = subprocess.Popen(
            [lookout, "serve", "--socket", sock, "--db", db, "--mirror-dir", run + "/mirror"],
            stdout=open(run + "/serve.log", "w"), stderr=subprocess.STDOUT,
            env=dict(os.environ, XDG_STATE_HOME=run + "/state", XDG_CONFIG_HOME=run + "/config"))
        for _ in range(100):
            if os.path.exists(sock):
                break
            time.sleep(0.1)
        else:
            raise RuntimeError("lookout serve did not open %s (see %s/serve.log)" % (sock, run))
        procs["events"] = subprocess.Popen([lookout, "events", "--socket", sock],
                                           stdout=open(run + "/events.jsonl", "w"),
                                           stderr=open(run + "/events.err", "w"))
        mock = LiveMock(run + "/mock.log")
        procs["mock"] = mock.p

        # HOME exactly as capture.py makes it for claude, plus the hooks of docs/hooks.md
        env = capture.fresh_home()
        agent.setup(env, mock.port)
        # 2.1.3xx runs in auto mode by default and would not ask: the manual mode, as capture.py's
        # permission cases use (the hooks block itself is written as docs/hooks.md has it)
        settings = dict(hooks)
        settings.setdefault("permissions", {}).setdefault("defaultMode", "default")
        capture.wjson(capture.HOME + "/.claude/settings.json", settings)
        env["PATH"] = run + "/bin:" + env["PATH"]
        env[MARK] = run_id
        log("claude %s, mock on 127.0.0.1:%d, server %s" % (agent.version(), mock.port, sock))
        log("hooks: " + ", ".join("%s%s" % (ev, "(%s)" % g[0]["matcher"] if g and "matcher" in g[0] else "")
                                  for ev, g in hooks["hooks"].items()))

        poller = Poller(lookout, sock, t0)
        poller.start()

        claude_argv = ["claude"] + ([] if args.no_debug else ["--debug"])
        inner = [lookout, "run", "--socket", sock, "--pane", PANE_ID, "--"] + claude_argv
        cmd = "cd %s && exec env -i %s %s" % (
            capture.PROJECT, " ".join("%s=%s" % (k, shlex.quote(v)) for k, v in sorted(env.items())),
            " ".join(shlex.quote(x) for x in inner))
        pane = capture.Pane("claude", "live-hooks", True)
        pane.start(cmd, 120, 40)
        try:
            tmux_pid = int(capture.tmux("display", "-p", "#{pid}").strip())
        except (RuntimeError, ValueError):
            tmux_pid = None

        agent.before(pane)                    # the idle prompt, settled
        log("ready; status: %s" % (str(poller.timeline[-1][1:4]) if poller.timeline else "none"))
        marks["prompt"] = time.time() - t0
        if args.interrupt:
            pane.type("please give me a slow answer", enter_key=agent.submit)
            pane.wait(agent.slow_text, 30, what="slow-start")
            time.sleep(1.0)
            pane.keys(*agent.interrupt)
            marks["interrupted"] = time.time() - t0
            log("interrupted")
            agent.is_idle(pane, timeout=20)
            log("turn over; waiting %ds for late hooks" % args.linger)
            time.sleep(args.linger)
            raise Interrupted()
        pane.type("perm: please run the command", enter_key=agent.submit)
        # the dialog, looked for without `quiet` so its time is when it appeared
        pane.wait(agent.dialog, 40, what="dialog", lines=agent.dialog_lines)
        marks["dialog"] = time.time() - t0
        log("permission dialog on screen")
        if poller.wait_for("blocked", None, 15):
            marks["blocked"] = time.time() - t0
        else:
            log("no hooked 'blocked' within 15 s of the dialog (status: %s)" %
                (str(poller.timeline[-1][1:4]) if poller.timeline else "none"))
        time.sleep(0.5)
        if args.deny:
            pane.keys(*agent.deny)
            marks["denied"] = time.time() - t0
            log("denied")
            pane.wait(agent.dialog, 15, gone=True, what="dialog-gone", lines=agent.dialog_lines)
        else:
            pane.keys(*agent.approve)
            marks["approved"] = time.time() - t0
            log("approved")
            pane.wait(agent.final, 40, what="final")
        agent.is_idle(pane)
        if not poller.wait_for("done", None, 10):
            log("no 'done' within 10 s of the final answer")
        log("turn over; waiting %ds for late hooks (a permission notification after the approval …)"
            % args.linger)
        time.sleep(args.linger)
        ok = True
        agent.quit(pane)
        for _ in range(50):
            if pane.dead():
                break
            time.sleep(0.2)
        time.sleep(1.5)                       # let the server see the exit
    except Interrupted:
        ok = True
        agent.quit(pane)
        time.sleep(2.0)
    except Exception as e:  # noqa
        log("FAILED: %s" % e)
    finally:
        if poller:
            poller.halt.set()
            poller.join(5)
        pids = marked_procs(run_id)
        if tmux_pid:
            pids += descendants(tmux_pid)
        capture.tmux("kill-server", check=False)
        capture.kill_pids(sorted(set(pids + ([tmux_pid] if tmux_pid else []))))
        for name in ("events", "mock", "serve"):
            stop(procs.get(name), name)

    # ---------------------------------------------------------------- verdict
    tl = poller.timeline if poller else []
    print("\npolled `lookout status --json` every 0.1 s (%d polls), pane %r:" % (
        poller.polls if poller else 0, PANE_ID))
    print("  %7s  %-8s %-24s %-6s %-6s %-6s %s" % ("t", "state", "cause", "hooked", "input", "unread", "labels"))
    for t, lc, cause, hooked, inp, unread, labels in tl:
        print("  %6.2fs  %-8s %-24s %-6s %-6s %-6s %s" % (
            t, lc, cause, hooked, inp, unread, list(labels)))
    print("  script: " + ", ".join("%s %.2fs" % kv for kv in sorted(marks.items(), key=lambda kv: kv[1])))
    evs = lifecycle_events(run + "/events.jsonl")
    print("\nevents (`lookout events`), pane %r:" % PANE_ID)
    for e in evs:
        what = ("%s -> %s" % (e.get("from"), e.get("to")) if e["type"] == "lifecycle" else
                "%s %s" % (e.get("flag"), "raised" if e.get("raised") else "withdrawn")
                if e["type"] == "attention" else "labels %s" % e.get("labels"))
        print("  #%-3s %s %-9s %-26s %s" % (e.get("seq"), e.get("time", "")[11:23], e["type"], what,
                                            e.get("cause")))
    hl = [ln for ln in debug_hook_lines(capture.HOME)
          if not re.search(r"Found 0 total hooks|checkForNewResponses|telemetry|from 0 plugins", ln)]
    if hl:
        print("\nclaude --debug, hook lines (%s/.claude/debug/):" % capture.HOME)
        for ln in hl[:60]:
            print("  " + ln[11:][:200])

    # Verdict. The hooked stretch of the event log starts when the pane became hooked (first accepted
    # report: UserPromptSubmit) and ends with the process exit. The screen may have said `working`
    # before the UserPromptSubmit report landed (Claude draws its spinner before it runs the hook);
    # that report then changes nothing, so no event carries its cause: the polled `hooked` flag,
    # turning true while the pane is working and before any blocked, is its trace.
    problems = []
    if not ok:
        problems.append("the scenario did not complete")
    lc_all = [e for e in evs if e["type"] == "lifecycle" and e.get("cause") != "process:exited"]
    if args.deny or args.interrupt:
        # the turn is over (Claude shows its prompt again): the pane should not still say blocked/working
        last = tl[-1] if tl else None
        what = "denial" if args.deny else "interrupt"
        print("\nafter the %s: %s" % (what, " -> ".join("%s[%s]" % (e.get("to"), e.get("cause"))
                                                     for e in lc_all)))
        if last is None or last[1] in ("blocked", "working"):
            print("FAIL: %d s after the %s the pane still reads %s (cause %s): no hook reported the end "
                  "of the turn, and the screen did not heal it (is the claude policy `evidence`?)" % (
                      args.linger, what, last[1] if last else "nothing", last[2] if last else "-"))
            return 1
        print("OK: the pane left working/blocked after the %s" % what)
        return 0 if ok else 1
    hooked_at = next((e for e in tl if e[3] is True), None)
    if hooked_at is None:
        problems.append("`lookout status` never showed hooked: true")
    elif hooked_at[1] != "working":
        problems.append("the pane became hooked while %s (cause %s), not working after the prompt" %
                        (hooked_at[1], hooked_at[2]))
    lc = [e for e in evs if e["type"] == "lifecycle"]
    prompt_i = next((i for i, e in enumerate(lc) if e.get("to") == "working"), None)
    stretch = []
    for e in (lc[prompt_i:] if prompt_i is not None else []):
        if e.get("cause") == "process:exited":
            break
        stretch.append(e)
    seq = [e.get("to") for e in stretch]
    causes = [e.get("cause") for e in stretch]
    if seq != ["working", "blocked", "working", "done"]:
        problems.append("the turn went %s, expected working -> blocked -> working -> done" %
                        " -> ".join(seq or ["(nothing)"]))
    # The claude manifest's policy is "evidence": a report publishes at once, but the screen
    # may get there first (it often draws the dialog before PermissionRequest runs). The hooks must
    # still have decided at least one change of the turn.
    if SOURCE_CAUSE not in causes:
        problems.append("no change of the turn was caused by %s: the hooks decided nothing" % SOURCE_CAUSE)
    if "dialog" in marks:
        if "blocked" not in marks:
            problems.append("no blocked (while hooked) while the permission dialog was up")
        elif marks["blocked"] - marks["dialog"] > args.max_blocked_delay:
            problems.append("blocked came %.1f s after the dialog appeared (limit %.1f s)" % (
                marks["blocked"] - marks["dialog"], args.max_blocked_delay))
    print("\nturn (events): %s" % " -> ".join("%s[%s]" % (t, c) for t, c in zip(seq, causes)))
    print("polled states with cause %s: %s" % (SOURCE_CAUSE, " -> ".join(e[1] for e in tl if e[2] == SOURCE_CAUSE)))
    if not args.keep:
        for f in ("lookout.db", "lookout.db-wal", "lookout.db-shm"):
            try:
                os.remove(os.path.join(run, f))
            except OSError:
                pass
    if problems:
        print("FAIL: " + "; ".join(problems))
        print("files: %s (serve.log, events.jsonl, mock.log), HOME %s/home/dev" % (run, WORK))
        return 1
    print("OK: the %s hooks drove the pane working -> blocked -> working -> done "
          "(%s, hooked: true) with the real claude" % (args.hooks or "docs/hooks.md", SOURCE_CAUSE))
    return 0


if __name__ == "__main__":
    sys.exit(main())
