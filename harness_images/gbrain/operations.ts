// BrainBench seed contract v2 operations for gbrain: one memory request on stdin, one outcome on
// stdout.  gbrain 0.46 has one of our verbs: `recall`, its memory read.  With `page_slug` it reads a
// written-back page's facts the way gbrain's bench reads them back (facts of the source stamped with
// that markdown slug, terminal-audit rows left out); with `entity` it is gbrain's own recall entity
// arm (engine.listFactsByEntity, active rows, audit rows out).  Everything else, a free-text `query`
// included (gbrain's recall has no such arm: it has entity, session, since and a grep filter), and
// every trust verb (0.46 has no trust tiers, write gate or purge receipts), answers `unsupported`.
// gbrain stores no trust tier: read items say "unknown".
// Run alone (`bun operations.ts`) or by the warm worker (worker.ts), which imports `operations`.
import { GBRAIN, ToolFailure, failWith, parseJson, runAlone, withEngine, type Io } from "./engine.ts";

type Row = { id: number | string; fact: string; entity_slug: string | null; source: string;
             source_session: string | null; source_markdown_slug: string | null; source_id?: string };

export async function operations(input: string, io: Io): Promise<void> {
  const fail = failWith("operations");
  const req = parseJson(fail, input, "memory request");
  if (typeof req?.op !== "string") fail("field op must be a string");
  const source = process.env.BRAINBENCH_SOURCE || "default";
  const say = (answer: object) => io.out(JSON.stringify(answer) + "\n");
  const unsupported = (why: string) => say({ op: req.op, ok: false, code: "unsupported", message: why });

  if (req.op !== "recall") return unsupported(`gbrain ${process.env.BB_GBRAIN_VERSION ?? "0.46"} has no ${req.op}`);
  const limit = Math.min(Math.max(Number.isInteger(req.limit) ? req.limit : 50, 1), 500);
  const pageSlug = typeof req.page_slug === "string" && req.page_slug ? req.page_slug : null;
  const entity = typeof req.entity === "string" && req.entity ? req.entity : null;
  if (!pageSlug && !entity) {
    return unsupported("gbrain's recall has no free-text query arm (entity, session, since, grep only)");
  }

  const { TERMINAL_AUDIT_SOURCE } = await import(`${GBRAIN}/src/commands/extract-conversation-facts.ts`);
  let rows: Row[];
  try {
    rows = await withEngine(fail, async (engine) => {
      if (pageSlug) {
        return engine.executeRaw(
          `SELECT id, fact, entity_slug, source, source_session, source_markdown_slug
             FROM facts WHERE source_id = $1 AND source_markdown_slug = $2 AND source <> $3
            ORDER BY id LIMIT $4`,
          [source, pageSlug, TERMINAL_AUDIT_SOURCE, limit],
        );
      }
      const { resolveEntitySlug } = await import(`${GBRAIN}/src/core/entities/resolve.ts`);
      const slug = (await resolveEntitySlug(engine, source, entity)) ?? entity;
      return engine.listFactsByEntity(source, slug, { activeOnly: true, limit, excludeAuditRows: true });
    });
  } catch (e) {
    if (e instanceof ToolFailure) throw e;
    return fail((e as Error).message.split("\n")[0]);
  }

  say({
    op: "recall", ok: true, withheld: 0,
    items: rows.map((r) => ({
      kind: "fact", id: Number(r.id), source_id: source, entity_slug: r.entity_slug ?? null, text: r.fact,
      trust_tier: "unknown", origin: r.source, label: "unlabelled (gbrain 0.46 has no trust tiers)",
      provenance: r.source, session_id: r.source_session ?? null, page_slug: r.source_markdown_slug ?? null,
    })),
  });
}

if (import.meta.main) await runAlone(operations);
