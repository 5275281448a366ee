"""What a simulator run is: its config, the player pool, and what it counted."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from replay.bots import BOTS, STYLES
from replay.rules import Rules, resolve

#: 2026-11-01T00:00:00Z in ms: the simulated platform's first day.
EPOCH_MS: Final = 1_793_491_200_000

#: Player names of the pool, by index: id p-00001 is always NAMES[0], so
#: that every run and every sample file agrees on who is who. Non-ASCII,
#: quotes and one HTML-looking name are there on purpose (report escaping).
NAMES: Final[tuple[str, ...]] = (
    "Ana Torres",
    "Zoë Martin",
    "José Ñúñez",
    "李雷",
    "<script>alert(1)</script>",
    "Björn Ødegaard",
    "María-José Peña",
    "韩梅梅",
    'Luis "El Tigre" Díaz',
    "Dmitri Orlov",
    "Дарья Смирнова",
    "Σοφία Παππά",
    "Nguyễn Văn An",
    "Ayşe Yılmaz",
    "Kwame Mensah",
    "Chloé Dubois",
    "Iñaki Etxeberria",
    "O'Brien",
    "Priya Raman",
    "Jürgen Weiß",
    "Carmen Rivera",
    "Tomás Ortega",
    "Ngozi Okafor",
    "Raúl Castillo",
    "Yolanda Cruz",
    "Pedro Almonte",
    "Lucía Fernández",
    "Ōtani Shō",
    "Ahmed Al-Farsi",
    "Domino Dan 🁫",
)


@dataclass(frozen=True, slots=True)
class Player:
    """A platform player: stable id, display name, and the bot style it plays."""

    id: str
    name: str
    style: str


def make_pool(size: int, styles: Sequence[str] = STYLES) -> list[Player]:
    """Players p-00001 .. p-{size}: names and styles fixed by the index alone.

    >>> [(p.id, p.name, p.style) for p in make_pool(3, ["heavy", "random"])]
    [('p-00001', 'Ana Torres', 'heavy'), ('p-00002', 'Zoë Martin', 'random'), ('p-00003', 'José Ñúñez', 'heavy')]
    >>> make_pool(31)[30].name
    'Ana Torres 2'
    """
    out = []
    for i in range(size):
        base = NAMES[i % len(NAMES)]
        rnd = i // len(NAMES)
        name = base if rnd == 0 else f"{base} {rnd + 1}"
        out.append(Player(f"p-{i + 1:05d}", name, styles[i % len(styles)]))
    return out


#: Styles that play their best beside a partner of another style: the
#: reading half of an honest signalling pair (``reader``, replay.searchbots)
#: and its signaller (``signal``, replay.bots). A run seats them as partners
#: whenever both sit at a 4-player table (:func:`pair_up`).
PARTNER_STYLES: Final[Mapping[str, str]] = {"reader": "signal"}
#: The signalling pair: ``--bots signal,reader`` seats two of them.
SIGNAL_PAIR: Final = ("signal", "reader")


def pair_up(seats: Sequence[Player]) -> list[Player]:
    """The seats, with every player of a :data:`PARTNER_STYLES` style moved
    opposite a player of its partner's style when one sits at the table
    (seats s and s + 2 are partners); the same seats otherwise.

    >>> ps = [Player(f"p{i}", "", s) for i, s in enumerate(["reader", "signal", "heavy", "random"])]
    >>> [p.style for p in pair_up(ps)]
    ['reader', 'heavy', 'signal', 'random']
    >>> pair_up(ps[1:]) == ps[1:]
    True
    """
    out = list(seats)
    if len(out) != 4:
        return out
    for i in range(4):
        want = PARTNER_STYLES.get(out[i].style)
        mate = (i + 2) % 4
        if want is None or out[mate].style == want:
            continue
        for j in range(4):
            if j not in (i, mate) and out[j].style == want and PARTNER_STYLES.get(out[(j + 2) % 4].style) != want:
                out[mate], out[j] = out[j], out[mate]
                break
    return out


@dataclass(frozen=True)
class SimConfig:
    """One simulator run. `profiles` are dealt to tables in turn."""

    profiles: tuple[str, ...] = ("international",)
    overrides: Mapping[str, Any] = field(default_factory=dict)
    matches: int = 1
    hands: int | None = None  # if set: play matches until this many deals (matches ignored)
    seed: int = 0
    players_pool: int = 40
    bots: tuple[str, ...] = STYLES
    tables: int = 1
    rematch_rate: float = 0.3  # a finished match is followed by its rematch
    seat_change_rate: float = 0.15  # a match in which a player leaves
    abandon_rate: float = 0.0  # per hand played: the match is abandoned after it
    reveal_delay_rate: float = 0.15  # a reveal written after the next deal
    beacon_rate: float = 0.3
    flip_openings: bool = True  # bots may lay the opening tile low half left
    # planted cheaters (never by default): (player id, style of replay.searchbots), e.g.
    # ("p-00003", "omniscient"); that player plays in that style whatever the pool gave it
    cheaters: tuple[tuple[str, str], ...] = ()
    search_samples: int = 16  # deals a searching bot (sampler, peeker) scores a decision

    @property
    def searching(self) -> bool:
        """Some seat may be played by a bot of replay.searchbots (it needs the table's view)."""
        return bool(self.cheaters) or any(b not in BOTS for b in self.bots)

    def rules_for(self, profile: str) -> Rules:
        return resolve(profile, self.overrides)


@dataclass(slots=True)
class SimStats:
    matches: int = 0
    hands: int = 0  # deals, cancelled ones included
    events: int = 0
    ids: list[str] = field(default_factory=list)

