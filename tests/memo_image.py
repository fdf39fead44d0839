"""The one-table "memo" brain of the shell images the seed-contract tests build (psql and jq on a
Debian base): its table, the seed step that copies a seed document's pages into it, and a hook
that answers from it.  Each test adds what it probes around these (a seed that fails, hangs or
floods on purpose)."""

from __future__ import annotations

CREATE_TABLE = "CREATE TABLE memo (source text, slug text, title text, body text, PRIMARY KEY (source, slug))"

# The seed step, for a shell script that has read the seed document into $doc.
SEED_PAGES = """printf '%s\\n' "INSERT INTO memo SELECT p->>'source', p->>'slug', p->>'title', p->>'body'
  FROM json_array_elements((:'doc')::json->'pages') p
  ON CONFLICT (source, slug) DO UPDATE SET title = EXCLUDED.title, body = EXCLUDED.body;" |
  psql "$BRAINBENCH_DATABASE_URL" -X -q -v ON_ERROR_STOP=1 -v doc="$doc" >/dev/null
"""

# Points at every page of the seam's source whose title the prompt names.
HOOK = """#!/bin/sh
set -eu
prompt=$(jq -r 'if type == "object" then (.prompt // "") | .[0:4000] else "" end' 2>/dev/null || true)
[ -n "$prompt" ] || exit 0
found=$(printf '%s\\n' "SELECT string_agg('→ \\`' || slug || '\\`', ' ' ORDER BY slug) FROM memo
  WHERE source = :'src' AND position(lower(title) IN lower(:'prompt')) > 0;" |
  psql "$BRAINBENCH_DATABASE_URL" -X -q -t -A -v ON_ERROR_STOP=1 -v src="$BRAINBENCH_SOURCE" -v prompt="$prompt")
[ -n "$found" ] || exit 0
jq -cn --arg c "$found" '{hookSpecificOutput: {hookEventName: "UserPromptSubmit", additionalContext: $c}}'
"""
