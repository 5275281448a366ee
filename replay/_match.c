/* replay._native.Scorer: the match rules of replay/match.py for the fast path.
 *
 * One Scorer follows one match: it says who leads each deal (next_lead),
 * scores each finished hand (score_hand) and records it (record), with the
 * options of one Rules value read from its replay.rules.RulesSpec (the
 * hand's points are replay/_hand.h's score_end). match.py stays the reference; tests/test_native.py checks this
 * twin against it on random rules and hands. Nothing here decides a
 * finding: replay.validate.fast_path compares these values with the log's claims
 * and declines the match at the first difference.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include "_hand.h"

enum { R_NONE, R_DOMINO, R_BLOCK };

typedef struct {
    PyObject_HEAD
    /* the rules */
    RulesC r;
    int n, sides;           /* r.n, r.sides */
    PyObject *hand_bonuses; /* tuple of ints */
    PyObject *shutout;      /* str: the profile's word for a shutout */
    /* the match (MatchState) */
    long played, score[MAX_SEATS], wins[MAX_SEATS];
    int first_block_paid, first_leader, prev_leader;
    int prev_result, prev_winner, prev_side, prev_blocker; /* prev_result R_NONE: no hand yet */
    int over, result, winner, shut;                      /* result: 0, 1 win, 2 tie */
} Scorer;

/* The seat holding tile t, or -1. */
static int holder(const uint32_t *hands, int n, int t)
{
    for (int s = 0; s < n; s++)
        if (hands[s] >> t & 1)
            return s;
    return -1;
}

#define DOUBLE_SIX TILE_ID[6][6]

/* first_hand_lead: 0 with (*seat, *tile) set, -1 when it has no answer (no holder, no draw) */
static int first_lead(const Scorer *m, const uint32_t *hands, int drawn, int *seat, int *tile)
{
    if (m->r.first_lead == FIRST_LEAD_DOUBLE_SIX) {
        *tile = DOUBLE_SIX;
        *seat = holder(hands, m->n, DOUBLE_SIX);
        return *seat < 0 ? -1 : 0;
    }
    if (m->r.first_lead == FIRST_LEAD_HIGHEST_DOUBLE) {
        uint32_t dealt = 0;
        for (int s = 0; s < m->n; s++)
            dealt |= hands[s];
        int top = -1;
        for (int t = 0; t < 28; t++) {
            if (!(dealt >> t & 1))
                continue;
            int lo = TILE_LOW[t], hi = TILE_HIGH[t], double_ = lo == hi;
            if (top < 0) {
                top = t;
                continue;
            }
            int tlo = TILE_LOW[top], thi = TILE_HIGH[top], top_double = tlo == thi;
            /* doubles first (by number: ascending ids), then by (pips, higher half) */
            if (double_ && !top_double)
                top = t;
            else if (double_ == top_double &&
                     (double_ ? t > top : (lo + hi > tlo + thi || (lo + hi == tlo + thi && hi > thi))))
                top = t;
        }
        if (top < 0)
            return -1;
        *tile = top;
        *seat = holder(hands, m->n, top);
        return 0;
    }
    if (drawn < 0)
        return -1;
    *seat = drawn;
    *tile = -1;
    return 0;
}

static int read_masks(PyObject *obj, int n, uint32_t *out)
{
    if (!PyTuple_Check(obj) || PyTuple_GET_SIZE(obj) != n) {
        PyErr_SetString(PyExc_ValueError, "Scorer: one mask per seat");
        return -1;
    }
    for (int s = 0; s < n; s++) {
        unsigned long v = PyLong_AsUnsignedLong(PyTuple_GET_ITEM(obj, s));
        if (v == (unsigned long)-1 && PyErr_Occurred())
            return -1;
        out[s] = (uint32_t)v;
    }
    return 0;
}

/* lead(masks, drawn_leader, rematch_leader) -> (seat, tile) or None: next_lead
 * (-1 for no drawn or rematch leader; None where next_lead raises) */
