// BrainBench's openclaw seam for gbrain: gbrain's OpenClaw context engine (src/core/context-engine.ts,
// `gbrain-context`), called as OpenClaw calls it once per turn: `assemble` with the session's
// messages, the turn's prompt last as a user message.  What OpenClaw prepends to the system prompt,
// `systemPromptAddition`, is the turn's context, answered in the hook shape the seam reads.
//
// Only the mapping is ours.  OpenClaw keeps a context engine's earlier additions in the system
// prompt, not in the message list, so the runner's earlier injected blocks (role "system", source
// "memory") are left out of `messages`: the engine sees user and assistant turns only, exactly its
// production 4-turn mixed-role window (docs/GBRAIN.md, openclaw seam).  The engine resolves pointers
// through the running `gbrain serve` bb-gbrain started, or directly from Postgres.
import { GBRAIN } from "./engine.ts";

const raw = await Bun.stdin.text();
let msg: any;
try {
  msg = JSON.parse(raw);
} catch {
  process.stderr.write("bb-gbrain openclaw: stdin is not JSON; staying silent\n");
  process.exit(0);
}
const prompt = typeof msg?.prompt === "string" ? msg.prompt : "";
const history = Array.isArray(msg?.messages) ? msg.messages : [];
const messages = [
  ...history
    .filter((m: any) => (m?.role === "user" || m?.role === "assistant") && typeof m.content === "string")
    .map((m: any) => ({ role: m.role, content: m.content })),
  { role: "user", content: prompt },
];

const { createGBrainContextEngine } = await import(`${GBRAIN}/src/core/context-engine.ts`);
const engine = createGBrainContextEngine({ workspaceDir: typeof msg?.cwd === "string" ? msg.cwd : process.cwd() });
const out = await engine.assemble({ sessionId: msg?.session_id, sessionKey: msg?.session_id, messages });
const text = out?.systemPromptAddition ?? "";
if (text) {
  process.stdout.write(JSON.stringify({
    hookSpecificOutput: { hookEventName: msg?.hook_event_name ?? "UserPromptSubmit", additionalContext: text },
  }) + "\n");
}
process.exit(0);
