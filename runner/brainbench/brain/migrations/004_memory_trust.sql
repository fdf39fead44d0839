-- The reference memory system's stores (trust spec §3): what a trust step writes besides pages
-- and facts, and the database rule that stamps every page and fact with its writer's tier.

CREATE FUNCTION trust_rank(tier text) RETURNS integer LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE tier WHEN 'user_confirmed' THEN 6 WHEN 'operator_curated' THEN 5 WHEN 'tool_observed' THEN 4
                     WHEN 'agent_written' THEN 3 WHEN 'external_untrusted' THEN 1 ELSE 2 END
$$;

-- Lifecycle of a fact: superseded rows stay as history; a contested row waits for the owner.
ALTER TABLE facts ADD COLUMN superseded_by bigint;
ALTER TABLE facts ADD COLUMN valid_until timestamptz;
-- The claim's fingerprint (normalised text, hashed): what a purge and its tombstone match on.
ALTER TABLE facts ADD COLUMN fingerprint text;
CREATE INDEX facts_source_entity_idx ON facts (source_id, entity_slug);

-- What search reads: a live, non-quarantined page's text in pieces, each with the tier of what it says.
CREATE TABLE content_chunks (
    id          bigserial PRIMARY KEY,
    page_id     bigint NOT NULL REFERENCES pages (id) ON DELETE CASCADE,
    source_id   text NOT NULL,
    chunk_index integer NOT NULL,
    chunk_text  text NOT NULL,
    trust_tier  text NOT NULL
);
CREATE INDEX content_chunks_page_idx ON content_chunks (page_id);

-- Every earlier state of a page the memory system rewrote.
CREATE TABLE page_versions (
    id             bigserial PRIMARY KEY,
    page_id        bigint NOT NULL,
    source_id      text NOT NULL,
    slug           text NOT NULL,
    title          text NOT NULL,
    compiled_truth text NOT NULL,
    timeline       text NOT NULL,
    frontmatter    json NOT NULL,
    trust_tier     text,
    write_origin   jsonb,
    created_at     timestamptz NOT NULL DEFAULT now()
);

-- A gated fact write that the gate held back instead of storing (quarantine of a fact).
CREATE TABLE write_gate_holds (
    id              bigserial PRIMARY KEY,
    source_id       text NOT NULL,
    target_table    text NOT NULL,
    status          text NOT NULL DEFAULT 'held' CHECK (status IN ('held', 'released', 'discarded')),
    payload         jsonb NOT NULL,
    reason_families text[] NOT NULL DEFAULT '{}',
    created_at      timestamptz NOT NULL DEFAULT now()
);

-- Owner decisions an agent asked for but could not make itself (guarded supersession, remote forget).
CREATE TABLE trust_proposals (
    id           bigserial PRIMARY KEY,
    source_id    text NOT NULL,
    action       text NOT NULL CHECK (action IN ('supersede_fact', 'forget')),
    target_id    bigint NOT NULL,
    related_id   bigint,
    status       text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'accepted', 'rejected', 'resolved',
                                                                   'purged')),
    before_state jsonb NOT NULL DEFAULT '{}',
    created_at   timestamptz NOT NULL DEFAULT now()
);

