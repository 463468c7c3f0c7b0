#!/usr/bin/env python3
"""Live proof that the web board answers a REAL agent: Claude Code, the mock model, a real browser.

Usage
  tools/install_agents.sh          # once: the real CLIs into /opt/lookout-agents (outside the repo)
  cargo build                      # target/debug/lookout (or --lookout PATH for an installed one)
  tools/live_web.py                # exit 0: prompt confirmed, dialog approved, dialog denied
  options: --agents DIR, --lookout PATH, --shots DIR (save the page at each step as PNG)

What it does (stdlib only; reuses tools/capture.py for the mock, HOME and Claude's config, and
tools/live_hooks.py for the loopback-only namespace)
  * under `unshare -m -n` (only 127.0.0.1 exists), starts `lookout serve --http 127.0.0.1:0` with a
    config dir of its own (the board's tokens are made there), the mock model, and
    `lookout run --pane live -- claude` in tmux, HOME made as capture.py makes it (no hooks);
  * starts chromedriver and a headless Chromium and opens the address the board wrote, with its
    token, as a person would from `lookout web`;
  * in the page: types a prompt into the idle pane's box and sends it (the outcome must say
    `confirmed`); the mock answers with a Bash tool call that needs permission, so the card turns
    blocked with the dialog's options; clicks "1. Yes" (outcome `confirmed`, the command's answer
    arrives, the card reads done); sends a second prompt and clicks the "No" option (outcome
    `confirmed`, the card leaves blocked and the final answer never comes).
Exit 0 only if every step did what the page said. Every process it started is ended.
"""
import argparse
import base64
import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import capture  # noqa: E402
import live_hooks  # noqa: E402  (namespaces, the mock with its own log, stop())

WORK = "/tmp/lookout-live-web"
live_hooks.WORK = WORK
live_hooks.NS_FLAG = "LOOKOUT_LIVE_WEB_NS"
live_hooks.TMUX_SOCK = capture.SOCK = "lookoutweb"
PANE_ID = "live"


def log(*a):
    print("[live-web]", *a, file=sys.stderr, flush=True)


