-- 010: player_order counts the runs appended in player order.
--
-- From this version the workers make a batch's player rows (replay.held), the
-- loader sets them aside, and the derivation inserts them as sorted runs of a
-- group of batches each (the SQL derivation stays for what they do not
-- cover). Such a run of at least a row group keeps each player's rows in one or two row
-- groups of it, which is as good as one sort for the reports (measured at 1M
-- hands: the kept reports took 5.2 s either way, 9.7 s on rows in no order).
-- So the tables are no longer rewritten in order once a quarter of their rows
-- came after the last sort, but once more than 16 such runs and as many rows
-- as the sort had came after it (or, as before, a quarter came in small runs).
--
-- sorted_rows: rows in order (the last sort and the runs after it);
-- base_rows: the rows of the last sort; runs: runs appended since.

ALTER TABLE player_order ADD COLUMN base_rows BIGINT;
ALTER TABLE player_order ADD COLUMN runs INTEGER;
UPDATE player_order SET base_rows = sorted_rows, runs = 0;