-- A purged claim's tombstone: text-free (a hash), so it can block the claim without keeping it.
CREATE TABLE fact_purges (
    id         bigserial PRIMARY KEY,
    source_id  text NOT NULL,
    visibility text NOT NULL,
    subject    text,
    fact_hash  text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX fact_purges_hash_idx ON fact_purges (source_id, fact_hash);

-- The request journal: every memory operation as it was asked (a purge redacts its claim here).
CREATE TABLE memory_requests (
    id         bigserial PRIMARY KEY,
    source_id  text NOT NULL,
    op         text NOT NULL,
    actor      text,
    request    jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

-- Work an operation leaves for after its commit (rewriting the owner's files); ``settle`` drains it.
CREATE TABLE memory_effects (
    id         bigserial PRIMARY KEY,
    request_id bigint NOT NULL,
    source_id  text NOT NULL,
    kind       text NOT NULL,
    state      text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'running', 'done', 'failed')),
    payload    jsonb NOT NULL DEFAULT '{}',
    attempts   integer NOT NULL DEFAULT 0,
    error      text
);
CREATE INDEX memory_effects_pending_idx ON memory_effects (source_id) WHERE state IN ('queued', 'running');

-- What the last owner sync imported from each of the owner's files (by content hash).
CREATE TABLE owner_files (
    source_id text NOT NULL,
    slug      text NOT NULL,
    sha256    text NOT NULL,
    PRIMARY KEY (source_id, slug)
);

-- The tier rule (trust spec §3.3).  The writer's tier arrives in transaction-local settings:
--   brainbench.write_tier       the writer's tier ('' or unset: no writer)
--   brainbench.write_origin     the writer's origin (JSON: channel, content_origin, …)
--   brainbench.write_promotion  a ceiling up to which an owner confirmation may raise a tier
--   brainbench.write_keep       tables whose content edits keep the tier (a managed fence edit)
-- INSERT takes the writer's tier (unknown without one).  An UPDATE that raises the tier needs a
-- covering promotion: with no writer it is refused, inside a writer it is clamped back.  An
-- UPDATE of content by an owner-tier writer restamps; any other writer can only lower.
CREATE FUNCTION trust_tier_stamp() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    writer    text := nullif(current_setting('brainbench.write_tier', true), '');
    origin    text := nullif(current_setting('brainbench.write_origin', true), '');
    promotion text := nullif(current_setting('brainbench.write_promotion', true), '');
    keep      text := coalesce(current_setting('brainbench.write_keep', true), '');
    changed   boolean;
BEGIN
    IF writer IS NOT NULL AND trust_rank(writer) > trust_rank('operator_curated')
       AND (promotion IS NULL OR trust_rank(promotion) < trust_rank(writer)) THEN
        RAISE EXCEPTION USING ERRCODE = 'P0001', CONSTRAINT = 'trust_tier_guard',
            MESSAGE = 'trust_raise_refused: a writer above operator_curated needs owner confirmation';
    END IF;
    IF TG_OP = 'INSERT' THEN
        NEW.trust_tier := coalesce(writer, 'unknown');
        NEW.write_origin := origin::jsonb;
        RETURN NEW;
    END IF;
    IF trust_rank(NEW.trust_tier) > trust_rank(OLD.trust_tier) THEN
        IF promotion IS NOT NULL AND trust_rank(NEW.trust_tier) <= trust_rank(promotion) THEN
            NULL;
        ELSIF writer IS NULL THEN
            RAISE EXCEPTION USING ERRCODE = 'P0001', CONSTRAINT = 'trust_tier_guard',
                MESSAGE = 'trust_raise_refused: raising a tier needs owner confirmation';
        ELSE
            NEW.trust_tier := OLD.trust_tier;
        END IF;
    END IF;
    IF TG_TABLE_NAME = 'facts' THEN
        changed := (NEW.fact, NEW.entity_slug, NEW.kind, NEW.context)
                   IS DISTINCT FROM (OLD.fact, OLD.entity_slug, OLD.kind, OLD.context);
    ELSE
        changed := (NEW.source_id, NEW.slug, NEW.type, NEW.title, NEW.compiled_truth, NEW.timeline,
                    NEW.frontmatter::jsonb - 'quarantine', NEW.deleted_at)
                   IS DISTINCT FROM (OLD.source_id, OLD.slug, OLD.type, OLD.title, OLD.compiled_truth, OLD.timeline,
                                     OLD.frontmatter::jsonb - 'quarantine', OLD.deleted_at);
    END IF;
    IF changed AND NOT (TG_TABLE_NAME = ANY (string_to_array(keep, ','))) THEN
        IF writer IS NOT NULL AND trust_rank(writer) >= trust_rank('operator_curated') THEN
            NEW.trust_tier := writer;
        ELSIF trust_rank(coalesce(writer, 'unknown')) < trust_rank(NEW.trust_tier) THEN
            NEW.trust_tier := coalesce(writer, 'unknown');
        END IF;
        IF writer IS NOT NULL THEN
            NEW.write_origin := origin::jsonb;
        END IF;
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER trust_tier_stamp BEFORE INSERT OR UPDATE ON pages FOR EACH ROW EXECUTE FUNCTION trust_tier_stamp();
CREATE TRIGGER trust_tier_stamp BEFORE INSERT OR UPDATE ON facts FOR EACH ROW EXECUTE FUNCTION trust_tier_stamp();
