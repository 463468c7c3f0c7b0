#!/usr/bin/env bash
# Smoke test of tools/mock_model.py with curl: every API, each scenario's shape. Exits non-zero on a miss.
#   tools/test_mock.sh
set -u
cd "$(dirname "$0")"
out=$(mktemp); err=$(mktemp)
python3 mock_model.py --port 0 --slow-seconds 1 >"$out" 2>"$err" & pid=$!
trap 'kill $pid 2>/dev/null; rm -f "$out" "$err"' EXIT
for _ in $(seq 50); do grep -q '^PORT' "$out" && break; sleep 0.1; done
P=$(awk '/^PORT/{print $2}' "$out"); B=http://127.0.0.1:$P
fail=0
check() { # name, expected substring, curl args…
  local name=$1 want=$2; shift 2
  if curl -sN --max-time 10 "$@" | grep -q -- "$want"; then echo "ok   $name"; else echo "FAIL $name (wanted $want)"; fail=1; fi
}
SH='{"type":"function","function":{"name":"run_shell_command","parameters":{"type":"object","properties":{"command":{"type":"string"}}}}}'
check anthropic-stream-perm '"name": "Bash"' $B/v1/messages -d '{"stream":true,"tools":[{"name":"Bash","input_schema":{}}],"messages":[{"role":"user","content":"perm: run it"}]}'
check anthropic-stream-slow 'message_stop' $B/v1/messages -d '{"stream":true,"tools":[{"name":"Bash","input_schema":{}}],"messages":[{"role":"user","content":"a slow answer"}]}'
check anthropic-after-tool 'Done: the command' $B/v1/messages -d '{"tools":[{"name":"Bash","input_schema":{}}],"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"x","content":"ok"}]}]}'
check anthropic-title 'Mock task' $B/v1/messages -d '{"system":"Return JSON with a single \"title\" field.","messages":[{"role":"user","content":"x"}]}'
check anthropic-count-tokens 'input_tokens' $B/v1/messages/count_tokens -d '{"messages":[]}'
check chat-stream-tool '"run_shell_command"' $B/v1/chat/completions -d '{"stream":true,"tools":['"$SH"'],"messages":[{"role":"user","content":"perm please"}]}'
check chat-stream-done '\[DONE\]' $B/v1/chat/completions -d '{"stream":true,"tools":['"$SH"'],"messages":[{"role":"user","content":"hello"}]}'
check chat-nonstream-final 'Done: the command' $B/v1/chat/completions -d '{"tools":['"$SH"'],"messages":[{"role":"user","content":"x"},{"role":"tool","content":"ok"}]}'
check chat-aider-shell '```bash' $B/v1/chat/completions -d '{"messages":[{"role":"system","content":"Use SEARCH/REPLACE blocks"},{"role":"user","content":"perm: run"}]}'
check responses-escalated 'require_escalated' $B/v1/responses -d '{"stream":true,"tools":[{"type":"function","name":"exec_command","parameters":{"type":"object","properties":{"cmd":{"type":"string"}}}}],"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"perm: run"}]}]}'
check responses-completed 'response.completed' $B/v1/responses -d '{"stream":true,"input":"hello"}'
check gemini-stream-call 'functionCall' "$B/v1beta/models/m:streamGenerateContent?alt=sse" -d '{"contents":[{"role":"user","parts":[{"text":"perm"}]}],"tools":[{"functionDeclarations":[{"name":"run_shell_command","parametersJsonSchema":{"type":"object","properties":{"command":{"type":"string"}}}}]}]}'
check gemini-json-next-speaker 'next_speaker' $B/v1beta/models/m:generateContent -d '{"contents":[{"role":"user","parts":[{"text":"x"}]}],"generationConfig":{"responseMimeType":"application/json","responseJsonSchema":{"type":"object","properties":{"next_speaker":{"type":"string"}}}}}'
check gemini-count-tokens 'totalTokens' $B/v1beta/models/m:countTokens -d '{}'
check anthropic-error 'invalid_request_error' $B/v1/messages -d '{"tools":[{"name":"Bash","input_schema":{}}],"messages":[{"role":"user","content":"fail please"}]}'
check chat-error 'mock_error' $B/v1/chat/completions -d '{"tools":['"$SH"'],"messages":[{"role":"user","content":"fail please"}]}'
check gemini-error 'INVALID_ARGUMENT' "$B/v1beta/models/m:streamGenerateContent?alt=sse" -d '{"contents":[{"role":"user","parts":[{"text":"fail please"}]}],"tools":[{"functionDeclarations":[{"name":"run_shell_command","parametersJsonSchema":{"type":"object","properties":{"command":{"type":"string"}}}}]}]}'
check anthropic-long 'time.sleep(32)' $B/v1/messages -d '{"tools":[{"name":"Bash","input_schema":{}}],"messages":[{"role":"user","content":"a long tool run"}]}'
check responses-long 'time.sleep(32)' $B/v1/responses -d '{"stream":true,"tools":[{"type":"function","name":"exec_command","parameters":{"type":"object","properties":{"cmd":{"type":"string"}}}}],"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"a long tool run"}]}]}'
check chat-long 'time.sleep(32)' $B/v1/chat/completions -d '{"stream":true,"tools":['"$SH"'],"messages":[{"role":"user","content":"a long tool run"}]}'

