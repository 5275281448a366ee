-- 008: replays, each stored match's seats, hands and moves packed into one
-- value (replay.packed), for the replay page: one row read instead of three
-- scans (about 1 ms against 10 at 1M hands).
--
-- A body is made from the same Arrow tables as the match's rows when its
-- batch is written, and is a per-match table like them: replaced, deleted
-- and numbered (mno) with the match. Matches stored before this migration
-- have none and are read from the three tables, as before (`replay
-- reingest` packs them).

CREATE TABLE replays (
    match VARCHAR NOT NULL,
    body  BLOB NOT NULL,  -- replay.packed: zlib of a JSON head, move records, legal moves
    mno   BIGINT
);
