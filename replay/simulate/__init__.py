"""The simulator: whole matches of bot players, written as table logs.

Players come from a pool with stable ids and names (`make_pool`), each
playing one bot style of `replay.bots`; `simulate(SimConfig(...))` gives a
run's lines, a pure function of its config. `defect_log(code)` writes
instead a tiny log with one planted error of that finding code.

- `config`: `SimConfig`, the player pool, `SimStats`.
- `match`: one match (`SimMatch`), its time stamps, and the hooks that
  plant an error in play (`Plant`).
- `run`: tables of matches, mixed in time order (`simulate`).
- `defects`: the catalogue of planted defects (`DEFECTS`, `defect_log`).
- `writer`: lines to a file, gzipped or not (`write_lines`).

The command line, `replay simulate`, is `cli.simulate`.

>>> import orjson
>>> cfg = SimConfig(profiles=("domena_2p",), matches=1, seed=7)
>>> lines = list(simulate(cfg))
>>> lines[0][:40]
b'{"type":"match_start","match":"m-7-0001"'
>>> orjson.loads(lines[-1])["type"]
'match_end'
"""

from replay.simulate.config import NAMES, Player, SimConfig, SimStats, make_pool
from replay.simulate.defects import DEFECTS, defect_log
from replay.simulate.match import CHAIN_LENGTH, SimMatch, bot_for
from replay.simulate.run import simulate
from replay.simulate.writer import write_lines

__all__ = [
    "CHAIN_LENGTH",
    "DEFECTS",
    "NAMES",
    "Player",
    "SimConfig",
    "SimMatch",
    "SimStats",
    "bot_for",
    "defect_log",
    "make_pool",
    "simulate",
    "write_lines",
]
