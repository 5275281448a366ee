-- 001: the first schema of the store (see docs/storage.md).
-- Recomputed values are the truth; the server's claims sit beside them as
-- claimed_*. Tiles are TINYINT ids 0..27 (replay.tiles), seats TINYINT.
-- Big tables (hands, moves, findings, seeds) have no index: rows are
-- replaced a whole match at a time, inside one transaction.

CREATE TABLE log_files (
    sha256    VARCHAR PRIMARY KEY,      -- of the bytes as read (gzip stays gzip)
    path      VARCHAR NOT NULL,         -- first path it was read from
    paths     VARCHAR[] NOT NULL,       -- every path it was read from
    size      BIGINT NOT NULL,
    read_at   TIMESTAMPTZ NOT NULL,
    lines     BIGINT NOT NULL,
    bad_lines BIGINT NOT NULL,
    stored    VARCHAR NOT NULL          -- kept copy, relative to the data dir
);

CREATE TABLE matches (
    match          VARCHAR PRIMARY KEY,
    table_id       VARCHAR,
    profile        VARCHAR,
    rules          JSON,                -- resolved options
    players        TINYINT,
    verdict        VARCHAR NOT NULL,    -- valid / invalid / unreadable
    result         VARCHAR,             -- win / tie / abandoned; NULL while unfinished
    winner         TINYINT,             -- side
    score          INTEGER[],
    notes          VARCHAR[],
    claimed_result VARCHAR,
    claimed_winner TINYINT,
    claimed_score  INTEGER[],
    claimed_notes  VARCHAR[],
    started        TIMESTAMPTZ,
    ended          TIMESTAMPTZ,
    hands          INTEGER NOT NULL,    -- hands listed (cancelled ones included)
    events         INTEGER NOT NULL,    -- lines read for the match
    errors         INTEGER NOT NULL,    -- findings of severity error
    warnings       INTEGER NOT NULL,
    anchor         VARCHAR,
    beacon         VARCHAR,
    rematch_of     VARCHAR,
    first_leader   TINYINT,             -- what a rematch of this match needs
    lead_draw      STRUCT(seat TINYINT, tile TINYINT)[],
    estimates      VARCHAR[],
    batch          VARCHAR NOT NULL     -- the spool batch that stored it
);

CREATE TABLE seats (
    match     VARCHAR NOT NULL,
    seat      TINYINT NOT NULL,
    player    VARCHAR NOT NULL,
    name      VARCHAR,
    bot       BOOLEAN NOT NULL,
    from_hand INTEGER NOT NULL,
    seq       INTEGER NOT NULL
);

CREATE TABLE hands (
    match          VARCHAR NOT NULL,
    hand           INTEGER NOT NULL,
    result         VARCHAR,             -- domino / block / cancelled; NULL: never finished
    winner         TINYINT,             -- seat
    points         INTEGER[],
    score          INTEGER[],
    notes          VARCHAR[],
    claimed_result VARCHAR,
    claimed_winner TINYINT,
    claimed_points INTEGER[],
    claimed_score  INTEGER[],
    claimed_notes  VARCHAR[],
    leader         TINYINT,
    opener         TINYINT,
    blocker        TINYINT,
    dealt          TINYINT[][],         -- tiles dealt, by seat
    stock          TINYINT[],           -- boneyard in drawing order (derived)
    pips           SMALLINT[],          -- pips left per seat at the end
    client_seeds   VARCHAR[],
    server_seed    VARCHAR,
    seed_ok        BOOLEAN,
    deal_ok        BOOLEAN,
    play_ok        BOOLEAN NOT NULL,
    plies          SMALLINT NOT NULL,
    started        TIMESTAMPTZ,
    ended          TIMESTAMPTZ
);

CREATE TABLE moves (
    match       VARCHAR NOT NULL,
    hand        INTEGER NOT NULL,
    ply         SMALLINT NOT NULL,      -- 1-based within the hand
    seq         INTEGER NOT NULL,
    seat        TINYINT NOT NULL,
    kind        VARCHAR NOT NULL,       -- play / pass / draw / yield
    tile        TINYINT,
    on_end      VARCHAR,                -- left / right; NULL for the first tile
    left_end    TINYINT NOT NULL,       -- ends after the move, -1 before the first tile
    right_end   TINYINT NOT NULL,
    pips        SMALLINT[] NOT NULL,    -- pips left per seat after the move
    stock       TINYINT NOT NULL,       -- boneyard tiles left after the move
    legal       TINYINT NOT NULL,       -- legal moves the seat had
    forced      BOOLEAN NOT NULL,
    legal_moves SMALLINT[] NOT NULL,    -- move codes: tile*2+end (0 left, 1 right), -1 pass, -2 draw, -3 yield
    error       VARCHAR,                -- finding code of this move
    ts          TIMESTAMPTZ
);

CREATE TABLE findings (
    match    VARCHAR,                   -- NULL: a line that belongs to no match
    hand     INTEGER,
    seq      INTEGER,
    code     VARCHAR NOT NULL,
    severity VARCHAR NOT NULL,
    message  VARCHAR NOT NULL,
    file     VARCHAR,                   -- path as read, for line findings
    line     BIGINT,
    sha256   VARCHAR                    -- the kept file of that line
);

CREATE TABLE players (
    player     VARCHAR PRIMARY KEY,
    name       VARCHAR,                 -- latest name seen
    bot        BOOLEAN NOT NULL,        -- ever seated as a bot
    matches    INTEGER NOT NULL,
    first_seen TIMESTAMPTZ,
    last_seen  TIMESTAMPTZ
);

CREATE TABLE match_files (
    match  VARCHAR NOT NULL,
    sha256 VARCHAR NOT NULL,
    lines  INTEGER NOT NULL             -- lines of the match in that file
);

CREATE TABLE seeds (
    seed  VARCHAR NOT NULL,             -- lower-case hex
    match VARCHAR NOT NULL,
    hand  INTEGER NOT NULL              -- 0: the match's anchor
);

CREATE TABLE batches (
    batch     VARCHAR PRIMARY KEY,
    loaded_at TIMESTAMPTZ NOT NULL,
    mode      VARCHAR NOT NULL,         -- add / replace
    matches   INTEGER NOT NULL,         -- matches stored or replaced by it
    files     INTEGER NOT NULL          -- log files it recorded
);
