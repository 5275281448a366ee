/* replay/_hand.h: what the C files share beyond the generated replay/_rules.h.
 *
 * - RulesC: a replay.rules.RulesSpec read field by field, by name
 *   (read_rules), as the Scorer (_match.c) and the Solver (_solve.c) take it;
 * - score_end: the points of a finished hand, replay.match.hand_points in
 *   C, for both of them (a static inline function: the solver calls it at
 *   every leaf of its search).
 */
#ifndef REPLAY_HAND_H
#define REPLAY_HAND_H

#include <Python.h>
#include "_rules.h"

#define MAX_SEATS 4

/* a tuple of n Python ints (replay/_native.c) */
PyObject *ints_tuple(const long *v, int n);

/* The compiler holds the C code to the ints it was written for. */
_Static_assert(N_TILES == 28 && N_SUITS == 7, "a double-six set");
_Static_assert(MOVE_PASS == -1 && MOVE_DRAW == -2 && MOVE_YIELD == -3, "the move codes of replay/moves.py");
_Static_assert(FIRST_LEAD_DOUBLE_SIX == 0 && FIRST_LEAD_HIGHEST_DOUBLE == 1 && FIRST_LEAD_COUNT == 5,
               "_match.c: every other first lead is drawn");

typedef struct {
    int n, sides, pairs;
    int stock, block_end, first_lead, later_lead, block_lead, tie_lead;
    int block_winner, block_tie, count, chuchazo_when_both_ends, scoring;
    long round_down, capicua_bonus, chuchazo_bonus, ones_bonus, first_block_bonus;
    int has_pass_bonus;
    long pass_first, pass_later;
    int end_kind;
    long end_a, end_b;
} RulesC;

static inline int rules_side(const RulesC *r, int seat) { return r->pairs ? seat & 1 : seat; }

static int spec_long(PyObject *spec, const char *name, long lo, long hi, long *out)
{
    PyObject *v = PyObject_GetAttrString(spec, name);
    if (v == NULL)
        return -1;
    long x = PyLong_AsLong(v);
    Py_DECREF(v);
    if (x == -1 && PyErr_Occurred())
        return -1;
    if (x < lo || x > hi) {
        PyErr_Format(PyExc_ValueError, "rules spec: %s = %ld is out of range", name, x);
        return -1;
    }
    *out = x;
    return 0;
}

/* Fill *r from a replay.rules.RulesSpec (any object with its attributes). */
static int read_rules(PyObject *spec, RulesC *r)
{
    long v[14];
    static const char *names[14] = {"players", "teams", "stock", "first_lead", "later_lead", "block_lead",
                                    "tie_lead", "block_end", "block_winner", "block_tie", "count",
                                    "chuchazo_when_both_ends", "scoring", "end_kind"};
    static const long top[14] = {MAX_SEATS, TEAMS_COUNT, STOCK_COUNT, FIRST_LEAD_COUNT, LATER_LEAD_COUNT,
                                 BLOCK_LEAD_COUNT, TIE_LEAD_COUNT, BLOCK_END_COUNT, BLOCK_WINNER_COUNT,
                                 BLOCK_TIE_COUNT, COUNT_COUNT, CHUCHAZO_WHEN_BOTH_ENDS_COUNT, SCORING_COUNT,
                                 END_KIND_COUNT};
    for (int i = 0; i < 14; i++)
        if (spec_long(spec, names[i], i == 0 ? 2 : 0, i == 0 ? top[i] : top[i] - 1, &v[i]) < 0)
            return -1;
    r->n = (int)v[0];
    r->pairs = v[1] == TEAMS_PAIRS;
    r->stock = (int)v[2];
    r->first_lead = (int)v[3];
    r->later_lead = (int)v[4];
    r->block_lead = (int)v[5];
    r->tie_lead = (int)v[6];
    r->block_end = (int)v[7];
    r->block_winner = (int)v[8];
    r->block_tie = (int)v[9];
    r->count = (int)v[10];
    r->chuchazo_when_both_ends = (int)v[11];
    r->scoring = (int)v[12];
    r->end_kind = (int)v[13];
    if (r->pairs && r->n != 4) {
        PyErr_SetString(PyExc_ValueError, "rules spec: pairs need 4 players");
        return -1;
    }
    r->sides = r->pairs ? 2 : r->n;
    const long big = 1000000000L;
    if (spec_long(spec, "round_down", 0, big, &r->round_down) < 0 ||
        spec_long(spec, "capicua_bonus", 0, big, &r->capicua_bonus) < 0 ||
        spec_long(spec, "chuchazo_bonus", 0, big, &r->chuchazo_bonus) < 0 ||
        spec_long(spec, "ones_bonus", 0, big, &r->ones_bonus) < 0 ||
        spec_long(spec, "first_block_bonus", 0, big, &r->first_block_bonus) < 0 ||
        spec_long(spec, "end_a", 0, big, &r->end_a) < 0 || spec_long(spec, "end_b", 0, big, &r->end_b) < 0)
        return -1;
    PyObject *pb = PyObject_GetAttrString(spec, "pass_bonus");
    if (pb == NULL)
        return -1;
    r->has_pass_bonus = pb != Py_None;
    r->pass_first = r->pass_later = 0;
    int ok = !r->has_pass_bonus || PyArg_ParseTuple(pb, "ll", &r->pass_first, &r->pass_later);
    Py_DECREF(pb);
    return ok ? 0 : -1;
}

