-- 011: where each seed was read, so that a SEED_REUSED finding names its line.
--
-- Every other finding carries the file and line of its event from the
-- validator; SEED_REUSED is made here, by SQL over the seeds of every
-- stored match, and takes the line of the seed it is about: the
-- match_start for the anchor (hand 0), else the hand's reveal.
-- Rows stored before this version have none (`replay reingest` fills them).

ALTER TABLE seeds ADD COLUMN file VARCHAR;   -- path as read
ALTER TABLE seeds ADD COLUMN line BIGINT;
ALTER TABLE seeds ADD COLUMN sha256 VARCHAR; -- the kept file of that line
