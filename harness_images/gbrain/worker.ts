// The warm worker: one bun process per seam container that has gbrain's modules loaded and runs our
// tools (seed, write-back, operations) for any fixture's database, so that each call costs its own
// work and not a bun start with gbrain's module load (~0.3 CPU-s, about half a second of wall).
// bb-gbrain starts it on first use and talks to it through client.ts over a Unix socket in the
// container's own /tmp; a call that finds it busy or down runs the tool in a process of its own, as
// before, with the same code.
//
// One call at a time: a tool reads its brain from the environment (GBRAIN_HOME, BRAINBENCH_SOURCE),
// which is process-wide, and every call connects its own engine and disconnects it before the next
// (withEngine also refuses an engine on another database than the call's).
//
// Request: one line of JSON {tool, env, stdin}; answer: one line {status, stdout, stderr}.
import { createServer } from "node:net";
import { chmodSync, rmSync } from "node:fs";
import { CALL_ENV, runTool, type Tool } from "./engine.ts";
import { operations } from "./operations.ts";
import { seed } from "./seed.ts";
import { writeBack } from "./write-back.ts";

const TOOLS: Record<string, Tool> = { seed, "write-back": writeBack, operations };
const [socketPath] = process.argv.slice(2);
if (!socketPath) {
  process.stderr.write("usage: bun worker.ts SOCKET\n");
  process.exit(2);
}

// Load what the tools import lazily now, once, instead of in the first call.
const GBRAIN = process.env.BB_GBRAIN_SRC ?? "/opt/gbrain";
for (const mod of ["src/core/config.ts", "src/core/ai/build-gateway-config.ts", "src/core/ai/gateway.ts",
                   "src/core/engine-factory.ts", "src/core/postgres-engine.ts", "src/eval/brainbench/seed.ts",
                   "src/core/import-file.ts", "src/commands/extract-conversation-facts.ts",
                   "src/core/entities/resolve.ts"]) {
  await import(`${GBRAIN}/${mod}`);
}

async function answer(line: string): Promise<string> {
  let req: any;
  try {
    req = JSON.parse(line);
  } catch {
    return JSON.stringify({ status: 2, stdout: "", stderr: "bb-gbrain worker: the request is not JSON\n" });
  }
  const tool = TOOLS[req?.tool];
  if (!tool || typeof req.stdin !== "string") {
    return JSON.stringify({ status: 2, stdout: "", stderr: `bb-gbrain worker: no tool ${JSON.stringify(req?.tool)}\n` });
  }
  for (const name of CALL_ENV) {
    const value = req.env?.[name];
    if (typeof value === "string") process.env[name] = value;
    else delete process.env[name];
  }
  let stdout = "";
  let stderr = "";
  const status = await runTool(tool, req.stdin, { out: (t) => { stdout += t; }, err: (t) => { stderr += t; } });
  return JSON.stringify({ status, stdout, stderr });
}

let queue: Promise<void> = Promise.resolve();
rmSync(socketPath, { force: true });
const server = createServer((conn) => {
  let buffered = "";
  let taken = false;
  conn.setEncoding("utf8");
  conn.on("error", () => {});
  conn.on("data", (chunk: string) => {
    if (taken) return;
    buffered += chunk;
    const end = buffered.indexOf("\n");
    if (end < 0) return;
    taken = true;
    const line = buffered.slice(0, end);
    queue = queue.then(async () => {
      conn.end(`${await answer(line)}\n`);
    });
  });
});
server.listen(socketPath, () => {
  chmodSync(socketPath, 0o600);
  process.stderr.write(`bb-gbrain worker: listening on ${socketPath}\n`);
});
