-- 018: each hand's log lines as one digest, kept with the hand (replay.store.line_digests,
-- docs/certificate.md): the hex SHA-256 of the hand's lines joined by LF in seq order,
-- and how many lines. A certificate's Merkle leaves are read from here instead of
-- hashing every kept log again.
--
-- hands: the lines naming that hand; matches: the match's lines naming no hand
-- (the certificate's "hand 0"). The ingest writes them; a match with no line of a
-- hand gets the digest of no line and 0. Rows stored before this version have NULL:
-- a certificate hashes their kept logs as before, and `replay reingest` stores them.

ALTER TABLE hands ADD COLUMN log_digest VARCHAR;
ALTER TABLE hands ADD COLUMN log_lines INTEGER;
ALTER TABLE matches ADD COLUMN log_digest VARCHAR;
ALTER TABLE matches ADD COLUMN log_lines INTEGER;
