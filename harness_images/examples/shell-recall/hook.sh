#!/bin/sh
# shell-recall: a BrainBench hook written in POSIX sh + psql + jq (no Python).
#
# Policy: a page is recalled when its title, or one of its aliases, appears in the
# prompt as whole words (case- and punctuation-insensitive), in the active source
# only; at most three pages, the longest names first.  That is all: no transcript
# reading, no dedupe, no budget.  See docs/HOOK_AUTHORS.md.
#
# Contract (docs/HOOK_AUTHORS.md): one JSON object on stdin until EOF; a
# {"hookSpecificOutput":{...}} object or nothing on stdout; exit 0 on every input
# (fail-open), exit 75 when the brain cannot be reached.
set -u
SQL="${SHELL_RECALL_SQL:-/usr/local/share/shell-recall/recall.sql}"
# The prompt travels to psql as a command-line variable, which Linux caps at
# 128 KiB per argument; the first 8 KiB are plenty to spot a name.
MAX_PROMPT=8192

input="$(cat)"
[ -n "$input" ] || exit 0
# Anything but a JSON object with a non-empty string prompt is silence (fail-open).
fields="$(printf '%s' "$input" | jq -r --argjson n "$MAX_PROMPT" '
  select(type == "object" and (.prompt | type) == "string" and .prompt != "")
  | [(.hook_event_name // "UserPromptSubmit" | tostring), (.prompt[:$n] | gsub("[[:cntrl:]]"; " "))]
  | @tsv' 2>/dev/null)" || exit 0
[ -n "$fields" ] || exit 0
event="$(printf '%s' "$fields" | cut -f1)"
prompt="$(printf '%s' "$fields" | cut -f2-)"
[ "$event" = "UserPromptSubmit" ] || exit 0

if [ -z "${BRAINBENCH_DATABASE_URL:-}" ]; then
  echo "shell-recall: BRAINBENCH_DATABASE_URL is not set: brain unavailable" >&2
  exit 75
fi
err="$(mktemp)" || exit 0
trap 'rm -f "$err"' EXIT
out="$(PGCONNECT_TIMEOUT=5 psql "$BRAINBENCH_DATABASE_URL" -X -q -t -A -v ON_ERROR_STOP=1 \
  -v prompt="$prompt" -v source="${BRAINBENCH_SOURCE:-default}" -v event="$event" -f "$SQL" 2>"$err")"
rc=$?
if [ "$rc" -eq 2 ]; then  # psql: the connection failed
  echo "shell-recall: brain unavailable: $(head -n 1 "$err")" >&2
  exit 75
elif [ "$rc" -ne 0 ]; then  # a query error is our bug, never the user's prompt: stay silent
  echo "shell-recall: query failed: $(head -n 1 "$err")" >&2
  exit 0
fi
[ -z "$out" ] || printf '%s\n' "$out"
exit 0
