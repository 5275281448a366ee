"""The software's identity: version, the sha256 of its installed files, the specs it implements.

A certificate names the code that made it so that a lab can tell whether
two certificates came from the same build. Each package's digest is the
SHA-256 of the sorted lines ``path TAB sha256(file)`` over its files (the
Python sources, SQL migrations, templates and data files, not caches); the
C extension (``replay._native``) is hashed as the shared library loaded.
"""

from __future__ import annotations

import hashlib
import importlib.util
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Final

from replay import __version__, accel
from replay.deal import SCHEME

__all__ = ["PACKAGES", "SPECS", "software_identity"]

#: The packages of the distribution, hashed one by one.
PACKAGES: Final = ("replay", "reports", "api", "cli")
#: What the code implements: the table-log format, the rules, the deal scheme.
SPECS: Final = {"table_log": "v1", "rules": "v1", "deal_scheme": SCHEME}
_SKIP: Final = ("__pycache__",)
_NATIVE: Final = (".so", ".pyd")


def _file_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _package_digest(name: str) -> dict[str, Any]:
    spec = importlib.util.find_spec(name)  # found, not imported: reports may not import api
    if spec is None or not spec.submodule_search_locations:
        return {"package": name, "found": False}
    root = Path(next(iter(spec.submodule_search_locations)))
    lines = []
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if not p.is_file() or any(part in _SKIP for part in p.parts) or p.suffix in _NATIVE:
            continue
        if p.suffix in (".pyc", ".o"):
            continue
        lines.append(f"{rel}\t{_file_hash(p)}\n")
    digest = hashlib.sha256("".join(lines).encode()).hexdigest()
    return {"package": name, "found": True, "files": len(lines), "sha256": digest}


def _version() -> str:
    try:
        return version("domino-replay")
    except PackageNotFoundError:  # a source tree never installed
        return __version__


@cache
def software_identity() -> dict[str, Any]:
    """Version, per-package digests, the C extension's hash (or that it is not loaded), specs."""
    native = accel.native
    native_file = getattr(native, "__file__", None) if native is not None else None
    return {
        "name": "domino-replay",
        "version": _version(),
        "packages": [_package_digest(name) for name in PACKAGES],
        "c_extension": (
            {"loaded": True, "file": Path(native_file).name, "sha256": _file_hash(Path(native_file))}
            if native_file
            else {"loaded": False}
        ),
        "specs": dict(SPECS),
    }
