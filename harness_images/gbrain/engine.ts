// gbrain's engine, connected the way gbrain's CLI connects it (config.json from GBRAIN_HOME, written
// by bb-gbrain), shared by seed.ts, write-back.ts and operations.ts.  Only this glue is ours.
export const GBRAIN = process.env.BB_GBRAIN_SRC ?? "/opt/gbrain";

export function failWith(tool: string): (message: string) => never {
  return (message: string): never => {
    process.stderr.write(`bb-gbrain ${tool}: ${message}\n`);
    process.exit(1);
  };
}

// Runs ``work`` with a connected engine and disconnects after, whatever happens.
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
    return await work(engine);
  } finally {
    await engine.disconnect().catch(() => {});
  }
}

export async function readJson(fail: (m: string) => never, what: string): Promise<any> {
  const raw = await Bun.stdin.text();
  try {
    return JSON.parse(raw);
  } catch (e) {
    return fail(`stdin is not a JSON ${what} (${(e as Error).message})`);
  }
}
