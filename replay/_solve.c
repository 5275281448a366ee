/* replay._native.Solver: the exact value of a hand position under perfect play.
 *
 * The C twin of replay/solver.py (the reference; tests/test_solver.py
 * compares both, and both with a brute-force minimax over replay.engine).
 *
 * A position is what replay.engine.HandState holds that the rest of the
 * hand depends on: the seats' tile masks, the boneyard still to draw (in
 * order), the ends, the seat to move, a drawn tile that must be played,
 * whether the leader may still hand the lead to its partner, and the
 * passes made so far (for pass bonuses). Its value is the hand's points
 * from one side's point of view (docs/analysis.md): points of that side
 * minus the points of every other side; royal_rumble counts penalties, so
 * there the sign is turned. Two sides (pairs, or two players) make the
 * hand zero-sum: values are searched from side 0 and negated for side 1,
 * so one table serves every ply of a hand. With three or four individual
 * players the other seats play as one coalition against the viewer (the
 * "paranoid" reduction), and the viewer is part of the table's key.
 *
 * The search is alpha-beta (fail-soft) with a transposition table of
 * bounds. A seat that cannot play draws (in the boneyard's fixed order)
 * or passes without branching, so only plays (and the lead yield) branch.
 * Entries keep their whole key: a hit is never a collision, so the
 * values are exact (tests compare them with a search without a table).
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "_hand.h"

#define NT N_TILES
#define INF 0x3fffffff
#define MOVE_ROOT (-100) /* mtd(): the position itself, not a move's child */

/* the tile tables are replay/_rules.h's; these two are derived for speed */
static int16_t S_CHUNK[4][128];
static uint8_t S_BITS[1 << 14]; /* bits set in 14 bits (no popcnt instruction assumed) */
static int s_ready = 0;

static void s_init(void)
{
    if (s_ready)
        return;
    for (int k = 0; k < 4; k++)
        for (int m = 0; m < 128; m++) {
            int s = 0;
            for (int i = 0; i < 7; i++)
                if ((m >> i) & 1 && k * 7 + i < NT)
                    s += TILE_PIPS[k * 7 + i];
            S_CHUNK[k][m] = (int16_t)s;
        }
    for (int m = 0; m < (1 << 14); m++)
        S_BITS[m] = (uint8_t)(S_BITS[m >> 1] + (m & 1));
    s_ready = 1;
}

static inline int pips(uint32_t m)
{
    return S_CHUNK[0][m & 127] + S_CHUNK[1][(m >> 7) & 127] + S_CHUNK[2][(m >> 14) & 127] +
           S_CHUNK[3][(m >> 21) & 127];
}

static inline int lowbit(uint32_t m) { return __builtin_ctz(m); }

static inline int nbits(uint32_t m) { return S_BITS[m & 0x3fff] + S_BITS[m >> 14]; }

/* -- the rules and the hand's context ------------------------------------ */

enum { BOUND_PIPS = 1, BOUND_MILO };

typedef struct {
    RulesC spec;      /* the rules as replay.rules.RulesSpec gives them */
    int n;            /* seats */
    int pairs;        /* teams = pairs */
    int sides;        /* 2 with pairs, else n */
    int all_pass;     /* block_end = all_pass: the boneyard goes to the seat after the blocker */
    int pass_on;      /* pass bonuses */
    /* the hand within its match */
    int leader;
    int opening;      /* the tile the hand must open with; -1 any */
    int hand_bonus;   /* paid to a domino's winners (hand_bonuses[hands played before]) */
    int first_block;  /* paid to a won block's winners (0 once the match's first is paid) */
    int bounded;      /* value_range() knows bounds: BOUND_PIPS, BOUND_MILO, or 0 */
    int bonus_max;
} Rules;

typedef struct {
    uint32_t hand[4];
    uint32_t stockmask; /* boneyard tiles still to draw */
    int8_t left, right; /* -1 before the first tile */
    int8_t turn;
    int8_t must;        /* a drawn tile that must be played now; -1 */
    int8_t may_yield;
    int8_t sp;          /* next boneyard tile to draw */
    int8_t np[2];       /* passes made during play, by side (pairs) */
    int8_t first_side;  /* side of the hand's first pass; -1 */
    int16_t pips;       /* pips in the hands and the boneyard */
} Pos;

typedef struct {
    uint64_t k0, k1;
    int32_t lo, hi;
    uint32_t gen;
    uint8_t best; /* the best move found, by move_code() */
    int8_t size; /* tiles left: deeper entries are kept */
} Entry;

_Static_assert(sizeof(Entry) == 32, "two entries fill a 64-byte cache line");

typedef struct {
    PyObject_HEAD
    Rules r;
    int8_t stock[NT];
    int nstock;
    int viewer;       /* seat whose value is searched (side 0's seat with two sides) */
    uint32_t gen;
    Entry *tt;        /* 64-byte aligned in `tt_mem`: a bucket is one cache line */
    void *tt_mem;
    uint64_t mask;    /* buckets - 1; a bucket is two entries */
    unsigned long long nodes;
    int use_tt;
    int mtd;
    int etc;
    int bounds;
    int ttmin;        /* positions of fewer tiles left are not kept */
    unsigned long long probes;
} Solver;

static inline int side_of(const Rules *r, int seat) { return r->pairs ? seat & 1 : seat; }

