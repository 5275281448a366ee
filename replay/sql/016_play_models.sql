-- 015: the play models (replay.belief, docs/belief.md): per family of
-- profiles, every fit kept, numbered; the newest of the current features'
-- version is the one used.
--
--   family: partnership, boneyard or individual (replay.belief.family);
--   version: the family's fit number (1, 2, ...);
--   model_version: the features' and fit's version (replay.belief.MODEL_VERSION);
--   first_started, last_started, matches, hands: the training window (the
--     matches fitted on and held out, by start time) and its size;
--   train_choices, test_choices: choices fitted on and held out;
--   loglik_model, loglik_uniform, loglik_heuristic: held-out mean
--     log-likelihood a choice (nats) of the model, of every legal move
--     alike, and of the fixed rule of thumb;
--   model: the coefficients as JSON (PlayModel.to_json).

CREATE TABLE play_models (
    family           VARCHAR NOT NULL,
    version          INTEGER NOT NULL,
    model_version    INTEGER NOT NULL,
    fitted_at        TIMESTAMPTZ NOT NULL,
    first_started    TIMESTAMPTZ,
    last_started     TIMESTAMPTZ,
    matches          INTEGER NOT NULL,
    hands            INTEGER NOT NULL,
    train_choices    INTEGER NOT NULL,
    test_choices     INTEGER NOT NULL,
    loglik_model     DOUBLE,
    loglik_uniform   DOUBLE,
    loglik_heuristic DOUBLE,
    model            JSON NOT NULL,
    PRIMARY KEY (family, version)
);
