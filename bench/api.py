"""Latency of the replay page (with its move list, best moves and principal
lines) and the player report under 20 concurrent clients.

Builds (once, cached under /tmp) a store of N simulated hands with the
simulator and the ingest module (the analysis rows synthesized, bench/synth.py:
analysing a million hands takes days), starts `replay serve` in a subprocess on a
free loopback port, and sends a bounded number of requests from 20 client
threads (http.client, keep-alive): replay pages of random hands, then player
reports (every player once, cold, then a mixed round). Prints p50/p95 per
kind; the headline figures come last, one per line.

Replay pages are measured two ways: random hands (every request reads a
match the server has not read yet: the worst case) and reviewer sessions
(each client opens a match and steps through its hands in order, as the
"hand n →" links do).

The review: a viewer of a hand gets the page (the move list and each
decision's best move are drawn in it) and its JSON twin, which carries the
principal lines and their reasons (the page's script fetches it). Sessions
of other matches are viewed twice: first as nobody has before (the server
works the lines out, about 60 ms of CPU a hand, and stores them), then
after a restart of the server (a new process: the lines are read from the
store, nothing is searched). `replay_p95_ms` is the p95 of the page and its
twin in that second pass; `lines_first_view_p95_ms` the twin's p95 in the
first.

    python bench/api.py            # 20,000 hands (< 1 min once cached)
    python bench/api.py --full     # 1,000,000 hands
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import httpx

PROFILES = (
    "international", "domena_2p", "pr_3p", "puerto_rico", "venezuela", "dominican",
    "quinientos", "pase_sureno", "doubles_in_boneyard", "domena_4p",
)


def build(hands: int, players: int, where: Path) -> Path:
    """The cached store for `hands` hands (simulated, then ingested).

    The store is ingested again (from the cached log) when it was built
    under an older schema: a store migrated on open lacks what ingest fills
    in (the packed replays of migration 008), and would measure old code.
    """
    from replay.ingest import ingest
    from replay.simulate import SimConfig, simulate, write_lines
    from replay.store import migrations

    db = where / "data" / "replay.duckdb"
    ready = where / "READY"
    stamp = f"built with schema {migrations()[-1][0]}\n"
    if ready.exists() and ready.read_text() == stamp:
        with_analysis(db)
        return db
    log = where / "sim.jsonl.gz"
    t0 = time.perf_counter()
    if not log.exists():  # written under another name, renamed when whole
        where.mkdir(parents=True, exist_ok=True)
        cfg = SimConfig(profiles=PROFILES, hands=hands, seed=2026, players_pool=players,
                        tables=len(PROFILES))
        part = where / "sim.part.gz"
        write_lines(simulate(cfg), part, gz=True)
        part.rename(log)
    t1 = time.perf_counter()
    shutil.rmtree(where / "data", ignore_errors=True)
    (where / "data").mkdir(parents=True)
    summary = ingest([log], db=db, workers=2)
    t2 = time.perf_counter()
    print(f"built {hands:,} hands: simulate {t1 - t0:.0f} s, ingest {t2 - t1:.0f} s "
          f"({summary.matches:,} matches)", file=sys.stderr)
    ready.write_text(stamp)
    with_analysis(db)
    return db


def with_analysis(db: Path) -> None:
    """Synthetic analysis rows (bench/synth.py) for a store ingested without
    the analysis, and the ratings and insights refreshed over them: the
    player report then carries its luck, skill and accuracy at full size."""
    import duckdb

    sys.path.append(str(Path(__file__).resolve().parent))  # last: this file is not the api package
    from synth import has_analysis, pack_missing, synthesize_analysis

    from reports.derived import keep_ratings

    conn = duckdb.connect(str(db))
    try:
        if not has_analysis(conn):
            synthesize_analysis(conn, say=lambda m: print(m, file=sys.stderr))
        t0 = time.perf_counter()
        packed = pack_missing(conn)  # a store analysed before migration 022
        if packed:
            conn.execute("CHECKPOINT")
            print(f"the replay's analysis of {packed:,} matches packed in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
        if not conn.execute("SELECT 1 FROM insight_matches LIMIT 1").fetchall():
            t0 = time.perf_counter()
            keep_ratings(conn)
            conn.execute("CHECKPOINT")
            print(f"ratings and insights refreshed in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    finally:
        conn.close()


def targets(db: Path, n: int, seed: int) -> tuple[list[str], list[list[str]], list[str]]:
    """Random finished hands (URLs), reviewer sessions (the hands of random matches,
    in order), and every non-bot player."""
    from urllib.parse import quote

    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        every = con.execute(
            "SELECT match, hand FROM hands WHERE result IS NOT NULL ORDER BY match, hand"
        ).fetchall()
        players = [r[0] for r in con.execute(
            "SELECT player FROM players WHERE NOT bot ORDER BY player").fetchall()]
    finally:
        con.close()
    rng = random.Random(seed)

    def url(m: str, h: int) -> str:
        return f"/matches/{quote(m, safe='')}/hands/{h}"

    hands = [url(m, h) for m, h in rng.sample(every, min(n, len(every)))]
    by_match: dict[str, list[int]] = {}
    for m, h in every:
        by_match.setdefault(m, []).append(h)
    sessions: list[list[str]] = []
    for m in rng.sample(sorted(by_match), len(by_match)):
        if sum(len(x) for x in sessions) >= n:
            break
        sessions.append([url(m, h) for h in by_match[m]])
    return hands, sessions, players


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve(db: Path, port: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "REPLAY_TOKEN": ""}
    proc = subprocess.Popen(
        # no background sampling (replay serve --deepen): this measures the pages alone
        [sys.executable, "-m", "replay", "serve", "--db", str(db), "--port", str(port), "--deepen", "0"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"server exited: {proc.stderr.read().decode() if proc.stderr else ''}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/api/summary", timeout=5).status_code == 200:
                return proc
        except httpx.HTTPError:
            time.sleep(0.2)
    proc.terminate()
    raise SystemExit("server did not start")


def hammer(base: str, sessions: Sequence[Sequence[str]], clients: int, order: list[str] | None = None) -> list[float]:
    """Run every session (URLs fetched in order by one client), `clients` at a
    time; the latency of every request in ms (asserting 200s), and in `order`
    the URL of each.

    Each client thread keeps one connection (http.client: the lightest
    client, so that the clients, on the same two cores, steal little).
    """
    host, port = base.removeprefix("http://").split(":")
    lock = threading.Lock()
    todo = [list(x) for x in sessions]
    out: list[float] = []
    errors: list[str] = []

    def worker() -> None:
        conn = http.client.HTTPConnection(host, int(port), timeout=60)
        try:
            while True:
                with lock:
                    if not todo:
                        return
                    urls = todo.pop()
                for url in urls:
                    t = time.perf_counter()
                    conn.request("GET", url)
                    resp = conn.getresponse()
                    resp.read()
                    ms = (time.perf_counter() - t) * 1000
                    with lock:
                        out.append(ms)
                        if order is not None:
                            order.append(url)
                        if resp.status != 200:
                            errors.append(f"{resp.status} {url}")
        finally:
            conn.close()

    threads = [threading.Thread(target=worker) for _ in range(clients)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    if errors:
        raise SystemExit(f"{len(errors)} failed requests, e.g. {errors[:3]}")
    return out


def singles(urls: Sequence[str]) -> list[list[str]]:
    return [[u] for u in urls]


def cpu_ms(pid: int) -> float:
    """CPU time (user + system) of a process so far, in ms (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def children_cpu_ms(pid: int) -> float:
    """CPU time of a process's live children (the server's render workers), in ms."""
    try:
        kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return 0.0
    total = 0.0
    for k in kids:
        with contextlib.suppress(OSError):  # gone meanwhile
            total += cpu_ms(int(k))
    return total


def pct(xs: Sequence[float], p: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]


def line(name: str, xs: Sequence[float], show: Callable[[str], None]) -> None:
    show(f"{name}: n={len(xs)} p50 {pct(xs, 50):.1f} ms, p95 {pct(xs, 95):.1f} ms, "
         f"mean {statistics.fmean(xs):.1f} ms, max {max(xs):.1f} ms")


def viewed(sessions: Sequence[Sequence[str]]) -> list[list[str]]:
    """Each session's hands viewed as a browser does: the page, then its JSON twin."""
    return [[u for url in x for u in (url, "/api" + url)] for x in sessions]


def split(xs: Sequence[float], order: Sequence[str]) -> tuple[list[float], list[float]]:
    """The latencies of pages and of twins, by the URLs `hammer` fetched in `order`."""
    pages = [ms for ms, u in zip(xs, order, strict=True) if not u.startswith("/api/")]
    twins = [ms for ms, u in zip(xs, order, strict=True) if u.startswith("/api/")]
    return pages, twins


def by_match_start(xs: Sequence[float], order: Sequence[str]) -> tuple[list[float], list[float]]:
    """The latencies of each match's first request (its page, which reads the
    match) and of the others, by the URLs `hammer` fetched in `order`."""
    seen: set[str] = set()
    first, rest = [], []
    for ms, u in zip(xs, order, strict=True):
        match = u.removeprefix("/api").rsplit("/hands/", 1)[0]
        (rest if match in seen else first).append(ms)
        seen.add(match)
    return first, rest


def opening_twins(xs: Sequence[float], order: Sequence[str]) -> list[float]:
    """The latencies of each match's first JSON twin (its lines and the solver's
    replays read, unless the server holds them), by the URLs in `order`."""
    seen: set[str] = set()
    out = []
    for ms, u in zip(xs, order, strict=True):
        if u.startswith("/api/"):
            match = u.removeprefix("/api").rsplit("/hands/", 1)[0]
            if match not in seen:
                out.append(ms)
            seen.add(match)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="1,000,000 hands")
    ap.add_argument("--hands", type=int, default=None, help="hands stored (default 20,000)")
    ap.add_argument("--players", type=int, default=200, help="player pool of the simulator")
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--requests", type=int, default=600, help="replay requests (bounded)")
    ap.add_argument("--views", type=int, default=None,
                    help="hands viewed with their lines, twice (default 120; 600 with --full)")
    ap.add_argument("--cache", default="/tmp/replay-bench-api", help="where the built stores live")
    args = ap.parse_args(argv)
    hands = args.hands or (1_000_000 if args.full else 20_000)
    views = args.views or (600 if args.full else 120)
    db = build(hands, args.players, Path(args.cache) / f"h{hands}-p{args.players}")
    forget_lines(db)
    replay_urls, sessions, players = targets(db, args.requests + views, 7)
    # the review's sessions: matches of their own (their hands never read before)
    review_sessions, taken = [], 0
    while sessions and taken < views:
        x = sessions.pop()
        review_sessions.append(x)
        taken += len(x)
    port = free_port()
    say = print
    load0 = os.getloadavg()
    cpu: dict[str, float] = {}  # a request's CPU: the server's process, its render workers, these clients
    workers: dict[str, float] = {}
    client: dict[str, float] = {}
    base = f"http://127.0.0.1:{port}"
    proc = serve(db, port)

    def phase(name: str, work: Sequence[Sequence[str]], order: list[str] | None = None) -> list[float]:
        before, drew, mine = cpu_ms(proc.pid), children_cpu_ms(proc.pid), time.process_time()
        got = hammer(base, work, args.clients, order)
        cpu[name] = (cpu_ms(proc.pid) - before) / len(got)
        workers[name] = (children_cpu_ms(proc.pid) - drew) / len(got)
        client[name] = (time.process_time() - mine) * 1000 / len(got)
        return got

    try:
        hammer(base, singles(replay_urls[-40:]), args.clients)  # warm the process up
        random_hands = phase("random hands", singles(replay_urls[:args.requests - 40]))
        review = phase("sessions", sessions)
        first_order: list[str] = []
        first = phase("first views", viewed(review_sessions), first_order)
        rng = random.Random(1)
        player_urls = [f"/players/{p}" for p in players]
        cold = phase("player cold", singles(player_urls))
        mixed = phase("player mixed", singles([rng.choice(player_urls) for _ in player_urls]))
        proc.terminate()
        proc.wait(timeout=60)
        proc = serve(db, port)  # a restart: the lines are in the store, not in this process
        hammer(base, singles(replay_urls[-40:]), args.clients)
        again_order: list[str] = []
        again = phase("after restart", viewed(review_sessions), again_order)
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    stored = stored_lines(db)
    first_pages, first_twins = split(first, first_order)
    again_pages, again_twins = split(again, again_order)
    say(f"store: {hands:,} hands, {len(players)} players, {args.clients} concurrent clients, "
        f"{os.cpu_count()} cores shared by server and clients; load average {load0[0]:.1f} before, "
        f"{os.getloadavg()[0]:.1f} after")
    line("replay page, random hands (each one's match not read before)", random_hands, say)
    line("replay page, reviewer sessions (a match's hands in order)", review, say)
    line("first views: page (move list, best moves)", first_pages, say)
    line("first views: JSON twin (lines worked out and stored)", first_twins, say)
    line("after a restart: page", again_pages, say)
    line("after a restart: JSON twin (lines read from the store)", again_twins, say)
    line("after a restart: page and twin", again, say)
    opening, later = by_match_start(again, again_order)
    line("after a restart: a match's first request (the match read)", opening, say)
    line("after a restart: the match's other requests", later, say)
    line("after a restart: a match's first twin", opening_twins(again, again_order), say)
    say(f"hands whose lines the store holds: {stored:,}")
    line("player report, first visit of each player (not cached)", cold, say)
    line("player report, random revisits (cached per store generation)", mixed, say)
    say("server CPU per request: " + ", ".join(f"{k} {v:.1f} ms" for k, v in cpu.items()))
    say("render workers' CPU per request: " + ", ".join(f"{k} {v:.1f} ms" for k, v in workers.items()))
    say("the clients' CPU per request: " + ", ".join(f"{k} {v:.2f} ms" for k, v in client.items()))
    say(f"replay_random_p95_ms: {pct(random_hands, 95):.1f} ms")
    say(f"replay_sessions_p95_ms: {pct(review, 95):.1f} ms")
    say(f"player_report_cold_p95_ms: {pct(cold, 95):.1f} ms")
    say(f"player_report_p95_ms: {pct(cold + mixed, 95):.1f} ms")
    say(f"lines_first_view_p50_ms: {pct(first_twins, 50):.1f} ms")
    say(f"lines_first_view_p95_ms: {pct(first_twins, 95):.1f} ms")
    say(f"replay_p50_ms: {pct(again, 50):.1f} ms")
    say(f"replay_p95_ms: {pct(again, 95):.1f} ms")
    return 0


def forget_lines(db: Path) -> None:
    """No stored lines: every review session starts as a first view."""
    import duckdb

    conn = duckdb.connect(str(db))
    try:
        if conn.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'hand_lines'"
                        ).fetchone()[0]:  # fmt: skip
            conn.execute("DELETE FROM hand_lines")
            conn.execute("CHECKPOINT")
    finally:
        conn.close()


def stored_lines(db: Path) -> int:
    import duckdb

    conn = duckdb.connect(str(db), read_only=True)
    try:
        return int(conn.execute("SELECT count(*) FROM hand_lines").fetchone()[0])
    finally:
        conn.close()


if __name__ == "__main__":
    raise SystemExit(main())