/* -- scoring a finished hand ---------------------------------------------- */

/* The value of a finished hand from `view`'s side (score_end of replay/_hand.h).
 * domino: `seat` went out with `tile` on ends (l0, r0), leaving (l1, r1).
 * block: `seat` played the blocking tile. */
static int finish(const Solver *sv, const Pos *p, int domino, int seat, int tile, int l0, int r0, int l1, int r1,
                  int view)
{
    const Rules *r = &sv->r;
    int n = r->n, S = r->sides;
    HandEnd h;
    h.domino = domino;
    h.seat = seat;
    h.leader = r->leader;
    h.note = domino ? going_out(&r->spec, tile, l0, r0) : NOTE_NONE;
    h.left = l1;
    h.right = r1;
    for (int s = 0; s < n; s++)
        h.pips[s] = pips(p->hand[s]);
    if (!domino && r->all_pass && p->stockmask)
        h.pips[(seat + 1) % n] += pips(p->stockmask); /* the closing draw takes the boneyard */
    h.passes[0] = p->np[0];
    h.passes[1] = p->np[1];
    h.first_pass = p->first_side;
    h.hand_bonus = r->hand_bonus;
    h.block_bonus = r->first_block;
    HandPoints got;
    score_end(&r->spec, &h, &got);
    int mine = side_of(r, view);
    long v = 0;
    for (int k = 0; k < S; k++)
        v += k == mine ? got.points[k] : -got.points[k];
    return (int)(r->spec.scoring == SCORING_ROYAL_RUMBLE ? -v : v);
}

/* -- moves ------------------------------------------------------------------ */

/* a move: replay/moves.py's code, tile * 2 + end (0 left, 1 right), or MOVE_PASS, MOVE_DRAW, MOVE_YIELD */

/* The plays of the seat to move, in replay.engine's order (tile, then left
 * before right; on equal ends left only; the first tile left only). */
static int gen_plays(const Solver *sv, const Pos *p, int *out)
{
    int k = 0;
    uint32_t h = p->hand[p->turn];
    if (p->left < 0) {
        if (sv->r.opening >= 0) {
            if (h >> sv->r.opening & 1)
                out[k++] = sv->r.opening * 2;
            return k;
        }
        for (uint32_t m = h; m; m &= m - 1)
            out[k++] = lowbit(m) * 2;
        if (p->may_yield)
            out[k++] = MOVE_YIELD;
        return k;
    }
    uint32_t lm = SUIT_MASK[p->left], rm = SUIT_MASK[p->right];
    uint32_t fits = p->must >= 0 ? (1u << p->must) & (lm | rm) : h & (lm | rm);
    for (uint32_t m = fits; m; m &= m - 1) {
        int t = lowbit(m);
        if (lm >> t & 1)
            out[k++] = t * 2;
        if (rm >> t & 1 && p->left != p->right)
            out[k++] = t * 2 + 1;
    }
    return k;
}

/* Apply a play; answers 1 when the hand ended (its value in *value). */
static int do_play(const Solver *sv, Pos *p, int mv, int view, int *value)
{
    int t = mv >> 1, end = mv & 1, seat = p->turn, n = sv->r.n;
    int l0 = p->left, r0 = p->right;
    p->hand[seat] &= ~(1u << t);
    p->pips -= TILE_PIPS[t];
    if (l0 < 0) {
        p->left = TILE_HIGH[t];
        p->right = TILE_LOW[t];
    } else if (end == 0)
        p->left = TILE_OTHER[t][l0];
    else
        p->right = TILE_OTHER[t][r0];
    p->must = -1;
    p->may_yield = 0;
    p->turn = (int8_t)((seat + 1) % n);
    if (!p->hand[seat]) {
        *value = finish(sv, p, 1, seat, t, l0, r0, p->left, p->right, view);
        return 1;
    }
    uint32_t fit = SUIT_MASK[p->left] | SUIT_MASK[p->right];
    uint32_t any = p->stockmask | p->hand[0] | p->hand[1] | p->hand[2] | p->hand[3]; /* unused seats hold 0 */
    if (!(any & fit)) {
        *value = finish(sv, p, 0, seat, t, l0, r0, p->left, p->right, view);
        return 1;
    }
    return 0;
}

/* The seat to move, unable to play, draws the boneyard's next tile (a
 * fitting one must then be played), or with no boneyard passes. */
static void forced_move(const Solver *sv, Pos *p)
{
    if (p->stockmask) {
        int t = sv->stock[(int)p->sp];
        p->sp++;
        p->stockmask &= ~(1u << t);
        p->hand[p->turn] |= 1u << t;
        if ((SUIT_MASK[p->left] | SUIT_MASK[p->right]) >> t & 1)
            p->must = (int8_t)t;
        return;
    }
    if (sv->r.pass_on) {
        int sd = side_of(&sv->r, p->turn);
        if (p->first_side < 0)
            p->first_side = (int8_t)sd;
        p->np[sd]++;
    }
    p->turn = (int8_t)((p->turn + 1) % sv->r.n);
}

static inline int stuck(const Pos *p)
{
    return p->left >= 0 && p->must < 0 && !(p->hand[p->turn] & (SUIT_MASK[p->left] | SUIT_MASK[p->right]));
}

/* Draws and passes until the seat to move can play (no branching there).
 * Answers 1 if nobody can ever play (a position no legal hand reaches). */
