-- What every read surface needs to label and to withhold (trust spec §3.4, §3.5): the brain's
-- settings and the write gate's receipts.  The memory system writes both; the seams only read.
CREATE TABLE config (
    key   text PRIMARY KEY,
    value text NOT NULL
);

-- One row per gated write that the detector flagged or quarantined.  A row is "flagged" for
-- activation control when its tier is at most agent_written and a receipt with verdict 'flag'
-- names it with one of the activation families (standing_instruction, override,
-- exfiltration, credential).
CREATE TABLE write_gate_receipts (
    id               bigserial PRIMARY KEY,
    target_table     text NOT NULL,
    target_id        text NOT NULL,
    source_id        text NOT NULL,
    content_hash     text NOT NULL,
    tier             text NOT NULL,
    detector_version integer NOT NULL,
    verdict          text NOT NULL CHECK (verdict IN ('flag', 'quarantine')),
    reason_families  text[] NOT NULL DEFAULT '{}',
    reasons          jsonb NOT NULL DEFAULT '[]',
    created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX write_gate_receipts_target_idx ON write_gate_receipts (target_table, target_id);
