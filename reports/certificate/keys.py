"""The desk's Ed25519 key: made once, kept in the data folder, used to sign certificates.

``keys/desk_ed25519.pem`` (PKCS #8, mode 0600) holds the private key and
never leaves the data folder: the server reads only the public key
(``keys/desk_ed25519.pub.pem``, SubjectPublicKeyInfo), which it shows on
/certificates and at /api/certificates/key. Signing and checking are the
``cryptography`` package's; this module only files the keys.

A signature covers a manifest: the SHA-256 of every file of the
certificate (the JSON, the leaves, the HTML and the PDF), written as
compact JSON with sorted keys. Changing any byte of any file breaks either
the file's hash or the signature.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

__all__ = [
    "ALGORITHM",
    "KeyExists",
    "PublicKey",
    "canonical",
    "init_keys",
    "key_paths",
    "load_private",
    "load_public",
    "public_from_pem",
    "sign",
    "verify",
]

ALGORITHM: Final = "Ed25519"
_DIR: Final = "keys"
_PRIVATE: Final = "desk_ed25519.pem"
_PUBLIC: Final = "desk_ed25519.pub.pem"


class KeyExists(Exception):
    """``init_keys`` on a folder that already has a key (made once; never overwritten)."""


@dataclass(frozen=True)
class PublicKey:
    key: Ed25519PublicKey
    pem: str
    raw: bytes

    @property
    def key_id(self) -> str:
        """The first 16 hex digits of the SHA-256 of the raw 32-byte key."""
        return hashlib.sha256(self.raw).hexdigest()[:16]

    def to_dict(self) -> dict[str, Any]:
        return {"algorithm": ALGORITHM, "key_id": self.key_id, "pem": self.pem,
                "raw_base64": base64.b64encode(self.raw).decode()}  # fmt: skip


def key_paths(data_dir: Path) -> tuple[Path, Path]:
    """Where the private and the public key live under the data folder."""
    return data_dir / _DIR / _PRIVATE, data_dir / _DIR / _PUBLIC


def _public(key: Ed25519PublicKey) -> PublicKey:
    pem = key.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return PublicKey(key, pem.decode(), raw)


def init_keys(data_dir: Path) -> PublicKey:
    """Make the desk's key pair; the private key is created with mode 0600."""
    private_path, public_path = key_paths(data_dir)
    if private_path.exists():
        raise KeyExists(f"{private_path} exists: the desk already has a key")
    private_path.parent.mkdir(parents=True, exist_ok=True)
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    # O_EXCL and the mode at creation: the key is never readable by others, not even briefly
    fd = os.open(private_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(pem)
    pub = _public(key.public_key())
    public_path.write_text(pub.pem)
    return pub


def load_private(data_dir: Path) -> Ed25519PrivateKey:
    private_path, _ = key_paths(data_dir)
    if not private_path.exists():
        raise FileNotFoundError(f"no desk key in {private_path.parent}: run `replay keys init` first")
    key = serialization.load_pem_private_key(private_path.read_bytes(), password=None)
    if not isinstance(key, Ed25519PrivateKey):
        raise ValueError(f"{private_path} is not an Ed25519 key")
    return key


def public_from_pem(pem: str | bytes) -> PublicKey:
    key = serialization.load_pem_public_key(pem.encode() if isinstance(pem, str) else pem)
    if not isinstance(key, Ed25519PublicKey):
        raise ValueError("not an Ed25519 public key")
    return _public(key)


def load_public(data_dir: Path) -> PublicKey | None:
    """The desk's public key, or None before `replay keys init`."""
    _, public_path = key_paths(data_dir)
    return public_from_pem(public_path.read_bytes()) if public_path.exists() else None


def canonical(value: Any) -> bytes:
    """Compact JSON with sorted keys: the bytes a signature covers."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def sign(data_dir: Path, manifest: dict[str, Any]) -> dict[str, Any]:
    """The signature file's content: the manifest, the key, the signature over the manifest."""
    key = load_private(data_dir)
    pub = _public(key.public_key())
    signature = key.sign(canonical(manifest))
    return {
        "algorithm": ALGORITHM,
        "key_id": pub.key_id,
        "public_key": pub.pem,
        "manifest": manifest,
        "signature": base64.b64encode(signature).decode(),
    }


def verify(signed: dict[str, Any], key: PublicKey) -> bool:
    """Does the signature over the manifest check with ``key``?"""
    try:
        key.key.verify(base64.b64decode(signed["signature"]), canonical(signed["manifest"]))
    except (InvalidSignature, KeyError, ValueError):
        return False
    return True
