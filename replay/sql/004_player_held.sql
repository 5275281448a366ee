-- 004: player_held, one row per hand a player actually held (cancelled and
-- unfinished hands too), with the seat resolved through the seat changes
-- (player_seats.from_hand/to_hand), the partner (pairs) and the seat's own
-- figures taken out of the per-seat lists: the player report is one
-- filtered read of scalar columns (but `out_notes`, mostly NULL), with no
-- joins and no time zone conversion. Made by replay.store.player_rows, as
-- player_seats (see 003).

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
