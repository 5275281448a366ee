-- 003: the player report's rows, keyed by player (the report read the whole
-- of hands, seats and matches on every first visit: a player's matches sit
-- in every row group, and DuckDB uses no index for such a read).
-- player_seats: for each player (of_player), every seat row of every match
-- they sat in (the partner needs the other seats). player_hands: for each
-- player, every hand of those matches, with the match columns the report
-- uses. Rows are made from seats, hands and matches by
-- replay.store.player_rows (the one definition): at load time for the
-- matches a batch (re)writes, and for a store migrated from before this
-- version by the derivation that follows the migrations (005 marks its
-- matches), inserted in player order so that a player's rows sit in few
-- row groups.

CREATE TABLE player_seats (
    of_player VARCHAR NOT NULL,
    match     VARCHAR NOT NULL,
    seat      TINYINT NOT NULL,
    player    VARCHAR NOT NULL,
    name      VARCHAR,
    bot       BOOLEAN NOT NULL,
    from_hand INTEGER NOT NULL,
    to_hand   INTEGER NOT NULL,     -- the seat's next from_hand (2^31 - 1: none)
    seq       INTEGER NOT NULL,
    batch     VARCHAR NOT NULL      -- matches.batch (the API's cache key)
);

CREATE TABLE player_hands (
    of_player    VARCHAR NOT NULL,
    match        VARCHAR NOT NULL,
    hand         INTEGER NOT NULL,
    result       VARCHAR,
    winner       TINYINT,
    points       INTEGER[],
    notes        VARCHAR[],
    seat_passes  SMALLINT[],
    seat_pips    SMALLINT[],
    seat_doubles TINYINT[],
    seat_tiles   TINYINT[],
    started      TIMESTAMPTZ,
    profile      VARCHAR,
    teams        VARCHAR,
    stock        VARCHAR,
    block_end    VARCHAR,
    match_result VARCHAR,
    match_winner TINYINT,
    match_notes  VARCHAR[]
);

CREATE TABLE player_order (sorted_rows BIGINT NOT NULL);
INSERT INTO player_order SELECT count(*) FROM player_hands;
