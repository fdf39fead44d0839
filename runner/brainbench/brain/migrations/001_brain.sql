-- The brain: sources, pages, aliases and facts (the logical tables of spec §2.2).
CREATE TABLE sources (
    id     text PRIMARY KEY,
    name   text NOT NULL,
    config jsonb NOT NULL DEFAULT '{}'
);
INSERT INTO sources (id, name) VALUES ('default', 'default');

CREATE TABLE pages (
    id             bigserial PRIMARY KEY,
    source_id      text NOT NULL REFERENCES sources (id),
    slug           text NOT NULL,
    type           text NOT NULL,
    title          text NOT NULL,
    compiled_truth text NOT NULL,
    timeline       text NOT NULL DEFAULT '',
    -- json, not jsonb: the YAML key order is part of what the content hash covers.
    frontmatter    json NOT NULL DEFAULT '{}',
    tags           text[] NOT NULL DEFAULT '{}',
    content_hash   text NOT NULL,
    deleted_at     timestamptz,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    UNIQUE (source_id, slug)
);
CREATE INDEX pages_dedup_idx ON pages (source_id, content_hash) WHERE deleted_at IS NULL;
CREATE INDEX pages_title_lower_idx ON pages (source_id, lower(title));

CREATE TABLE page_aliases (
    source_id  text NOT NULL REFERENCES sources (id),
    alias_norm text NOT NULL,
    slug       text NOT NULL,
    UNIQUE (source_id, alias_norm, slug)
);

CREATE TABLE facts (
    id                   bigserial PRIMARY KEY,
    source_id            text NOT NULL REFERENCES sources (id),
    entity_slug          text,
    fact                 text NOT NULL,
    kind                 text NOT NULL DEFAULT 'fact',
    -- private by default: world-visible facts would feed claude-code's hot-memory section.
    visibility           text NOT NULL DEFAULT 'private',
    notability           text NOT NULL DEFAULT 'medium',
    context              text,
    valid_from           timestamptz,
    expired_at           timestamptz,
    source               text NOT NULL,
    source_session       text,
    confidence           real NOT NULL DEFAULT 1.0,
    row_num              integer,
    source_markdown_slug text,
    created_at           timestamptz NOT NULL DEFAULT now(),
    UNIQUE (source_id, source_markdown_slug, row_num)
);

CREATE TABLE extract_rollups (
    run_id     text PRIMARY KEY,
    source_id  text NOT NULL,
    kind       text NOT NULL,
    total_rows integer NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
