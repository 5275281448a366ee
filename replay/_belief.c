/* replay._native.play_logp: the log-probability a linear play model gives a
 * played move, the C twin of replay.belief.weights._log_prob over
 * replay.belief.features.move_features and replay.belief.model._probs.
 *
 * The weighted belief asks it for every hand a Metropolis swap proposes,
 * at every past ply of the seat: most of a read grade's time. The Python
 * code stays the reference (the tests compare both on thousands of plies);
 * each feature is computed by the same operations in the same order, and
 * the scores are summed in the features' order, so the result is the same
 * double, not merely close.
 */
#include "_native.h"
#include "_rules.h"

#include <math.h>

enum { N_FEATURES = 18, MOVE_YIELD_CODE = -1 };
#define FULL_MASK ((1u << N_TILES) - 1)

static inline int bits(uint32_t m) { return __builtin_popcount(m); }

/* tiles of `hand` carrying `n`, its double twice (features._fit) */
static inline int fit_n(uint32_t hand, int n)
{
    uint32_t m = hand & SUIT_MASK[n];
    return bits(m) + (int)(m >> TILE_ID[n][n] & 1);
}

/* One move's row of FEATURES (move_features' loop body). */
static void play_row(int t, int end, uint32_t hand, int left, int right, uint32_t friend_, uint32_t foes,
                     uint32_t nxt_lacks, uint32_t line, double phase, const int *counts, int top, int long_top,
                     int long_n, double *row)
{
    int lead = left < 0;
    double pips = TILE_PIPS[t] / 12.0;
    double dbl = TILE_LOW[t] == TILE_HIGH[t] ? 1.0 : 0.0;
    uint32_t rest = hand & ~(1u << t);
    int a, b;
    if (lead) {
        a = TILE_HIGH[t];
        b = TILE_LOW[t];
    } else if (end == 0) {
        a = TILE_OTHER[t][left];
        b = right;
    } else {
        a = left;
        b = TILE_OTHER[t][right];
    }
    uint32_t ends = 1u << a | 1u << b;
    uint32_t before = lead ? 0 : (1u << left | 1u << right);
    uint32_t gone = line | 1u << t | rest;
    int dead = (SUIT_MASK[a] & FULL_MASK & ~gone) == 0;
    if (b != a)
        dead += (SUIT_MASK[b] & FULL_MASK & ~gone) == 0;
    int ll = counts[TILE_LOW[t]] > counts[TILE_HIGH[t]] ? counts[TILE_LOW[t]] : counts[TILE_HIGH[t]];
    row[0] = pips;
    row[1] = dbl;
    row[2] = lead ? ll / 7.0 : 0.0;
    row[3] = lead ? pips : 0.0;
    row[4] = lead ? dbl : 0.0;
    row[5] = bits(rest & (SUIT_MASK[a] | SUIT_MASK[b])) / 7.0;
    row[6] = (ends & friend_) ? 1.0 : 0.0;
    row[7] = (before & friend_ & ~ends) ? 1.0 : 0.0;
    row[8] = (ends & nxt_lacks) ? 1.0 : 0.0;
    row[9] = (ends & foes & ~friend_) ? 1.0 : 0.0;
    row[10] = (double)dead;
    row[11] = 0.0;
    row[12] = 0.0;
    row[13] = pips * phase;
    row[14] = TILE_PIPS[t] == top ? 1.0 : 0.0;
    row[15] = lead && t == long_top ? 1.0 : 0.0;
    row[16] = (ends >> long_n & 1) && (rest & SUIT_MASK[long_n]) ? 1.0 : 0.0;
    row[17] = (fit_n(rest, a) + fit_n(rest, b)) / 7.0;
}

/* play_logp(coef, ctx, hand, moves, played) -> float
 *   coef: FEATURES' coefficients (18 floats)
 *   ctx: (left, right, friend, foes, next_lacks, line) of features.ply_context
 *   moves: the legal moves' codes (tile * 2 + end; -1 the yield; -2 any
 *     other), `played` the index of the move made; or None: the seat's
 *     moves made here from `hand` (no tile that must be played, the hand
 *     going on, no tile the lead must open with: replay.engine.legal_moves'
 *     order), `played` the code of the move made: on the line, its plays;
 *     at the lead (ends -1), every tile, then the yield if `may_yield`.
 * 0.0 where there was no choice (one legal move) or the move is not legal
 * with `hand`, as replay.belief.weights._log_prob. */