/* -- a finished hand ---------------------------------------------------------- */

enum { NOTE_NONE, NOTE_CAPICUA, NOTE_CHUCHAZO, NOTE_DOMINAO };
static const char *const NOTE_WORD[4] = {NULL, "capicua", "chuchazo", "dominao"};

/* replay.engine.going_out: the word for going out with `tile` on ends (left, right). */
static inline int going_out(const RulesC *r, int tile, int left, int right)
{
    int lo = TILE_LOW[tile], hi = TILE_HIGH[tile];
    int both = left >= 0 && ((left == lo && right == hi) || (left == hi && right == lo));
    if (tile == 0)
        return both && r->chuchazo_when_both_ends == CHUCHAZO_WHEN_BOTH_ENDS_DOMINAO ? NOTE_DOMINAO : NOTE_CHUCHAZO;
    if (lo == hi)
        return both ? NOTE_DOMINAO : NOTE_NONE;
    return both && left != right ? NOTE_CAPICUA : NOTE_NONE;
}

typedef struct {
    int domino;                /* else a block */
    int seat;                  /* who went out, or laid the blocking tile */
    int leader;                /* who was entitled to open */
    int note;                  /* a domino's NOTE_* */
    int left, right;           /* the ends at the end */
    long pips[MAX_SEATS];      /* at the end (a blocked boneyard game's closing draw counted) */
    int passes[2], first_pass; /* passes made while the hand was played, by side; the first's side or -1 */
    long hand_bonus;           /* what a domino adds */
    long block_bonus;          /* what a won block adds; -1 once the match's first-block bonus is paid */
} HandEnd;

typedef struct {
    long points[MAX_SEATS]; /* per side (royal_rumble: per seat) */
    int side, winner;       /* -1: a tie */
    int took_block_bonus;
} HandPoints;

static inline int unique_min(const long *v, const int *among, int count)
{
    int best = -1, ties = 0;
    for (int i = 0; i < count; i++) {
        int k = among[i];
        if (best < 0 || v[k] < v[best]) {
            best = k;
            ties = 0;
        } else if (v[k] == v[best])
            ties++;
    }
    return ties ? -1 : best;
}

