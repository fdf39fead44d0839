// gbrain's engine, connected the way gbrain's CLI connects it (config.json from GBRAIN_HOME, written
// by bb-gbrain), shared by our tools (seed.ts, write-back.ts, operations.ts), whether each runs in a
// process of its own or in the warm worker (worker.ts).  Only this glue is ours.
export const GBRAIN = process.env.BB_GBRAIN_SRC ?? "/opt/gbrain";
// The only variables a tool call carries to the warm worker (client.ts sends them, worker.ts sets
// them): what bb-gbrain gives a tool.
export const CALL_ENV = ["GBRAIN_HOME", "BRAINBENCH_DATABASE_URL", "BRAINBENCH_SOURCE", "BB_GBRAIN_VERSION"];

// A tool's answer: what it printed and its exit status (0, or 1 with one line on stderr).
export type Io = { out: (text: string) => void; err: (text: string) => void };
export type Tool = (input: string, io: Io) => Promise<void>;

// A tool's failure: thrown, so that the warm worker survives it; its message is the stderr line.
export class ToolFailure extends Error {}

export function failWith(tool: string): (message: string) => never {
  return (message: string): never => {
    throw new ToolFailure(`bb-gbrain ${tool}: ${message}`);
  };
}

// The database name of a postgres URL ("" if it has none).
function databaseOf(url: string): string {
  try {
    return decodeURIComponent(new URL(url).pathname.replace(/^\//, ""));
  } catch {
    return "";
  }
}

// Runs ``work`` with a connected engine and disconnects after, whatever happens.  The engine must be
// on the database the config names: gbrain's module-wide connection is reused when one is still open
// (it warns and keeps the old URL), and a fixture written into another fixture's brain would be a
// leak, so a mismatch is a failure, never a warning.
export async function withEngine<T>(fail: (m: string) => never, work: (engine: any) => Promise<T>): Promise<T> {
  const { loadConfig, toEngineConfig } = await import(`${GBRAIN}/src/core/config.ts`);
  const { buildGatewayConfig } = await import(`${GBRAIN}/src/core/ai/build-gateway-config.ts`);
  const { configureGateway } = await import(`${GBRAIN}/src/core/ai/gateway.ts`);
  const { createEngine } = await import(`${GBRAIN}/src/core/engine-factory.ts`);
  const config = loadConfig();
  if (!config) fail("no gbrain config (GBRAIN_HOME/.gbrain/config.json)");
  configureGateway(buildGatewayConfig(config));
  const engine = await createEngine(toEngineConfig(config));
  try {
    await engine.connect(toEngineConfig(config));
    const wanted = databaseOf(config.database_url ?? "");
    const [row] = await engine.executeRaw("SELECT current_database() AS db");
    if (wanted && row?.db !== wanted) fail(`connected to database ${row?.db}, not ${wanted}`);
    return await work(engine);
  } finally {
    await engine.disconnect().catch(() => {});
  }
}

export function parseJson(fail: (m: string) => never, raw: string, what: string): any {
  try {
    return JSON.parse(raw);
  } catch (e) {
    return fail(`stdin is not a JSON ${what} (${(e as Error).message})`);
  }
}

// Runs one tool on this process's stdin and exits with its status: the cold path, a bun start per call.
export async function runAlone(tool: Tool): Promise<never> {
  const status = await runTool(tool, await Bun.stdin.text(), {
    out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t),
  });
  process.exit(status);
}

// A tool's exit status; its failure line goes to ``io.err``.
export async function runTool(tool: Tool, input: string, io: Io): Promise<number> {
  try {
    await tool(input, io);
    return 0;
  } catch (e) {
    const line = e instanceof ToolFailure ? e.message : `bb-gbrain: ${(e as Error)?.message?.split("\n")[0] ?? e}`;
    io.err(`${line}\n`);
    return 1;
  }
}
