"""Parsing speed of table-log lines: the options, and the reader end to end.

Generates a synthetic log (default 200,000 lines of realistic events:
plays, passes and draws dominate, with deals, hand ends and reveals of
four interleaved tables) and measures, per line:

- union_validate_json:   EVENT_ADAPTER.validate_json(line) (discriminated union)
- orjson_union_python:   EVENT_ADAPTER.validate_python(orjson.loads(line))
- orjson_model_python:   orjson.loads, then the model of its type, validate_python
- typeddict_union_json:  a TypedDict twin of the union, validate_json (dicts out)
- peek_model_json:       peek at '{"type":"...' and run that model's validate_json,
                         the union as fallback (what the reader does, chosen)
- regex_construct:       play/pass lines as the server writes them (fixed key
                         order, no extras) matched by one regex, the model built
                         in Python (object.__new__, __dict__ and a fresh
                         fields set through the slot descriptors, as pydantic's
                         own would be); anything else to peek_model_json.
                         Measured and not used: no faster than pydantic-core,
                         whose time goes mostly into allocating the model (its
                         __dict__ and a 728-byte fields set per event), which
                         a Python build must allocate just the same
- reader_plain / reader_gzip: LogReader over the file end to end (read,
  split, decode, parse, records)

It also checks that every option accepts and refuses the same lines of a
small corpus of good and bad lines, with the same error kinds and places
(the orjson options differ only on a JSON array: "dict_type" against
"model_attributes_type"; the reader reports both as MALFORMED_LINE).
TypedDicts are the fastest but give mutable dicts, not the frozen models
(with ``ts_ms``) the rest of the service is written against.

Run: python bench/parse.py [--lines N]. Headline last:
``parse_lines_per_s: N lines/s`` (the reader, plain file, end to end).
"""

from __future__ import annotations

import argparse
import gzip
import random
import re
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, NotRequired

import orjson
from pydantic import BaseModel, TypeAdapter, ValidationError
from typing_extensions import TypedDict

from replay.events import EVENT_ADAPTER, EVENT_MODELS, RFC3339_PATTERN, Pass, Play, dump_event
from replay.reader import LogReader
from replay.tiles import N_TILES, parse_tile, tile_name


def synthetic_lines(n: int, seed: int = 1) -> list[str]:
    """About ``n`` log lines of four interleaved matches, in the log format."""
    rng = random.Random(seed)
    out: list[str] = []
    ms = 1_793_642_645_000
    tables: list[dict[str, Any]] = []

    def ts() -> str:
        nonlocal ms
        ms += rng.randint(200, 6000)
        s, frac = divmod(ms, 1000)
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(s)) + f".{frac:03d}Z"

    def emit(t: dict[str, Any], body: dict[str, Any]) -> None:
        event = {"match": t["match"], "seq": t["seq"], "ts": ts(), **body}
        t["seq"] += 1
        out.append(dump_event(EVENT_ADAPTER.validate_python(event)))

    def new_table(k: int) -> dict[str, Any]:
        t = {"match": f"m-{k:06d}", "seq": 0, "hand": 0, "plan": [], "players": rng.choice([2, 4])}
        seats = [
            {"seat": s, "player": f"p-{rng.randint(10000, 99999)}"} for s in range(t["players"])
        ]
        emit(
            t,
            {
                "type": "match_start",
                "v": 1,
                "table": f"t-{k % 40}",
                "profile": "international",
                "rules": {"match_end": {"kind": "points", "target": 100}},
                "seats": seats,
                "scheme": "deal-v1",
                "anchor": f"{rng.getrandbits(256):064x}",
            },
        )
        return t

    def plan_hand(t: dict[str, Any]) -> None:
        t["hand"] += 1
        hand, p = t["hand"], t["players"]
        deck = list(range(N_TILES))
        rng.shuffle(deck)
        hands = [[tile_name(x) for x in deck[7 * s : 7 * s + 7]] for s in range(p)]
        plan: list[dict[str, Any]] = [
            {
                "type": "deal",
                "hand": hand,
                "client_seeds": [f"{rng.getrandbits(28):07x}" for _ in range(p)],
                "hands": hands,
                "stock": N_TILES - 7 * p,
                "leader": rng.randrange(p),
            }
        ]
        for ply in range(rng.randint(20, 26)):
            seat = ply % p
            r = rng.random()
            if r < 0.12:
                plan.append({"type": "pass", "hand": hand, "seat": seat})
            elif r < 0.22 and p == 2:
                plan.append(
                    {
                        "type": "draw",
                        "hand": hand,
                        "seat": seat,
                        "tile": tile_name(rng.randrange(N_TILES)),
                    }
                )
            else:
                end = None if ply == 0 else rng.choice(("left", "right"))
                plan.append(
                    {
                        "type": "play",
                        "hand": hand,
                        "seat": seat,
                        "tile": tile_name(rng.randrange(N_TILES)),
                        "end": end,
                    }
                )
        plan.append(
            {
                "type": "hand_end",
                "hand": hand,
                "result": "domino",
                "winner": 0,
                "points": [rng.randint(5, 60), 0],
                "score": [0, 0],
            }
        )
        plan.append({"type": "reveal", "hand": hand, "server_seed": f"{rng.getrandbits(256):064x}"})
        t["plan"] = plan

    k = 0
    while len(tables) < 4:
        tables.append(new_table(k))
        k += 1
    while len(out) < n:
        i = rng.randrange(len(tables))
        t = tables[i]
        if not t["plan"]:
            if t["hand"] >= 8:
                emit(t, {"type": "match_end", "result": "win", "winner": 0, "score": [101, 40]})
                tables[i] = new_table(k)
                k += 1
                continue
            plan_hand(t)
        emit(t, t["plan"].pop(0))
    return out


