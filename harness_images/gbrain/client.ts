// bb-gbrain's side of the warm worker (worker.ts): sends one tool call (its stdin and the env the tool
// reads), prints the worker's answer as the tool would have, and exits with its status.  It imports
// nothing of gbrain (engine.ts loads gbrain only when a tool asks for it), so it starts in bun's own ~10 ms.  Exit 111: the worker could not be reached and
// nothing was sent; bb-gbrain then runs the tool in a process of its own.
import { connect } from "node:net";
import { CALL_ENV } from "./engine.ts";

const [socketPath, tool] = process.argv.slice(2);
const env: Record<string, string> = {};
for (const name of CALL_ENV) {
  const value = process.env[name];
  if (value !== undefined) env[name] = value;
}
const request = JSON.stringify({ tool, env, stdin: await Bun.stdin.text() }) + "\n";

let sent = false;
let reply = "";
const conn = connect(socketPath, () => {
  sent = true;
  conn.write(request);
});
conn.setEncoding("utf8");
conn.on("data", (chunk: string) => { reply += chunk; });
conn.on("error", (e) => {
  if (!sent) process.exit(111);
  process.stderr.write(`bb-gbrain: the warm worker failed mid-call (${e.message})\n`);
  process.exit(1);
});
conn.on("close", () => {
  let answer: any;
  try {
    answer = JSON.parse(reply);
  } catch {
    if (!sent) process.exit(111);
    process.stderr.write("bb-gbrain: the warm worker ended mid-call without an answer\n");
    process.exit(1);
  }
  process.stdout.write(answer.stdout ?? "");
  process.stderr.write(answer.stderr ?? "");
  process.exit(Number.isInteger(answer.status) ? answer.status : 1);
});
