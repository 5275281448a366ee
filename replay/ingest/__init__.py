"""`replay ingest` / `replay reingest`: logs in, validated rows out, into DuckDB.

The flow of one run, module by module::

    files ──keep (sha256 + copy to data/logs/)──► kept copies              keep.py
          ──route (main process: bytes only)───► lines grouped by match;   route.py, lines.py
                                                  a match is ready at its match_end
          ──chunks of whole matches (shm.py)──► process pool (pool.py): worker.py:
                                       parse, validate_match, Arrow frames,
                                       one Arrow batch in spool/, named by its
                                       content (batch_id.py)
          ──loader thread (if we own the DB)──► store.load_batches: each  load.py
                                       batch as it comes, 8 a transaction,
                                       committed once the kept copies they
                                       name are durable
          ──final batch──► log_files rows and the lines of no match       route.py

:func:`ingest` and :func:`reingest` (run.py) drive it; their command line
is `cli.ingest`. With ``--cluster`` (pool.py) the pool is a dask.distributed
cluster: the tasks carry their lines, the results the batch's files, written
into the spool here (docs/scale.md). validate.py is ``replay validate
--cluster``: the same routing, the reports sent back, nothing stored.
"""

from replay.ingest.keep import KeptFile, keep_file
from replay.ingest.lines import read_match_records
from replay.ingest.load import IngestSummary
from replay.ingest.route import CHUNK_HANDS
from replay.ingest.run import (
    AUTO_BUDGET,
    AUTO_SAMPLES,
    INGEST_SAMPLES,
    MEMORY_LIMIT,
    ingest,
    reingest,
)
from replay.ingest.validate import validate_routed
from replay.ingest.worker import revalidate

__all__ = [
    "AUTO_BUDGET",
    "AUTO_SAMPLES",
    "CHUNK_HANDS",
    "INGEST_SAMPLES",
    "MEMORY_LIMIT",
    "IngestSummary",
    "KeptFile",
    "ingest",
    "keep_file",
    "read_match_records",
    "reingest",
    "revalidate",
    "validate_routed",
]
