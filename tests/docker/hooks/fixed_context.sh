#!/bin/sh
# A "production" hook that is nothing but a shell script: it ignores the prompt and
# always injects the same context (used to test the image swap).
cat >/dev/null
printf '%s' '{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"fixed production context"}}'
