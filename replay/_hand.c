/* replay._native's hand replayer: replay_hand, the engine's replay of a
 * clean hand over the moves scan packed (replay.engine), which also writes
 * the store's moves columns; and pips, for the tests.
 */
#include "_native.h"

/* ------------------------------------------------------------------------
 * replay_hand: the engine's replay of a clean hand, over packed moves
 */

/* Milliseconds since 1970 of a time ts_ok accepted (replay.events.ts_to_ms:
 * digits past the millisecond cut, a leap second is the next minute's first). */
static int64_t ts_ms(const uint8_t *s)
{
    int y = 0, mo = 0, d = 0, h = 0, mi = 0, se = 0;
    digits(s, 4, &y);
    digits(s + 5, 2, &mo);
    digits(s + 8, 2, &d);
    digits(s + 11, 2, &h);
    digits(s + 14, 2, &mi);
    digits(s + 17, 2, &se);
    /* days from civil (Howard Hinnant's algorithm) */
    int yy = mo <= 2 ? y - 1 : y;
    int era = (yy >= 0 ? yy : yy - 399) / 400;
    int yoe = yy - era * 400;
    int doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    int64_t days = (int64_t)era * 146097 + doe - 719468;
    int64_t ms = ((days * 24 + h) * 60 + mi) * 60 + se;
    ms *= 1000;
    if (s[19] == '.') {
        int f = 0, k = 0;
        for (const uint8_t *q = s + 20; *q >= '0' && *q <= '9'; q++)
            if (k < 3) {
                f = f * 10 + (*q - '0');
                k++;
            }
        while (k < 3) {
            f *= 10;
            k++;
        }
        ms += f;
    }
    return ms;
}

/* The columns of replay.frames' moves table, appended to bytearrays. */
enum { C_HAND, C_PLY, C_SEQ, C_SEAT, C_KIND, C_TILE, C_END, C_LEFT, C_RIGHT, C_STOCK, C_LEGAL, C_TS, C_PIPS,
       C_NALTS, C_ALTS, N_COLS };
static const int COL_SIZE[N_COLS] = {4, 2, 4, 1, 1, 1, 1, 1, 1, 1, 1, 8, 2, 1, 2};

static int put(PyObject **cols, int c, const void *v, Py_ssize_t n)
{
    Py_ssize_t at = PyByteArray_GET_SIZE(cols[c]);
    if (PyByteArray_Resize(cols[c], at + n * COL_SIZE[c]) < 0)
        return -1;
    memcpy(PyByteArray_AS_STRING(cols[c]) + at, v, (size_t)(n * COL_SIZE[c]));
    return 0;
}

/* Legal plays as replay.moves codes (tile * 2 + end),
 * in replay.engine.legal_moves order. */
static int alternatives(uint32_t hand, int left, int right, int16_t *out)
{
    int n = 0;
    uint32_t lm = SUIT_MASK[left], rm = SUIT_MASK[right], m = hand & (lm | rm);
    while (m) {
        int t = __builtin_ctz(m);
        m &= m - 1;
        if ((1u << t) & lm)
            out[n++] = (int16_t)(2 * t);
        if (((1u << t) & rm) && left != right)
            out[n++] = (int16_t)(2 * t + 1);
    }
    return n;
}

static int pips_of_mask(uint32_t m)
{
    int s = 0;
    while (m) {
        int t = __builtin_ctz(m);
        s += TILE_LOW[t] + TILE_HIGH[t];
        m &= m - 1;
    }
    return s;
}

/* replay_hand(moves, lo, hi, hand, hands, stock, turn, opening, draw_mode, all_pass[, text, yield_ok, sink])
 *   -> None when an event is irregular, else
 *      (hands, stock_left, left, right, turn, passes, blocker, result, last, plays, pips, pass_counts)
 * With a sink (15 bytearrays, replay.validate.fast_path.MoveColumns), each move's row
 * of the store's moves table is appended to it (taken back if the hand turns
 * out irregular); `text` is the buffer the moves were scanned from (their
 * times) and `yield_ok` whether the leader may hand the lead over.
 * `moves[lo:hi]` (records, not bytes) must all belong to `hand`; `stock`
 * is the boneyard as bytes of tile ids in drawing order. */
