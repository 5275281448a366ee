-- 021: mno, the match's number (migration 006), on the analysis tables, and
-- their rows in the order of it.
--
-- A replay page reads its match's analysis rows. By match id, that read
-- compared the id of every row (ids follow no order: no row group is
-- pruned): ~60 ms a match at 1M hands (25M move rows), most of a replay
-- page's cost after a restart (bench/api.py). By number, the rows of a
-- match sit in a row group or two, whose min/max keep the others unread.
--
-- The writers (the loader, replay analyze, the server's sampling) give
-- each row its match's number and append a batch in number order; here the
-- rows stored so far are numbered and put in that order once. A row of a
-- match without a number (stored before 006) keeps NULL: it is read by id,
-- as its match is.

ALTER TABLE move_analysis ADD COLUMN mno BIGINT;
ALTER TABLE hand_analysis ADD COLUMN mno BIGINT;

CREATE TEMP TABLE _a021 AS
    SELECT a.* REPLACE (m.mno AS mno) FROM move_analysis a LEFT JOIN matches m ON m.match = a.match
    ORDER BY m.mno NULLS LAST, a.match, a.hand, a.ply;
DELETE FROM move_analysis;
INSERT INTO move_analysis SELECT * FROM _a021;
DROP TABLE _a021;

CREATE TEMP TABLE _a021 AS
    SELECT a.* REPLACE (m.mno AS mno) FROM hand_analysis a LEFT JOIN matches m ON m.match = a.match
    ORDER BY m.mno NULLS LAST, a.match, a.hand;
DELETE FROM hand_analysis;
INSERT INTO hand_analysis SELECT * FROM _a021;
DROP TABLE _a021;
