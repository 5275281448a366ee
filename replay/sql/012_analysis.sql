-- 012: the hand analysis (replay.analysis): the value of every move.
--
-- move_analysis: one row per ply of an analysed hand. `alternatives` holds
-- every legal move with its exact value under perfect play (`dd`, points
-- from the mover's side) and, for a decision, its mean over the deals the
-- mover could face (`pimc`, with a 95% interval); `dd`/`pimc` are the
-- played move's, `*_best` the best alternative's, `*_loss` their gap,
-- `class` inaccuracy / mistake / blunder by the points lost on what the
-- mover could know. `stake`: the gap between the best and the worst
-- alternative (what accuracy weighs decisions by). `on_line`: tiles on
-- the line before the move (the phase of the hand). `pimc_best_played`:
-- the played move is the best on what the mover could know; `differs`: no
-- such move is a best one under perfect play (where knowing the hidden
-- tiles would change the choice).
--
-- hand_analysis: one row per finished hand the analysis looked at, `skip`
-- saying why a hand has no plies (cancelled, an illegal move, ...). Values
-- by seat: `par` (the start's value), `result` (what the hand scored),
-- points lost and at stake on what each seat could know and under perfect
-- information, and the accuracies they give.
--
-- Both tables are per match (deleted and replaced with it) and carry the
-- analysis `version`: rows of an older version are redone by
-- `replay analyze --db`. matches.analysis names the batch or run that
-- last wrote a match's analysis rows (the replay pages' caches key on it).

ALTER TABLE matches ADD COLUMN analysis VARCHAR;

CREATE TABLE move_analysis (
    match            VARCHAR NOT NULL,
    hand             INTEGER NOT NULL,
    ply              SMALLINT NOT NULL,
    seat             TINYINT NOT NULL,
    version          INTEGER NOT NULL,
    played           VARCHAR NOT NULL,
    forced           BOOLEAN NOT NULL,
    alternatives     STRUCT(move VARCHAR, dd INTEGER, pimc DOUBLE, pimc_lo DOUBLE, pimc_hi DOUBLE)[] NOT NULL,
    dd               INTEGER NOT NULL,
    dd_best          INTEGER NOT NULL,
    dd_loss          INTEGER NOT NULL,
    pimc             DOUBLE,
    pimc_best        DOUBLE,
    pimc_loss        DOUBLE,
    class            VARCHAR,
    samples          SMALLINT NOT NULL,
    exact            BOOLEAN NOT NULL,
    on_line          TINYINT NOT NULL,
    stake            DOUBLE,
    stake_dd         INTEGER NOT NULL,
    pimc_best_played BOOLEAN,
    differs          BOOLEAN
);

CREATE TABLE hand_analysis (
    match       VARCHAR NOT NULL,
    hand        INTEGER NOT NULL,
    version     INTEGER NOT NULL,
    samples     SMALLINT NOT NULL,
    seed        BIGINT NOT NULL,
    skip        VARCHAR,
    first_seat  TINYINT,
    par         INTEGER[],
    result      INTEGER[],
    lost        DOUBLE[],
    stake       DOUBLE[],
    lost_dd     DOUBLE[],
    stake_dd    DOUBLE[],
    accuracy    DOUBLE[],
    accuracy_dd DOUBLE[]
);