class Browser:
    """A headless Chromium through chromedriver's WebDriver HTTP API."""

    def __init__(self, width, height):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        self.port = s.getsockname()[1]
        s.close()
        self.driver = subprocess.Popen(["chromedriver", "--port=%d" % self.port],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            try:
                self.call("GET", "/status")
                break
            except OSError:
                time.sleep(0.1)
        caps = {"capabilities": {"alwaysMatch": {"goog:chromeOptions": {"args": [
            "--headless", "--no-sandbox", "--disable-gpu", "--window-size=%d,%d" % (width, height)]}}}}
        self.session = self.call("POST", "/session", caps)["sessionId"]

    def call(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request("http://127.0.0.1:%d%s" % (self.port, path), data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as r:
            return json.load(r)["value"]

    def s(self, method, path, body=None):
        return self.call(method, "/session/%s%s" % (self.session, path), body)

    def script(self, code, *args):
        return self.s("POST", "/execute/sync", {"script": code, "args": list(args)})

    def wait(self, what, code, timeout=60, *args):
        end = time.time() + timeout
        while time.time() < end:
            v = self.script(code, *args)
            if v:
                return v
            time.sleep(0.2)
        raise RuntimeError("timed out waiting for %s; page: %s" % (what, self.text("body")[:2000]))

    def text(self, css):
        return self.script("const e = document.querySelector(arguments[0]); return e ? e.innerText : '';", css)

    def shot(self, path):
        with open(path, "wb") as f:
            f.write(base64.b64decode(self.s("GET", "/screenshot")))

    def close(self):
        try:
            self.s("DELETE", "")
        except OSError:
            pass
        live_hooks.stop(self.driver, "chromedriver")


CARD = 'section.pane[data-pane="%s"]' % PANE_ID


def send_prompt(b, text):
    """Types `text` into the card's box and clicks Send; returns the outcome the page shows."""
    b.wait("the prompt box", "return !!document.querySelector(arguments[0] + ' input')", 60, CARD)
    b.script("""const i = document.querySelector(arguments[0] + ' input'); i.value = arguments[1];
                document.querySelector(arguments[0] + ' form button').click();""", CARD, text)
    return outcome(b)


def outcome(b):
    return b.wait("the send's outcome", """const o = document.querySelector(arguments[0] + ' .outcome');
        return o && o.innerText !== 'sending…' ? o.innerText : null;""", 60, CARD)


def click_option(b, match):
    """Clicks the blocked card's option whose label contains `match`; returns (label, outcome)."""
    label = b.wait("the dialog's option %r" % match, """
        const card = document.querySelector(arguments[0] + '[data-state="blocked"]');
        if (!card) return null;
        const o = [...card.querySelectorAll('.options button')].find(x => x.innerText.includes(arguments[1]));
        if (!o) return null;
        o.click();
        return o.innerText;""", 60, CARD, match)
    return label, outcome(b)


def state(b):
    return b.script("const c = document.querySelector(arguments[0]); return c ? c.dataset.state : null;", CARD)


def wait_state(b, want, timeout=60):
    return b.wait("the card to read %s" % want,
                  "const c = document.querySelector(arguments[0]); return c && c.dataset.state === arguments[1];",
                  timeout, CARD, want)


def main():
    ap = argparse.ArgumentParser(description="live web board -> real Claude Code (see the module docstring)")
    ap.add_argument("--agents", default=os.environ.get("LOOKOUT_AGENTS", "/opt/lookout-agents"))
    ap.add_argument("--lookout", default=os.path.join(REPO, "target", "debug", "lookout"))
    ap.add_argument("--shots", help="save a PNG of the page at each step into this directory")
    args = ap.parse_args()
    lookout = os.path.abspath(args.lookout)
    agent = capture.Claude(args.agents)
    for need in (lookout, agent.argv()[0], shutil.which("chromedriver") or "/nonexistent"):
        if not os.access(need, os.X_OK):
            sys.exit("live_web: %s missing (cargo build / tools/install_agents.sh / apt-get install chromium-driver)"
                     % need)
    live_hooks.enter_namespaces(__file__)
    live_hooks.check_isolated()

    run = os.path.join(WORK, "run")
    shutil.rmtree(run, ignore_errors=True)
    os.makedirs(run + "/bin")
    os.symlink(lookout, run + "/bin/lookout")
    os.symlink(agent.argv()[0], run + "/bin/claude")
    os.makedirs("/tmp/captures", exist_ok=True)
    if args.shots:
        os.makedirs(args.shots, exist_ok=True)
    sock = run + "/lookout.sock"
    server_env = dict(os.environ, XDG_STATE_HOME=run + "/state", XDG_CONFIG_HOME=run + "/config")
    procs, browser, problems = {}, None, []
    try:
        procs["serve"] = subprocess.Popen(
            [lookout, "serve", "--socket", sock, "--db", run + "/lookout.db", "--http", "127.0.0.1:0"],
            stdout=open(run + "/serve.log", "w"), stderr=subprocess.STDOUT, env=server_env)
        addr_file = run + "/web.addr"
        for _ in range(200):
            if os.path.exists(addr_file) and open(addr_file).read().endswith("\n"):
                break
            time.sleep(0.1)
        else:
            raise RuntimeError("no web.addr (see %s/serve.log)" % run)
        origin = open(addr_file).read().strip()
        token = open(run + "/config/lookout/web-token").read().strip()
        mock = live_hooks.LiveMock(run + "/mock.log")
        procs["mock"] = mock.p
        env = capture.fresh_home()
        agent.setup(env, mock.port)
        settings = {"permissions": {"defaultMode": "default"}}
        capture.wjson(capture.HOME + "/.claude/settings.json", settings)
        env["PATH"] = run + "/bin:" + env["PATH"]
        log("claude %s, mock on 127.0.0.1:%d, board %s" % (agent.version(), mock.port, origin))
        inner = [lookout, "run", "--socket", sock, "--pane", PANE_ID, "--", "claude"]
        cmd = "cd %s && exec env -i %s %s" % (
            capture.PROJECT, " ".join("%s=%s" % (k, shlex.quote(v)) for k, v in sorted(env.items())),
            " ".join(shlex.quote(x) for x in inner))
        pane = capture.Pane("claude", "live-web", True)
        pane.start(cmd, 120, 40)
        agent.before(pane)

        browser = Browser(1200, 900)
        browser.s("POST", "/url", {"url": "%s/?token=%s" % (origin, token)})
        wait_state(browser, "idle")
        shot = (lambda name: browser.shot(os.path.join(args.shots, name + ".png"))) if args.shots else (lambda n: None)
        shot("1-idle")

        said = send_prompt(browser, "perm: please run the command")
        log("prompt 1: %s" % said)
        if not said.startswith("confirmed"):
            problems.append("prompt 1 was not confirmed: %s" % said)
        wait_state(browser, "blocked")
        log("dialog on the page:\n" + browser.text(CARD))
        shot("2-blocked")
        label, said = click_option(browser, "Yes")
        log("clicked %r: %s" % (label, said))
        if not said.startswith("confirmed"):
            problems.append("approve was not confirmed: %s" % said)
        pane.wait(agent.final, 60, what="final")
        wait_state(browser, "done")
        shot("3-done")

        said = send_prompt(browser, "perm: please run the command")
        log("prompt 2: %s" % said)
        if not said.startswith("confirmed"):
            problems.append("prompt 2 was not confirmed: %s" % said)
        wait_state(browser, "blocked")
        label, said = click_option(browser, "No")
        log("clicked %r: %s" % (label, said))
        if not said.startswith("confirmed"):
            problems.append("deny was not confirmed: %s" % said)
        try:
            wait_state(browser, "idle", 30)
        except RuntimeError:
            explain = subprocess.run([lookout, "explain", "--socket", sock, PANE_ID],
                                     capture_output=True, text=True).stdout
            problems.append("after the deny the card reads %s, not idle\n%s\nscreen:\n%s"
                            % (state(browser), explain, pane.text()))
        shot("4-denied")
        log("sends the server logged:\n" + "".join(
            ln for ln in open(run + "/serve.log") if "web: send" in ln))
    except Exception as e:  # noqa: BLE001 — report whatever broke, then clean up
        problems.append("%s: %s" % (type(e).__name__, e))
    finally:
        if browser:
            browser.close()
        capture.tmux("kill-server", check=False)
        for name, p in procs.items():
            live_hooks.stop(p, name)
        # a `lookout run` still ending may have started the per-user server again on that socket
        subprocess.run([lookout, "stop", "--socket", sock], capture_output=True)
    if problems:
        log("FAILED:\n  " + "\n  ".join(problems))
        return 1
    log("ok: prompt confirmed, dialog approved and denied from the page")
    return 0


if __name__ == "__main__":
    sys.exit(main())
