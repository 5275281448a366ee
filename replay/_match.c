/* replay._native.Scorer: the match rules of replay/match.py for the fast path.
 *
 * One Scorer follows one match: it says who leads each deal (next_lead),
 * scores each finished hand (score_hand) and records it (record), with the
 * options of one Rules value given as small ints (replay.fastmatch makes
 * them). match.py stays the reference; tests/test_native.py checks this
 * twin against it on random rules and hands. Nothing here decides a
 * finding: replay.fastmatch compares these values with the log's claims
 * and declines the match at the first difference.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#define MAX_SEATS 4

PyObject *ints_tuple(const long *v, int n); /* replay/_native.c */

enum { SC_PIPS, SC_MILO, SC_RUMBLE };
enum { BW_SIDE_TOTAL, BW_LOWEST_HAND, BW_BLOCKER_VS_RIGHT };
enum { BT_NO_SCORE, BT_FIRST_SIDE, BT_LAST_SIDE };
enum { END_POINTS, END_CHIVA, END_ROUNDS, END_MILO, END_FIXED };
enum { FL_DOUBLE_SIX, FL_HIGHEST_DOUBLE, FL_DRAWN };
enum { BL_WINNER_LOWEST, BL_BLOCKER, BL_ROTATE };
enum { TL_ROTATE, TL_DOUBLE_SIX_HOLDER, TL_BLOCKER };
enum { R_NONE, R_DOMINO, R_BLOCK };

typedef struct {
    PyObject_HEAD
    /* the rules */
    int n, sides, pairs, scoring, block_winner, block_tie, count_all, round_down, dominao_both;
    long capicua, chuchazo, ones, first_block;
    PyObject *hand_bonuses; /* tuple of ints */
    int has_pass_bonus;
    long pass_first, pass_later;
    int end_kind;
    long end_a, end_b; /* target (wins, hands) and loser_min */
    int first_lead, later_rotate, block_lead, tie_lead;
    PyObject *shutout; /* str: the profile's word for a shutout */
    /* the match (MatchState) */
    long played, score[MAX_SEATS], wins[MAX_SEATS];
    int first_block_paid, first_leader, prev_leader;
    int prev_result, prev_winner, prev_side, prev_blocker; /* prev_result R_NONE: no hand yet */
    int over, result, winner, shut;                      /* result: 0, 1 win, 2 tie */
} Scorer;

static int side_of(const Scorer *m, int seat) { return m->pairs ? seat % 2 : seat; }

static int tile_low(int t)
{
    int a = 0;
    while (t >= 7 - a) {
        t -= 7 - a;
        a++;
    }
    return a;
}

static int tile_high(int t)
{
    int a = tile_low(t);
    for (int k = 0; k < a; k++)
        t -= 7 - k;
    return a + t;
}

/* The seat holding tile t, or -1. */
static int holder(const uint32_t *hands, int n, int t)
{
    for (int s = 0; s < n; s++)
        if (hands[s] >> t & 1)
            return s;
    return -1;
}

#define DOUBLE_SIX 27

