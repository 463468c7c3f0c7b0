#!/usr/bin/env python3
"""Mock model server for recording real agent CLIs (stdlib only, 127.0.0.1 only).

    python3 tools/mock_model.py [--port 0] [--scenario short] [--slow-seconds 7]

With --port 0 (the default) it picks a free port and prints `PORT <n>` as the first stdout line.
Every request is logged to stderr as one line: method, path, api, scenario, model, stream.

APIs served
  Anthropic Messages     POST /v1/messages (SSE or JSON), /v1/messages/count_tokens
  OpenAI Chat            POST /v1/chat/completions (SSE or JSON, tool_calls)
  OpenAI Responses       POST /v1/responses (typed SSE events, function_call)
  Gemini                 POST /v1beta/models/<m>:streamGenerateContent?alt=sse, :generateContent,
                         :countTokens
  Model lists            GET /v1/models, GET /v1beta/models
  Anything else          logged; GET -> 200 {}, POST -> 404 JSON error

Scenario: chosen from the text of the LAST user message of the request (case-insensitive):
  contains "slow"          -> a long answer streamed in small chunks over --slow-seconds (working)
  contains "perm" or "run" -> a tool call that needs permission: a shell command `touch approved.txt`
                              (Bash for Anthropic; for OpenAI/Gemini the shell-like tool the client
                              offered; Codex exec_command with sandbox_permissions=require_escalated;
                              a `security_risk` argument is "HIGH", which OpenHands asks about)
  contains "write"         -> a file write tool call (notes.txt; PROJECT/notes.txt where the schema
                              asks for an absolute path, with --project) when a write tool is offered
  contains "quote a"       -> an answer that QUOTES permission prompts of several agents as prose
                              (a live-prompt rule must not fire on it)
  contains "background"    -> a long command left running in the background: Anthropic Bash `sleep 25`
                              with run_in_background; elsewhere the shell tool with `sleep 20` and its
                              background flag (is_background / yield_time_ms) when the schema has one
  contains "ask me"        -> the client's question tool with one two-option question (the agent waits
                              for an answer): Anthropic AskUserQuestion; elsewhere ask_user (Gemini),
                              ask_user_question (Qwen), request_user_input (Codex), question
                              (opencode/kilo), AskQuestion (Continue), AskUser (Droid: a plain-text
                              `[question]`/`[option]` questionnaire) … whichever the client offers,
                              its arguments shaped by the tool's schema
  contains "sub" + "agent" -> (Anthropic) the Agent/Task tool with a sub-agent asked for a slow answer
  contains "fail"          -> the API answers HTTP 400 with its own error body (not retried): the
                              turn ends in an API error
  contains "usage limit"   -> HTTP 429, the account's usage limit / quota is used up (every request of
                              that prompt, so retries fail too), in each API's own shape with its
                              reset headers (see limit_error): Anthropic rate_limit_error with
                              retry-after, anthropic-ratelimit-*-reset and the subscription's
                              anthropic-ratelimit-unified-* headers; Responses usage_limit_reached
                              with resets_at (Codex's ChatGPT plan limit); Chat insufficient_quota
                              with x-ratelimit-reset-*; Gemini RESOURCE_EXHAUSTED with a per-day
                              QuotaFailure. The reset is --limit-reset-minutes (default 150) ahead.
  contains "rate limit"    -> HTTP 429, a per-minute rate limit (Anthropic rate_limit_error, OpenAI
                              rate_limit_exceeded, Gemini RESOURCE_EXHAUSTED per minute) with a
                              3 s retry-after, for the first --limit-retries (default 2) requests
                              of that prompt; then the normal short answer (a client that retries
                              gets through)
  contains "long tool"     -> a shell command that runs silently for --long-seconds (default 32 s),
                              asked for like "perm" (the CLI may ask first)
  otherwise                -> --scenario (default "short": a one-line answer)
When the last turn is a tool result (tool_result / role tool / function_call_output /
functionResponse), the answer is a short final text ("Done: ..."). Requests without tools
(titles, summaries, next-speaker checks) get a short quick answer, JSON if JSON is asked for.
Clients that need a tool call to finish (cline's attempt_completion) get one.
"""
import argparse
import json
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ARGS = None
COUNTER = [0]
LOCK = threading.Lock()

SHELL_CMD = "touch approved.txt"
BG_CMD = "sleep 20"
# not `sleep N`: Claude Code refuses a long foreground sleep and asks for a background run
LONG_CMD = "python3 -c 'import time; time.sleep(%d)'"
SLOW_LINES = [
    "Here is a slow, carefully streamed answer so that the working state stays visible.",
    "First, the mock model considers the question from a few angles.",
    "Second, it writes the answer out in small pieces, a word or two at a time.",
    "Third, it pauses between chunks, just like a real model under load.",
    "Fourth, it lists a few points:",
    "- point one: terminals are grids of cells",
    "- point two: agents draw spinners while they work",
    "- point three: permission prompts wait for the user",
    "Finally, it wraps up the answer with a short summary line.",
    "That is the end of the slow answer.",
]


def nid(prefix):
    with LOCK:
        COUNTER[0] += 1
        return "%s_mock%06d" % (prefix, COUNTER[0])


def log(msg):
    sys.stderr.write(time.strftime("%H:%M:%S ") + msg + "\n")
    sys.stderr.flush()


# ---------------------------------------------------------------- text helpers