check anthropic-usage-limit 'rate_limit_error' $B/v1/messages -d '{"tools":[{"name":"Bash","input_schema":{}}],"messages":[{"role":"user","content":"usage limit please"}]}'
check anthropic-usage-limit-headers 'anthropic-ratelimit-unified-reset' -i $B/v1/messages -d '{"tools":[{"name":"Bash","input_schema":{}}],"messages":[{"role":"user","content":"usage limit please"}]}'
check responses-usage-limit 'usage_limit_reached' $B/v1/responses -d '{"tools":[{"type":"function","name":"exec_command","parameters":{}}],"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"usage limit"}]}]}'
check chat-usage-limit 'insufficient_quota' $B/v1/chat/completions -d '{"tools":['"$SH"'],"messages":[{"role":"user","content":"usage limit please"}]}'
check gemini-usage-limit 'RESOURCE_EXHAUSTED' "$B/v1beta/models/m:streamGenerateContent?alt=sse" -d '{"contents":[{"role":"user","parts":[{"text":"usage limit"}]}],"tools":[{"functionDeclarations":[{"name":"run_shell_command","parametersJsonSchema":{}}]}]}'
RL='{"tools":['"$SH"'],"messages":[{"role":"user","content":"rate limit please"}]}'
check chat-rate-limit-1 'rate_limit_exceeded' $B/v1/chat/completions -d "$RL"
check chat-rate-limit-2 'rate_limit_exceeded' $B/v1/chat/completions -d "$RL"
check chat-rate-limit-then-through 'Mock answer' $B/v1/chat/completions -d "$RL"
check gemini-ask-user '"ask_user"' "$B/v1beta/models/m:streamGenerateContent?alt=sse" -d '{"contents":[{"role":"user","parts":[{"text":"ask me a question"}]}],"tools":[{"functionDeclarations":[{"name":"ask_user","parametersJsonSchema":{"type":"object","properties":{"questions":{"type":"array","items":{"type":"object","properties":{"question":{"type":"string"},"options":{"type":"array","items":{"type":"object","properties":{"label":{"type":"string"}}}}}}}}}}]}]}'
check chat-question-tool 'Which greeting' $B/v1/chat/completions -d '{"tools":[{"type":"function","function":{"name":"question","parameters":{"type":"object","properties":{"questions":{"type":"array","items":{"type":"object","properties":{"question":{"type":"string"}}}}}}}}],"messages":[{"role":"user","content":"ask me a question"}]}'
check models-list 'mock-model' $B/v1/models
check quote-scenario 'only a quote' $B/v1/chat/completions -d '{"tools":['"$SH"'],"messages":[{"role":"user","content":"quote a permission prompt"}]}'
TERM_SH='{"type":"function","function":{"name":"terminal","parameters":{"type":"object","properties":{"command":{"type":"string"},"security_risk":{"type":"string","enum":["LOW","MEDIUM","HIGH"]}},"required":["command","security_risk"]}}}'
check chat-security-risk-high 'HIGH' $B/v1/chat/completions -d '{"tools":['"$TERM_SH"'],"messages":[{"role":"user","content":"perm: run it"}]}'
t0=$(date +%s.%N)
check chat-nonstream-slow 'end of the slow answer' $B/v1/chat/completions -d '{"tools":['"$SH"'],"messages":[{"role":"user","content":"a slow answer"}]}'
if awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{exit !(b-a >= 0.9)}'; then echo "ok   chat-nonstream-slow-waits"
else echo "FAIL chat-nonstream-slow-waits (answered before --slow-seconds)"; fail=1; fi
exit $fail
