"""The store: one DuckDB file, its versioned schema, the spool and its one writer.

- :mod:`~replay.store.schema`: where the store lives, migrations, opening it;
- :mod:`~replay.store.rows`: a validated match as Arrow rows (the tables' columns);
- :mod:`~replay.store.player_rows`, :mod:`~replay.store.replay_blob`: the rows
  a worker derives beside them (the player tables, the packed replay);
- :mod:`~replay.store.spool`: batches of rows waiting to be loaded;
- :mod:`~replay.store.load`: the one writer (loading batches, deleting matches);
- :mod:`~replay.store.derive`: what a load derives (SEED_REUSED, players, the
  player tables);
- :mod:`~replay.store.hooks`: the subscribers called after a commit;
- :mod:`~replay.store.read`: thin reads.
"""

from __future__ import annotations

from replay.store.derive import PLAYER_TABLES, HeldRows, derive_player_rows
from replay.store.load import (
    GROUP_BATCHES,
    arrow_on_malloc,
    delete_match,
    load_batch,
    load_batches,
    load_spool,
)
from replay.store.read import (
    get_findings,
    get_hands,
    get_match,
    get_moves,
    stored_files,
    table_counts,
)
from replay.store.schema import (
    DEFAULT_DB,
    NUMBERED,
    Layout,
    StoreLocked,
    default_db_path,
    layout,
    migrate,
    migrations,
    numbered_rows,
    one,
    open_store,
    registered,
    schema_version,
    store_identity,
    transaction,
)
from replay.store.spool import (
    FILE_TABLES,
    SPOOL_SUFFIX,
    BatchRefused,
    Refusal,
    clean_tmp,
    encode_tables,
    fsync_path,
    pending_batches,
    refusals,
    write_batch,
    write_encoded,
)

__all__ = [
    "BatchRefused",
    "DEFAULT_DB",
    "FILE_TABLES",
    "GROUP_BATCHES",
    "NUMBERED",
    "numbered_rows",
    "PLAYER_TABLES",
    "SPOOL_SUFFIX",
    "Refusal",
    "HeldRows",
    "Layout",
    "StoreLocked",
    "arrow_on_malloc",
    "clean_tmp",
    "default_db_path",
    "delete_match",
    "derive_player_rows",
    "encode_tables",
    "fsync_path",
    "get_findings",
    "get_hands",
    "get_match",
    "get_moves",
    "layout",
    "load_batch",
    "load_batches",
    "load_spool",
    "migrate",
    "migrations",
    "one",
    "open_store",
    "pending_batches",
    "refusals",
    "registered",
    "schema_version",
    "store_identity",
    "stored_files",
    "table_counts",
    "transaction",
    "write_batch",
    "write_encoded",
]
