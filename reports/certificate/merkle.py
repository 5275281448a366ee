"""The Merkle tree of a certificate's hands: leaf hashes, the root, inclusion proofs.

The tree is Certificate Transparency's (RFC 6962, section 2.1): a leaf's
hash is SHA-256(0x00 || leaf data), an inner node's SHA-256(0x01 || left ||
right), and a level with an odd node out carries it up unchanged (which is
RFC 6962's split at the largest power of two below n). Prepending 0x00 and
0x01 keeps a leaf from passing for a node.

A leaf is one hand (docs/certificate.md, "Completeness"): its data is the
UTF-8 text ``table LF match LF hand LF digest``, where ``digest`` is the
hex SHA-256 of the hand's log lines joined by LF, each line as the server
wrote it less its end of line, in ``seq`` order. Hand 0 of a match holds
its lines that name no hand (match_start, seat changes, lead draw,
match_end). Leaves are ordered by table, match (byte order of the ids),
then hand.

>>> leaves = [leaf_hash(leaf_data("t", "m", h, "00")) for h in range(5)]
>>> root = merkle_root(leaves)
>>> all(verify_path(leaves[i], inclusion_path(leaves, i), root) for i in range(5))
True
>>> verify_path(leaves[1], inclusion_path(leaves, 2), root)
False
>>> merkle_root([]) == hashlib.sha256(b"").digest()
True
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Literal

__all__ = [
    "Step",
    "inclusion_path",
    "leaf_data",
    "leaf_hash",
    "lines_digest",
    "merkle_root",
    "verify_path",
]

#: One step of an inclusion proof: the sibling's side and its hash.
Step = tuple[Literal["L", "R"], bytes]


def lines_digest(lines: Sequence[bytes]) -> str:
    """Hex SHA-256 of a hand's lines joined by LF (ends of line already cut)."""
    return hashlib.sha256(b"\n".join(lines)).hexdigest()


def leaf_data(table: str | None, match: str, hand: int, digest: str) -> bytes:
    """The bytes a hand's leaf hashes (an unknown table is the empty string)."""
    return f"{table or ''}\n{match}\n{hand}\n{digest}".encode()


def leaf_hash(data: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + data).digest()


def _node(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def _up(level: Sequence[bytes]) -> list[bytes]:
    sha = hashlib.sha256  # _node inlined: a million calls
    out = [sha(b"\x01" + a + b).digest() for a, b in zip(level[0:-1:2], level[1::2], strict=True)]
    if len(level) % 2:
        out.append(level[-1])
    return out


def merkle_root(leaves: Sequence[bytes]) -> bytes:
    """The root over leaf hashes (SHA-256 of nothing for no leaf, as RFC 6962)."""
    if not leaves:
        return hashlib.sha256(b"").digest()
    level = list(leaves)
    while len(level) > 1:
        level = _up(level)
    return level[0]


def inclusion_path(leaves: Sequence[bytes], index: int) -> list[Step]:
    """The siblings from leaf ``index`` up to the root."""
    if not 0 <= index < len(leaves):
        raise IndexError(f"leaf {index} of {len(leaves)}")
    path: list[Step] = []
    level, i = list(leaves), index
    while len(level) > 1:
        sibling = i ^ 1
        if sibling < len(level):
            path.append(("L" if sibling < i else "R", level[sibling]))
        level, i = _up(level), i // 2
    return path


def verify_path(leaf: bytes, path: Sequence[Step], root: bytes) -> bool:
    """Does ``leaf`` with ``path`` hash up to ``root``?"""
    h = leaf
    for side, sibling in path:
        h = _node(sibling, h) if side == "L" else _node(h, sibling)
    return h == root
