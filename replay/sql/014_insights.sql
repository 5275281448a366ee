-- 014: player insights built on the hand analysis (reports.skill, reports.cheats;
-- docs/insights.md): deal luck against skill, accuracy by phase, profile and
-- time, partnerships, and the cheat signals auditors read.
--
-- skill_rows: one row per player, match and partner (NULL outside pair
-- games) of every analysed match, with sums over the hands the player held
-- there (seat changes resolved as everywhere: seats.from_hand). Everything
-- is a sum, so any aggregate (a player, a pair, a profile, a month) is a
-- GROUP BY of these rows:
--   hands, points (the hands' results from the player's side: docs/analysis.md),
--   par_r0..3 and role_r0..3 (par summed, and hands counted, by the seat's
--     place after the hand's first seat: its side in pair games, 0 = the
--     leading side), from which luck = par - the pool's mean par of the role;
--   decisions (not forced), lost/stake (points lost and at stake on what the
--     player could know), lost_dd/stake_dd (perfect information), the same
--     per phase p0..p3 (tiles on the line before the move: 0, 1-7, 8-15, 16+),
--     inaccuracies, mistakes, blunders;
--   y_n, y_sum, y_hands, y_sq: the omniscience statistic (reports.cheats):
--     decisions with a sampled grade, the sum of y over them, the hands with
--     one, and the sum over those hands of (the hand's sum of y) squared;
--   differs_n, differs_hit: decisions where the best move on what the player
--     could know is no perfect-information best move, and how often the
--     player played a perfect-information best move there.
--
-- insight_matches: the matches (and their analysis run, matches.analysis,
-- and number) whose rows skill_rows holds: a refresh compares it with
-- matches to add, drop or redo only what changed.
--
-- skill_players: each player's totals, for every profile together
-- (profile '*') and per profile, by phase too, and the pool percentiles;
-- rewritten by each refresh that changed anything. The player page and the
-- suspicious-play list read it (a player's figures: a few rows, not a scan).
--
-- luck_base: the pool's mean par by profile and role (the luck baseline).
--
-- peek_analysis: the partner-peeking grade, made on demand for the players
-- an auditor asks about (never at ingest): per decision of a pair game, each
-- legal move's mean value over the deals the mover could face if it saw its
-- partner's tiles too (in the alternatives' order), and y_peek. audits: one
-- row per audit asked for, with its state.

CREATE TABLE skill_rows (
    player      VARCHAR NOT NULL,
    match       VARCHAR NOT NULL,
    mno         BIGINT,
    partner     VARCHAR,
    profile     VARCHAR,
    started     TIMESTAMPTZ,
    hands       INTEGER NOT NULL,
    points      BIGINT NOT NULL,
    par_r0 BIGINT NOT NULL, par_r1 BIGINT NOT NULL, par_r2 BIGINT NOT NULL, par_r3 BIGINT NOT NULL,
    role_r0 INTEGER NOT NULL, role_r1 INTEGER NOT NULL, role_r2 INTEGER NOT NULL, role_r3 INTEGER NOT NULL,
    decisions   INTEGER NOT NULL,
    lost        DOUBLE NOT NULL,
    stake       DOUBLE NOT NULL,
    lost_dd     DOUBLE NOT NULL,
    stake_dd    DOUBLE NOT NULL,
    dec_p0 INTEGER NOT NULL, dec_p1 INTEGER NOT NULL, dec_p2 INTEGER NOT NULL, dec_p3 INTEGER NOT NULL,
    lost_p0 DOUBLE NOT NULL, lost_p1 DOUBLE NOT NULL, lost_p2 DOUBLE NOT NULL, lost_p3 DOUBLE NOT NULL,
    stake_p0 DOUBLE NOT NULL, stake_p1 DOUBLE NOT NULL, stake_p2 DOUBLE NOT NULL, stake_p3 DOUBLE NOT NULL,
    lost_dd_p0 DOUBLE NOT NULL, lost_dd_p1 DOUBLE NOT NULL, lost_dd_p2 DOUBLE NOT NULL, lost_dd_p3 DOUBLE NOT NULL,
    stake_dd_p0 DOUBLE NOT NULL, stake_dd_p1 DOUBLE NOT NULL, stake_dd_p2 DOUBLE NOT NULL, stake_dd_p3 DOUBLE NOT NULL,
    inaccuracies INTEGER NOT NULL,
    mistakes    INTEGER NOT NULL,
    blunders    INTEGER NOT NULL,
    y_n         INTEGER NOT NULL,
    y_sum       DOUBLE NOT NULL,
    y_hands     INTEGER NOT NULL,
    y_sq        DOUBLE NOT NULL,
    differs_n   INTEGER NOT NULL,
    differs_hit INTEGER NOT NULL
);

CREATE TABLE insight_matches (
    match    VARCHAR NOT NULL,
    mno      BIGINT,
    analysis VARCHAR
);

CREATE TABLE skill_players (
    player       VARCHAR NOT NULL,
    profile      VARCHAR NOT NULL,  -- '*': every profile together
    bot          BOOLEAN NOT NULL,
    matches      INTEGER NOT NULL,
    hands        INTEGER NOT NULL,
    points       BIGINT NOT NULL,
    luck         DOUBLE NOT NULL,
    decisions    INTEGER NOT NULL,
    lost         DOUBLE NOT NULL,
    stake        DOUBLE NOT NULL,
    lost_dd      DOUBLE NOT NULL,
    stake_dd     DOUBLE NOT NULL,
    inaccuracies INTEGER NOT NULL,
    mistakes     INTEGER NOT NULL,
    blunders     INTEGER NOT NULL,
    y_n          INTEGER NOT NULL,
    y_sum        DOUBLE NOT NULL,
    y_hands      INTEGER NOT NULL,
    y_sq         DOUBLE NOT NULL,
    differs_n    INTEGER NOT NULL,
    differs_hit  INTEGER NOT NULL,
    dec_p0 INTEGER NOT NULL,
    dec_p1 INTEGER NOT NULL,
    dec_p2 INTEGER NOT NULL,
    dec_p3 INTEGER NOT NULL,
    lost_p0 DOUBLE NOT NULL,
    lost_p1 DOUBLE NOT NULL,
    lost_p2 DOUBLE NOT NULL,
    lost_p3 DOUBLE NOT NULL,
    stake_p0 DOUBLE NOT NULL,
    stake_p1 DOUBLE NOT NULL,
    stake_p2 DOUBLE NOT NULL,
    stake_p3 DOUBLE NOT NULL,
    lost_dd_p0 DOUBLE NOT NULL,
    lost_dd_p1 DOUBLE NOT NULL,
    lost_dd_p2 DOUBLE NOT NULL,
    lost_dd_p3 DOUBLE NOT NULL,
    stake_dd_p0 DOUBLE NOT NULL,
    stake_dd_p1 DOUBLE NOT NULL,
    stake_dd_p2 DOUBLE NOT NULL,
    stake_dd_p3 DOUBLE NOT NULL,
    -- the pool percentiles (reports.skill.RANKED): the share of the other players
    -- (not bots, with enough decisions) of the profile this one does better
    -- than, ties half; NULL for a player not placed. placed: how many are.
    placed                   INTEGER,
    pct_accuracy             DOUBLE,
    pct_accuracy_dd          DOUBLE,
    pct_lost_per_decision    DOUBLE,
    pct_lost_dd_per_decision DOUBLE,
    pct_luck_per_hand        DOUBLE,
    pct_points_per_hand      DOUBLE,
    pct_adjusted_per_hand    DOUBLE
);

-- skill_months: each player's sums by month of the matches' start; skill_line:
-- each player's points and luck added up match by match, at most about 120
-- points (the player page's chart). Both rewritten with skill_players.
CREATE TABLE skill_months (
    player       VARCHAR NOT NULL,
    month        VARCHAR NOT NULL,  -- YYYY-MM (UTC), '?' without a start
    matches      INTEGER NOT NULL,
    hands        INTEGER NOT NULL,
    points       BIGINT NOT NULL,
    luck         DOUBLE NOT NULL,
    decisions    INTEGER NOT NULL,
    lost         DOUBLE NOT NULL,
    stake        DOUBLE NOT NULL,
    lost_dd      DOUBLE NOT NULL,
    stake_dd     DOUBLE NOT NULL,
    inaccuracies INTEGER NOT NULL,
    mistakes     INTEGER NOT NULL,
    blunders     INTEGER NOT NULL
);

CREATE TABLE skill_line (
    player  VARCHAR NOT NULL,
    k       INTEGER NOT NULL,  -- the match's place in the player's time order (1, 2, ...)
    match   VARCHAR NOT NULL,
    day     VARCHAR,
    hands   BIGINT NOT NULL,   -- added up to this match
    points  BIGINT NOT NULL,
    luck    DOUBLE NOT NULL
);

-- rating_pages, skill_pages: each player's rating and insight sections of
-- the player page (and its JSON twin) as JSON, worked out for every player
-- by the refresh that changed them (reports.leaderboard.keep_rating_pages,
-- reports.skill): a cold player page is then one row read a section, not
-- eight queries. Stored without DuckDB compression: a page is up to 140 KB
-- (the rating chart's 400 points), and reading one compressed value decoded
-- the whole column's vector (17 ms at 1M hands, 2 ms uncompressed).
CREATE TABLE rating_pages (player VARCHAR NOT NULL, page VARCHAR USING COMPRESSION uncompressed NOT NULL);
CREATE TABLE skill_pages (player VARCHAR NOT NULL, page VARCHAR USING COMPRESSION uncompressed NOT NULL);

-- insight_totals: how many matches skill_rows held when skill_players and
-- luck_base were last worked out (a match deleted with all its rows, by
-- the API, leaves no other trace for the refresh to see).
CREATE TABLE insight_totals (matches BIGINT NOT NULL);

-- table_order: rows of a table when it was last rewritten in its reading
-- order (rating_history by player: the player page reads one player's rows,
-- which the scan then finds in few row groups); a refresh rewrites it again
-- once a quarter more rows came after (reports.ratings).
CREATE TABLE table_order (name VARCHAR NOT NULL, sorted_rows BIGINT NOT NULL);

CREATE TABLE luck_base (
    profile VARCHAR NOT NULL,
    role    TINYINT NOT NULL,
    hands   BIGINT NOT NULL,
    par     DOUBLE NOT NULL   -- mean par of the role's hands
);

CREATE TABLE peek_analysis (
    match   VARCHAR NOT NULL,
    hand    INTEGER NOT NULL,
    ply     SMALLINT NOT NULL,
    seat    TINYINT NOT NULL,
    version INTEGER NOT NULL,
    samples SMALLINT NOT NULL,
    seed    BIGINT NOT NULL,
    peek    DOUBLE[] NOT NULL,  -- each alternative's mean, seeing the partner's tiles
    y_peek  DOUBLE NOT NULL     -- (peek - mean peek) - (pimc - mean pimc) of the played move
);

CREATE TABLE audits (
    player    VARCHAR NOT NULL,
    asked     TIMESTAMPTZ NOT NULL,
    done      TIMESTAMPTZ,
    state     VARCHAR NOT NULL,  -- running / done / failed
    hands     INTEGER NOT NULL,  -- the player's latest pair-game hands the audit covers (at most)
    samples   SMALLINT NOT NULL,
    decisions INTEGER,           -- decisions graded
    message   VARCHAR
);

-- move_analysis.hindsight (replay.analysis.hindsight): how much better the
-- played move did than the mean alternative on the real deal, minus the
-- same on the deals the mover could face; the omniscience statistic's term
-- (reports.cheats). Worked out at ingest from then on; here for the rows
-- already stored.
ALTER TABLE move_analysis ADD COLUMN hindsight DOUBLE;
UPDATE move_analysis SET hindsight =
    (dd - list_avg(list_transform(alternatives, lambda a: a.dd)))
    - (pimc - list_avg(list_transform(alternatives, lambda a: a.pimc)))
WHERE NOT forced AND pimc IS NOT NULL AND len(alternatives) > 1;