static int settle(const Solver *sv, Pos *p)
{
    for (int guard = 0; guard <= NT + 4 * sv->r.n; guard++) {
        if (!stuck(p))
            return 0;
        forced_move(sv, p);
    }
    return 1;
}

/* -- the table ------------------------------------------------------------ */

/* Tiles still in hands and boneyard: the size of the subtree below a position
 * (a boneyard's tiles are drawn and played in it too). */
static inline int tiles_left(const Pos *p)
{
    return nbits(p->hand[0] | p->hand[1] | p->hand[2] | p->hand[3] | p->stockmask);
}

static inline uint64_t mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

/* The key of a position: the whole of it, so a hit is never a collision
 * and one table serves every ply of a hand and every deal searched with it
 * (different deals simply meet different entries). The union of the hands
 * says which tiles are still held; two more masks give each held tile's
 * seat (seat = bit of `a` + 2 * bit of `b`); the boneyard is the solver's
 * (a new one clears the table) and `sp` says how much of it is drawn. The
 * ends are keyed as a pair, lower first: no score tells the left end from
 * the right (a capicua fits both, milo's and the ones bonus's last ends
 * are compared as a pair), so a line and its mirror have one value. */
static inline void make_key(const Pos *p, int view, uint64_t *k)
{
    uint32_t un = p->hand[0] | p->hand[1] | p->hand[2] | p->hand[3];
    uint32_t a = p->hand[1] | p->hand[3], b = p->hand[2] | p->hand[3];
    int e0 = p->left < p->right ? p->left : p->right, e1 = p->left ^ p->right ^ e0;
    k[0] = un | (uint64_t)(e0 + 1) << 28 | (uint64_t)(e1 + 1) << 31 | (uint64_t)p->turn << 34 |
           (uint64_t)view << 36 | (uint64_t)p->may_yield << 38 | (uint64_t)(p->must + 1) << 39 |
           (uint64_t)(uint8_t)p->np[0] << 44 | (uint64_t)(uint8_t)p->np[1] << 51 |
           (uint64_t)(p->first_side + 1) << 58;
    k[1] = a | (uint64_t)b << 28 | (uint64_t)p->sp << 56;
}

static inline Entry *bucket(Solver *sv, const uint64_t *k)
{
    return &sv->tt[(mix(k[0] ^ mix(k[1])) & sv->mask) * 2];
}

/* The entry of key `k` in its bucket `b`, if kept. */
static inline Entry *probe_at(const Solver *sv, Entry *b, const uint64_t *k)
{
    for (int i = 0; i < 2; i++)
        if (b[i].gen == sv->gen && b[i].k0 == k[0] && b[i].k1 == k[1])
            return &b[i];
    return NULL;
}

static Entry *probe(Solver *sv, const uint64_t *k) { return probe_at(sv, bucket(sv, k), k); }

static void store_at(Solver *sv, Entry *b, const uint64_t *k, int size, int lo, int hi, int best)
{
    Entry *e = NULL;
    for (int i = 0; i < 2 && !e; i++)
        if (b[i].gen == sv->gen && b[i].k0 == k[0] && b[i].k1 == k[1])
            e = &b[i];
    if (!e) { /* slot 0 keeps the bigger subtree, slot 1 takes the rest */
        if (b[0].gen != sv->gen || size >= b[0].size) {
            b[1] = b[0];
            e = &b[0];
        } else
            e = &b[1];
    }
    e->k0 = k[0];
    e->k1 = k[1];
    e->lo = lo;
    e->hi = hi;
    e->gen = sv->gen;
    e->best = (uint8_t)best;
    e->size = (int8_t)size;
}

/* -- the search ------------------------------------------------------------- */

static int search(Solver *sv, Pos *p, int alpha, int beta, int view);

/* A move as the table keeps it: the tile and the number of the end it is
 * laid on (not the end's side, as the key does not tell the ends apart). */
static inline int move_code(const Pos *p, int mv)
{
    if (mv < 0)
        return 250 - mv;
    return (mv >> 1) * 8 + (p->left < 0 ? 7 : mv & 1 ? p->right : p->left);
}
/* Smaller subtrees (tiles in hands and boneyard) are cheaper to search again
 * than to look up; with two seats, whose plays commute more often, small
 * positions recur enough to be worth keeping down to 5 tiles. */
#ifndef S_TTMIN
#define S_TTMIN 7
#endif
#ifndef S_TTMIN2
#define S_TTMIN2 5
#endif
#ifndef S_ETCMIN
#define S_ETCMIN 9 /* below, looking every child up costs more than it saves */
#endif

/* The value of the position after `mv` (a play, or the yield). */
static int child(Solver *sv, const Pos *p, int mv, int alpha, int beta, int view)
{
    Pos c = *p;
    if (mv == MOVE_YIELD) {
        c.turn = (int8_t)((c.turn + 2) % sv->r.n);
        c.may_yield = 0;
        return search(sv, &c, alpha, beta, view);
    }
    int v;
    if (do_play(sv, &c, mv, view, &v))
        return v;
    return search(sv, &c, alpha, beta, view);
}

