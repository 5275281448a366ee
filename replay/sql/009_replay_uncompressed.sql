-- 009: matches.replay stored as it is (no DuckDB compression).
--
-- A replay body is zstd already (replay.packed). DuckDB chose DICT_FSST for
-- the column and spent its checkpoints trying to compress the incompressible:
-- 315 MB of such bodies (about 1M hands' worth) took 10.6 s to checkpoint,
-- 1.7 s uncompressed. DuckDB sets a column's compression only when the
-- column is made, so the column is made again, its values kept.

ALTER TABLE matches ADD COLUMN replay_kept BLOB USING COMPRESSION uncompressed;
UPDATE matches SET replay_kept = replay WHERE replay IS NOT NULL;
ALTER TABLE matches DROP COLUMN replay;
ALTER TABLE matches RENAME COLUMN replay_kept TO replay;