def text_of(content):
    """Flatten any API's message content into plain text."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        for k in ("text", "content", "input_text"):
            if isinstance(content.get(k), (str, list)):
                return text_of(content[k])
        return ""
    if isinstance(content, list):
        return "\n".join(text_of(c) for c in content)
    return ""


def choose(text, has_tools):
    # only the start of the user's own text: clients append boilerplate (aider's edit-format reminder
    # mentions "quotes", Claude Code prepends <system-reminder> blocks)
    full = re.sub(r"(?s)<system-reminder>.*?</system-reminder>", "", text or "").strip()
    t = full
    while True:  # leading context blocks (Gemini CLI's <session_context>, Codex's <environment_context>)
        m = re.match(r"(?s)\s*<([A-Za-z_-]+)>.*?</\1>\s*", t)
        if not m:
            break
        t = t[m.end():]
    lines = [ln for ln in (t.strip() or full).split("\n")
             if ln.strip() and not re.fullmatch(r"\s*</?[A-Za-z_-]+>\s*", ln)]
    t = (lines[0] if lines else "").lower()[:200]  # the first line of the user's own text
    if not has_tools:
        return "quick"
    if "fail" in t:
        return "error"
    if "usage limit" in t:
        return "usage_limit"
    if "rate limit" in t:
        return "rate_limit"
    if "long tool" in t:
        return "long"
    if "slow" in t:
        return "slow"
    if "quote a" in t:
        return "quote"
    if "background" in t:
        return "bg"
    if "ask me" in t:
        return "ask"
    if "agent" in t and "sub" in t:
        return "subagent"
    if "perm" in t or re.search(r"\brun\b", t):
        return "perm"
    if "write" in t:
        return "write"
    return ARGS.scenario


QUOTE = """Here is what permission prompts of several agents look like, quoted as plain text:

Do you want to proceed?
❯ 1. Yes
  2. No
Allow execution of [Shell]?
● 1. Allow once
  3. No, suggest changes (esc)
Would you like to run the following command?
› 1. Yes, proceed (y)
Press enter to confirm or esc to cancel
Run shell command? (Y)es/(N)o [Yes]:
[y] Approve   [n] Deny
Permission required
Allow once   Allow always   Reject
esc to interrupt

That was only a quote; nothing is waiting for you."""


def short_answer(user_text):
    t = (user_text or "").strip().splitlines()
    first = t[0][:60] if t else ""
    return "Mock answer: I read your message (%s). Nothing else to do." % first


def slow_chunks():
    """Yield small chunks spread over ARGS.slow_seconds."""
    words = []
    for line in SLOW_LINES:
        parts = line.split(" ")
        for i, w in enumerate(parts):
            words.append(w + (" " if i < len(parts) - 1 else "\n\n" if not line.startswith("-") else "\n"))
    chunks = [words[i:i + 2] for i in range(0, len(words), 2)]
    delay = ARGS.slow_seconds / max(1, len(chunks))
    for c in chunks:
        yield "".join(c), delay


def json_from_schema(schema, depth=0):
    """A value that satisfies a (simple) JSON schema; next_speaker -> user."""
    if not isinstance(schema, dict) or depth > 6:
        return "ok"
    if "enum" in schema and schema["enum"]:
        return schema["enum"][0]
    ty = schema.get("type")
    if isinstance(ty, list):
        ty = ty[0]
    ty = (ty or "").lower()
    if ty == "object" or "properties" in schema:
        out = {}
        for k, v in (schema.get("properties") or {}).items():
            if k == "next_speaker":
                out[k] = "user"
            elif k == "title" and isinstance(v, dict) and v.get("type") == "string":
                out[k] = "Mock task"
            elif k in ("model_choice",) and isinstance(v, dict) and v.get("enum"):
                out[k] = v["enum"][-1]
            else:
                out[k] = json_from_schema(v, depth + 1)
        return out
    if ty == "array":
        return []
    if ty in ("integer", "number"):
        return 0
    if ty == "boolean":
        return False
    return "ok"


def side_answer(system_text, user_text, body):
    """Answer for a request without tools (title, summary, checks)."""
    s = (system_text + "\n" + user_text).lower()
    if "next_speaker" in s:
        return json.dumps({"reasoning": "The model answered; the user speaks next.", "next_speaker": "user"})
    if "isnewtopic" in s:
        return json.dumps({"isNewTopic": False, "title": "Mock task"})
    if re.search(r"(return|respond with|output) json", s) and "title" in s:
        return json.dumps({"title": "Mock task"})
    if "title" in s:
        return "Mock task"
    return "Mock answer."


# ---------------------------------------------------------------- tool argument builders

SHELL_NAMES = ["bash", "run_shell_command", "shell", "execute_command", "exec_command", "shell_command",
               "run_commands",
               "run_command", "run_terminal_cmd", "terminal", "exec", "command", "run"]
WRITE_NAMES = ["write", "write_file", "write_to_file", "create_file", "create", "edit",
               "str_replace_based_edit_tool", "file_editor", "str_replace_editor"]


def pick_tool(tools, names, fuzzy):
    """tools: list of (name, schema). Exact names first, then fuzzy substrings."""
    by = {n.lower(): (n, s) for n, s in tools}
    for n in names:
        if n in by:
            return by[n]
    for n, s in tools:
        ln = n.lower()
        if any(f in ln for f in fuzzy):
            return (n, s)
    return None


def args_for(name, schema, kind):
    props = (schema or {}).get("properties") or {}
    req = set((schema or {}).get("required") or [])
    out = {}
    for k, v in props.items():
        lk = k.lower()
        ty = v.get("type") if isinstance(v, dict) else None
        if lk == "commands":
            out[k] = [SHELL_CMD] if ty == "array" else SHELL_CMD
        elif lk in ("command", "cmd") and "create" in ((v or {}).get("enum") or []):
            out[k] = "create"  # an editor tool's sub-command (OpenHands file_editor)
        elif lk in ("command", "cmd"):
            if ty == "array":
                out[k] = ["bash", "-lc", SHELL_CMD]
            else:
                out[k] = SHELL_CMD
        elif lk in ("description", "justification", "reason", "explanation"):
            out[k] = "Create approved.txt in the project folder (the mock asks for this)."
        elif lk in ("file_path", "path", "absolute_path", "filepath", "filename", "target_file"):
            # some clients refuse a relative path (Copilot: "Path not absolute")
            desc = str((v or {}).get("description", "")).lower() if isinstance(v, dict) else ""
            wants_abs = lk == "absolute_path" or "absolute" in desc
            out[k] = (ARGS.project.rstrip("/") + "/notes.txt") if (wants_abs and ARGS.project) else "notes.txt"
        elif lk in ("content", "contents", "text", "file_text"):
            out[k] = "mock notes\n"
        elif lk == "sandbox_permissions":
            out[k] = "require_escalated"
        elif lk == "requires_approval":
            out[k] = True
        elif lk == "security_risk":  # OpenHands asks the user only before actions marked HIGH
            out[k] = "HIGH"
        elif lk in ("workdir", "cwd", "directory", "dir_path") and k in req:
            out[k] = "."
        elif k in req:
            out[k] = json_from_schema(v)
    if name == "exec_command":
        out.setdefault("cmd", SHELL_CMD)
        out["sandbox_permissions"] = "require_escalated"
        out.setdefault("justification", "Create approved.txt in the project folder (the mock asks for this).")
    if kind == "shell" and not any(k.lower() in ("command", "cmd", "commands") for k in out):
        out["command"] = SHELL_CMD
    return out


ASK_NAMES = ["askuserquestion", "ask_user", "ask_user_question", "request_user_input", "question",
             "ask_followup_question", "ask_question", "askuser", "ask"]
ASK_QUESTION = {"question": "Which greeting should the file use?", "header": "Greeting", "id": "greeting",
                "type": "choice", "multiSelect": False, "multiple": False,
                "options": [{"label": "Hello", "description": "A plain hello."},
                            {"label": "Howdy", "description": "A friendly howdy."}]}


def ask_value(schema, key):
    """ASK_QUESTION's value for `key`, shaped as the schema asks (options as objects or strings)."""
    v = ASK_QUESTION.get(key)
    if key in ("options", "choices", "suggestions", "follow_up", "answers"):
        items = (schema or {}).get("items") or {}
        if items.get("type") == "object" or "properties" in items:
            keys = (items.get("properties") or {}).keys()
            return [{k: o.get(k, json_from_schema((items.get("properties") or {}).get(k)))
                     for k in keys} for o in ASK_QUESTION["options"]]
        return [o["label"] for o in ASK_QUESTION["options"]]
    if v is None:
        return json_from_schema(schema)
    return v