def bad_corpus(good: list[str]) -> list[str]:
    """Lines every option must judge alike: good ones, and each kind of bad one."""
    play = next(s for s in good if '"type":"play"' in s and '"end":"left"' in s)
    deal = next(s for s in good if '"type":"deal"' in s)
    start = next(s for s in good if '"type":"match_start"' in s)
    return [
        play,
        deal,
        start,
        play.replace('"seat":', '"seat":"').replace(',"tile"', '","tile"'),
        play.replace('"end":"left"', '"end":"middle"'),
        play.replace('"hand":', '"hand":-'),
        play.replace(',"end":"left"', ',"end":null,"extra":[1,2]'),
        play.replace('"tile":"', '"tile":"7'),
        play.replace('"seq":', '"seq":1.5,"x":'),
        play.replace('"type":"play",', ""),
        play.replace('"type":"play"', '"type":"nap"'),
        play.replace(".", ","),
        deal.replace('"stock":', '"stock":true,"y":'),
        deal.replace('"hands":[["', '"hands":[["77","'),
        start.replace('"v":1', '"v":true'),
        start.replace('"seats":[{', '"seats":[{"name":3,'),
        start.replace('"rules":{', '"rules":[{').replace('},"seats"', '}],"seats"'),
        "[1,2]",
        "not json",
    ]


def _td_union() -> TypeAdapter[Any]:
    """A TypedDict twin of the event union (same field types, dicts out)."""
    members = []
    for model in EVENT_MODELS.values():
        fields: dict[str, Any] = {}
        for name, f in model.model_fields.items():
            if f.validation_alias:  # Play.face: a second reading of "tile"
                continue
            ann: Any = Annotated[(f.annotation, *f.metadata)] if f.metadata else f.annotation
            fields[name] = ann if f.is_required() else NotRequired[ann]
        members.append(TypedDict(model.__name__, fields))  # type: ignore[operator]
    union: Any = members[0]
    for m in members[1:]:
        union = union | m
    from pydantic import Field

    return TypeAdapter(Annotated[union, Field(discriminator="type")])


def _regex_construct(fallback: Callable[[str], Any]) -> Callable[[str], Any]:
    """The hand-built fast path for play and pass lines (see the module doc)."""
    date = RFC3339_PATTERN[1:-1].replace(r"\d", "[0-9]")  # ASCII digits; no `$`
    head = (
        r'","match":"([^"\\\x00-\x1f]+)","seq":(0|[1-9][0-9]{0,17}),"ts":"(' + date + r')",'
        r'"hand":([1-9][0-9]{0,17}),"seat":(0|[1-9][0-9]{0,17})'
    )
    play_re = re.compile(
        r'\{"type":"play' + head + r',"tile":"([0-6][0-6])","end":(?:null|"(left|right)")\}'
    ).fullmatch
    pass_re = re.compile(r'\{"type":"pass' + head + r"\}").fullmatch
    tiles = {f"{a}{b}": parse_tile(f"{a}{b}") for a in "0123456" for b in "0123456"}
    new = object.__new__
    slots = BaseModel.__dict__
    set_dict = slots["__dict__"].__set__
    set_fields = slots["__pydantic_fields_set__"].__set__
    set_extra = slots["__pydantic_extra__"].__set__
    set_private = slots["__pydantic_private__"].__set__
    play_fields = set(Play.model_fields)
    pass_fields = set(Pass.model_fields)

    def regex_construct(s: str) -> Any:
        kind = s[9:13]
        if kind == "play" and (m := play_re(s)) is not None:
            match, seq, ts, hand, seat, tile, end = m.groups()
            e = new(Play)
            set_dict(e, {"type": "play", "match": match, "seq": int(seq), "ts": ts,
                         "hand": int(hand), "seat": int(seat), "tile": tiles[tile],
                         "end": end, "face": tile})  # fmt: skip
            set_fields(e, play_fields.copy())
        elif kind == "pass" and (m := pass_re(s)) is not None:
            match, seq, ts, hand, seat = m.groups()
            e = new(Pass)
            set_dict(e, {"type": "pass", "match": match, "seq": int(seq), "ts": ts,
                         "hand": int(hand), "seat": int(seat)})  # fmt: skip
            set_fields(e, pass_fields.copy())
        else:
            return fallback(s)
        set_extra(e, None)
        set_private(e, None)
        return e

    return regex_construct


