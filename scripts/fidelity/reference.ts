// Derive the expected values of tests/data/fidelity30 from gbrain's own code (issue 30).
//
//   bun scripts/fidelity/reference.ts GBRAIN_DIR CASES_JSON OUT_JSON
//
// Every expected value is what gbrain's modules return for the case's input, run under bun
// (TZ=UTC): pages go through importFromContent into gbrain's in-memory PGLite brain, one
// page per fresh brain, and are read back from its tables.  Nothing here re-implements a
// rule; run through scripts/gen-fidelity-reference.
const [gbrainDir, casesPath, outPath] = process.argv.slice(2);
if (!gbrainDir || !casesPath || !outPath) throw new Error('usage: reference.ts GBRAIN_DIR CASES_JSON OUT_JSON');
const g = (p: string) => import(`${gbrainDir}/${p}`);

const { createBenchmarkBrain, resetTables } = await g('src/eval/longmemeval/harness.ts');
const { importFromContent } = await g('src/core/import-file.ts');
const { safeSynopsis } = await g('src/core/context/retrieval-reflex.ts');
const { extractCandidates } = await g('src/core/context/entity-salience.ts');
const { normalizeAlias } = await g('src/core/search/alias-normalize.ts');
const { parseConversation } = await g('src/core/conversation-parser/parse.ts');
const { splitIntoSegments, renderSegmentForExtraction } = await g('src/commands/extract-conversation-facts.ts');

const cases = JSON.parse(await Bun.file(casesPath).text());
const out: Record<string, unknown> = {};

// --- pages: parse, hash, title, type, frontmatter, aliases, synopsis ------------------------
const engine = await createBenchmarkBrain();
const pages: unknown[] = [];
for (const c of cases.pages) {
  await resetTables(engine);
  const rec: Record<string, unknown> = { id: c.id };
  try {
    const r = await importFromContent(engine, c.slug, c.content, { noEmbed: true, sourceId: 'default' });
    rec.status = r.status;
  } catch (e) {
    rec.status = 'throw';
  }
  const rows = await engine.executeRaw(
    `SELECT slug, title, type, frontmatter, content_hash, compiled_truth, timeline, lower(title) AS lower_title FROM pages`,
  );
  if (rows.length === 1) {
    const r = rows[0] as Record<string, any>;
    for (const k of ['slug', 'title', 'type', 'frontmatter', 'content_hash', 'compiled_truth', 'timeline', 'lower_title']) rec[k] = r[k];
    rec.synopsis = safeSynopsis({ ...r, source_id: 'default' });
    rec.aliases = (await engine.executeRaw(`SELECT alias_norm FROM page_aliases ORDER BY alias_norm COLLATE "C"`))
      .map((a: any) => a.alias_norm);
  }
  pages.push(rec);
}
out.pages = pages;

// --- SQL lower() and ILIKE in gbrain's PGLite ----------------------------------------------
out.sql_lower = [];
for (const s of cases.sql_lower) {
  const r = (await engine.executeRaw(`SELECT lower($1::text) AS l`, [s]))[0] as { l: string };
  (out.sql_lower as unknown[]).push(r.l);
}
out.ilike = [];
for (const [text, kw] of cases.ilike) {
  const esc = (kw as string).replace(/[\\%_]/g, (m: string) => `\\${m}`);
  const r = (await engine.executeRaw(`SELECT $1::text ILIKE $2 ESCAPE '\\' AS hit`, [text, `%${esc}%`]))[0] as { hit: boolean };
  (out.ilike as unknown[]).push(r.hit);
}
await engine.disconnect();

// --- JavaScript strings --------------------------------------------------------------------
out.js_lower = cases.js_lower.map((s: string) => s.toLowerCase());
out.normalize_alias = cases.normalize_alias.map((s: string) => normalizeAlias(s));
out.candidates = cases.candidates.map((s: string) =>
  extractCandidates(s).map((c: { display: string; query: string; weak?: true }) => [c.display, c.query, !!c.weak]));
out.date_parse = cases.date_parse.map((s: string) => {
  const v = Date.parse(s);
  return Number.isNaN(v) ? null : v;
});
// A turn id as JSON.parse reads it, and the gold key String() makes of it.
out.json_numbers = cases.json_numbers.map((literal: string) => {
  const n = JSON.parse(literal);
  return { integer: Number.isInteger(n), key: String(n) };
});

// --- write-back: conversation parsing, segmentation, rendering -----------------------------
out.conversations = cases.conversations.map((body: string) => {
  const messages = parseConversation(body, {}).messages;
  const segments = splitIntoSegments(messages);
  return {
    messages: messages.map((m: { speaker: string; timestamp: string; text: string }) => [m.speaker, m.timestamp, m.text]),
    segments: segments.map((s: unknown) => renderSegmentForExtraction('Bench conversation x', s)),
  };
});

await Bun.write(outPath, JSON.stringify(out, null, 1) + '\n');
console.error(`wrote ${outPath}`);
