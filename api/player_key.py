"""A player's own key: it writes that player's training progress, nothing else.

Answering a training position is a write, and writes need the desk's token
(api.middleware.WriteGuard). A player who keeps their own progress should
not hold that token, so the token holder gives them a key of their own
(`replay train-key PLAYER`, or ``POST /api/train/key`` with the token):

    key = "pk-" + first 32 hex digits of HMAC-SHA256(token, "replay train key\\0" + player id)

Nothing is stored: the server derives the key again from its token and the
player named in the answer, and compares. So a key is the player's alone
(another player's key, or a made-up one, is refused), it works until the
token changes (changing the token revokes every player's key at once), and
it grants only the writes listed in :data:`PLAYER_KEY_PATHS`, only for
its player.

>>> k = player_key("s3cret-token", "p-1")
>>> k.startswith("pk-") and len(k) == 35 and looks_like_key(k)
True
>>> key_matches("s3cret-token", "p-1", k), key_matches("s3cret-token", "p-2", k)
(True, False)
>>> key_matches("another-token", "p-1", k)
False
"""

from __future__ import annotations

import hashlib
import hmac
import re
from typing import Final

__all__ = ["PLAYER_KEY_PATHS", "SCOPE_KEY", "key_matches", "looks_like_key", "player_key"]

#: The writes a player's key may make (each route checks the key against its player).
PLAYER_KEY_PATHS: Final = frozenset({"/api/train/answer", "/api/puzzles/answer"})

#: Where the write guard leaves a player's key for the route (the ASGI scope).
SCOPE_KEY: Final = "replay.player_key"

_PREFIX: Final = "pk-"
_SHAPE: Final = re.compile(r"^pk-[0-9a-f]{32}$")


def player_key(token: str, player: str) -> str:
    """The key of `player` under the desk's `token`."""
    mac = hmac.new(token.encode(), b"replay train key\0" + player.encode(), hashlib.sha256)
    return _PREFIX + mac.hexdigest()[:32]


def looks_like_key(given: str) -> bool:
    """Whether a bearer credential has a player key's shape (the write guard
    tries the token first: a token of that shape is still the token)."""
    return _SHAPE.match(given) is not None


def key_matches(token: str, player: str, given: str) -> bool:
    """Whether `given` is `player`'s key (compared in constant time)."""
    return hmac.compare_digest(player_key(token, player).encode(), given.encode())