/* The order of a pair game's plays (four seats, the first tile laid), as
 * a score of what the play leaves the other seats: tiles that fit the new
 * ends in the next seat's hand (an opponent; none, so that it must pass,
 * ranks with one), the partner's and the other opponent's, and whether
 * nobody can play (a block); then doubles, heavy tiles and equal ends. Weights fitted to the positions searched (docs/analysis.md, "The
 * moves' order in pair games"): 15% fewer positions than the next seat's
 * tiles alone. */
static int pair_order_key(const Pos *p, int t, uint32_t fit, int hurt, int equal)
{
    int seat = p->turn, nxt = (seat + 1) & 3, par = (seat + 2) & 3, thr = (seat + 3) & 3;
    uint32_t held = (p->hand[seat] & ~(1u << t)) | p->hand[nxt] | p->hand[par] | p->hand[thr];
    int partner = nbits(p->hand[par] & fit), other = nbits(p->hand[thr] & fit);
    return -600 * (hurt ? hurt : 1) - 30 * partner - 200 * other + 280 * !(held & fit) + 20 * TILE_PIPS[t] +
           60 * (TILE_LOW[t] == TILE_HIGH[t]) - 40 * equal;
}

/* The order of the plays with three or four individual players (the
 * first tile laid), searched as the viewer against everyone else: the
 * viewer's plays by the tiles they leave the next seat and all the others
 * (and whether the next seat must pass, or nobody can play); a coalition
 * seat's by the tiles they leave the viewer (and whether he must pass), the
 * next seat's when it is an ally, and whether nobody can play; then heavy
 * tiles and doubles. Weights fitted to the positions searched
 * (docs/analysis.md, "The moves' order"). */
static int solo_order_key(const Solver *sv, const Pos *p, int t, uint32_t fit, int hurt, int view, int ally)
{
    int seat = p->turn, n = sv->r.n;
    uint32_t held = (p->hand[0] | p->hand[1] | p->hand[2] | p->hand[3]) & ~(1u << t);
    int base = TILE_PIPS[t] + 12 * (TILE_LOW[t] == TILE_HIGH[t]), block = !(held & fit);
    if (seat == view) {
        int others = 0;
        for (int s = 0; s < n; s++)
            if (s != seat)
                others += nbits(p->hand[s] & fit);
        return base - 64 * hurt - 32 * others - 192 * (hurt == 0) - 64 * block;
    }
    int viewer_fits = nbits(p->hand[view] & fit);
    return base + (ally ? 64 : -64) * hurt - 144 * viewer_fits - 64 * (viewer_fits == 0) + 256 * block;
}

static int order_key(const Solver *sv, const Pos *p, int mv, int nxt, int ally, int view)
{
    if (mv < 0)
        return -1000;
    int t = mv >> 1, l, r;
    if (p->left < 0) {
        l = TILE_HIGH[t];
        r = TILE_LOW[t];
    } else if (mv & 1) {
        l = p->left;
        r = TILE_OTHER[t][p->right];
    } else {
        l = TILE_OTHER[t][p->left];
        r = p->right;
    }
    uint32_t fit = SUIT_MASK[l] | SUIT_MASK[r];
    int hurt = nbits(p->hand[nxt] & fit);
    if (sv->r.pairs && p->left >= 0)
        return pair_order_key(p, t, fit, hurt, l == r);
    if (sv->r.n >= 3 && p->left >= 0)
        return solo_order_key(sv, p, t, fit, hurt, view, ally);
    return (ally ? hurt : -hurt) * 64 + TILE_PIPS[t] + (TILE_LOW[t] == TILE_HIGH[t] ? 12 : 0);
}

/* Enhanced transposition cutoffs: before searching any move, look each
 * child up (or score it, when it ends the hand); one that already refutes
 * the window answers for the node without a search. */
static int etc_cut(Solver *sv, const Pos *p, const int *mv, int nm, int maxing, int alpha, int beta, int view,
                   int *cut)
{
    for (int i = 0; i < nm; i++) {
        if (mv[i] < 0)
            continue;
        Pos c = *p;
        int v;
        if (do_play(sv, &c, mv[i], view, &v)) {
            if (maxing ? v >= beta : v <= alpha) {
                *cut = v;
                return 1;
            }
            continue;
        }
        if (settle(sv, &c) || tiles_left(&c) < sv->ttmin)
            continue;
        uint64_t key[2];
        make_key(&c, view, key);
        const Entry *e = probe(sv, key);
        if (e && (maxing ? e->lo >= beta : e->hi <= alpha)) {
            *cut = maxing ? e->lo : e->hi;
            return 1;
        }
    }
    return 0;
}

/* Bounds on the value, from `view`'s side, of every end the position can
 * reach, for rules without pass bonuses. A seat's pips only fall, except by
 * drawing, and the boneyard goes to one seat at most. Pips scoring: a side
 * scores at most the pips it counts (every seat's, or its opponents') and
 * one hand end's bonuses; with two sides, the other side at most the pips
 * of this one. Milo pays 1 or 2 to one side. (royal_rumble has bounds too,
 * from each seat's pips and the blocker's four times, but they are so loose
 * that the weaker values they return cost more null-window searches than
 * they save: docs/analysis.md.) */
