/**
 * gbrain's CLI entry point, as gbrain-evals' runners call it (`bun src/cli.ts eval brainbench ...`,
 * from the checkout they are given): every argument goes unchanged to BrainBench's own CLI, whose
 * `eval brainbench` is gbrain's invocation.  Its stdout, stderr and exit code are the runner's.
 *
 * Which CLI: $BRAINBENCH_CLI (a command, split on spaces), else this checkout's .venv/bin/brainbench,
 * else `brainbench` on PATH.  The corpus is this checkout's (evals/brainbench/fixtures links to it),
 * unless $BRAINBENCH_PROJECT names another project.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { constants } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const facade = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const checkout = resolve(facade, "..");

function brainbench(): string[] {
  const named = (process.env.BRAINBENCH_CLI ?? "").split(" ").filter((part) => part !== "");
  if (named.length > 0) return named;
  const venv = join(checkout, ".venv", "bin", "brainbench");
  return [existsSync(venv) ? venv : "brainbench"];
}

const [command, ...prefix] = brainbench();
const env = { ...process.env, BRAINBENCH_PROJECT: process.env.BRAINBENCH_PROJECT ?? checkout };
const run = spawnSync(command, [...prefix, ...process.argv.slice(2)], { stdio: "inherit", env });
if (run.error) {
  process.stderr.write(`gbrain-facade: cannot run ${command}: ${run.error.message} ` +
    "(bash scripts/bootstrap makes .venv/bin/brainbench, or set BRAINBENCH_CLI)\n");
  process.exit(2);
}
// A signal that ended BrainBench ends the caller's view of it the way a shell reports it.
const signal = run.signal ? (constants.signals as Record<string, number>)[run.signal] ?? 0 : 0;
process.exit(run.status ?? 128 + signal);
