-- 019: the read grade (replay.analysis, replay.belief; docs/analysis.md):
-- each move's mean value over the deals the mover could face, each deal
-- weighted by how likely the other seats' observed plays were in it under
-- the family's play model (where that model beats "every legal move alike"
-- on held-out hands; NULL elsewhere).
--
-- move_analysis:
--   reads: one entry per alternative, in the order of `alternatives`: the
--     read value and its 95% interval (NULL where there is no read grade);
--   read, read_best, read_loss: the played move's, the best's, their gap;
--   read_ess: the weighted deals' effective sample size;
--   class: now by read where there is one (else pimc, as before);
--   class_uniform: the class by pimc alone;
--   too_close: the loss reaches a class its evidence does not (the loss's
--     interval leaves the class open, or too few effective deals).
-- hand_analysis:
--   lost, stake, accuracy: now on read where a decision has one;
--   lost_uniform, stake_uniform, accuracy_uniform: on pimc alone;
--   read_model: the play model the read grade weighed by (family:version).

ALTER TABLE move_analysis ADD COLUMN reads STRUCT(read DOUBLE, read_lo DOUBLE, read_hi DOUBLE)[];
ALTER TABLE move_analysis ADD COLUMN read DOUBLE;
ALTER TABLE move_analysis ADD COLUMN read_best DOUBLE;
ALTER TABLE move_analysis ADD COLUMN read_loss DOUBLE;
ALTER TABLE move_analysis ADD COLUMN read_ess DOUBLE;
ALTER TABLE move_analysis ADD COLUMN class_uniform VARCHAR;
ALTER TABLE move_analysis ADD COLUMN too_close BOOLEAN;
ALTER TABLE hand_analysis ADD COLUMN lost_uniform DOUBLE[];
ALTER TABLE hand_analysis ADD COLUMN stake_uniform DOUBLE[];
ALTER TABLE hand_analysis ADD COLUMN accuracy_uniform DOUBLE[];
ALTER TABLE hand_analysis ADD COLUMN read_model VARCHAR;
