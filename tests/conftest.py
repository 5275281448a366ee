"""The tests' composition root: the store's subscribers, as the `replay`
command and the app factory wire them (reports.derived, replay.ingest)."""

import replay.ingest  # noqa: F401  (hands the store its revalidator)
from reports import derived

derived.subscribe()