static PyObject *scorer_lead(Scorer *m, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "lead(masks, drawn_leader, rematch_leader)");
        return NULL;
    }
    uint32_t hands[MAX_SEATS];
    if (read_masks(args[0], m->n, hands) < 0)
        return NULL;
    long drawn = PyLong_AsLong(args[1]), rematch = PyLong_AsLong(args[2]);
    if (PyErr_Occurred())
        return NULL;
    int seat = -1, tile = -1;
    if (m->played == 0 || m->prev_result == R_NONE || m->prev_leader < 0) {
        if (rematch >= 0)
            seat = (int)rematch;
        else if (first_lead(m, hands, (int)drawn, &seat, &tile) < 0)
            Py_RETURN_NONE;
        return Py_BuildValue("(ii)", seat, tile);
    }
    int rotate = (m->prev_leader + 1) % m->n;
    if (m->r.later_lead == LATER_LEAD_ROTATE)
        seat = rotate;
    else if (m->prev_result == R_DOMINO && m->prev_winner >= 0)
        seat = m->prev_winner;
    else if (m->prev_side >= 0 && m->prev_winner >= 0) {
        if (m->r.block_lead == BLOCK_LEAD_WINNER_LOWEST)
            seat = m->prev_winner;
        else if (m->r.block_lead == BLOCK_LEAD_BLOCKER && m->prev_blocker >= 0)
            seat = m->prev_blocker;
        else
            seat = rotate;
    } else if (m->r.tie_lead == TIE_LEAD_DOUBLE_SIX_HOLDER) {
        tile = DOUBLE_SIX;
        seat = holder(hands, m->n, DOUBLE_SIX);
        if (seat < 0)
            Py_RETURN_NONE;
    } else if (m->r.tie_lead == TIE_LEAD_BLOCKER && m->prev_blocker >= 0)
        seat = m->prev_blocker;
    else
        seat = rotate;
    return Py_BuildValue("(ii)", seat, tile);
}

/* The match end after a recorded hand (match._check_end); `side`: the hand's winning side or -1. */
static void check_end(Scorer *m, int side)
{
    int n = m->sides;
    if (m->r.end_kind == END_KIND_POINTS || m->r.end_kind == END_KIND_MILO) {
        long top = 0;
        int reached = 0, best = -1, ties = 0, side_best = 0;
        for (int k = 0; k < n; k++)
            if (m->score[k] >= m->r.end_a) {
                if (!reached || m->score[k] > top)
                    top = m->score[k];
                reached = 1;
            }
        if (!reached)
            return;
        for (int k = 0; k < n; k++)
            if (m->score[k] >= m->r.end_a && m->score[k] == top) {
                if (best < 0)
                    best = k;
                else
                    ties++;
                if (k == side)
                    side_best = 1;
            }
        int winner;
        if (!ties)
            winner = best;
        else if (side >= 0 && side_best)
            winner = side;
        else
            return; /* equal totals and no hand winner: play on */
        m->over = 1;
        m->result = 1;
        m->winner = winner;
        m->shut = 0;
        if (m->r.end_kind == END_KIND_POINTS)
            for (int k = 0; k < n; k++)
                if (m->score[k] == 0)
                    m->shut = 1;
        return;
    }
    if (m->r.end_kind == END_KIND_CHIVA) {
        for (int k = 0; k < n; k++) {
            if (m->wins[k] < m->r.end_a)
                continue;
            for (int j = 0; j < n; j++)
                if (j != k && m->wins[j] == 0) {
                    m->over = 1;
                    m->result = 1;
                    m->winner = k;
                    return;
                }
        }
        return;
    }
    if (m->r.end_kind == END_KIND_ROUNDS) {
        for (int k = 0; k < n; k++) {
            if (m->wins[k] < m->r.end_a)
                continue;
            int others_ok = 1;
            for (int j = 0; j < n; j++)
                if (j != k && m->wins[j] < m->r.end_b)
                    others_ok = 0;
            m->over = 1;
            m->result = others_ok ? 1 : 2;
            m->winner = others_ok ? k : -1;
            return;
        }
        return;
    }
    if (m->played >= m->r.end_a) { /* fixed: the fewest points win */
        int best = 0, ties = 0;
        for (int k = 1; k < n; k++) {
            if (m->score[k] < m->score[best]) {
                best = k;
                ties = 0;
            } else if (m->score[k] == m->score[best])
                ties++;
        }
        m->over = 1;
        m->result = ties ? 2 : 1;
        m->winner = ties ? -1 : best;
    }
}

/* match._count_win */
static void count_win(Scorer *m, int w)
{
    if (w < 0)
        return;
    int n = m->sides;
    if (m->r.end_kind == END_KIND_CHIVA && m->wins[w] == 0) {
        int all_others = 1, any_other = 0;
        for (int k = 0; k < n; k++)
            if (k != w) {
                if (m->wins[k] > 0)
                    any_other = 1;
                else
                    all_others = 0;
            }
        if (n == 3 ? all_others : any_other) {
            for (int k = 0; k < n; k++)
                m->wins[k] = 0;
            return;
        }
    }
    m->wins[w]++;
}

static int get_int(PyObject *t, Py_ssize_t i, long *out)
{
    *out = PyLong_AsLong(PyTuple_GET_ITEM(t, i));
    return *out == -1 && PyErr_Occurred() ? -1 : 0;
}

