-- 020: the principal lines of a hand's decisions and their reasons
-- (replay.analysis.line, replay.analysis.explain; docs/review.md), kept once
-- worked out on a hand's first view so that a restart or another server
-- process reads them instead of searching again.
--
-- hand_lines: one row per hand whose lines were worked out: `stamp` says
-- from what (the batch that stored the match, the analysis run, the analysis
-- version, its sampled deals and seed, the line code's version): a row whose
-- stamp is not the hand's current one is stale, never served, and replaced
-- on the next view; `lines` is what the JSON twin serves for each graded
-- ply (by ply: line_played, line_best, their steps, why, facts, themes).
-- Written by replay.store.lines only.

CREATE TABLE hand_lines (
    match    VARCHAR NOT NULL,
    hand     INTEGER NOT NULL,
    stamp    VARCHAR NOT NULL,
    lines    JSON NOT NULL,
    computed TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (match, hand)
);
