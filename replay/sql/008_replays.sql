-- 008: matches.replay, each stored match's seats, hands and moves packed
-- into one value (replay.packed), for the replay page: the match's row read
-- once instead of four reads (about 2 ms against 12 at 1M hands).
--
-- It is made from the same Arrow tables as the match's rows when its batch
-- is written, and lives in the match's row, so it is replaced and deleted
-- with it. Matches stored before this migration have none (NULL) and are
-- read from the tables, as before (`replay reingest` packs them).

ALTER TABLE matches ADD COLUMN replay BLOB;
