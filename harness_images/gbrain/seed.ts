// BrainBench seed contract v1 for gbrain: read one SeedDocument (stdin) and seed the brain
// at BRAINBENCH_DATABASE_URL with gbrain's OWN bench seeding (src/eval/brainbench/seed.ts:
// importFromContent with embeddings off for pages, insertFact with a NULL embedding for
// facts), in fixture order.  Only the mapping from our document to gbrain's fixture shape
// is ours; the engine is connected the way gbrain's CLI connects it (config.json from
// GBRAIN_HOME, written by bb-gbrain).  Exit 0 on success, 1 with one line on stderr otherwise.
// Run alone (`bun seed.ts`) or by the warm worker (worker.ts), which imports `seed`.
import { GBRAIN, ToolFailure, failWith, parseJson, runAlone, withEngine, type Io } from "./engine.ts";

type Doc = {
  schema_version: number;
  fixture_id: string;
  active_source: string;
  sources: string[];
  pages: { slug: string; source: string; content: string }[];
  facts: { source: string; fact: string; entity_slug: string | null; provenance: string;
           source_session?: string | null }[];
};

export async function seed(input: string, io: Io): Promise<void> {
  const fail = failWith("seed");
  const doc: Doc = parseJson(fail, input, "seed document");
  if (doc?.schema_version !== 1) fail(`unsupported schema_version ${JSON.stringify(doc?.schema_version)}`);
  for (const key of ["sources", "pages", "facts"] as const) {
    if (!Array.isArray(doc[key])) fail(`field ${key} must be a list`);
  }

  // gbrain's BrainBenchFixture, as its own fixture loader would hand it to seedBrain.
  const fixture = {
    fixture_id: doc.fixture_id,
    active_source: doc.active_source,
    sources: doc.sources,
    seed_pages: doc.pages.map((p) => ({ slug: p.slug, content: p.content, source_id: p.source })),
    seed_facts: doc.facts.map((f) => ({
      fact: f.fact,
      entity_slug: f.entity_slug ?? null,
      source: f.provenance,
      source_session: f.source_session ?? null,
      source_id: f.source,
    })),
    turns: [],
  };

  const { seedBrain } = await import(`${GBRAIN}/src/eval/brainbench/seed.ts`);
  await withEngine(fail, async (engine) => {
    try {
      const out = await seedBrain(engine, fixture);
      io.err(`bb-gbrain seed: ${doc.fixture_id}: ${out.pages} pages, ${out.facts} facts\n`);
    } catch (e) {
      if (e instanceof ToolFailure) throw e;
      fail((e as Error).message.split("\n")[0]);
    }
  });
}

if (import.meta.main) await runAlone(seed);
