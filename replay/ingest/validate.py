"""`replay validate --cluster`: files routed as an ingest routes them, each
match validated on a pool, the reports sent back; nothing is kept or stored.

It lives beside the routing it reuses (:class:`replay.ingest.route.Run`,
``kind="validate"``); :mod:`replay.validate` validates in this process.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from replay.findings import FileReport, ValidationReport
from replay.ingest.keep import KeptFile
from replay.ingest.load import Progress
from replay.ingest.route import CHUNK_HANDS, Run
from replay.reader import iter_paths
from replay.validate import seed_reuse, with_findings

__all__ = ["validate_routed"]


def validate_routed(paths: Sequence[str | os.PathLike[str]], pool: Any) -> ValidationReport:
    """`replay validate` with the matches validated by ``pool`` (a cluster):
    the same report as :func:`replay.validate.validate_paths`.

    The files are read where they are (nothing is kept) and routed as an
    ingest routes them; the workers send back each match's report (moves
    not kept, as the command line's). SEED_REUSED, which compares all the
    matches, is found here, and the matches come in the order validate
    gives them (of their first line, file by file).
    """
    found = list(iter_paths(paths))
    files = []
    for i, path in enumerate(found):
        try:
            size = path.stat().st_size
        except OSError:  # read as validate reads it: the error is a finding of the file
            size = 0
        # no kept copy: the "sha256" only tells the files apart
        files.append(KeptFile(os.fspath(path), f"#{i}", size, os.fspath(path), path))
    run = Run(None, files, mode="add", conn=None, pool=pool, workers=max(getattr(pool, "_max_workers", 1), 1),
               chunk_hands=CHUNK_HANDS, progress=Progress(1, None), kind="validate")  # fmt: skip
    try:
        run.route()
    finally:
        run.close()
    place = {f.path: i for i, f in enumerate(files)}
    bad = [0] * len(files)
    for per in run.worker_bad.values():
        for sha, n in per.items():
            bad[int(sha[1:])] += n
    reports = [rep for key in sorted(run.reports, key=run.first.__getitem__) for rep in run.reports[key]]
    reuse = seed_reuse(reports)
    top = [f for fs in (*run.top.values(), *run.worker_top.values()) for f in fs]
    top.sort(key=lambda f: (place.get(f.file or "", len(files)), f.line or 0))
    return ValidationReport(
        files=tuple(FileReport(f.path, run.lines[i], run.top_bad[i] + bad[i]) for i, f in enumerate(files)),
        findings=tuple(top),
        matches=tuple(with_findings(r, reuse.get(r.match, [])) for r in reports),
    )
