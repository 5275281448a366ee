"""Positional constructors for frozen, slotted dataclasses, three times faster.

A frozen dataclass's ``__init__`` sets each field through
``object.__setattr__`` (a global lookup and a method call per field); the
validator makes a hand report, a hand score and a match state per hand, so
that is most of their cost. :func:`positional` builds, once, a function
that takes the fields in declaration order and sets each slot through its
descriptor: the same object (equal, same hash), without defaults or
``__post_init__`` (none of our records has one). With the C accelerator
the function is a ``_native.Maker``, which stores the references at the
slots' offsets itself (what those descriptors do), about five times faster
again for a hand report's 25 fields.

>>> from dataclasses import dataclass
>>> @dataclass(frozen=True, slots=True)
... class P:
...     x: int
...     y: int = 0
>>> make = positional(P)
>>> make(1, 2) == P(1, 2), hash(make(1, 2)) == hash(P(1, 2))
(True, True)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar

from replay.accel import native

T = TypeVar("T")

__all__ = ["positional"]


def positional(cls: type[T]) -> Callable[..., T]:
    """``cls(*fields)`` for a frozen slotted dataclass, every field given."""
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.frozen or "__slots__" not in cls.__dict__:
        raise TypeError(f"{cls.__name__} is not a frozen, slotted dataclass")
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__} has a __post_init__")
    names = [f.name for f in dataclasses.fields(cls)]  # type: ignore[arg-type]
    if native is not None:
        maker: Callable[..., T] = native.Maker(cls, tuple(names))
        return maker
    env: dict[str, Any] = {"_new": object.__new__, "_cls": cls}
    body = [f"def make({', '.join(names)}):", "    o = _new(_cls)"]
    for k, name in enumerate(names):
        env[f"_set{k}"] = cls.__dict__[name].__set__
        body.append(f"    _set{k}(o, {name})")
    body.append("    return o")
    exec("\n".join(body), env)  # the way dataclasses writes __init__ itself
    make: Callable[..., T] = env["make"]
    make.__doc__ = f"{cls.__name__}(*fields), positional, without __init__."
    return make