PyObject *py_replay_hand(PyObject *self, PyObject *args)
{
    Py_buffer mv, stk;
    Py_ssize_t lo, hi;
    long hand_no, turn, opening;
    int draw_mode, all_pass;
    PyObject *hands_in, *sink = Py_None;
    Py_buffer text = {0};
    int yield_ok = 0;
    if (!PyArg_ParseTuple(args, "y*nnlOy*llpp|y*pO", &mv, &lo, &hi, &hand_no, &hands_in, &stk, &turn, &opening,
                          &draw_mode, &all_pass, &text, &yield_ok, &sink))
        return NULL;
    PyObject *out = NULL;
    PyObject *cols[N_COLS];
    Py_ssize_t marks[N_COLS];
    void *block = NULL; /* the hand's rows (freed at done:) */
    int keep = sink != Py_None;
    long pass_count[16] = {0};
    if (keep) {
        if (!PyList_Check(sink) || PyList_GET_SIZE(sink) != N_COLS || text.buf == NULL) {
            PyErr_SetString(PyExc_ValueError, "replay_hand: the sink is a list of 15 bytearrays, with the text");
            goto done;
        }
        for (int c = 0; c < N_COLS; c++) {
            cols[c] = PyList_GET_ITEM(sink, c);
            if (!PyByteArray_Check(cols[c])) {
                PyErr_SetString(PyExc_ValueError, "replay_hand: the sink is a list of 15 bytearrays");
                goto done;
            }
            marks[c] = PyByteArray_GET_SIZE(cols[c]);
        }
    }
    uint32_t hands[16];
    Py_ssize_t n = PyTuple_Check(hands_in) ? PyTuple_GET_SIZE(hands_in) : -1;
    Py_ssize_t n_moves = mv.len / (Py_ssize_t)sizeof(move_rec);
    if (n < 1 || n > 16 || lo < 0 || hi > n_moves || lo > hi || stk.len > 28 || mv.len % (Py_ssize_t)sizeof(move_rec)) {
        PyErr_SetString(PyExc_ValueError, "replay_hand: bad arguments");
        goto done;
    }
    for (Py_ssize_t s = 0; s < n; s++) {
        unsigned long v = PyLong_AsUnsignedLong(PyTuple_GET_ITEM(hands_in, s));
        if (PyErr_Occurred())
            goto done;
        hands[s] = (uint32_t)v;
    }
    const move_rec *moves = (const move_rec *)mv.buf;
    const uint8_t *stock = stk.buf;
    Py_ssize_t sp = 0, sn = stk.len;
    int left = -1, right = -1, must = -1, result = 0 /* 1 domino, 2 block */, closing = 0, blocker = -1;
    int last_tile = -1, last_l = -1, last_r = -1, plays = 0;
    int passes[64], n_pass = 0;
    int pips[16];
    /* a hand's rows, appended to the sink once the hand replays cleanly */
    struct {
        int32_t *hand, *seq;
        int16_t *ply, *pips, *alts;
        int8_t *seat, *kind, *tile, *end, *left, *right, *stock, *legal;
        int64_t *ts;
    } rows = {0};
    Py_ssize_t n_alt_vals = 0, n_rows = hi - lo;
    if (keep) {
        if (n_rows > 1024)
            goto irregular; /* no real hand has so many moves: line by line */
        size_t per = 4 + 4 + 2 + 2 * (size_t)n + 2 * 64 + 8 * 1 + 8;
        block = PyMem_Malloc(per * (size_t)(n_rows ? n_rows : 1));
        if (block == NULL) {
            PyErr_NoMemory();
            goto done;
        }
        char *b = block;
        rows.ts = (int64_t *)b; b += 8 * n_rows;
        rows.hand = (int32_t *)b; b += 4 * n_rows;
        rows.seq = (int32_t *)b; b += 4 * n_rows;
        rows.ply = (int16_t *)b; b += 2 * n_rows;
        rows.pips = (int16_t *)b; b += 2 * n * n_rows;
        rows.alts = (int16_t *)b; b += 2 * 64 * n_rows;
        rows.seat = (int8_t *)b; b += n_rows;
        rows.kind = (int8_t *)b; b += n_rows;
        rows.tile = (int8_t *)b; b += n_rows;
        rows.end = (int8_t *)b; b += n_rows;
        rows.left = (int8_t *)b; b += n_rows;
        rows.right = (int8_t *)b; b += n_rows;
        rows.stock = (int8_t *)b; b += n_rows;
        rows.legal = (int8_t *)b;
    }
    for (Py_ssize_t s = 0; s < n; s++)
        pips[s] = pips_of_mask(hands[s]);
    if (turn < 0 || turn >= n)
        goto irregular;
    for (Py_ssize_t i = lo; i < hi; i++) {
        const move_rec *e = &moves[i];
        int seat = e->seat;
        if (e->hand != hand_no || seat != turn || (result && closing == 0))
            goto irregular;
        uint32_t mine = hands[seat];
        uint32_t fit = left >= 0 ? SUIT_MASK[left] | SUIT_MASK[right] : 0;
        int16_t alts[64];
        int n_alts = 0, on_end = -1;
        if (keep) { /* the legal moves before this one */
            if (e->kind == K_PASS)
                alts[n_alts++] = MOVE_PASS;
            else if (e->kind == K_DRAW)
                alts[n_alts++] = MOVE_DRAW;
            else if (left < 0) {
                if (opening >= 0)
                    alts[n_alts++] = (int16_t)(2 * opening);
                else {
                    for (uint32_t m = mine; m; m &= m - 1)
                        alts[n_alts++] = (int16_t)(2 * __builtin_ctz(m));
                    if (yield_ok)
                        alts[n_alts++] = MOVE_YIELD;
                }
            } else
                n_alts = alternatives(must >= 0 ? 1u << e->tile : mine, left, right, alts);
        }
        if (e->kind == K_PLAY) {
            int t = e->tile;
            uint32_t b = 1u << t;
            int nl, nr;
            if (!(mine & b) || result)
                goto irregular;
            if (left < 0) {
                if (opening >= 0 && t != opening)
                    goto irregular;
                nl = e->end >> 2; /* the face as written: its first digit goes left */
                nr = TILE_OTHER[t][nl];
            } else {
                if (must >= 0 && t != must)
                    goto irregular;
                int endv = e->end & 3;
                if (endv == 0) {
                    int o = TILE_OTHER[t][left];
                    if (o < 0)
                        goto irregular;
                    nl = o;
                    nr = right;
                } else if (endv == 1) {
                    int o = TILE_OTHER[t][right];
                    if (o < 0)
                        goto irregular;
                    nl = left;
                    nr = o;
                } else if (left == right && TILE_OTHER[t][left] >= 0) {
                    nl = TILE_OTHER[t][left];
                    nr = right;
                    endv = 0;
                } else {
                    goto irregular;
                }
                on_end = endv;
            }
            last_tile = t;
            last_l = left;
            last_r = right;
            left = nl;
            right = nr;
            mine &= ~b;
            hands[seat] = mine;
            pips[seat] -= TILE_LOW[t] + TILE_HIGH[t];
            must = -1;
            plays++;
            if (!mine) {
                result = 1;
            } else {
                uint32_t any = 0;
                for (Py_ssize_t s = 0; s < n; s++)
                    any |= hands[s];
                for (Py_ssize_t k = sp; k < sn; k++)
                    any |= 1u << stock[k];
                if (!(any & (SUIT_MASK[left] | SUIT_MASK[right]))) {
                    result = 2;
                    blocker = seat;
                    closing = all_pass ? (int)n : 0;
                }
            }
            turn = (seat + 1) % n;
        } else if (e->kind == K_PASS) {
            if (!result) {
                if (must >= 0 || left < 0 || (mine & fit) || sp < sn)
                    goto irregular;
                if (n_pass == 64)
                    goto irregular;
                passes[n_pass++] = seat;
            } else if (sp < sn) {
                goto irregular;
            } else {
                closing--;
            }
            pass_count[seat]++;
            turn = (seat + 1) % n;
        } else { /* K_DRAW */
            if (!draw_mode || sp >= sn || must >= 0)
                goto irregular;
            if (!result && (left < 0 || (mine & fit)))
                goto irregular;
            int t = e->tile;
            if (stock[sp] != t)
                goto irregular;
            sp++;
            hands[seat] = mine | (1u << t);
            pips[seat] += TILE_LOW[t] + TILE_HIGH[t];
            if (!result && ((1u << t) & fit))
                must = t;
        }
        if (keep) { /* the move's row: what the validator's MoveRecord holds */
            Py_ssize_t r = i - lo;
            rows.hand[r] = (int32_t)hand_no;
            rows.ply[r] = (int16_t)(r + 1);
            rows.seq[r] = e->seq;
            rows.seat[r] = (int8_t)seat;
            rows.kind[r] = (int8_t)e->kind;
            rows.tile[r] = e->kind == K_PASS ? -1 : e->tile;
            rows.end[r] = (int8_t)on_end;
            rows.left[r] = (int8_t)left;
            rows.right[r] = (int8_t)right;
            rows.stock[r] = (int8_t)(e->kind == K_PASS ? 0 : sn - sp);
            rows.legal[r] = (int8_t)n_alts;
            rows.ts[r] = ts_ms((const uint8_t *)text.buf + e->ts_off);
            for (Py_ssize_t s = 0; s < n; s++)
                rows.pips[n * r + s] = (int16_t)pips[s];
            memcpy(rows.alts + n_alt_vals, alts, sizeof(int16_t) * (size_t)n_alts);
            n_alt_vals += n_alts;
        }
    }
    if (!result || closing)
        goto irregular;
    if (keep) {
        const void *src[N_COLS] = {rows.hand, rows.ply, rows.seq, rows.seat, rows.kind, rows.tile, rows.end,
                                   rows.left, rows.right, rows.stock, rows.legal, rows.ts, rows.pips, rows.legal,
                                   rows.alts};
        const Py_ssize_t count[N_COLS] = {n_rows, n_rows, n_rows, n_rows, n_rows, n_rows, n_rows, n_rows,
                                          n_rows, n_rows, n_rows, n_rows, n * n_rows, n_rows, n_alt_vals};
        for (int c = 0; c < N_COLS; c++)
            if (put(cols, c, src[c], count[c]) < 0)
                goto rollback;
    }
    {
        PyObject *ht = PyTuple_New(n), *pt = PyTuple_New(n_pass);
        if (ht == NULL || pt == NULL) {
            Py_XDECREF(ht);
            Py_XDECREF(pt);
            goto done;
        }
        for (Py_ssize_t s = 0; s < n; s++)
            PyTuple_SET_ITEM(ht, s, PyLong_FromUnsignedLong(hands[s]));
        for (int k = 0; k < n_pass; k++)
            PyTuple_SET_ITEM(pt, k, PyLong_FromLong(passes[k]));
        PyObject *last = last_tile >= 0 ? Py_BuildValue("(iii)", last_tile, last_l, last_r) : Py_NewRef(Py_None);
        if (last == NULL) {
            Py_DECREF(ht);
            Py_DECREF(pt);
            goto done;
        }
        PyObject *pipt = PyTuple_New(n);
        if (pipt == NULL) {
            Py_DECREF(ht);
            Py_DECREF(pt);
            Py_DECREF(last);
            goto done;
        }
        for (Py_ssize_t s = 0; s < n; s++)
            PyTuple_SET_ITEM(pipt, s, PyLong_FromLong(pips[s]));
        PyObject *counts = ints_tuple(pass_count, (int)n);
        if (counts == NULL) {
            Py_DECREF(ht);
            Py_DECREF(pt);
            Py_DECREF(last);
            Py_DECREF(pipt);
            goto done;
        }
        out = Py_BuildValue("(NniilNisNiNN)", ht, sn - sp, left, right, turn, pt, blocker,
                            result == 1 ? "domino" : "block", last, plays, pipt, counts);
    }
    goto done;
rollback:
    for (int c = 0; c < N_COLS; c++)
        PyByteArray_Resize(cols[c], marks[c]);
    goto done;
irregular:
    out = Py_NewRef(Py_None);
done:
    PyMem_Free(block);
    PyBuffer_Release(&mv);
    PyBuffer_Release(&stk);
    if (text.buf != NULL)
        PyBuffer_Release(&text);
    return out;
}

/* pips(mask) -> int: for the tests */
PyObject *py_pips(PyObject *self, PyObject *arg)
{
    unsigned long m = PyLong_AsUnsignedLong(arg);
    if (PyErr_Occurred())
        return NULL;
    return PyLong_FromLong(pips_of_mask((uint32_t)m));
}
