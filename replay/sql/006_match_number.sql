-- 006: mno, a match's number in the order it was stored, on the tables a
-- replay page reads a match from (matches, seats, hands, moves, findings).
--
-- Match ids follow no order, so every row group's min/max of `match` spans
-- most ids and a lookup by id reads many of them (8 of 248 row groups of
-- moves, every one of hands, at 1M hands: ~24 ms a match). Numbers are
-- given as batches are loaded (replay.store: the store's highest plus the
-- match's place in its batch) and rows are appended, so a number's rows sit
-- in one or two row groups and min/max prunes the rest. A replaced match
-- gets a new number.
--
-- Rows stored before this migration keep NULL: the API reads those by id
-- as before (`replay reingest` numbers them).

ALTER TABLE matches ADD COLUMN mno BIGINT;
ALTER TABLE seats ADD COLUMN mno BIGINT;
ALTER TABLE hands ADD COLUMN mno BIGINT;
ALTER TABLE moves ADD COLUMN mno BIGINT;
ALTER TABLE findings ADD COLUMN mno BIGINT;
