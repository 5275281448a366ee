-- 007: player_reports, each player's report (reports.player) as worked out
-- at load time, as JSON: a report is then one row read, not 20,000 rows
-- read and aggregated (about 35 ms at 1M hands).
--
-- The rule: a row here is the report of the player tables as they stand.
-- Whatever changes a player's rows removes the player's row here in the
-- same transaction (a load, a derivation, a match deleted); the derivation
-- then works out the reports of every player with hands and no row
-- (replay.store.derive_player_rows). A player without a row is reported
-- from the player tables on the spot, as before this migration; so is
-- everybody in a store migrated to 007, until its next load.

CREATE TABLE player_reports (
    player VARCHAR NOT NULL,
    report VARCHAR NOT NULL  -- the report's JSON
);
