// BrainBench seed contract v2 write_back for gbrain: one WriteBackDocument on stdin, written into
// the brain at BRAINBENCH_DATABASE_URL by gbrain's OWN conversation-to-memory pipeline, exactly as
// gbrain's bench drives it (src/eval/brainbench/metrics/write-back.ts): the rendered conversation
// page goes through importFromContent (embeddings off), then runExtractConversationFactsCore runs
// gbrain's segmentation, insertFacts batching, dedup, provenance stamping and audit rows with an
// injected extractor.  The injected extractor is the gold one: for each segment gbrain hands it,
// the facts our document carries for the segment with the same text (ours is a port of gbrain's
// segmenter, so the texts agree; a segment that matches none gets no facts, and the lost facts
// fail honestly).  With "llm": true nothing is injected and gbrain's own extractor runs.
// Run alone (`bun write-back.ts`) or by the warm worker (worker.ts), which imports `writeBack`.
import { GBRAIN, ToolFailure, failWith, parseJson, runAlone, withEngine, type Io } from "./engine.ts";

export async function writeBack(input: string, io: Io): Promise<void> {
  const fail = failWith("write-back");
  const doc = parseJson(fail, input, "write-back document");
  if (doc?.schema_version !== 1) fail(`unsupported schema_version ${JSON.stringify(doc?.schema_version)}`);
  for (const key of ["page_slug", "page", "source"] as const) {
    if (typeof doc[key] !== "string") fail(`field ${key} must be a string`);
  }
  if (!Array.isArray(doc.segments)) fail("field segments must be a list");

  const { importFromContent } = await import(`${GBRAIN}/src/core/import-file.ts`);
  const { runExtractConversationFactsCore } = await import(`${GBRAIN}/src/commands/extract-conversation-facts.ts`);

  const bySegmentText = new Map<string, any[]>();
  for (const seg of doc.segments) {
    bySegmentText.set(seg.text, [...(bySegmentText.get(seg.text) ?? []), ...(seg.facts ?? [])]);
  }
  let unmatched = 0;
  // gbrain's ExtractedFact, as its bench's gold extractor builds it.
  const goldExtractor = async (segment: { turnText: string; source: string }) => {
    const facts = bySegmentText.get(segment.turnText);
    if (facts === undefined) {
      unmatched++;
      return [];
    }
    return facts.map((f) => ({
      fact: f.fact, kind: f.kind ?? "fact", entity_slug: f.entity_slug ?? null, source: segment.source,
      confidence: f.confidence ?? 1.0, notability: f.notability ?? "medium", embedding: null,
    }));
  };

  try {
    await withEngine(fail, async (engine) => {
      const imported = await importFromContent(engine, doc.page_slug, doc.page, { noEmbed: true, sourceId: doc.source });
      if (imported.status !== "imported") {
        fail(`conversation page import status=${imported.status}${imported.error ? ` (${imported.error})` : ""}`);
      }
      const out = await runExtractConversationFactsCore(engine, {
        sourceId: doc.source, slug: doc.page_slug, types: ["conversation"], overrideDisabled: true, sleepMs: 0,
        ...(doc.llm ? {} : { extractor: goldExtractor }),
      });
      io.err(`bb-gbrain write-back: ${doc.fixture_id}: ${out.segments_processed} segments, `
        + `${out.facts_inserted} facts inserted${unmatched ? `, ${unmatched} segment(s) matching no document segment` : ""}\n`);
      if (out.pages_failed) fail(`gbrain's pipeline failed the page (${JSON.stringify(out)})`);
    });
  } catch (e) {
    if (e instanceof ToolFailure) throw e;
    fail((e as Error).message.split("\n")[0]);
  }
}

if (import.meta.main) await runAlone(writeBack);
