-- 017: review that teaches (docs/review.md): a player's training progress
-- and the puzzles' tries.
--
-- train_cards: one row per player and position (a decision of theirs,
-- match/hand/ply) they have answered at least once: the spaced-repetition
-- card as the scheduler keeps it (fsrs's Card as JSON), when it is due
-- next, how many answers, the last move picked and its rating (1 again,
-- 2 hard, 3 good). Kept when a match is stored again: a position that is
-- gone is skipped, not shown.
--
-- puzzle_tries: one row per answer to a puzzle (match/hand/ply): who, if
-- they said (NULL: anonymous), the move picked and whether it was the
-- puzzle's move. The solve rate of a puzzle is the share of its tries solved.

CREATE TABLE train_cards (
    player      VARCHAR NOT NULL,
    match       VARCHAR NOT NULL,
    hand        INTEGER NOT NULL,
    ply         SMALLINT NOT NULL,
    card        JSON NOT NULL,
    due         TIMESTAMPTZ NOT NULL,
    answers     INTEGER NOT NULL,
    last_move   VARCHAR,
    last_rating TINYINT,
    updated     TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (player, match, hand, ply)
);

CREATE TABLE puzzle_tries (
    match  VARCHAR NOT NULL,
    hand   INTEGER NOT NULL,
    ply    SMALLINT NOT NULL,
    player VARCHAR,
    move   VARCHAR NOT NULL,
    solved BOOLEAN NOT NULL,
    tried  TIMESTAMPTZ NOT NULL
);
