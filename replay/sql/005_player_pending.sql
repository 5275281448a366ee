-- 005: the player tables are derived once per load, not once per batch.
--
-- player_pending: the matches a load wrote whose player rows are not
-- derived yet. A batch's transaction marks its matches here; one
-- derivation a load (replay.store.derive_player_rows: a whole ingest run,
-- or one load_spool call) turns them into player_seats and player_held
-- rows in one sorted insert and clears the marks, in one transaction. A
-- crash in between leaves the marks for the next load.
--
-- player_hands goes. It held, for each player, every hand of every match
-- they sat in (with its list columns), only to be joined to player_seats
-- into player_held, which is all the report reads. player_held now comes
-- straight from each seat row and the hands of its range: about half the
-- rows written, and one table fewer to re-sort.

CREATE TABLE player_pending (match VARCHAR NOT NULL);

-- A store migrated from before 003 has no player rows yet: its matches are
-- marked, and derived once the migrations are done.
INSERT INTO player_pending SELECT match FROM matches WHERE match NOT IN (SELECT match FROM player_seats);

DROP TABLE player_hands;

-- player_order counted player_hands rows when the tables were last sorted;
-- it counts player_held rows from here (about as many: one a held hand).
UPDATE player_order SET sorted_rows = least(sorted_rows, (SELECT count(*) FROM player_held));
