-- 022: matches.analysis_body, each analysed match's hands as the replay shows
-- them, packed into one value (replay.store.analysis_blob), for the replay's
-- first view of a match: the match's row read once instead of two more scans
-- of some 30 columns (about 1 ms more against 8 to 10 at 1M hands).
--
-- The writers of hand_analysis and move_analysis pack it from the rows they
-- stored, in the same transaction; batches do not carry it. A body is zstd
-- already: stored as it is, as matches.replay (009). Matches analysed before
-- this migration have none (NULL) and are read from the tables, as before
-- (`replay analyze` or `replay reingest` packs them).

ALTER TABLE matches ADD COLUMN analysis_body BLOB USING COMPRESSION uncompressed;