static void value_range(const Solver *sv, const Pos *p, int view, int *lo, int *hi)
{
    const Rules *r = &sv->r;
    if (r->bounded == BOUND_MILO) {
        *lo = -2 * (r->sides - 1);
        *hi = 2;
        return;
    }
    int b = r->bonus_max;
    if (r->spec.count == COUNT_ALL) {
        *hi = b + p->pips;
        *lo = -*hi;
        return;
    }
    int stock = pips(p->stockmask), mine = side_of(r, view), counted = stock, own = stock;
    for (int s = 0; s < r->n; s++) {
        if (side_of(r, s) != mine)
            counted += pips(p->hand[s]);
        else
            own += pips(p->hand[s]);
    }
    *hi = b + counted;
    *lo = r->sides == 2 ? -(b + own) : -(b + p->pips);
}

static int search(Solver *sv, Pos *p, int alpha, int beta, int view)
{
top:
    if (settle(sv, p)) { /* nobody can play: scored as a block by the last seat to move */
        return finish(sv, p, 0, (p->turn + sv->r.n - 1) % sv->r.n, 0, p->left, p->right, p->left, p->right, view);
    }
    sv->nodes++;
    int mv[16], nm = gen_plays(sv, p, mv);
    int maxing = side_of(&sv->r, p->turn) == side_of(&sv->r, view);
    if (sv->r.sides > 2 || !sv->r.pairs) /* individual: the viewer against everyone else */
        maxing = p->turn == view;
    if (nm == 0) /* no move at all (an opening tile nobody holds): not a position of a legal hand */
        return finish(sv, p, 0, p->turn, 0, p->left, p->right, p->left, p->right, view);
    if (nm == 1) { /* forced: its child is the position worth keeping (played here, in place) */
        if (mv[0] == MOVE_YIELD) {
            p->turn = (int8_t)((p->turn + 2) % sv->r.n);
            p->may_yield = 0;
            goto top;
        }
        int v;
        if (do_play(sv, p, mv[0], view, &v))
            return v;
        goto top;
    }
    if (sv->r.bounded && sv->bounds) { /* no end the position can reach is worth more (less) than these */
        int lo, hi;
        value_range(sv, p, view, &lo, &hi);
        if (hi <= alpha)
            return hi;
        if (lo >= beta)
            return lo;
    }
    uint64_t key[2] = {0, 0};
    int first = -1, size = 0, elo = -INF, ehi = INF;
    Entry *bk = NULL;
    if (sv->use_tt && (size = tiles_left(p)) >= sv->ttmin) {
        make_key(p, view, key);
        bk = bucket(sv, key);
        __builtin_prefetch(bk); /* its line comes in while the moves are ordered */
    }
    /* order: the table's best move, then pair_order_key's in pair games,
     * solo_order_key's with three or four players each for himself; with
     * two players (and for the first tile) the moves that leave the next
     * seat the fewest tiles to play, then doubles and heavy tiles */
    int ord[16] = {0}, key8[16];
    int nxt = (p->turn + 1) % sv->r.n;
    int ally = (sv->r.sides > 2 || !sv->r.pairs) && (p->turn == view) == (nxt == view);
    for (int i = 0; i < nm; i++) {
        ord[i] = i;
        key8[i] = order_key(sv, p, mv[i], nxt, ally, view);
    }
    for (int i = 1; i < nm; i++) {
        int x = ord[i], kx = key8[x], j = i - 1;
        while (j >= 0 && key8[ord[j]] < kx) {
            ord[j + 1] = ord[j];
            j--;
        }
        ord[j + 1] = x;
    }
    if (bk) {
        Entry *e = probe_at(sv, bk, key); /* read now: the search below may reuse its slot */
        if (e) {
            elo = e->lo;
            ehi = e->hi;
            if (elo >= beta)
                return elo;
            if (ehi <= alpha)
                return ehi;
            if (elo == ehi)
                return elo;
            if (elo > alpha)
                alpha = elo;
            if (ehi < beta)
                beta = ehi;
            for (int i = 0; i < nm; i++)
                if (move_code(p, mv[i]) == e->best)
                    first = i;
        }
    }
    if (sv->etc && size >= S_ETCMIN) { /* enhanced transposition cutoffs: a child already known to refute */
        int cut;
        if (etc_cut(sv, p, mv, nm, maxing, alpha, beta, view, &cut))
            return cut;
    }
    int a0 = alpha, b0 = beta;
    if (first >= 0 && first < nm) {
        int j = 0;
        while (ord[j] != first)
            j++;
        for (; j > 0; j--)
            ord[j] = ord[j - 1];
        ord[0] = first;
    }
    int best = maxing ? -INF : INF, bi = ord[0];
    for (int i = 0; i < nm; i++) {
        int v = child(sv, p, mv[ord[i]], alpha, beta, view);
        if (maxing ? v > best : v < best) {
            best = v;
            bi = ord[i];
        }
        if (maxing) {
            if (best > alpha)
                alpha = best;
        } else if (best < beta)
            beta = best;
        if (alpha >= beta)
            break;
    }
    if (sv->use_tt && size >= sv->ttmin) {
        int lo = elo, hi = ehi;
        if (best <= a0) { /* failed low: an upper bound */
            if (best < hi)
                hi = best;
        } else if (best >= b0) { /* failed high: a lower bound */
            if (best > lo)
                lo = best;
        } else
            lo = hi = best;
        store_at(sv, bk, key, size, lo, hi, move_code(p, mv[bi]));
    }
    return best;
}

/* The exact value of the position after `mv` (of `p` itself with MOVE_ROOT),
 * by null-window searches (MTD) from `guess`: each one only tells whether the
 * value is below a bound, and cuts far more than a search for the value
 * itself; the table keeps their bounds, and the search starts from those
 * it already holds for the position. */
