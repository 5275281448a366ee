-- 013: ratings (reports.ratings): openskill ratings of players and of pairs,
-- worked out match by match over the valid, finished matches, in the order
-- their results became known (matches.ended, then the id).
--
-- rating_matches: the matches rated, one row each, numbered `pos` 1, 2, ...
-- in that order, with `mno` as it was then (a replaced match gets a new
-- one), so that a refresh sees what changed: a match gone, replaced or new
-- before the last one rated re-rates from its place on; one after it only
-- appends. `p_all`/`p_profile`: each side's chance to win as the ratings
-- said just before the match (the held-out calibration reads them).
--
-- rating_history: one row per rated entity and match and pool (`pool` '*'
-- for every profile together, else the match's profile): a player, or a
-- pair (`partner` set, player < partner), its place and its rating before
-- and after.
--
-- ratings: each entity's rating now (after the last rated match), with its
-- counts; rewritten by each refresh.

CREATE TABLE rating_matches (
    pos       INTEGER NOT NULL,
    match     VARCHAR NOT NULL,
    mno       BIGINT,
    ended     TIMESTAMPTZ NOT NULL,
    profile   VARCHAR NOT NULL,
    teams     VARCHAR NOT NULL,    -- pairs / individual
    places    TINYINT[] NOT NULL,  -- finishing place of each side (1 first; ties share)
    p_all     DOUBLE[] NOT NULL,   -- each side's chance to win before the match, pool '*'
    p_profile DOUBLE[] NOT NULL    -- the same in the match's profile pool
);

CREATE TABLE rating_history (
    pool           VARCHAR NOT NULL,
    player         VARCHAR NOT NULL,
    partner        VARCHAR,          -- a pair's second player; NULL: a player
    pos            INTEGER NOT NULL,
    match          VARCHAR NOT NULL,
    ended          TIMESTAMPTZ NOT NULL,
    side           TINYINT NOT NULL,
    place          TINYINT NOT NULL,
    outcome        VARCHAR NOT NULL, -- win / tie (first place shared) / loss
    bot            BOOLEAN NOT NULL,
    mu_before      DOUBLE NOT NULL,
    sigma_before   DOUBLE NOT NULL,
    mu             DOUBLE NOT NULL,
    sigma          DOUBLE NOT NULL,
    hands          INTEGER NOT NULL, -- played hands it held in the match (a pair: together)
    points_for     INTEGER NOT NULL, -- its side's points in those hands
    points_against INTEGER NOT NULL  -- the other sides' points in those hands
);

CREATE TABLE ratings (
    pool           VARCHAR NOT NULL,
    player         VARCHAR NOT NULL,
    partner        VARCHAR,
    bot            BOOLEAN NOT NULL,
    mu             DOUBLE NOT NULL,
    sigma          DOUBLE NOT NULL,
    rating         DOUBLE NOT NULL,  -- the shown rating: mu - 3 sigma (openskill's ordinal)
    matches        INTEGER NOT NULL,
    wins           INTEGER NOT NULL,
    ties           INTEGER NOT NULL,
    losses         INTEGER NOT NULL,
    hands          INTEGER NOT NULL,
    points_for     BIGINT NOT NULL,
    points_against BIGINT NOT NULL,
    first_played   TIMESTAMPTZ NOT NULL,
    last_played    TIMESTAMPTZ NOT NULL,
    last_pos       INTEGER NOT NULL
);
