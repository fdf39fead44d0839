-- Trust tiers (gbrain 0.60, trust spec §3.3): every page and fact carries the tier of the
-- channel that wrote it and that channel's origin.  Seeded pages of the classic suites are
-- written without a declared writer, so they read 'unknown' with no origin ("legacy").
ALTER TABLE pages ADD COLUMN trust_tier text NOT NULL DEFAULT 'unknown'
    CHECK (trust_tier IN ('user_confirmed', 'operator_curated', 'tool_observed', 'agent_written', 'unknown',
                          'external_untrusted'));
ALTER TABLE pages ADD COLUMN write_origin jsonb;
ALTER TABLE facts ADD COLUMN trust_tier text NOT NULL DEFAULT 'unknown'
    CHECK (trust_tier IN ('user_confirmed', 'operator_curated', 'tool_observed', 'agent_written', 'unknown',
                          'external_untrusted'));
ALTER TABLE facts ADD COLUMN write_origin jsonb;