static int mtd(Solver *sv, const Pos *p, int mv, int view, int guess)
{
    Pos c = *p;
    int v;
    if (mv == MOVE_YIELD) {
        c.turn = (int8_t)((c.turn + 2) % sv->r.n);
        c.may_yield = 0;
    } else if (mv != MOVE_ROOT && do_play(sv, &c, mv, view, &v))
        return v;
    int lo = -INF, hi = INF, g = guess;
    if (sv->use_tt && !settle(sv, &c) && tiles_left(&c) >= sv->ttmin) {
        uint64_t key[2]; /* start from what the table already proved of it */
        make_key(&c, view, key);
        const Entry *e = probe(sv, key);
        if (e) {
            lo = e->lo;
            hi = e->hi;
            if (lo == hi)
                return lo;
            if (g <= lo)
                g = lo + 1;
            if (g > hi)
                g = hi;
        }
    }
    int beta = g;
    while (lo < hi) {
        sv->probes++;
        Pos d = c;
        g = search(sv, &d, beta - 1, beta, view);
        if (g < beta)
            hi = g;
        else
            lo = g;
        beta = g == lo ? g + 1 : g;
    }
    return g;
}

/* The exact value of a position, by null-window searches when `mtd` is on. */
static int root_value(Solver *sv, Pos *p, int view, int guess)
{
    if (!sv->mtd)
        return search(sv, p, -INF, INF, view);
    return mtd(sv, p, MOVE_ROOT, view, guess);
}

/* -- Python ----------------------------------------------------------------- */

/* Pips scoring without pass bonuses: one side scores at most the pips left
 * (count all or opponents) and the bonuses of one hand end; milo at most 2. */
static void set_bound(Rules *r)
{
    r->bounded = 0;
    if (r->pass_on)
        return;
    if (r->spec.scoring == SCORING_PIPS) {
        long dom = r->spec.capicua_bonus > r->spec.chuchazo_bonus ? r->spec.capicua_bonus : r->spec.chuchazo_bonus;
        dom += r->spec.ones_bonus + r->hand_bonus;
        r->bonus_max = (int)(dom > r->first_block ? dom : r->first_block);
        r->bounded = BOUND_PIPS;
    } else if (r->spec.scoring == SCORING_MILO)
        r->bounded = BOUND_MILO;
}

static int get_int(PyObject *t, Py_ssize_t i, int *out)
{
    long v = PyLong_AsLong(PyTuple_GET_ITEM(t, i));
    if (v == -1 && PyErr_Occurred())
        return -1;
    *out = (int)v;
    return 0;
}

/* Solver(spec, table_bits=20): spec is the table's replay.rules.RulesSpec */
static int solver_init(Solver *sv, PyObject *args, PyObject *kw)
{
    static char *names[] = {"spec", "table_bits", NULL};
    PyObject *spec;
    int bits = 20;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|i", names, &spec, &bits))
        return -1;
    if (bits < 4 || bits > 28) {
        PyErr_SetString(PyExc_ValueError, "table_bits must be 4..28");
        return -1;
    }
    s_init();
    Rules *r = &sv->r;
    if (read_rules(spec, &r->spec) < 0)
        return -1;
    r->n = r->spec.n;
    r->pairs = r->spec.pairs;
    r->sides = r->spec.sides;
    r->all_pass = r->spec.block_end == BLOCK_END_ALL_PASS;
    r->pass_on = r->spec.has_pass_bonus;
    r->leader = 0;
    r->opening = -1;
    r->hand_bonus = 0;
    r->first_block = 0;
    set_bound(r);
    PyMem_Free(sv->tt_mem);
    size_t buckets = (size_t)1 << (bits - 1);
    sv->tt_mem = PyMem_Calloc(buckets * 2 + 2, sizeof(Entry));
    if (!sv->tt_mem) {
        sv->tt = NULL;
        PyErr_NoMemory();
        return -1;
    }
    sv->tt = (Entry *)(((uintptr_t)sv->tt_mem + 63) & ~(uintptr_t)63);
    sv->mask = buckets - 1;
    sv->gen = 1;
    sv->nstock = 0;
    sv->use_tt = 1;
    sv->mtd = 1;
    sv->etc = 0;
    sv->bounds = 1;
    sv->ttmin = r->n == 2 ? S_TTMIN2 : S_TTMIN;
    sv->nodes = 0;
    return 0;
}

static void solver_dealloc(Solver *sv)
{
    PyMem_Free(sv->tt_mem);
    Py_TYPE(sv)->tp_free((PyObject *)sv);
}

/* set_hand(leader, opening, hand_bonus, first_block): the hand's context; clears the table when it changes */
static PyObject *solver_set_hand(Solver *sv, PyObject *args)
{
    int leader, opening, hb, fb;
    if (!PyArg_ParseTuple(args, "iiii", &leader, &opening, &hb, &fb))
        return NULL;
    Rules *r = &sv->r;
    if (leader < 0 || leader >= r->n || opening < -1 || opening >= NT) {
        PyErr_SetString(PyExc_ValueError, "leader or opening out of range");
        return NULL;
    }
    if (r->leader != leader || r->opening != opening || r->hand_bonus != hb || r->first_block != fb) {
        r->leader = leader;
        r->opening = opening;
        r->hand_bonus = hb;
        r->first_block = fb;
        sv->gen++;
    }
    set_bound(r);
    Py_RETURN_NONE;
}

