#!/usr/bin/env bash
# BrainBench regression gate for CI (spec §10.4).
#
# Compares HEAD's run against the baseline on the MAIN branch -- never the PR's own
# copy, so a change cannot approve itself -- and passes the bench's exit code
# through: 0 pass, 1 regression, 2 inconclusive / invalid run.
#
# Env:
#   BRAINBENCH_MAIN_REF  ref holding main's baseline (default: origin/main, else main)
#   BRAINBENCH_OUT       keep the full result JSON here (default: a temp file)
#   GITHUB_STEP_SUMMARY  when set, the markdown delta (main -> HEAD) is appended to it
#   BRAINBENCH           the CLI to call (default: brainbench)
# Extra arguments are passed to `brainbench run` (e.g. --fixtures DIR --gold DIR).
set -euo pipefail

# BRAINBENCH may be a command line, e.g. "python -m brainbench.gate.cli".
read -r -a bench <<<"${BRAINBENCH:-brainbench}"
args=(gate)
if [[ -n "${BRAINBENCH_MAIN_REF:-}" ]]; then
  args+=(--main-ref "$BRAINBENCH_MAIN_REF")
fi
if [[ -n "${BRAINBENCH_OUT:-}" ]]; then
  args+=(--out "$BRAINBENCH_OUT")
fi
if [[ -n "${GITHUB_STEP_SUMMARY:-}" ]]; then
  args+=(--delta "$GITHUB_STEP_SUMMARY")
fi

# exec: the gate's exit code is the script's exit code.
exec "${bench[@]}" "${args[@]}" "$@"
