"""What the tests share (and the tests' composition root): the tables they play, the random deals and rules
they draw, hypothesis strategies over them, and which build of the C
accelerator they run against.

The tables and generators live in tests/conformance/tables.py (the
conformance corpus is made of the same tables); import them from here.

A test of a C twin calls :func:`require_native` (or uses
:data:`needs_native`): without the extension it is skipped, except where the
build is expected (``CI`` set and ``REPLAY_PURE`` not), where it fails.
"""

from __future__ import annotations

import importlib.util
import os
import random
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import strategies as st

import replay.ingest  # noqa: F401  (hands the store its revalidator)
from replay.accel import native
from replay.engine import HandState
from replay.rules import Rules
from reports import derived
from tests.conformance.tables import (
    MATCH_OPTIONS,
    PROFILE_NAMES,
    RULES,
    SCORE_OPTIONS,
    TABLE_IDS,
    TABLES,
    Table,
    deal,
    random_hand,
    random_rules,
    rules_of,
    table_id,
)

# the tests' composition root: the store's subscribers, wired as the `replay`
# command and the app factory wire them
derived.subscribe()

__all__ = [
    "MATCH_OPTIONS",
    "PROFILE_NAMES",
    "RULES",
    "SCORE_OPTIONS",
    "TABLES",
    "TABLE_IDS",
    "Table",
    "deal",
    "hands",
    "native_built",
    "native_expected",
    "needs_native",
    "random_hand",
    "random_rules",
    "require_native",
    "rules_of",
    "rules_drawn",
    "seeds",
    "table_id",
    "table_rules",
    "tables",
]

# -- which build runs ----------------------------------------------------------------


def native_expected() -> bool:
    """Whether the C extension must be there: on CI, unless the pure leg runs."""
    return bool(os.environ.get("CI")) and not os.environ.get("REPLAY_PURE")


def native_built() -> bool:
    """Whether ``replay._native`` is compiled here (REPLAY_PURE=1 or not)."""
    return importlib.util.find_spec("replay._native") is not None


_MISSING = "replay._native is not built here (or REPLAY_PURE is set)"
_EXPECTED = "replay._native is not built, and CI expects it (REPLAY_PURE=1 runs without it)"


def require_native(what: str = "this test", *, module: bool = False) -> Any:
    """``replay._native``, else skip (a whole module with `module`), or fail
    where the build is expected."""
    if native is not None:
        return native
    if native_expected():
        pytest.fail(f"{what}: {_EXPECTED}", pytrace=False)
    pytest.skip(f"{what}: {_MISSING}", allow_module_level=module)


#: Marks a test of the C accelerator: skipped without it, failed where CI expects it.
needs_native = pytest.mark.native


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "native: tests the C accelerator (replay._native)")


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("native") is not None:
        require_native(item.name)


def pytest_report_header() -> str:
    if native is not None:
        return f"replay._native: built ({native.__file__})"
    why = "REPLAY_PURE is set" if os.environ.get("REPLAY_PURE") else "not built"
    return f"replay._native: not used ({why}): the pure-Python path"


# -- hypothesis strategies -----------------------------------------------------------

#: Seeds for random.Random: the tests draw deals and moves from one.
seeds = st.integers(0, 2**32 - 1)

#: A table of the shared list, and its rules.
tables = st.sampled_from(TABLES)
table_rules = st.sampled_from(RULES)


def rules_drawn(options: dict[str, list[Any]] = SCORE_OPTIONS, at_most: int | None = None) -> st.SearchStrategy[tuple[str, Rules]]:
    """(profile, rules) as :func:`random_rules` draws them."""
    return seeds.map(lambda seed: random_rules(random.Random(seed), options, at_most=at_most))


def hands(rules: st.SearchStrategy[Rules] = table_rules) -> st.SearchStrategy[HandState]:
    """A hand's first position as :func:`random_hand` deals it."""
    return st.tuples(rules, seeds).map(lambda rs: random_hand(rs[0], random.Random(rs[1])))


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium (Debian's) for a module's browser tests."""
    from playwright.sync_api import sync_playwright

    from tests.test_browser import ARGS, CHROMIUM

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            yield b
        finally:
            b.close()