/* first_hand_lead: 0 with (*seat, *tile) set, -1 when it has no answer (no holder, no draw) */
static int first_lead(const Scorer *m, const uint32_t *hands, int drawn, int *seat, int *tile)
{
    if (m->first_lead == FL_DOUBLE_SIX) {
        *tile = DOUBLE_SIX;
        *seat = holder(hands, m->n, DOUBLE_SIX);
        return *seat < 0 ? -1 : 0;
    }
    if (m->first_lead == FL_HIGHEST_DOUBLE) {
        uint32_t dealt = 0;
        for (int s = 0; s < m->n; s++)
            dealt |= hands[s];
        int top = -1;
        for (int t = 0; t < 28; t++) {
            if (!(dealt >> t & 1))
                continue;
            int lo = tile_low(t), hi = tile_high(t), double_ = lo == hi;
            if (top < 0) {
                top = t;
                continue;
            }
            int tlo = tile_low(top), thi = tile_high(top), top_double = tlo == thi;
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
    if (m->later_rotate)
        seat = rotate;
    else if (m->prev_result == R_DOMINO && m->prev_winner >= 0)
        seat = m->prev_winner;
    else if (m->prev_side >= 0 && m->prev_winner >= 0) {
        if (m->block_lead == BL_WINNER_LOWEST)
            seat = m->prev_winner;
        else if (m->block_lead == BL_BLOCKER && m->prev_blocker >= 0)
            seat = m->prev_blocker;
        else
            seat = rotate;
    } else if (m->tie_lead == TL_DOUBLE_SIX_HOLDER) {
        tile = DOUBLE_SIX;
        seat = holder(hands, m->n, DOUBLE_SIX);
        if (seat < 0)
            Py_RETURN_NONE;
    } else if (m->tie_lead == TL_BLOCKER && m->prev_blocker >= 0)
        seat = m->prev_blocker;
    else
        seat = rotate;
    return Py_BuildValue("(ii)", seat, tile);
}

/* _unique_min over the indices `among` (count of them): the index or -1 */
static int unique_min(const long *v, const int *among, int count)
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

/* block_winner: (side, seat), -1 for none (a tie) */
static void block_winner(const Scorer *m, const long *pips, int blocker, int leader, int *side_out, int *seat_out)
{
    int n = m->n, side = -1, seat = -1;
    long totals[MAX_SEATS] = {0};
    int among[MAX_SEATS];
    *side_out = *seat_out = -1;
    if (m->scoring == SC_RUMBLE) {
        int holders = 0, first = -1;
        long low = pips[0];
        for (int s = 1; s < n; s++)
            if (pips[s] < low)
                low = pips[s];
        for (int s = 0; s < n; s++)
            if (pips[s] == low) {
                if (first < 0)
                    first = s;
                holders++;
            }
        if (holders == 1) {
            *side_out = side_of(m, first);
            *seat_out = first;
        }
        return;
    }
    for (int s = 0; s < n; s++)
        totals[side_of(m, s)] += pips[s];
    if (m->block_winner == BW_SIDE_TOTAL) {
        for (int k = 0; k < m->sides; k++)
            among[k] = k;
        side = unique_min(totals, among, m->sides);
    } else if (m->block_winner == BW_LOWEST_HAND) {
        long low = pips[0];
        for (int s = 1; s < n; s++)
            if (pips[s] < low)
                low = pips[s];
        int count = 0;
        for (int k = 0; k < m->sides; k++) /* sorted(sides) of the lowest hands */
            for (int s = 0; s < n; s++)
                if (side_of(m, s) == k && pips[s] == low) {
                    among[count++] = k;
                    break;
                }
        side = count == 1 ? among[0] : unique_min(totals, among, count);
    } else {
        int b = blocker, right = (blocker + 1) % n;
        if (pips[b] != pips[right]) {
            seat = pips[b] < pips[right] ? b : right;
            side = side_of(m, seat);
        }
    }
    if (side < 0) {
        if (m->block_tie == BT_FIRST_SIDE)
            side = side_of(m, leader);
        else if (m->block_tie == BT_LAST_SIDE) {
            *side_out = side_of(m, blocker);
            *seat_out = blocker;
            return;
        } else
            return;
    }
    if (seat < 0) { /* _lowest_member: the side's fewest pips, first from the leader */
        for (int i = 0; i < n; i++) {
            int s = (leader + i) % n;
            if (side_of(m, s) == side && (seat < 0 || pips[s] < pips[seat]))
                seat = s;
        }
    }
    *side_out = side;
    *seat_out = seat;
}

/* going_out_note: the note's word or NULL */
static const char *going_out(const Scorer *m, int tile, int left, int right)
{
    int lo = tile_low(tile), hi = tile_high(tile);
    int both = left >= 0 && ((left == lo && right == hi) || (left == hi && right == lo));
    if (tile == 0)
        return both && m->dominao_both ? "dominao" : "chuchazo";
    if (lo == hi)
        return both ? "dominao" : NULL;
    return both && left != right ? "capicua" : NULL;
}

/* The match end after a recorded hand (match._check_end); `side`: the hand's winning side or -1. */
static void check_end(Scorer *m, int side)
{
    int n = m->sides;
    if (m->end_kind == END_POINTS || m->end_kind == END_MILO) {
        long top = 0;
        int reached = 0, best = -1, ties = 0, side_best = 0;
        for (int k = 0; k < n; k++)
            if (m->score[k] >= m->end_a) {
                if (!reached || m->score[k] > top)
                    top = m->score[k];
                reached = 1;
            }
        if (!reached)
            return;
        for (int k = 0; k < n; k++)
            if (m->score[k] >= m->end_a && m->score[k] == top) {
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
        if (m->end_kind == END_POINTS)
            for (int k = 0; k < n; k++)
                if (m->score[k] == 0)
                    m->shut = 1;
        return;
    }
    if (m->end_kind == END_CHIVA) {
        for (int k = 0; k < n; k++) {
            if (m->wins[k] < m->end_a)
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
    if (m->end_kind == END_ROUNDS) {
        for (int k = 0; k < n; k++) {
            if (m->wins[k] < m->end_a)
                continue;
            int others_ok = 1;
            for (int j = 0; j < n; j++)
                if (j != k && m->wins[j] < m->end_b)
                    others_ok = 0;
            m->over = 1;
            m->result = others_ok ? 1 : 2;
            m->winner = others_ok ? k : -1;
            return;
        }
        return;
    }
    if (m->played >= m->end_a) { /* fixed: the fewest points win */
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
    if (m->end_kind == END_CHIVA && m->wins[w] == 0) {
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
    const char *note = NULL;
    if (result == R_DOMINO) {
        long lt[3];
        if (!PyTuple_Check(last) || PyTuple_GET_SIZE(last) != 3)
            Py_RETURN_NONE;
        for (int i = 0; i < 3; i++)
            if (get_int(last, i, &lt[i]) < 0)
                return NULL;
        if (lt[0] < 0 || lt[0] >= 28)
            Py_RETURN_NONE;
        note = going_out(m, (int)lt[0], (int)lt[1], (int)lt[2]);
    }
    int side, seat;
    if (result == R_DOMINO) {
        seat = (int)((turn - 1 + n) % n);
        side = side_of(m, seat);
    } else
        block_winner(m, pips, (int)blocker, (int)leader, &side, &seat);

    long points[MAX_SEATS] = {0};
    int took_first_block = 0;
    if (m->scoring == SC_RUMBLE) {
        long low = pips[0];
        int count_low = 0;
        for (int s = 1; s < n; s++)
            if (pips[s] < low)
                low = pips[s];
        for (int s = 0; s < n; s++)
            count_low += pips[s] == low;
        for (int s = 0; s < n; s++) {
            long p = pips[s];
            if (result == R_BLOCK && s == blocker && !(pips[s] == low && count_low == 1))
                p *= 4;
            points[s] = p;
        }
    } else if (m->scoring == SC_MILO) {
        if (side >= 0)
            points[side] = result == R_DOMINO && left == right ? 2 : 1;
    } else {
        if (side >= 0) {
            long base = 0, bonus = 0;
            for (int s = 0; s < n; s++)
                if (m->count_all || side_of(m, s) != side)
                    base += pips[s];
            if (result == R_DOMINO) {
                if (note != NULL && note[0] == 'c' && note[1] == 'a')
                    bonus += m->capicua;
                else if (note != NULL && note[0] == 'c')
                    bonus += m->chuchazo;
                if (left == 1 && right == 1)
                    bonus += m->ones;
                if (m->played < PyTuple_GET_SIZE(m->hand_bonuses)) {
                    long hb = PyLong_AsLong(PyTuple_GET_ITEM(m->hand_bonuses, m->played));
                    if (hb == -1 && PyErr_Occurred())
                        return NULL;
                    bonus += hb;
                }
            } else if (!m->first_block_paid) {
                bonus += m->first_block;
                took_first_block = 1;
            }
            points[side] += base + bonus;
        }
        if (m->has_pass_bonus) {
            for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(passes); i++) {
                long passer;
                if (get_int(passes, i, &passer) < 0)
                    return NULL;
                if (passer < 0 || passer >= n)
                    Py_RETURN_NONE;
                int mine = side_of(m, (int)passer);
                for (int k = 0; k < m->sides; k++)
                    if (k != mine)
                        points[k] += i == 0 ? m->pass_first : m->pass_later;
            }
        }
        if (m->round_down)
            for (int k = 0; k < m->sides; k++)
                points[k] -= points[k] % m->round_down;
    }
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

static int scorer_init(Scorer *m, PyObject *args, PyObject *kw)
{
    PyObject *bonuses, *pass_bonus, *shutout;
    static char *names[] = {"players", "pairs", "scoring", "block_winner", "block_tie", "count_all", "round_down",
                            "capicua", "chuchazo", "ones", "first_block", "dominao_both", "hand_bonuses",
                            "pass_bonus", "end_kind", "end_a", "end_b", "first_lead", "later_rotate",
                            "block_lead", "tie_lead", "shutout", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "iiiiiiillllpO!OillipiiU", names, &m->n, &m->pairs, &m->scoring,
                                     &m->block_winner, &m->block_tie, &m->count_all, &m->round_down, &m->capicua,
                                     &m->chuchazo, &m->ones, &m->first_block, &m->dominao_both, &PyTuple_Type,
                                     &bonuses, &pass_bonus, &m->end_kind, &m->end_a, &m->end_b, &m->first_lead,
                                     &m->later_rotate, &m->block_lead, &m->tie_lead, &shutout))
        return -1;
    if (m->n < 2 || m->n > MAX_SEATS || (m->pairs && m->n != 4)) {
        PyErr_SetString(PyExc_ValueError, "Scorer: 2 to 4 players, pairs with 4");
        return -1;
    }
    m->sides = m->pairs ? 2 : m->n;
    m->has_pass_bonus = pass_bonus != Py_None;
    if (m->has_pass_bonus && !PyArg_ParseTuple(pass_bonus, "ll", &m->pass_first, &m->pass_later))
        return -1;
    Py_XSETREF(m->hand_bonuses, Py_NewRef(bonuses));
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
