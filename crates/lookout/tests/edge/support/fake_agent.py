#!/usr/bin/env python3
"""A fake agent with a real composer, for the `pane.send` tests (tests/send.rs).

It draws Claude Code's screen shape: a separator line, `> ` and the draft, a separator line, with
a dim placeholder when the draft is empty; the cursor sits after the draft. It reads its terminal
raw, keeps the draft as typed (bracketed paste included: it asks for it), and on Enter submits a
non-empty draft: `✻ Thinking… (esc to interrupt)` for FAKE_WORK_MS (default 1500), then
`● Done: <draft>`. Typed while it works, a draft waits in the composer; Enter then queues it (shown
above the composer, run after the turn). FAKE_SWALLOW=1 makes Enter do nothing (a swallowed
submit); FAKE_HOLD=1 makes Enter while it works keep the draft in the composer, sent when the
turn ends (an agent that queues in its input box). `/pick` opens a picker where the next Enter
chooses (`● Done: CHOSEN`). FAKE_ASK=1 works on each prompt for FAKE_WORK_MS, then asks
as Claude Code's permission dialog does ("Do you want to proceed with <prompt>?", `❯ 1. Yes`,
`2. No …`): `1` (or Enter) works on it again (`● Done: <prompt> (answered 1)`), `2` or Esc declines it (`● Declined: <prompt>`).
Ctrl-D on an empty draft quits. FAKE_LOG=path appends every byte it
reads to that file; FAKE_NO_PASTE=1 never asks for bracketed paste.
"""
import os
import select
import sys
import termios
import time
import tty

RULE = "─" * 40
WORK = float(os.environ.get("FAKE_WORK_MS", "1500")) / 1000.0
SWALLOW = os.environ.get("FAKE_SWALLOW") == "1"
HOLD = os.environ.get("FAKE_HOLD") == "1"
LOG = os.environ.get("FAKE_LOG")
PASTE = os.environ.get("FAKE_NO_PASTE") != "1"
ASK = os.environ.get("FAKE_ASK") == "1"

out = sys.stdout


def draw(state):
    if state.get("ask"):
        out.write("\x1b[H\x1b[2Jfake claude\r\n\r\n Bash command\r\n   run " + state["ask"]
                  + "\r\n\r\n Do you want to proceed with " + state["ask"] + "?\r\n ❯ 1. Yes\r\n"
                  + "   2. No, and tell fake what to do differently (esc)")
        out.flush()
        return
    if state.get("picker"):
        out.write("\x1b[H\x1b[2Jfake claude\r\n\r\n Pick one\r\n ❯ 1. Yes\r\n   2. No\r\n\r\n Enter to choose · Esc to cancel")
        out.flush()
        return
    lines = ["fake claude", ""]
    if state["working"]:
        lines.append("✻ Thinking… (esc to interrupt)")
    elif state["answer"]:
        lines.append("● Done: " + state["answer"])
    for q in state["queue"]:
        lines.append("  ⎿ queued: " + q)
    lines.append("")
    lines.append(RULE)
    draft = state["draft"].decode("utf-8", "replace").split("\n")
    row = len(lines) + 1
    for i, part in enumerate(draft):
        lines.append(("> " if i == 0 else "  ") + part)
    lines.append(RULE)
    text = "\x1b[H\x1b[2J" + "\r\n".join(lines)
    if state["draft"] == b"":
        # the placeholder: dim, not input
        text = text.replace("\r\n> \r\n", "\r\n> \x1b[2mTry \"write a test\"\x1b[0m\r\n", 1)
    cursor_row = row + len(draft) - 1
    cursor_col = 3 + len(draft[-1])
    text += "\x1b[%d;%dH" % (cursor_row, cursor_col)
    out.write(text)
    out.flush()


def main():
    fd = sys.stdin.fileno()
    saved = termios.tcgetattr(fd)
    tty.setraw(fd)
    if PASTE:
        out.write("\x1b[?2004h")
    state = {"draft": b"", "working": False, "answer": "", "queue": []}
    done_at = None
    pending = b""
    pasting = False
    draw(state)
    try:
        while True:
            timeout = None if done_at is None else max(0.0, done_at - time.monotonic())
            ready, _, _ = select.select([fd], [], [], timeout)
            if done_at is not None and time.monotonic() >= done_at and state.get("to_ask"):
                state["working"] = False
                done_at = None
                state["ask"] = state.pop("to_ask")
                draw(state)
            if done_at is not None and time.monotonic() >= done_at:
                state["working"] = False
                done_at = None
                if state.pop("held", False):
                    state["queue"].append(state["draft"].decode("utf-8", "replace"))
                    state["draft"] = b""
                if state["queue"]:
                    state["answer"] = ""
                    state["current"] = state["queue"].pop(0)
                    state["working"] = True
                    done_at = time.monotonic() + WORK
                else:
                    state["answer"] = state.get("current", "")
                draw(state)
            if not ready:
                continue
            data = os.read(fd, 4096)
            if not data:
                return
            if LOG:
                with open(LOG, "ab") as log:
                    log.write(data)
            pending += data
            while pending:
                if pending.startswith(b"\x1b[200~"):
                    pasting, pending = True, pending[6:]
                    continue
                if pending.startswith(b"\x1b[201~"):
                    pasting, pending = False, pending[6:]
                    continue
                if pending.startswith(b"\x1b") and len(pending) < 6 and b"\x1b[200~".startswith(pending[:6]):
                    break  # a marker split across reads
                ch, pending = pending[:1], pending[1:]
                if pasting:
                    state["draft"] += b"\n" if ch in (b"\r", b"\n") else ch
                elif ch == b"\x04" and state["draft"] == b"":
                    return
                elif ch == b"\x7f":
                    text = state["draft"].decode("utf-8", "replace")[:-1]
                    state["draft"] = text.encode()
                elif state.get("ask") and ch in (b"1", b"\r"):
                    state["current"] = state.pop("ask") + " (answered 1)"
                    state["working"] = True
                    done_at = time.monotonic() + WORK
                elif state.get("ask") and ch in (b"2", b"\x1b"):
                    state["answer"] = "Declined: " + state.pop("ask")
                    state["current"] = ""
                elif state.get("ask"):
                    pass
                elif ch == b"\r" and state.get("picker"):
                    state["picker"] = False
                    state["answer"] = "CHOSEN"
                elif ch == b"\x1b" and state.get("picker"):
                    state["picker"] = False
                elif ch == b"\r" and state["draft"] == b"/pick":
                    state["draft"] = b""
                    state["picker"] = True
                elif ch == b"\r":
                    typed = state["draft"].decode("utf-8", "replace")
                    if SWALLOW or not typed:
                        pass
                    elif state["working"] and HOLD:
                        state["held"] = True
                    elif state["working"]:
                        state["queue"].append(typed)
                        state["draft"] = b""
                    else:
                        if ASK:
                            state["to_ask"] = typed
                        state["current"] = typed
                        state["draft"] = b""
                        state["answer"] = ""
                        state["working"] = True
                        done_at = time.monotonic() + WORK
                elif ch >= b" ":
                    state["draft"] += ch
            draw(state)
    finally:
        out.write("\x1b[?2004l")
        out.flush()
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)


if __name__ == "__main__":
    main()