/* Read a position: (hands, stock, left, right, turn, must, may_yield, passes0, passes1, first_side). */
static int read_pos(Solver *sv, PyObject *t, Pos *p)
{
    if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != 10) {
        PyErr_SetString(PyExc_TypeError, "a position is a tuple of 10 (replay.solver.position)");
        return -1;
    }
    PyObject *hands = PyTuple_GET_ITEM(t, 0), *stock = PyTuple_GET_ITEM(t, 1);
    int n = sv->r.n;
    if (!PyTuple_Check(hands) || PyTuple_GET_SIZE(hands) != n || !PyTuple_Check(stock) ||
        PyTuple_GET_SIZE(stock) > NT) {
        PyErr_SetString(PyExc_ValueError, "hands: one mask per seat; stock: a tuple of tiles");
        return -1;
    }
    memset(p, 0, sizeof(*p));
    for (int s = 0; s < n; s++) {
        unsigned long m = PyLong_AsUnsignedLong(PyTuple_GET_ITEM(hands, s));
        if (PyErr_Occurred())
            return -1;
        if (m >> NT) {
            PyErr_SetString(PyExc_ValueError, "a hand mask has bits beyond tile 27");
            return -1;
        }
        p->hand[s] = (uint32_t)m;
    }
    int ns = (int)PyTuple_GET_SIZE(stock), st[NT];
    for (int i = 0; i < ns; i++) {
        if (get_int(stock, i, &st[i]) < 0)
            return -1;
        if (st[i] < 0 || st[i] >= NT) {
            PyErr_SetString(PyExc_ValueError, "a stock tile out of range");
            return -1;
        }
        p->stockmask |= 1u << st[i];
    }
    /* the stock left is a suffix of the one searched before: same table; else a new one */
    int same = ns <= sv->nstock;
    for (int i = 0; same && i < ns; i++)
        same = sv->stock[sv->nstock - ns + i] == st[i];
    if (!same) {
        for (int i = 0; i < ns; i++)
            sv->stock[i] = (int8_t)st[i];
        sv->nstock = ns;
        sv->gen++;
    }
    p->sp = (int8_t)(sv->nstock - ns);
    int v[8];
    for (int i = 0; i < 8; i++)
        if (get_int(t, i + 2, &v[i]) < 0)
            return -1;
    if (v[0] < -1 || v[0] > 6 || v[1] < -1 || v[1] > 6 || (v[0] < 0) != (v[1] < 0) || v[2] < 0 || v[2] >= n ||
        v[3] < -1 || v[3] >= NT || v[5] < 0 || v[6] < 0 || v[5] > 100 || v[6] > 100 || v[7] < -1 || v[7] > 1) {
        PyErr_SetString(PyExc_ValueError, "a position field out of range");
        return -1;
    }
    p->left = (int8_t)v[0];
    p->right = (int8_t)v[1];
    p->turn = (int8_t)v[2];
    p->must = (int8_t)v[3];
    p->may_yield = (int8_t)(v[4] != 0);
    p->np[0] = (int8_t)v[5];
    p->np[1] = (int8_t)v[6];
    p->first_side = (int8_t)v[7];
    p->pips = (int16_t)pips(p->stockmask);
    for (int s = 0; s < n; s++)
        p->pips += (int16_t)pips(p->hand[s]);
    return 0;
}

/* The seat whose values are searched, and the sign that gives `seat`'s. */
static int viewer(const Solver *sv, int seat, int *sign)
{
    *sign = 1;
    if (sv->r.sides == 2) { /* zero-sum: search for side 0, negate for side 1 */
        if (side_of(&sv->r, seat) == 1)
            *sign = -1;
        return 0;
    }
    return seat;
}

/* The arguments (position, seat) of values() and (position, seat, guess=0)
 * of value() (guess NULL: none taken): the position read, the seat searched
 * for and the sign that gives `seat`'s values; -1 on error. */
static int call_args(Solver *sv, PyObject *args, Pos *p, int *view, int *sign, int *guess)
{
    PyObject *t;
    int seat;
    if (guess)
        *guess = 0;
    if (!(guess ? PyArg_ParseTuple(args, "Oi|i", &t, &seat, guess) : PyArg_ParseTuple(args, "Oi", &t, &seat)) ||
        read_pos(sv, t, p) < 0)
        return -1;
    if (seat < 0 || seat >= sv->r.n) {
        PyErr_SetString(PyExc_ValueError, "seat out of range");
        return -1;
    }
    *view = viewer(sv, seat, sign);
    return 0;
}

/* values(position, seat) -> ((move, value), ...): every legal move of the
 * seat to move with its exact value from `seat`'s side (plays in the
 * engine's order, then the yield; a lone draw or pass when nothing fits). */
