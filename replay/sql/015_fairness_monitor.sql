-- 015: the live fairness monitor (reports.monitor, docs/certificate.md): after
-- each load the battery runs on each table's latest deals; what it last saw of
-- a table, and the alerts it raised.
--
-- fairness_monitor: one row per table: the deals it counted at its last run,
-- when, and the smallest adjusted p of that run.
-- fairness_alerts: one row per alert: the table, when, the window (deals,
-- first and last match), the failing tests as JSON, and whether the POST to
-- REPLAY_ALERT_URL went through (NULL: no URL set).

CREATE TABLE fairness_monitor (
    table_id   VARCHAR PRIMARY KEY,
    deals      BIGINT NOT NULL,
    checked_at TIMESTAMPTZ NOT NULL,
    verdict    VARCHAR NOT NULL,
    p_min      DOUBLE
);

CREATE TABLE fairness_alerts (
    alert       BIGINT NOT NULL,
    table_id    VARCHAR NOT NULL,
    raised_at   TIMESTAMPTZ NOT NULL,
    deals       BIGINT NOT NULL,
    first_match VARCHAR,
    last_match  VARCHAR,
    verdict     VARCHAR NOT NULL,
    tests       JSON NOT NULL,
    posted      BOOLEAN,
    post_error  VARCHAR
);