/* record(position, leader) -> (result, winner, points, notes) or None:
 * score_hand and record for a hand that replay_hand finished (`position` is
 * its answer), led by `leader`; None (the match unchanged) for what the
 * line-by-line path must score. */
static PyObject *scorer_record(Scorer *m, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyTuple_Check(args[0]) || PyTuple_GET_SIZE(args[0]) < 11) {
        PyErr_SetString(PyExc_TypeError, "record(position, leader)");
        return NULL;
    }
    if (m->over) {
        PyErr_SetString(PyExc_ValueError, "the match is over");
        return NULL;
    }
    PyObject *pos = args[0];
    long left, right, turn, blocker, leader;
    if (get_int(pos, 2, &left) < 0 || get_int(pos, 3, &right) < 0 || get_int(pos, 4, &turn) < 0 ||
        get_int(pos, 6, &blocker) < 0)
        return NULL;
    leader = PyLong_AsLong(args[1]);
    if (leader == -1 && PyErr_Occurred())
        return NULL;
    PyObject *res = PyTuple_GET_ITEM(pos, 7), *last = PyTuple_GET_ITEM(pos, 8);
    PyObject *passes = PyTuple_GET_ITEM(pos, 5), *pips_t = PyTuple_GET_ITEM(pos, 10);
    int n = m->n, result;
    if (!PyUnicode_Check(res) || !PyTuple_Check(passes) || !PyTuple_Check(pips_t) || PyTuple_GET_SIZE(pips_t) != n)
        Py_RETURN_NONE;
    if (PyUnicode_CompareWithASCIIString(res, "domino") == 0)
        result = R_DOMINO;
    else if (PyUnicode_CompareWithASCIIString(res, "block") == 0)
        result = R_BLOCK;
    else
        Py_RETURN_NONE;
    if (leader < 0 || leader >= n || turn < 0 || turn >= n || (result == R_BLOCK && (blocker < 0 || blocker >= n)))
        Py_RETURN_NONE;
    long pips[MAX_SEATS];
    for (int s = 0; s < n; s++)
        if (get_int(pips_t, s, &pips[s]) < 0)
            return NULL;
    HandEnd h;
    h.domino = result == R_DOMINO;
    h.leader = (int)leader;
    h.left = (int)left;
    h.right = (int)right;
    h.note = NOTE_NONE;
    for (int s = 0; s < n; s++)
        h.pips[s] = pips[s];
    if (h.domino) {
        long lt[3];
        if (!PyTuple_Check(last) || PyTuple_GET_SIZE(last) != 3)
            Py_RETURN_NONE;
        for (int i = 0; i < 3; i++)
            if (get_int(last, i, &lt[i]) < 0)
                return NULL;
        if (lt[0] < 0 || lt[0] >= N_TILES)
            Py_RETURN_NONE;
        h.note = going_out(&m->r, (int)lt[0], (int)lt[1], (int)lt[2]);
        h.seat = (int)((turn - 1 + n) % n);
    } else
        h.seat = (int)blocker;
    h.passes[0] = h.passes[1] = 0;
    h.first_pass = -1;
    if (m->r.has_pass_bonus) {
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(passes); i++) {
            long passer;
            if (get_int(passes, i, &passer) < 0)
                return NULL;
            if (passer < 0 || passer >= n)
                Py_RETURN_NONE;
            int side = rules_side(&m->r, (int)passer);
            if (side > 1)
                Py_RETURN_NONE; /* pass bonuses are for pairs */
            if (h.first_pass < 0)
                h.first_pass = side;
            h.passes[side]++;
        }
    }
    h.hand_bonus = 0;
    if (m->played < PyTuple_GET_SIZE(m->hand_bonuses)) {
        h.hand_bonus = PyLong_AsLong(PyTuple_GET_ITEM(m->hand_bonuses, m->played));
        if (h.hand_bonus == -1 && PyErr_Occurred())
            return NULL;
    }
    h.block_bonus = m->first_block_paid ? -1 : m->r.first_block_bonus;
    HandPoints got;
    score_end(&m->r, &h, &got);
    long *points = got.points;
    int side = got.side, seat = got.winner, took_first_block = got.took_block_bonus;
    const char *note = NOTE_WORD[h.note];
    PyObject *points_t = ints_tuple(points, m->sides);
    PyObject *notes = note ? Py_BuildValue("(s)", note) : PyTuple_New(0);
    PyObject *winner = seat >= 0 ? PyLong_FromLong(seat) : Py_NewRef(Py_None);
    if (points_t == NULL || notes == NULL || winner == NULL) {
        Py_XDECREF(points_t);
        Py_XDECREF(notes);
        Py_XDECREF(winner);
        return NULL;
    }
    /* record */
    for (int k = 0; k < m->sides; k++)
        m->score[k] += points[k];
    count_win(m, side);
    m->played++;
    m->first_block_paid |= took_first_block;
    if (m->first_leader < 0)
        m->first_leader = (int)leader;
    m->prev_leader = (int)leader;
    m->prev_result = result;
    m->prev_winner = seat;
    m->prev_side = side;
    m->prev_blocker = result == R_BLOCK ? (int)blocker : -1;
    check_end(m, side);
    return Py_BuildValue("(ONNN)", res, winner, points_t, notes);
}