/* replay.match._block_winner: (side, seat) of a blocked hand, -1 for a tie */
static inline void block_winner(const RulesC *r, const long *pips, int blocker, int leader, int *side_out,
                                int *seat_out)
{
    int n = r->n, side = -1, seat = -1;
    long totals[MAX_SEATS] = {0};
    int among[MAX_SEATS];
    *side_out = *seat_out = -1;
    long low = pips[0];
    for (int s = 1; s < n; s++)
        if (pips[s] < low)
            low = pips[s];
    if (r->scoring == SCORING_ROYAL_RUMBLE) {
        int holders = 0, first = -1;
        for (int s = 0; s < n; s++)
            if (pips[s] == low) {
                if (first < 0)
                    first = s;
                holders++;
            }
        if (holders == 1) {
            *side_out = rules_side(r, first);
            *seat_out = first;
        }
        return;
    }
    for (int s = 0; s < n; s++)
        totals[rules_side(r, s)] += pips[s];
    if (r->block_winner == BLOCK_WINNER_SIDE_TOTAL) {
        for (int k = 0; k < r->sides; k++)
            among[k] = k;
        side = unique_min(totals, among, r->sides);
    } else if (r->block_winner == BLOCK_WINNER_LOWEST_HAND) {
        int count = 0;
        for (int k = 0; k < r->sides; k++) /* sorted(sides) of the lowest hands */
            for (int s = 0; s < n; s++)
                if (rules_side(r, s) == k && pips[s] == low) {
                    among[count++] = k;
                    break;
                }
        side = count == 1 ? among[0] : unique_min(totals, among, count);
    } else {
        int right = (blocker + 1) % n;
        if (pips[blocker] != pips[right]) {
            seat = pips[blocker] < pips[right] ? blocker : right;
            side = rules_side(r, seat);
        }
    }
    if (side < 0) {
        if (r->block_tie == BLOCK_TIE_FIRST_SIDE_WINS)
            side = rules_side(r, leader);
        else if (r->block_tie == BLOCK_TIE_LAST_SIDE_WINS) {
            *side_out = rules_side(r, blocker);
            *seat_out = blocker;
            return;
        } else
            return;
    }
    if (seat < 0) { /* the side's fewest pips, the first from the leader */
        for (int i = 0; i < n; i++) {
            int s = (leader + i) % n;
            if (rules_side(r, s) == side && (seat < 0 || pips[s] < pips[seat]))
                seat = s;
        }
    }
    *side_out = side;
    *seat_out = seat;
}

/* replay.match.hand_points: the points of a finished hand. */
static inline void score_end(const RulesC *r, const HandEnd *h, HandPoints *out)
{
    int n = r->n;
    for (int k = 0; k < MAX_SEATS; k++)
        out->points[k] = 0;
    out->took_block_bonus = 0;
    if (h->domino) {
        out->winner = h->seat;
        out->side = rules_side(r, h->seat);
    } else
        block_winner(r, h->pips, h->seat, h->leader, &out->side, &out->winner);
    int side = out->side;
    long *pts = out->points;
    if (r->scoring == SCORING_ROYAL_RUMBLE) { /* everyone adds his own pips, the blocker maybe 4 times */
        long low = h->pips[0];
        int count_low = 0;
        for (int s = 1; s < n; s++)
            if (h->pips[s] < low)
                low = h->pips[s];
        for (int s = 0; s < n; s++)
            count_low += h->pips[s] == low;
        for (int s = 0; s < n; s++) {
            long p = h->pips[s];
            if (!h->domino && s == h->seat && !(p == low && count_low == 1))
                p *= 4;
            pts[s] = p;
        }
        return;
    }
    if (r->scoring == SCORING_MILO) {
        if (side >= 0)
            pts[side] = h->domino && h->left == h->right ? 2 : 1;
        return;
    }
    if (side >= 0) {
        long base = 0, bonus = 0;
        for (int s = 0; s < n; s++)
            if (r->count == COUNT_ALL || rules_side(r, s) != side)
                base += h->pips[s];
        if (h->domino) {
            if (h->note == NOTE_CAPICUA)
                bonus += r->capicua_bonus;
            else if (h->note == NOTE_CHUCHAZO)
                bonus += r->chuchazo_bonus;
            if (h->left == 1 && h->right == 1)
                bonus += r->ones_bonus;
            bonus += h->hand_bonus;
        } else if (h->block_bonus >= 0) { /* the match's first won block */
            bonus += h->block_bonus;
            out->took_block_bonus = 1;
        }
        pts[side] += base + bonus;
    }
    if (r->has_pass_bonus && h->first_pass >= 0) {
        /* (pairs only) a side takes `first` for the hand's first pass if the
         * other side made it, and `later` for every other pass of it */
        for (int k = 0; k < 2; k++) {
            int m = h->passes[1 - k];
            if (m)
                pts[k] += h->first_pass == 1 - k ? r->pass_first + (m - 1) * r->pass_later : m * r->pass_later;
        }
    }
    if (r->round_down)
        for (int k = 0; k < r->sides; k++)
            pts[k] -= pts[k] % r->round_down;
}

#endif /* REPLAY_HAND_H */
