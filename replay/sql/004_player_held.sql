-- 004: player_held, one row per hand a player actually held (cancelled and
-- unfinished hands too), with the seat resolved through the seat changes
-- (player_seats.from_hand/to_hand), the partner (pairs) and the seat's own
-- figures taken out of the per-seat lists: the player report is one
-- filtered read of scalar columns (but `out_notes`, mostly NULL), with no
-- joins and no time zone conversion. Derived from
-- player_seats and player_hands: here for existing data, by replay.store at
-- load time for the matches a batch (re)writes, in player order.

CREATE TABLE player_held (
    of_player    VARCHAR NOT NULL,
    match        VARCHAR NOT NULL,
    hand         INTEGER NOT NULL,
    seat         TINYINT NOT NULL,
    bot          BOOLEAN NOT NULL,
    partner      VARCHAR,
    partner_name VARCHAR,
    partner_bot  BOOLEAN,
    result       VARCHAR,
    winner       TINYINT,
    side_points  INTEGER,           -- points[side] (side: seat, or seat % 2 in pairs)
    all_points   BIGINT,            -- sum of points
    out_notes    VARCHAR[],         -- the hand's notes if the player went out, else NULL
    passes       SMALLINT,          -- seat_passes[seat]
    dealt_pips   SMALLINT,
    dealt_doubles TINYINT,
    dealt_tiles  TINYINT,
    started      TIMESTAMP,         -- UTC
    profile      VARCHAR,
    teams        VARCHAR,
    stock        VARCHAR,
    block_end    VARCHAR,
    match_result VARCHAR,
    match_winner TINYINT,
    match_shutout BOOLEAN           -- match notes name a shutout (chiva, zapato)
);

INSERT INTO player_held
WITH held AS (
    SELECT h.*, s.seat, s.bot
    FROM player_hands h
    JOIN player_seats s ON s.of_player = h.of_player AND s.match = h.match AND s.player = s.of_player
     AND h.hand >= s.from_hand AND h.hand < s.to_hand
), partner AS (
    SELECT x.of_player, x.match, x.hand, ps.player, ps.name, ps.bot
    FROM held x
    JOIN player_seats ps ON ps.of_player = x.of_player AND ps.match = x.match
     AND ps.seat = (x.seat + 2) % 4 AND x.hand >= ps.from_hand AND x.hand < ps.to_hand
    WHERE x.teams = 'pairs'
)
SELECT x.of_player, x.match, x.hand, x.seat, x.bot, p.player, p.name, p.bot,
       x.result, x.winner,
       x.points[(CASE WHEN x.teams = 'pairs' THEN x.seat % 2 ELSE x.seat END) + 1],
       list_sum(x.points), CASE WHEN x.result = 'domino' AND x.winner = x.seat THEN x.notes END,
       x.seat_passes[x.seat + 1], x.seat_pips[x.seat + 1], x.seat_doubles[x.seat + 1], x.seat_tiles[x.seat + 1],
       timezone('UTC', x.started), x.profile, x.teams, x.stock, x.block_end, x.match_result, x.match_winner,
       list_has_any(x.match_notes, ['shutout', 'chiva', 'zapato'])
FROM held x
LEFT JOIN partner p ON p.of_player = x.of_player AND p.match = x.match AND p.hand = x.hand
ORDER BY x.of_player, x.match, x.hand, x.seat;