static PyObject *solver_values(Solver *sv, PyObject *args)
{
    Pos p;
    int view, sign, mv[16], vals[16], nm;
    if (call_args(sv, args, &p, &view, &sign, NULL) < 0)
        return NULL;
    if (stuck(&p)) { /* one draw (a fitting tile must then be played), or a pass */
        mv[0] = p.stockmask ? MOVE_DRAW : MOVE_PASS;
        nm = 1;
        Pos c = p;
        forced_move(sv, &c);
        vals[0] = search(sv, &c, -INF, INF, view);
    } else {
        nm = gen_plays(sv, &p, mv);
        int guess = 0;
        for (int i = 0; i < nm; i++)
            guess = vals[i] = sv->mtd ? mtd(sv, &p, mv[i], view, guess) : child(sv, &p, mv[i], -INF, INF, view);
    }
    PyObject *out = PyTuple_New(nm);
    if (!out)
        return NULL;
    for (int i = 0; i < nm; i++) {
        PyObject *pair = Py_BuildValue("(ii)", mv[i], sign * vals[i]);
        if (!pair) {
            Py_DECREF(out);
            return NULL;
        }
        PyTuple_SET_ITEM(out, i, pair);
    }
    return out;
}

/* value(position, seat, guess=0) -> the position's exact value from `seat`'s
 * side; the null-window searches start from `guess` (any value gives the
 * same answer; a close one, fewer searches) */
static PyObject *solver_value(Solver *sv, PyObject *args)
{
    Pos p;
    int view, sign, guess;
    if (call_args(sv, args, &p, &view, &sign, &guess) < 0)
        return NULL;
    return PyLong_FromLong((long)sign * root_value(sv, &p, view, sign * guess));
}

/* Every kept position's bounds forgotten, its best move kept: a search
 * then tries first, wherever it meets a kept position, the move its own
 * exact search proved best. For measuring what a perfect order of the
 * moves would save (bench/analysis.py --oracle); the values stay exact. */
static PyObject *solver_forget(Solver *sv, PyObject *Py_UNUSED(ignored))
{
    for (uint64_t i = 0; i < (sv->mask + 1) * 2; i++)
        if (sv->tt[i].gen == sv->gen) {
            sv->tt[i].lo = -INF;
            sv->tt[i].hi = INF;
        }
    Py_RETURN_NONE;
}

static PyObject *solver_clear(Solver *sv, PyObject *Py_UNUSED(ignored))
{
    sv->gen++;
    Py_RETURN_NONE;
}

static PyObject *get_nodes(Solver *sv, void *closure) { return PyLong_FromUnsignedLongLong(sv->nodes); }
static PyObject *get_probes(Solver *sv, void *closure) { return PyLong_FromUnsignedLongLong(sv->probes); }

static PyObject *get_table(Solver *sv, void *closure) { return PyBool_FromLong(sv->use_tt); }

static int set_table(Solver *sv, PyObject *v, void *closure)
{
    int on = v ? PyObject_IsTrue(v) : 0;
    if (on < 0)
        return -1;
    sv->use_tt = on;
    sv->gen++;
    return 0;
}

static PyMethodDef solver_methods[] = {
    {"set_hand", (PyCFunction)solver_set_hand, METH_VARARGS,
     "set_hand(leader, opening, hand_bonus, first_block): the hand's place in its match"},
    {"values", (PyCFunction)solver_values, METH_VARARGS, "values(position, seat) -> ((move, value), ...)"},
    {"value", (PyCFunction)solver_value, METH_VARARGS, "value(position, seat, guess=0) -> int"},
    {"clear", (PyCFunction)solver_clear, METH_NOARGS, "forget the table"},
    {"forget", (PyCFunction)solver_forget, METH_NOARGS, "forget the table's bounds, keep its best moves"},
    {NULL, NULL, 0, NULL},
};

static PyObject *get_mtd(Solver *sv, void *closure) { return PyBool_FromLong(sv->mtd); }
static int set_mtd(Solver *sv, PyObject *v, void *closure)
{
    int on = v ? PyObject_IsTrue(v) : 0;
    if (on < 0)
        return -1;
    sv->mtd = on;
    return 0;
}

static PyObject *get_etc(Solver *sv, void *closure) { return PyBool_FromLong(sv->etc); }
static int set_etc(Solver *sv, PyObject *v, void *closure)
{
    int on = v ? PyObject_IsTrue(v) : 0;
    if (on < 0)
        return -1;
    sv->etc = on;
    return 0;
}

static PyObject *get_bounds(Solver *sv, void *closure) { return PyBool_FromLong(sv->bounds); }
static int set_bounds(Solver *sv, PyObject *v, void *closure)
{
    int on = v ? PyObject_IsTrue(v) : 0;
    if (on < 0)
        return -1;
    sv->bounds = on;
    return 0;
}

static PyGetSetDef solver_getset[] = {
    {"bounds", (getter)get_bounds, (setter)set_bounds, "cutoffs on bounds of the value (value_range)", NULL},
    {"etc", (getter)get_etc, (setter)set_etc, "enhanced transposition cutoffs", NULL},
    {"mtd", (getter)get_mtd, (setter)set_mtd, "null-window searches for exact values", NULL},
    {"nodes", (getter)get_nodes, NULL, "positions searched so far", NULL},
    {"probes", (getter)get_probes, NULL, "null-window searches so far", NULL},
    {"table", (getter)get_table, (setter)set_table, "whether the transposition table is used", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject Solver_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "replay._native.Solver",
    .tp_basicsize = sizeof(Solver),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Exact values of hand positions (replay.solver's C twin).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)solver_init,
    .tp_dealloc = (destructor)solver_dealloc,
    .tp_methods = solver_methods,
    .tp_getset = solver_getset,
};
