-- 020: the principal lines of a hand's decisions and their reasons
-- (replay.analysis.line, replay.analysis.explain; docs/review.md), kept once
-- worked out on a hand's first view, so that a restart or another server
-- process reads them instead of searching again. Written by
-- replay.store.lines only.
--
-- hand_lines: one row per hand whose lines were worked out.
--   mkey: a 64-bit hash of the match id (replay.store.lines.match_key),
--     by which the rows of a match are found, all at once: a reviewer steps
--     through a match's hands. Rows come in the order hands are first
--     viewed, so no zone map narrows a search by match id, and a scan
--     comparing a BIGINT took 1.6 ms at a million rows where comparing the
--     id and hand took 43 (DuckDB used no index for either). Rows whose
--     key collides are told apart by match.
--   stamp: a digest of what the lines were worked out from (the hand as
--     the solver replays it: rules, deal, boneyard, moves, match context;
--     the best move of each decision; the analysis version, its sampled
--     deals and seed; the line code's version): a row whose stamp is not the
--     hand's current one is stale, never served, and replaced on the hand's
--     next view. Rows of matches gone are dropped by the server.
--   lines: what the JSON twin serves for each graded ply (line_played,
--     line_best, their steps, why, facts, themes) as JSON, zstd (level 1;
--     size: its length before), stored without DuckDB's compression, as
--     matches.replay is (migration 009).

CREATE TABLE hand_lines (
    match    VARCHAR NOT NULL,
    hand     INTEGER NOT NULL,
    mkey     BIGINT NOT NULL,
    stamp    VARCHAR NOT NULL,
    size     INTEGER NOT NULL,
    lines    BLOB NOT NULL USING COMPRESSION uncompressed,
    computed TIMESTAMPTZ NOT NULL
);