def ask_args(schema):
    """Arguments for the client's question tool: one multiple-choice question, in its schema."""
    props = (schema or {}).get("properties") or {}
    if "message" in props and "requestedSchema" in props:  # an elicitation form (Copilot's ask_user)
        return {"message": ASK_QUESTION["question"], "requestedSchema": {
            "type": "object", "required": ["greeting"], "properties": {"greeting": {
                "type": "string", "title": ASK_QUESTION["header"], "description": "The greeting to use.",
                "enum": [o["label"] for o in ASK_QUESTION["options"]]}}}}
    out = {}
    if "questionnaire" in props:  # a plain-text questionnaire (Droid's AskUser)
        out["questionnaire"] = "1. [question] %s\n[topic] %s\n%s" % (
            ASK_QUESTION["question"], ASK_QUESTION["header"],
            "\n".join("[option] " + o["label"] for o in ASK_QUESTION["options"]))
        return out
    for k, v in props.items():
        lk = k.lower()
        if lk == "questions":
            item = (v or {}).get("items") or {}
            iprops = item.get("properties") or {}
            out[k] = [{ik: ask_value(iv, ik) for ik, iv in iprops.items()
                       if ik in ASK_QUESTION or ik in (item.get("required") or [])}]
        elif lk in ASK_QUESTION or lk in ("choices", "suggestions", "follow_up"):
            out[k] = ask_value(v, lk)
        elif k in ((schema or {}).get("required") or []):
            out[k] = json_from_schema(v)
    return out


def plan_ask(tools):
    t = pick_tool(tools, ASK_NAMES, ["ask_user", "askuser", "user_input", "question"])
    return (t[0], ask_args(t[1])) if t else None


def plan_tool(tools, scenario):
    """Return (name, args_dict) for the scenario, or None."""
    if scenario == "write":
        t = pick_tool(tools, WRITE_NAMES, ["write"])
        if t:
            return t[0], args_for(t[0], t[1], "write")
        scenario = "perm"
    if scenario == "perm":
        t = pick_tool(tools, SHELL_NAMES, ["shell", "bash", "exec", "command", "terminal"])
        if t:
            return t[0], args_for(t[0], t[1], "shell")
    if scenario == "long":  # a silent command that runs for --long-seconds
        p = plan_tool(tools, "perm")
        if p:
            a = swap_command(p[1], LONG_CMD % ARGS.long_seconds, "Wait quietly.")
            t = pick_tool(tools, SHELL_NAMES, ["shell", "bash", "exec", "command", "terminal"])
            for k in ((t[1] or {}).get("properties") or {}) if t else ():
                if k.lower() in ("yield_time_ms", "timeout_ms", "timeout"):
                    # wait for it in the foreground (Codex yields a command after 10 s by default)
                    a[k] = (ARGS.long_seconds + 30) * 1000
            return p[0], a
    if scenario == "bg":  # a long command left running in the background (no escalation asked)
        t = pick_tool(tools, SHELL_NAMES, ["shell", "bash", "exec", "command", "terminal"])
        if t:
            a = args_for(t[0], t[1], "shell")
            props = (t[1] or {}).get("properties") or {}
            for k in list(a):
                if isinstance(a[k], str) and a[k] == SHELL_CMD:
                    a[k] = BG_CMD
                elif isinstance(a[k], list) and SHELL_CMD in a[k]:
                    a[k] = [BG_CMD if x == SHELL_CMD else x for x in a[k]]
                elif k in ("justification", "description"):
                    a[k] = "Wait 20 s in the background."
            a.pop("sandbox_permissions", None)
            a.pop("justification", None)
            for k in props:
                if k.lower() in ("run_in_background", "is_background", "background"):
                    a[k] = True
                elif k.lower() == "yield_time_ms":
                    a[k] = 1000
            return t[0], a
    return None


def swap_command(args, cmd, why):
    """The shell-tool arguments with the command replaced (string or list forms)."""
    a = dict(args)
    for k in list(a):
        if isinstance(a[k], str) and a[k] == SHELL_CMD:
            a[k] = cmd
        elif isinstance(a[k], list) and SHELL_CMD in a[k]:
            a[k] = [cmd if x == SHELL_CMD else x for x in a[k]]
        elif k in ("justification", "description"):
            a[k] = why
    return a


