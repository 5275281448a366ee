-- 003: the player report's rows, keyed by player (the report read the whole
-- of hands, seats and matches on every first visit: a player's matches sit
-- in every row group, and DuckDB uses no index for such a read).
-- player_seats: for each player (of_player), every seat row of every match
-- they sat in (the partner needs the other seats). player_hands: for each
-- player, every hand of those matches, with the match columns the report
-- uses. Rows are derived from seats, hands and matches: here for existing
-- data, by replay.store at load time for the matches a batch (re)writes,
-- inserted in player order so that a player's rows sit in few row groups.

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

INSERT INTO player_seats
SELECT p.player, s.match, s.seat, s.player, s.name, s.bot, s.from_hand, s.to_hand, s.seq, m.batch
FROM (SELECT DISTINCT match, player FROM seats) p
JOIN (SELECT *, coalesce(lead(from_hand) OVER (PARTITION BY match, seat ORDER BY from_hand, seq),
                2147483647) AS to_hand FROM seats) s ON s.match = p.match
JOIN matches m ON m.match = p.match
ORDER BY p.player, s.match, s.seq, s.seat;

INSERT INTO player_hands
SELECT p.player, h.match, h.hand, h.result, h.winner, h.points, h.notes, h.passes,
       h.dealt_pips, h.dealt_doubles, h.dealt_tiles, h.started,
       m.profile, m.rules->>'teams', m.rules->>'stock', m.rules->>'block_end',
       m.result, m.winner, m.notes
FROM (SELECT DISTINCT match, player FROM seats) p
JOIN matches m ON m.match = p.match
JOIN hands h ON h.match = p.match
ORDER BY p.player, h.match, h.hand;

-- Rows of player_hands when it was last rewritten in player order: a load
-- rewrites both tables in order once they have grown by a quarter since
-- (replay.store), so that the batches' appended runs do not spread a
-- player over every row group.
CREATE TABLE player_order (sorted_rows BIGINT NOT NULL);
INSERT INTO player_order SELECT count(*) FROM player_hands;