/* Scorer(spec, shutout): spec is the match's replay.rules.RulesSpec, shutout
 * its profile's word for a shutout */
static int scorer_init(Scorer *m, PyObject *args, PyObject *kw)
{
    PyObject *spec, *shutout, *bonuses;
    static char *names[] = {"spec", "shutout", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OU", names, &spec, &shutout))
        return -1;
    if (read_rules(spec, &m->r) < 0)
        return -1;
    m->n = m->r.n;
    m->sides = m->r.sides;
    bonuses = PyObject_GetAttrString(spec, "hand_bonuses");
    if (bonuses == NULL)
        return -1;
    if (!PyTuple_Check(bonuses)) {
        Py_DECREF(bonuses);
        PyErr_SetString(PyExc_TypeError, "Scorer: hand_bonuses must be a tuple");
        return -1;
    }
    Py_XSETREF(m->hand_bonuses, bonuses);
    Py_XSETREF(m->shutout, Py_NewRef(shutout));
    m->played = 0;
    for (int k = 0; k < MAX_SEATS; k++)
        m->score[k] = m->wins[k] = 0;
    m->first_block_paid = 0;
    m->first_leader = m->prev_leader = -1;
    m->prev_result = R_NONE;
    m->prev_winner = m->prev_side = m->prev_blocker = -1;
    m->over = m->result = m->shut = 0;
    m->winner = -1;
    return 0;
}

static void scorer_dealloc(Scorer *m)
{
    Py_XDECREF(m->hand_bonuses);
    Py_XDECREF(m->shutout);
    Py_TYPE(m)->tp_free((PyObject *)m);
}

static PyObject *get_score(Scorer *m, void *c) { return ints_tuple(m->score, m->sides); }
static PyObject *get_wins(Scorer *m, void *c) { return ints_tuple(m->wins, m->sides); }
static PyObject *get_over(Scorer *m, void *c) { return PyBool_FromLong(m->over); }
static PyObject *get_result(Scorer *m, void *c)
{
    return m->result == 1 ? PyUnicode_FromString("win") : m->result == 2 ? PyUnicode_FromString("tie") : Py_NewRef(Py_None);
}
static PyObject *get_winner(Scorer *m, void *c) { return m->winner >= 0 ? PyLong_FromLong(m->winner) : Py_NewRef(Py_None); }
static PyObject *get_notes(Scorer *m, void *c) { return m->shut ? PyTuple_Pack(1, m->shutout) : PyTuple_New(0); }
static PyObject *get_played(Scorer *m, void *c) { return PyLong_FromLong(m->played); }

static PyGetSetDef scorer_getset[] = {
    {"score", (getter)get_score, NULL, "points per side so far", NULL},
    {"wins", (getter)get_wins, NULL, "hands won per side", NULL},
    {"over", (getter)get_over, NULL, "whether the match has ended", NULL},
    {"result", (getter)get_result, NULL, "'win', 'tie' or None", NULL},
    {"winner", (getter)get_winner, NULL, "the winning side or None", NULL},
    {"notes", (getter)get_notes, NULL, "the match's notes (a shutout)", NULL},
    {"played", (getter)get_played, NULL, "hands scored", NULL},
    {NULL},
};

static PyMethodDef scorer_methods[] = {
    {"lead", (PyCFunction)(void (*)(void))scorer_lead, METH_FASTCALL, "lead(masks, drawn, rematch) -> (seat, tile) | None"},
    {"record", (PyCFunction)(void (*)(void))scorer_record, METH_FASTCALL,
     "record(position, leader) -> (result, winner, points, notes) | None"},
    {NULL},
};

PyTypeObject Scorer_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "replay._native.Scorer",
    .tp_basicsize = sizeof(Scorer),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The match rules of replay.match for one match (see replay/_match.c).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)scorer_init,
    .tp_dealloc = (destructor)scorer_dealloc,
    .tp_methods = scorer_methods,
    .tp_getset = scorer_getset,
};