def api_error(api):
    """An HTTP 400 body in the API's own shape: clients show it and end the turn (no retry)."""
    msg = "mock: this request fails on purpose (invalid request)"
    if api == "anthropic":
        return {"type": "error", "error": {"type": "invalid_request_error", "message": msg}}
    if api == "gemini":
        return {"error": {"code": 400, "message": msg, "status": "INVALID_ARGUMENT"}}
    return {"error": {"message": msg, "type": "invalid_request_error", "param": None, "code": "mock_error"}}


LIMIT_SEEN = {}  # (api, prompt) -> how many rate-limited requests were answered 429


def limit_error(api, scen, prompt):
    """(status, headers, body) of a 429 in the API's own shape, or None when a transient rate limit
    has been answered often enough and the request should go through."""
    now = time.time()
    if scen == "rate_limit":
        with LOCK:
            n = LIMIT_SEEN.get((api, prompt), 0)
            LIMIT_SEEN[(api, prompt)] = n + 1
        if n >= ARGS.limit_retries:
            return None
        wait = 3
    else:
        wait = ARGS.limit_reset_minutes * 60
    reset = now + wait
    rfc3339 = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(reset))
    h = {"retry-after": str(int(wait))}
    if api == "anthropic":
        for k in ("requests", "tokens", "input-tokens", "output-tokens"):
            h["anthropic-ratelimit-%s-limit" % k] = "50" if k == "requests" else "40000"
            h["anthropic-ratelimit-%s-remaining" % k] = "0"
            h["anthropic-ratelimit-%s-reset" % k] = rfc3339
        h["request-id"] = nid("req")
        if scen == "usage_limit":  # a subscription's five-hour window used up
            h.update({"anthropic-ratelimit-unified-status": "rejected",
                      "anthropic-ratelimit-unified-reset": str(int(reset)),
                      "anthropic-ratelimit-unified-representative-claim": "five_hour",
                      "anthropic-ratelimit-unified-5h-status": "rejected",
                      "anthropic-ratelimit-unified-5h-reset": str(int(reset)),
                      "anthropic-ratelimit-unified-5h-utilization": "1.0",
                      "anthropic-ratelimit-unified-7d-status": "allowed",
                      "anthropic-ratelimit-unified-7d-utilization": "0.42",
                      "anthropic-ratelimit-unified-overage-status": "rejected",
                      "anthropic-ratelimit-unified-fallback-percentage": "0.5"})
            msg = "This request would exceed your account's rate limit. Please try again later."
        else:
            msg = ("This request would exceed the rate limit for your organization of 50 requests per "
                   "minute. For details, refer to: https://docs.claude.com/en/api/rate-limits.")
        return 429, h, {"type": "error", "error": {"type": "rate_limit_error", "message": msg},
                        "request_id": h["request-id"]}
    if api == "gemini":
        if scen == "usage_limit":
            qid, retry = "GenerateRequestsPerDayPerProjectPerModel-FreeTier", "%ds" % wait
            msg = ("You exceeded your current quota, please check your plan and billing details. For more "
                   "information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.\n"
                   "* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier"
                   "_requests, limit: 50, model: gemini-2.5-pro")
        else:
            qid, retry = "GenerateRequestsPerMinutePerProjectPerModel-FreeTier", "3s"
            msg = ("You exceeded your current quota, please check your plan and billing details.\n"
                   "* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier"
                   "_requests, limit: 5, model: gemini-2.5-pro\nPlease retry in 3s.")
        return 429, h, {"error": {"code": 429, "message": msg, "status": "RESOURCE_EXHAUSTED",
                                  "details": [
            {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [{
                "quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
                "quotaId": qid, "quotaDimensions": {"location": "global", "model": "gemini-2.5-pro"},
                "quotaValue": "50" if scen == "usage_limit" else "5"}]},
            {"@type": "type.googleapis.com/google.rpc.Help", "links": [{
                "description": "Learn more about Gemini API quotas",
                "url": "https://ai.google.dev/gemini-api/docs/rate-limits"}]},
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": retry}]}}
    # OpenAI (Chat Completions and Responses)
    for k in ("requests", "tokens"):
        h["x-ratelimit-limit-%s" % k] = "500" if k == "requests" else "30000"
        h["x-ratelimit-remaining-%s" % k] = "0"
        h["x-ratelimit-reset-%s" % k] = "%ds" % wait if wait < 60 else "%dm%ds" % (wait // 60, wait % 60)
    h["x-request-id"] = nid("req")
    if scen == "rate_limit":
        return 429, h, {"error": {"message": "Rate limit reached for mock-model in organization org-mock on "
                                             "requests per min (RPM): Limit 3, Used 3, Requested 1. Please try "
                                             "again in 3s.", "type": "requests", "param": None,
                                  "code": "rate_limit_exceeded"}}
    if api == "responses":  # Codex signed in with a ChatGPT plan: its own usage-limit error
        return 429, h, {"error": {"type": "usage_limit_reached", "message": "The usage limit has been reached",
                                  "plan_type": "plus", "resets_at": int(reset), "resets_in_seconds": int(wait)}}
    return 429, h, {"error": {"message": "You exceeded your current quota, please check your plan and billing "
                                         "details.", "type": "insufficient_quota", "param": None,
                              "code": "insufficient_quota"}}


def completion_tool(tools):
    for n, s in tools:
        if n.lower() in ("attempt_completion", "complete_task", "submit"):
            return n, s
    return None


# ---------------------------------------------------------------- HTTP plumbing

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "mock-model/1"

    def log_message(self, fmt, *a):  # quiet default access log; we log our own line
        pass

    # -- low level
    def read_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            raw = self.rfile.read(n)
        elif "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            raw = b""
            while True:
                line = self.rfile.readline().strip()
                size = int(line.split(b";")[0] or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    break
                raw += self.rfile.read(size)
                self.rfile.readline()
        else:
            raw = b""
        try:
            return json.loads(raw or b"{}")
        except Exception:
            return {}

    def send_json(self, obj, code=200, headers=None):
        data = json.dumps(obj).encode()
        self.send_response(code)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def start_sse(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def chunk(self, data):
        if isinstance(data, str):
            data = data.encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def end_chunks(self):
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def sse(self, obj, event=None):
        s = ""
        if event:
            s += "event: %s\n" % event
        s += "data: %s\n\n" % (obj if isinstance(obj, str) else json.dumps(obj))
        self.chunk(s)

    # -- dispatch
    def limited(self, api, scen, prompt):
        """Answer a usage/rate-limit scenario with its 429; False when the request goes through."""
        if scen not in ("usage_limit", "rate_limit"):
            return False
        e = limit_error(api, scen, prompt)
        if e is None:
            log("POST %s api=%s scenario=%s -> through" % (self.path, api, scen))
            return False
        log("POST %s api=%s scenario=%s -> 429" % (self.path, api, scen))
        self.send_json(e[2], e[0], e[1])
        return True

    def do_GET(self):
        path = self.path.split("?")[0]
        log("GET %s" % self.path)
        if path.rstrip("/").endswith("/models"):
            ids = ["mock-model", "claude-sonnet-4-5", "gpt-5", "gemini-2.5-pro", "gemini-2.5-flash"]
            if "v1beta" in path:
                self.send_json({"models": [{"name": "models/" + i, "displayName": i,
                                            "supportedGenerationMethods": ["generateContent"]} for i in ids]})
            else:
                self.send_json({"object": "list", "data": [{"id": i, "object": "model", "created": 0,
                                                             "owned_by": "mock", "type": "model",
                                                             "display_name": i} for i in ids]})
            return
        self.send_json({})

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self):
        path = self.path.split("?")[0]
        body = self.read_body()
        if ARGS.dump:
            import os
            os.makedirs(ARGS.dump, exist_ok=True)
            with open(os.path.join(ARGS.dump, "%s-%s.json" % (nid("req"), path.strip("/").replace("/", "_")[:60])), "w") as f:
                json.dump(body, f, indent=1)
        try:
            if path.endswith("/messages/count_tokens"):
                log("POST %s api=anthropic count_tokens" % self.path)
                self.send_json({"input_tokens": 42})
            elif path.endswith("/messages"):
                self.anthropic(body)
            elif path.endswith("/chat/completions"):
                self.chat(body)
            elif path.endswith("/responses"):
                self.openai_responses(body)
            elif ":streamGenerateContent" in path or ":generateContent" in path:
                self.gemini(body, stream=":streamGenerateContent" in path)
            elif ":countTokens" in path:
                log("POST %s api=gemini countTokens" % self.path)
                self.send_json({"totalTokens": 42})
            else:
                log("POST %s UNKNOWN -> 404" % self.path)
                self.send_json({"error": {"message": "mock: unknown path", "type": "not_found"}}, 404)
        except (BrokenPipeError, ConnectionResetError):
            log("  client went away (%s)" % self.path)

    # ------------------------------------------------------------ Anthropic Messages
    def anthropic(self, body):
        msgs = body.get("messages") or []
        tools = [(t.get("name", ""), t.get("input_schema") or {}) for t in (body.get("tools") or [])]
        users = [m for m in msgs if m.get("role") == "user"]  # Claude Code appends role=system items
        last = users[-1] if users else {}
        after_tool = isinstance(last.get("content"), list) and any(
            isinstance(c, dict) and c.get("type") == "tool_result" for c in last["content"])
        utext = text_of([c for c in last.get("content")] if isinstance(last.get("content"), list)
                        else last.get("content"))
        system = text_of(body.get("system"))
        scen = "final" if after_tool else choose(utext, bool(tools))
        stream = bool(body.get("stream"))
        model = body.get("model", "mock-model")
        if scen == "error":
            log("POST %s api=anthropic scenario=error -> 400" % self.path)
            return self.send_json(api_error("anthropic"), 400)
        if self.limited("anthropic", scen, utext):
            return
        if scen in ("usage_limit", "rate_limit"):
            scen = "short"
        log("POST %s api=anthropic scenario=%s model=%s stream=%s tools=%d" % (
            self.path, scen, model, stream, len(tools)))

        blocks = []  # list of ("text", str or generator) / ("tool", name, input)
        stop = "end_turn"
        if scen == "quick":
            blocks.append(("text", side_answer(system, utext, body)))
        elif scen == "final":
            blocks.append(("text", "Done: the command finished (or was declined). Anything else?"))
        elif scen == "slow":
            blocks.append(("slow", None))
        elif scen == "quote":
            blocks.append(("text", QUOTE))
        elif scen == "bg" and any(n == "Bash" for n, _ in tools):
            blocks.append(("text", "I will start a long command in the background."))
            blocks.append(("tool", "Bash", {"command": "sleep 25", "description": "Wait 25 s in the background",
                                            "run_in_background": True}))
            stop = "tool_use"
        elif scen == "ask" and any(n == "AskUserQuestion" for n, _ in tools):
            blocks.append(("text", "I need to ask you something first."))
            blocks.append(("tool", "AskUserQuestion", {"questions": [{
                "question": "Which greeting should the file use?", "header": "Greeting", "multiSelect": False,
                "options": [{"label": "Hello", "description": "A plain hello."},
                            {"label": "Howdy", "description": "A friendly howdy."}]}]}))
            stop = "tool_use"
        elif scen == "subagent" and any(n in ("Agent", "Task") for n, _ in tools):
            name = "Agent" if any(n == "Agent" for n, _ in tools) else "Task"
            blocks.append(("text", "I will hand this to a sub-agent."))
            blocks.append(("tool", name, {"description": "Slow helper", "subagent_type": "general-purpose",
                                          "prompt": "please give me a slow answer"}))
            stop = "tool_use"
        elif scen == "long" and any(n == "Bash" for n, _ in tools):
            blocks.append(("text", "I will run a long, quiet command."))
            blocks.append(("tool", "Bash", {"command": LONG_CMD % ARGS.long_seconds,
                                            "description": "Wait quietly", "timeout": 120000}))
            stop = "tool_use"
        elif scen in ("perm", "write"):
            if scen == "write" and any(n == "Write" for n, _ in tools):
                name, inp = "Write", {"file_path": "notes.txt", "content": "mock notes\n"}
            else:
                name, inp = "Bash", {"command": SHELL_CMD, "description": "Create approved.txt"}
            if not any(n == name for n, _ in tools):
                p = plan_tool(tools, scen)
                if p:
                    name, inp = p
            blocks.append(("text", "I will run a command that needs your permission."))
            blocks.append(("tool", name, inp))
            stop = "tool_use"
        else:
            blocks.append(("text", short_answer(utext)))

        mid = nid("msg")
        usage = {"input_tokens": 120, "output_tokens": 30, "cache_creation_input_tokens": 0,
                 "cache_read_input_tokens": 0}
        if not stream:
            content = []
            for b in blocks:
                if b[0] == "text":
                    content.append({"type": "text", "text": b[1]})
                elif b[0] == "slow":
                    content.append({"type": "text", "text": "\n".join(SLOW_LINES)})
                else:
                    content.append({"type": "tool_use", "id": nid("toolu"), "name": b[1], "input": b[2]})
            self.send_json({"id": mid, "type": "message", "role": "assistant", "model": model,
                            "content": content, "stop_reason": stop, "stop_sequence": None, "usage": usage})
            return
        self.start_sse()
        self.sse({"type": "message_start", "message": {
            "id": mid, "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None,
            "usage": dict(usage, output_tokens=1)}}, "message_start")
        self.sse({"type": "ping"}, "ping")
        for i, b in enumerate(blocks):
            if b[0] in ("text", "slow"):
                self.sse({"type": "content_block_start", "index": i,
                          "content_block": {"type": "text", "text": ""}}, "content_block_start")
                if b[0] == "text":
                    self.sse({"type": "content_block_delta", "index": i,
                              "delta": {"type": "text_delta", "text": b[1]}}, "content_block_delta")
                else:
                    for piece, delay in slow_chunks():
                        time.sleep(delay)
                        self.sse({"type": "content_block_delta", "index": i,
                                  "delta": {"type": "text_delta", "text": piece}}, "content_block_delta")
            else:
                self.sse({"type": "content_block_start", "index": i, "content_block": {
                    "type": "tool_use", "id": nid("toolu"), "name": b[1], "input": {}}}, "content_block_start")
                self.sse({"type": "content_block_delta", "index": i, "delta": {
                    "type": "input_json_delta", "partial_json": json.dumps(b[2])}}, "content_block_delta")
            self.sse({"type": "content_block_stop", "index": i}, "content_block_stop")
        self.sse({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                  "usage": {"output_tokens": 30}}, "message_delta")
        self.sse({"type": "message_stop"}, "message_stop")
        self.end_chunks()

    # ------------------------------------------------------------ OpenAI Chat Completions
    def chat(self, body):
        msgs = body.get("messages") or []
        tools = []
        for t in body.get("tools") or []:
            f = t.get("function") or t
            tools.append((f.get("name", ""), f.get("parameters") or {}))
        last = msgs[-1] if msgs else {}
        after_tool = last.get("role") in ("tool", "function")
        users = [m for m in msgs if m.get("role") == "user"]
        utext = text_of(users[-1].get("content")) if users else ""
        system = "\n".join(text_of(m.get("content")) for m in msgs if m.get("role") in ("system", "developer"))
        # Text-protocol clients (aider's edit formats, cline's XML tools) offer no tools but still act.
        # cline 2.x's XML-tool prompt also teaches SEARCH/REPLACE blocks: XML tools come first
        xml_tools = not tools and "<execute_command>" in system
        aider = not tools and not xml_tools and ("SEARCH/REPLACE" in system or "aider" in system.lower())
        has_tools = bool(tools) or aider or xml_tools
        rf = body.get("response_format") or {}
        if rf.get("type") in ("json_object", "json_schema"):
            has_tools = False
        if last.get("role") == "user" and "<tool_result>" in text_of(last.get("content")):
            after_tool = True
        if xml_tools and last.get("role") == "user" and re.search(r"\[execute_command[^\]]*\] Result", utext):
            after_tool = True
        scen = "final" if after_tool else choose(utext, has_tools)
        stream = bool(body.get("stream"))
        model = body.get("model", "mock-model")
        if scen == "error":
            log("POST %s api=chat scenario=error -> 400" % self.path)
            return self.send_json(api_error("chat"), 400)
        if self.limited("chat", scen, utext):
            return
        if scen in ("usage_limit", "rate_limit"):
            scen = "short"
        log("POST %s api=chat scenario=%s model=%s stream=%s tools=%d%s" % (
            self.path, scen, model, stream, len(tools),
            " aider" if aider else " xml" if xml_tools else ""))

        text, slow, call = "", False, None
        finish_tool = completion_tool(tools)
        if scen == "quick":
            if rf.get("type") == "json_schema":
                text = json.dumps(json_from_schema((rf.get("json_schema") or {}).get("schema") or {}))
            else:
                text = side_answer(system, utext, body)
        elif scen == "final":
            text = "Done: the command finished (or was declined). Anything else?"
        elif scen == "slow":
            slow = True
        elif scen == "quote":
            text = QUOTE
        elif scen == "bg" and tools:
            call = plan_tool(tools, "bg")
            text = "I will start a long command in the background."
        elif scen == "ask" and plan_ask(tools):
            call = plan_ask(tools)
            text = "I need to ask you something first."
        elif scen == "long":
            cmd = LONG_CMD % ARGS.long_seconds
            if aider:
                text = "I will run a long, quiet command.\n\n```bash\n%s\n```\n" % cmd
            elif xml_tools:
                text = ("I will run a long, quiet command.\n\n<execute_command>\n<command>%s</command>\n"
                        "<requires_approval>true</requires_approval>\n</execute_command>" % cmd)
            else:
                call = plan_tool(tools, "long")
                text = "I will run a long, quiet command."
        elif scen in ("perm", "write"):
            if aider:
                text = ("I will run a command that needs your permission.\n\n```bash\n%s\n```\n" % SHELL_CMD)
            elif xml_tools:
                text = ("I will run a command that needs your permission.\n\n<execute_command>\n<command>%s"
                        "</command>\n<requires_approval>true</requires_approval>\n</execute_command>" % SHELL_CMD)
            else:
                call = plan_tool(tools, scen)
                text = "I will run a command that needs your permission."
                if call is None:
                    text = "No shell tool was offered; nothing to run."
        else:
            text = short_answer(utext)
        if call is None and finish_tool and scen not in ("quick",):
            # the client finishes a task through a tool: deliver the answer through it
            if not slow:
                call = (finish_tool[0], {"result": text or "Done."})
                text = ""
        elif call is None and xml_tools and scen not in ("quick",) and not slow:
            text = "<attempt_completion>\n<result>%s</result>\n</attempt_completion>" % (text or "Done.")

        cid = nid("chatcmpl")
        created = int(time.time())
        usage = {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150}
        if not stream:
            if slow:  # a client that does not stream (OpenHands) still waits the slow answer out
                time.sleep(ARGS.slow_seconds)
            msg = {"role": "assistant", "content": (text or ("\n".join(SLOW_LINES) if slow else None))}
            finish = "stop"
            if call:
                msg["tool_calls"] = [{"id": nid("call"), "type": "function",
                                      "function": {"name": call[0], "arguments": json.dumps(call[1])}}]
                finish = "tool_calls"
            self.send_json({"id": cid, "object": "chat.completion", "created": created, "model": model,
                            "choices": [{"index": 0, "message": msg, "finish_reason": finish}], "usage": usage})
            return

        def chunk(delta, finish=None, **extra):
            o = {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
                 "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
            o.update(extra)
            self.sse(o)

        self.start_sse()
        chunk({"role": "assistant", "content": ""})
        if slow:
            for piece, delay in slow_chunks():
                time.sleep(delay)
                chunk({"content": piece})
            if finish_tool:
                call = (finish_tool[0], {"result": "The slow answer is complete."})
            elif xml_tools:
                chunk({"content": "\n<attempt_completion>\n<result>The slow answer is complete.</result>\n"
                                  "</attempt_completion>"})
        elif text:
            chunk({"content": text})
        finish = "stop"
        if call:
            args = json.dumps(call[1])
            chunk({"tool_calls": [{"index": 0, "id": nid("call"), "type": "function",
                                   "function": {"name": call[0], "arguments": ""}}]})
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": args}}]})
            finish = "tool_calls"
        chunk({}, finish)
        if (body.get("stream_options") or {}).get("include_usage"):
            self.sse({"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
                      "choices": [], "usage": usage})
        self.sse("[DONE]")
        self.end_chunks()

    # ------------------------------------------------------------ OpenAI Responses
    def openai_responses(self, body):
        items = body.get("input")
        if isinstance(items, str):
            items = [{"type": "message", "role": "user", "content": items}]
        items = items or []
        tools = []
        for t in body.get("tools") or []:
            f = t.get("function") if isinstance(t.get("function"), dict) else t
            if f.get("name"):
                tools.append((f["name"], f.get("parameters") or {}))
        last_user, last_user_i, last_out_i = "", -1, -1
        for i, it in enumerate(items):
            ty = it.get("type", "message")
            if ty == "message" and it.get("role") == "user":
                txt = text_of(it.get("content"))
                # Codex injects context messages as user items; they are not the user's prompt
                if txt.lstrip().startswith(("<environment_context", "<user_instructions", "# AGENTS.md",
                                            "<permissions", "<INSTRUCTIONS")):
                    continue
                last_user, last_user_i = txt, i
            elif ty in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
                last_out_i = i
        after_tool = last_out_i > last_user_i
        scen = "final" if after_tool else choose(last_user, bool(tools))
        stream = body.get("stream", True)
        model = body.get("model", "mock-model")
        if scen == "error":
            log("POST %s api=responses scenario=error -> 400" % self.path)
            return self.send_json(api_error("responses"), 400)
        if self.limited("responses", scen, last_user):
            return
        if scen in ("usage_limit", "rate_limit"):
            scen = "short"
        log("POST %s api=responses scenario=%s model=%s stream=%s tools=%d" % (
            self.path, scen, model, stream, len(tools)))
        text, slow, call = "", False, None
        if scen == "quick":
            text = side_answer(text_of(body.get("instructions")), last_user, body)
            fmt = ((body.get("text") or {}).get("format") or {})
            if fmt.get("type") == "json_schema":
                text = json.dumps(json_from_schema(fmt.get("schema") or {}))
        elif scen == "final":
            text = "Done: the command finished (or was declined). Anything else?"
        elif scen == "slow":
            slow = True
        elif scen == "quote":
            text = QUOTE
        elif scen == "long":
            call = plan_tool(tools, "long")
            text = "I will run a long, quiet command."
        elif scen in ("perm", "write"):
            call = plan_tool(tools, "perm")
            text = "I will run a command that needs your permission."
        elif scen == "bg":
            call = plan_tool(tools, "bg")
            text = "I will start a long command in the background."
        elif scen == "ask" and plan_ask(tools):
            call = plan_ask(tools)
            text = "I need to ask you something first."
        else:
            text = short_answer(last_user)

        rid = nid("resp")
        created = int(time.time())
        usage = {"input_tokens": 120, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 30,
                 "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 150}
        full_text = "\n".join(SLOW_LINES) if slow else text
        out_items = []
        msg_id = nid("msg")
        if full_text:
            out_items.append({"type": "message", "id": msg_id, "role": "assistant", "status": "completed",
                              "content": [{"type": "output_text", "text": full_text, "annotations": []}]})
        fc = None
        if call:
            fc = {"type": "function_call", "id": nid("fc"), "call_id": nid("call"), "name": call[0],
                  "arguments": json.dumps(call[1]), "status": "completed"}
            out_items.append(fc)
        resp = {"id": rid, "object": "response", "created_at": created, "status": "in_progress",
                "model": model, "output": [], "usage": None}
        if not stream:
            resp.update(status="completed", output=out_items, usage=usage)
            self.send_json(resp)
            return
        self.start_sse()
        self.sse({"type": "response.created", "sequence_number": 0, "response": resp}, "response.created")
        self.sse({"type": "response.in_progress", "sequence_number": 1, "response": resp}, "response.in_progress")
        oi = 0
        if full_text:
            self.sse({"type": "response.output_item.added", "output_index": oi,
                      "item": {"type": "message", "id": msg_id, "role": "assistant", "status": "in_progress",
                               "content": []}}, "response.output_item.added")
            self.sse({"type": "response.content_part.added", "item_id": msg_id, "output_index": oi,
                      "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}},
                     "response.content_part.added")
            pieces = slow_chunks() if slow else [(text, 0)]
            for piece, delay in pieces:
                if delay:
                    time.sleep(delay)
                self.sse({"type": "response.output_text.delta", "item_id": msg_id, "output_index": oi,
                          "content_index": 0, "delta": piece}, "response.output_text.delta")
            self.sse({"type": "response.output_text.done", "item_id": msg_id, "output_index": oi,
                      "content_index": 0, "text": full_text}, "response.output_text.done")
            self.sse({"type": "response.content_part.done", "item_id": msg_id, "output_index": oi,
                      "content_index": 0, "part": out_items[0]["content"][0]}, "response.content_part.done")
            self.sse({"type": "response.output_item.done", "output_index": oi, "item": out_items[0]},
                     "response.output_item.done")
            oi += 1
        if fc:
            self.sse({"type": "response.output_item.added", "output_index": oi,
                      "item": dict(fc, arguments="", status="in_progress")}, "response.output_item.added")
            self.sse({"type": "response.function_call_arguments.delta", "item_id": fc["id"], "output_index": oi,
                      "delta": fc["arguments"]}, "response.function_call_arguments.delta")
            self.sse({"type": "response.function_call_arguments.done", "item_id": fc["id"], "output_index": oi,
                      "arguments": fc["arguments"]}, "response.function_call_arguments.done")
            self.sse({"type": "response.output_item.done", "output_index": oi, "item": fc},
                     "response.output_item.done")
        done = dict(resp, status="completed", output=out_items, usage=usage)
        self.sse({"type": "response.completed", "response": done}, "response.completed")
        self.end_chunks()

    # ------------------------------------------------------------ Gemini
    def gemini(self, body, stream):
        contents = body.get("contents") or []
        tools = []
        for t in body.get("tools") or []:
            for f in t.get("functionDeclarations") or t.get("function_declarations") or []:
                tools.append((f.get("name", ""), f.get("parametersJsonSchema") or f.get("parameters") or {}))
        last = contents[-1] if contents else {}
        parts = last.get("parts") or []
        after_tool = any("functionResponse" in p for p in parts)
        utext = "\n".join(p.get("text", "") for p in parts if isinstance(p, dict))
        gc = body.get("generationConfig") or {}
        wants_json = gc.get("responseMimeType") == "application/json"
        # a denied call's turn is dropped and the next prompt joins the same user turn as a part of
        # its own (0.61): the newest text part is what the person asked last
        texts = [p.get("text", "") for p in parts if isinstance(p, dict) and p.get("text")]
        asked = texts[-1] if texts else utext
        scen = "final" if after_tool else choose(asked, bool(tools) and not wants_json)
        model = self.path.split("/models/")[-1].split(":")[0]
        if scen == "error":
            log("POST %s api=gemini scenario=error -> 400" % self.path)
            return self.send_json(api_error("gemini"), 400)
        if self.limited("gemini", scen, utext):
            return
        if scen in ("usage_limit", "rate_limit"):
            scen = "short"
        log("POST %s api=gemini scenario=%s model=%s stream=%s tools=%d%s" % (
            self.path.split("?")[0], scen, model, stream, len(tools), " json" if wants_json else ""))
        text, slow, call = "", False, None
        if scen == "quick":
            if wants_json:
                text = json.dumps(json_from_schema(gc.get("responseJsonSchema") or gc.get("responseSchema") or {}))
            else:
                text = side_answer(text_of(body.get("systemInstruction")), utext, body)
        elif scen == "final":
            text = "Done: the command finished (or was declined). Anything else?"
        elif scen == "slow":
            slow = True
        elif scen == "quote":
            text = QUOTE
        elif scen == "bg":
            call = plan_tool(tools, "bg")
            text = "I will start a long command in the background."
        elif scen == "long":
            call = plan_tool(tools, "long")
            text = "I will run a long, quiet command."
        elif scen in ("perm", "write"):
            call = plan_tool(tools, scen)
            text = "I will run a command that needs your permission."
        elif scen == "ask" and plan_ask(tools):
            call = plan_ask(tools)
            text = "I need to ask you something first."
        else:
            text = short_answer(utext)
        usage = {"promptTokenCount": 120, "candidatesTokenCount": 30, "totalTokenCount": 150}

        def cand(parts, finish=None):
            c = {"content": {"role": "model", "parts": parts}, "index": 0}
            if finish:
                c["finishReason"] = finish
            return {"candidates": [c], "usageMetadata": usage, "modelVersion": model,
                    "responseId": nid("gresp")}

        if not stream:
            parts = [{"text": "\n".join(SLOW_LINES) if slow else text}] if (slow or text) else []
            if call:
                parts.append({"functionCall": {"name": call[0], "args": call[1]}})
            self.send_json(cand(parts, "STOP"))
            return
        self.start_sse()
        if slow:
            for piece, delay in slow_chunks():
                time.sleep(delay)
                self.sse(cand([{"text": piece}]))
        elif text:
            self.sse(cand([{"text": text}]))
        if call:
            self.sse(cand([{"functionCall": {"name": call[0], "args": call[1]}}]))
        self.sse(cand([{"text": ""}], "STOP"))
        self.end_chunks()


def main():
    global ARGS
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--scenario", default="short", choices=["short", "slow", "perm", "write"])
    ap.add_argument("--slow-seconds", type=float, default=7.0)
    ap.add_argument("--long-seconds", type=int, default=32, help="how long the 'long tool' command runs")
    ap.add_argument("--limit-reset-minutes", type=int, default=150,
                    help="usage limit: how far ahead the reset time is")
    ap.add_argument("--limit-retries", type=int, default=2,
                    help="rate limit: how many requests of a prompt are answered 429 before one goes through")
    ap.add_argument("--dump", metavar="DIR", help="save every request body as DIR/<n>.json (debugging)")
    ap.add_argument("--project", metavar="DIR", help="the client's project folder (for absolute paths)")
    ARGS = ap.parse_args()
    srv = ThreadingHTTPServer(("127.0.0.1", ARGS.port), Handler)
    srv.daemon_threads = True
    print("PORT %d" % srv.server_address[1], flush=True)
    log("mock model listening on 127.0.0.1:%d scenario=%s" % (srv.server_address[1], ARGS.scenario))
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