PyObject *py_play_logp(PyObject *self, PyObject *args)
{
    PyObject *coef_t, *moves_t;
    unsigned long hand_l;
    int left, right, played, may_yield = 0;
    unsigned long friend_l, foes_l, lacks_l, line_l;
    if (!PyArg_ParseTuple(args, "O!(iikkkk)kOi|p", &PyTuple_Type, &coef_t, &left, &right, &friend_l, &foes_l,
                          &lacks_l, &line_l, &hand_l, &moves_t, &played, &may_yield))
        return NULL;
    if (PyTuple_GET_SIZE(coef_t) != N_FEATURES) {
        PyErr_SetString(PyExc_ValueError, "play_logp: coef needs one value a feature");
        return NULL;
    }
    if (left > 6 || right > 6 || left < -1 || right < -1 || (left < 0) != (right < 0)) {
        PyErr_SetString(PyExc_ValueError, "play_logp: ends out of range");
        return NULL;
    }
    uint32_t hand = (uint32_t)hand_l & FULL_MASK;
    int code[64];
    Py_ssize_t nm = 0;
    if (moves_t == Py_None) {
        if (played < -1 || played >= 2 * N_TILES) {
            PyErr_SetString(PyExc_ValueError, "play_logp: a move code out of range");
            return NULL;
        }
        int want = played;
        played = -1;
        if (left < 0) {
            for (uint32_t m = hand; m; m &= m - 1)
                code[nm++] = __builtin_ctz(m) * 2;
            if (may_yield)
                code[nm++] = MOVE_YIELD_CODE;
        } else {
            uint32_t lm = SUIT_MASK[left], rm = SUIT_MASK[right];
            for (uint32_t m = hand & (lm | rm); m; m &= m - 1) {
                int t = __builtin_ctz(m);
                if (lm >> t & 1)
                    code[nm++] = t * 2;
                if (rm >> t & 1 && left != right)
                    code[nm++] = t * 2 + 1;
            }
        }
        for (Py_ssize_t i = 0; i < nm; i++)
            if (code[i] == want)
                played = (int)i;
        if (nm < 2 || played < 0)
            return PyFloat_FromDouble(0.0);
    } else {
        if (!PyTuple_Check(moves_t)) {
            PyErr_SetString(PyExc_TypeError, "play_logp: moves must be a tuple or None");
            return NULL;
        }
        nm = PyTuple_GET_SIZE(moves_t);
        if (nm < 1 || nm > 64 || played < 0 || played >= nm) {
            PyErr_SetString(PyExc_ValueError, "play_logp: bad moves or played index");
            return NULL;
        }
        for (Py_ssize_t i = 0; i < nm; i++) {
            long c = PyLong_AsLong(PyTuple_GET_ITEM(moves_t, i));
            if (c == -1 && PyErr_Occurred())
                return NULL;
            if (c < -2 || c >= 2 * N_TILES) {
                PyErr_SetString(PyExc_ValueError, "play_logp: a move code out of range");
                return NULL;
            }
            code[i] = (int)c;
        }
    }
    double coef[N_FEATURES];
    for (int i = 0; i < N_FEATURES; i++) {
        coef[i] = PyFloat_AsDouble(PyTuple_GET_ITEM(coef_t, i));
        if (coef[i] == -1.0 && PyErr_Occurred())
            return NULL;
    }
    int counts[N_SUITS], longest = 0, long_n = 0;
    for (int x = 0; x < N_SUITS; x++) {
        counts[x] = bits(hand & SUIT_MASK[x]);
        if (counts[x] > longest)
            longest = counts[x];
        if (counts[x] >= counts[long_n])
            long_n = x; /* max by (count, number): the higher number on ties */
    }
    int top = -1;
    for (Py_ssize_t i = 0; i < nm; i++)
        if (code[i] >= 0 && TILE_PIPS[code[i] >> 1] > top)
            top = TILE_PIPS[code[i] >> 1];
    int long_top = -1; /* max by (pips, tile) */
    for (uint32_t m = hand & SUIT_MASK[long_n]; m; m &= m - 1) {
        int t = __builtin_ctz(m);
        if (long_top < 0 || TILE_PIPS[t] > TILE_PIPS[long_top] || (TILE_PIPS[t] == TILE_PIPS[long_top] && t > long_top))
            long_top = t;
    }
    double phase = bits((uint32_t)line_l) / 28.0;
    double s[64], row[N_FEATURES];
    for (Py_ssize_t i = 0; i < nm; i++) {
        if (code[i] == MOVE_YIELD_CODE) {
            for (int f = 0; f < N_FEATURES; f++)
                row[f] = 0.0;
            row[11] = 1.0;
            row[12] = longest / 7.0;
        } else if (code[i] < 0) {
            for (int f = 0; f < N_FEATURES; f++)
                row[f] = 0.0;
        } else
            play_row(code[i] >> 1, code[i] & 1, hand, left, right, (uint32_t)friend_l, (uint32_t)foes_l,
                     (uint32_t)lacks_l, (uint32_t)line_l, phase, counts, top, long_top, long_n, row);
        double x = 0.0; /* summed in the features' order, as sum(map(mul, coef, row)) */
        for (int f = 0; f < N_FEATURES; f++)
            x += coef[f] * row[f];
        s[i] = x;
    }
    double hi = s[0];
    for (Py_ssize_t i = 1; i < nm; i++)
        if (s[i] > hi)
            hi = s[i];
    double z = 0.0, mine = 0.0;
    for (Py_ssize_t i = 0; i < nm; i++) {
        double e = exp(s[i] - hi);
        z += e;
        if (i == played)
            mine = e;
    }
    double p = mine / z;
    return PyFloat_FromDouble(log(p > 1e-12 ? p : 1e-12));
}