def _verdict(fn: Callable[[str], Any], line: str) -> object:
    """What an option says about a line: ok, or the error kinds and locations."""
    try:
        fn(line)
    except ValidationError as exc:
        if exc.errors()[0]["type"] == "json_invalid":
            return "json_invalid"
        tags = set(EVENT_MODELS)
        return sorted(
            (e["type"], tuple(x for x in e["loc"] if x not in tags)) for e in exc.errors()
        )
    except orjson.JSONDecodeError:
        return "json_invalid"
    return "ok"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lines", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=3, help="best of N runs")
    args = ap.parse_args()

    t0 = time.perf_counter()
    lines = synthetic_lines(args.lines)
    kinds: dict[str, int] = {}
    for s in lines:
        k = s[9 : s.index('"', 9)]
        kinds[k] = kinds.get(k, 0) + 1
    print(
        f"generated {len(lines):,} lines in {time.perf_counter() - t0:.1f} s:",
        ", ".join(
            f"{k} {v / len(lines):.0%}" for k, v in sorted(kinds.items(), key=lambda kv: -kv[1])
        ),
    )

    union_json = EVENT_ADAPTER.validate_json
    union_py = EVENT_ADAPTER.validate_python
    model_py = {k: m.__pydantic_validator__.validate_python for k, m in EVENT_MODELS.items()}
    loads = orjson.loads
    td_json = _td_union().validate_json

    def orjson_model_python(s: str) -> Any:
        obj = loads(s)
        v = model_py.get(obj.get("type")) if type(obj) is dict else None
        return union_py(obj) if v is None else v(obj)

    peek = {k: m.__pydantic_validator__.validate_json for k, m in EVENT_MODELS.items()}

    def peek_model_json(s: str) -> Any:
        v = peek.get(s[9 : s.find('"', 9)]) if s.startswith('{"type":"') else None
        if v is not None:
            try:
                return v(s)
            except ValidationError:
                pass  # the union gives the canonical errors
        return union_json(s)

    regex_construct = _regex_construct(peek_model_json)

    options: dict[str, Callable[[str], Any]] = {
        "union_validate_json": union_json,
        "orjson_union_python": lambda s: union_py(loads(s)),
        "orjson_model_python": orjson_model_python,
        "typeddict_union_json": td_json,
        "peek_model_json": peek_model_json,
        "regex_construct": regex_construct,
    }

    corpus = bad_corpus(lines)
    reference = [_verdict(union_json, s) for s in corpus]
    for s in lines[:20_000]:  # the Python-built models are pydantic's own
        a, b = regex_construct(s), union_json(s)
        assert a == b and repr(a) == repr(b) and a.model_fields_set == b.model_fields_set, s
    rates: dict[str, float] = {}
    for name, fn in options.items():
        agree = sum(_verdict(fn, s) == r for s, r in zip(corpus, reference, strict=True))
        best = float("inf")
        for _ in range(args.repeat):
            t = time.perf_counter()
            for s in lines:
                fn(s)
            best = min(best, time.perf_counter() - t)
        rates[name] = len(lines) / best
        print(
            f"{name:22s} {rates[name]:>10,.0f} lines/s  {best / len(lines) * 1e6:5.2f} us/line"
            f"  same verdicts: {agree}/{len(corpus)}"
        )

    with tempfile.TemporaryDirectory() as tmp:
        plain = Path(tmp) / "synthetic.jsonl"
        data = ("\n".join(lines) + "\n").encode()
        plain.write_bytes(data)
        packed = Path(tmp) / "synthetic.jsonl.gz"
        packed.write_bytes(gzip.compress(data, compresslevel=6))
        for name, path in (("reader_plain", plain), ("reader_gzip", packed)):
            best = float("inf")
            for _ in range(args.repeat):
                reader = LogReader(path)
                t = time.perf_counter()
                for _rec in reader.records():
                    pass
                best = min(best, time.perf_counter() - t)
            assert reader.stats.lines == len(lines) and reader.stats.bad_lines == 0, reader.stats
            rates[name] = len(lines) / best
            print(
                f"{name:22s} {rates[name]:>10,.0f} lines/s  {best / len(lines) * 1e6:5.2f} us/line"
                f"  ({path.stat().st_size / 1e6:.1f} MB)"
            )

    hands = sum(1 for s in lines if s.startswith('{"type":"deal"'))
    print(f"lines per hand: {len(lines) / hands:.1f}")
    print(f"reader_gzip_lines_per_s: {rates['reader_gzip']:.0f} lines/s")
    print(f"hands_per_s_parse_only: {rates['reader_plain'] * hands / len(lines):.0f} hands/s")
    print(f"parse_lines_per_s: {rates['reader_plain']:.0f} lines/s")


if __name__ == "__main__":
    main()
