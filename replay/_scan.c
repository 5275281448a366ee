/* replay._native's readers of log bytes: the line scanner (scan, the
 * canonical lines grouped by match, replay.canonical_reader) and the
 * ingest's router (route, lines to matches by id, replay.ingest).
 */
#include "_native.h"

/* ------------------------------------------------------------------------
 * Tiles: id of (a, b) with a <= b in lexicographic order (deal-commitment.md)
 */

/* TILE_ID, TILE_LOW, TILE_HIGH, TILE_OTHER and SUIT_MASK: replay/_rules.h */

/* ------------------------------------------------------------------------
 * The line scanner
 *
 * A line is "canonical" when it is exactly what the server writes: the
 * keys of its type in log order, no spaces, no extra fields, plain ASCII
 * strings without escapes, integers without sign, fraction or exponent,
 * times as YYYY-MM-DDTHH:MM:SS[.fff]Z with a real date. Every such line is
 * a valid event whose values this code reads exactly as pydantic does; any
 * other line goes back to Python (replay.reader) untouched.
 */

typedef struct {
    const uint8_t *p, *end;
} cur;

static inline __attribute__((always_inline)) int lit(cur *c, const char *s, size_t n)
{
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, s, n) != 0)
        return 0;
    c->p += n;
    return 1;
}
#define LIT(c, s) lit((c), (s), sizeof(s) - 1)

/* A JSON string of printable ASCII without escapes; (start, len) of its body. */
static inline __attribute__((always_inline)) int str(cur *c, const uint8_t **s, Py_ssize_t *n)
{
    if (c->p >= c->end || *c->p != '"')
        return 0;
    const uint8_t *q = c->p + 1;
    while (q < c->end && *q != '"') {
        if (*q < 0x20 || *q > 0x7e || *q == '\\')
            return 0;
        q++;
    }
    if (q >= c->end)
        return 0;
    *s = c->p + 1;
    *n = q - (c->p + 1);
    c->p = q + 1;
    return 1;
}

/* A non-negative JSON integer up to 2**31-1 (no leading zeros). */
static inline __attribute__((always_inline)) int uint31(cur *c, long *out)
{
    const uint8_t *q = c->p;
    if (q >= c->end || *q < '0' || *q > '9')
        return 0;
    if (*q == '0') {
        if (q + 1 < c->end && q[1] >= '0' && q[1] <= '9')
            return 0;
        c->p = q + 1;
        *out = 0;
        return 1;
    }
    long v = 0;
    int digits = 0;
    while (q < c->end && *q >= '0' && *q <= '9') {
        v = v * 10 + (*q - '0');
        if (++digits > 10)
            return 0;
        q++;
    }
    if (v > 2147483647L)
        return 0;
    c->p = q;
    *out = v;
    return 1;
}

/* An integer in [-(2**31-1), 2**31-1] (the Points type). */
static int int31(cur *c, long *out)
{
    int neg = 0;
    if (c->p < c->end && *c->p == '-') {
        neg = 1;
        c->p++;
    }
    if (!uint31(c, out))
        return 0;
    if (neg) {
        if (*out == 0)
            return 0; /* "-0": pydantic takes it, but it is not what the server writes */
        *out = -*out;
    }
    return 1;
}

/* "ab" with digits 0..6: the tile id, and the first digit (for the opening face). */
static int tile(cur *c, int *id, int *first)
{
    const uint8_t *q = c->p;
    if (c->end - q < 4 || q[0] != '"' || q[3] != '"' || q[1] < '0' || q[1] > '6' || q[2] < '0' || q[2] > '6')
        return 0;
    *id = TILE_ID[q[1] - '0'][q[2] - '0'];
    *first = q[1] - '0';
    c->p = q + 4;
    return 1;
}

/* YYYY-MM-DDTHH:MM:SS[.f+]Z, with the calendar of RFC3339_PATTERN, years 0001 to 9999. */
static int ts_ok(const uint8_t *s, Py_ssize_t n)
{
    int y, mo, d, h, mi, se;
    if (n < 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[n - 1] != 'Z')
        return 0;
    if (!digits(s, 4, &y) || !digits(s + 5, 2, &mo) || !digits(s + 8, 2, &d) || !digits(s + 11, 2, &h) ||
        !digits(s + 14, 2, &mi) || !digits(s + 17, 2, &se))
        return 0;
    if (n > 20) {
        if (s[19] != '.' || n < 22)
            return 0;
        for (Py_ssize_t i = 20; i < n - 1; i++)
            if (s[i] < '0' || s[i] > '9')
                return 0;
    }
    if (y == 0 || mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || se > 60)
        return 0;
    if (y == 9999 && mo == 12 && d == 31 && h == 23 && mi == 59 && se == 60)
        return 0; /* a leap second into year 10000: Python's reader refuses it */
    static const int days[13] = {0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (d > days[mo])
        return 0;
    if (mo == 2 && d == 29) {
        int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
        if (!leap)
            return 0;
    }
    return 1;
}

typedef struct {
    PyObject *id;      /* str */
    PyObject *events;  /* list of tuples: deal / hand_end / reveal / other */
    move_rec *moves;
    Py_ssize_t n_moves, cap_moves;
    long first_line, first_seq, next_seq, count;
    const uint8_t *first_ts, *last_ts;
    Py_ssize_t first_ts_len, last_ts_len;
    int ordered; /* seq 0, 1, 2, ... in file order and ts never going back */
} match_acc;

/* match id -> index of its accumulator */
typedef struct {
    const uint8_t *p;
    Py_ssize_t n;
    uint64_t h;
    Py_ssize_t ix;
} id_slot;

/* An open-addressing table of byte strings (FNV-1a), kept at most half full. */
typedef struct {
    id_slot *tab;
    size_t cap;
} id_table;

/* The slot of `key` (p == NULL: not there yet; the caller fills it in),
 * growing the table first so that it has room for `count` + 1 keys.
 * NULL with MemoryError set when it cannot grow. */
static id_slot *id_find(id_table *t, const uint8_t *key, Py_ssize_t n, Py_ssize_t count)
{
    uint64_t h = 1469598103934665603ULL;
    for (Py_ssize_t k = 0; k < n; k++)
        h = (h ^ key[k]) * 1099511628211ULL;
    if ((size_t)(2 * (count + 1)) > t->cap) {
        size_t ncap = t->cap ? 2 * t->cap : 256;
        id_slot *nt = PyMem_Calloc(ncap, sizeof(id_slot));
        if (nt == NULL) {
            PyErr_NoMemory();
            return NULL;
        }
        for (size_t k = 0; k < t->cap; k++)
            if (t->tab[k].p != NULL) {
                size_t j = t->tab[k].h & (ncap - 1);
                while (nt[j].p != NULL)
                    j = (j + 1) & (ncap - 1);
                nt[j] = t->tab[k];
            }
        PyMem_Free(t->tab);
        t->tab = nt;
        t->cap = ncap;
    }
    size_t j = h & (t->cap - 1);
    while (t->tab[j].p != NULL &&
           !(t->tab[j].h == h && t->tab[j].n == n && memcmp(t->tab[j].p, key, (size_t)n) == 0))
        j = (j + 1) & (t->cap - 1);
    t->tab[j].h = h;
    return &t->tab[j];
}

static int add_move(match_acc *m, move_rec *r)
{
    if (m->n_moves == m->cap_moves) {
        Py_ssize_t cap = m->cap_moves ? 2 * m->cap_moves : 256;
        move_rec *mv = PyMem_Realloc(m->moves, cap * sizeof(move_rec));
        if (mv == NULL)
            return -1;
        m->moves = mv;
        m->cap_moves = cap;
    }
    m->moves[m->n_moves++] = *r;
    return 0;
}

/* A tuple of the n new references in `items` (stolen), or NULL with them released. */
static PyObject *steal_tuple(PyObject **items, int n)
{
    PyObject *t = PyTuple_New(n);
    if (t == NULL) {
        for (int i = 0; i < n; i++)
            Py_DECREF(items[i]);
        return NULL;
    }
    for (int i = 0; i < n; i++)
        PyTuple_SET_ITEM(t, i, items[i]);
    return t;
}

/* [int, int, ...] (possibly empty), at most `cap` items */
static int int_list(cur *c, long *v, int cap, int *n)
{
    *n = 0;
    if (!LIT(c, "["))
        return 0;
    if (LIT(c, "]"))
        return 1;
    for (;;) {
        if (*n == cap || !int31(c, &v[*n]))
            return 0;
        (*n)++;
        if (LIT(c, "]"))
            return 1;
        if (!LIT(c, ","))
            return 0;
    }
}

/* ["s", "s", ...] (possibly empty) as a tuple of str, or NULL with *bad set when not canonical */
static PyObject *str_list(cur *c, int *bad)
{
    PyObject *items[64];
    int n = 0;
    *bad = 1;
    if (!LIT(c, "["))
        return NULL;
    if (!LIT(c, "]")) {
        for (;;) {
            const uint8_t *s;
            Py_ssize_t len;
            if (n == 64 || !str(c, &s, &len))
                goto fail;
            items[n] = PyUnicode_DecodeASCII((const char *)s, len, NULL);
            if (items[n] == NULL) {
                *bad = 0;
                goto fail;
            }
            n++;
            if (LIT(c, "]"))
                break;
            if (!LIT(c, ","))
                goto fail;
        }
    }
    *bad = 0;
    return steal_tuple(items, n);
fail:
    for (int i = 0; i < n; i++)
        Py_DECREF(items[i]);
    return NULL;
}

/* "hands":[[t,...],...]: a tuple of tuples of tile ids, and the masks */
static PyObject *hands_list(cur *c, int *bad, uint32_t *masks, int *n_hands)
{
    PyObject *rows[16];
    int n = 0;
    *bad = 1;
    if (!LIT(c, "["))
        return NULL;
    if (!LIT(c, "]")) {
        for (;;) {
            int ids[32], k = 0, id, first;
            uint32_t mk = 0;
            if (n == 16 || !LIT(c, "["))
                goto fail;
            if (!LIT(c, "]")) {
                for (;;) {
                    if (k == 32 || !tile(c, &id, &first))
                        goto fail;
                    ids[k++] = id;
                    mk |= 1u << id;
                    if (LIT(c, "]"))
                        break;
                    if (!LIT(c, ","))
                        goto fail;
                }
            }
            PyObject *row = PyTuple_New(k);
            if (row == NULL) {
                *bad = 0;
                goto fail;
            }
            for (int i = 0; i < k; i++)
                PyTuple_SET_ITEM(row, i, PyLong_FromLong(ids[i])); /* small ints: cached, cannot fail */
            rows[n] = row;
            masks[n] = mk;
            n++;
            if (LIT(c, "]"))
                break;
            if (!LIT(c, ","))
                goto fail;
        }
    }
    *n_hands = n;
    *bad = 0;
    return steal_tuple(rows, n);
fail:
    for (int i = 0; i < n; i++)
        Py_DECREF(rows[i]);
    return NULL;
}

static PyObject *ascii(const uint8_t *s, Py_ssize_t n)
{
    return PyUnicode_DecodeASCII((const char *)s, n, NULL);
}

/* Read the rest of a deal / hand_end / reveal line after its head: a tuple
 * for the match's events, Py_None when the line is not canonical, NULL on error. */
static PyObject *hand_event(cur *c, int kind, long line, Py_ssize_t off, long seq, PyObject *ts, long hand,
                            Py_ssize_t n_moves)
{
    int bad;
    if (kind == K_DEAL) {
        long stock, leader;
        uint32_t masks[16];
        int n_hands = 0;
        if (!LIT(c, ",\"client_seeds\":"))
            Py_RETURN_NONE;
        PyObject *seeds = str_list(c, &bad);
        if (seeds == NULL)
            return bad ? Py_NewRef(Py_None) : NULL;
        if (!LIT(c, ",\"hands\":")) {
            Py_DECREF(seeds);
            Py_RETURN_NONE;
        }
        PyObject *hands = hands_list(c, &bad, masks, &n_hands);
        if (hands == NULL) {
            Py_DECREF(seeds);
            return bad ? Py_NewRef(Py_None) : NULL;
        }
        if (!LIT(c, ",\"stock\":") || !uint31(c, &stock) || !LIT(c, ",\"leader\":") || !uint31(c, &leader) ||
            leader > 127 || !LIT(c, "}") || c->p != c->end) {
            Py_DECREF(seeds);
            Py_DECREF(hands);
            Py_RETURN_NONE;
        }
        long mk[16];
        for (int i = 0; i < n_hands; i++)
            mk[i] = (long)masks[i];
        PyObject *mt = ints_tuple(mk, n_hands);
        if (mt == NULL) {
            Py_DECREF(seeds);
            Py_DECREF(hands);
            return NULL;
        }
        return Py_BuildValue("(ilnlOlNNNlln)", K_DEAL, line, off, seq, ts, hand, seeds, hands, mt, stock, leader, n_moves);
    }
    if (kind == K_HAND_END) {
        const uint8_t *s;
        Py_ssize_t n;
        long winner = -1, pts[16], sc[16];
        int np, ns;
        if (!LIT(c, ",\"result\":") || !str(c, &s, &n))
            Py_RETURN_NONE;
        const char *result;
        if (n == 6 && memcmp(s, "domino", 6) == 0)
            result = "domino";
        else if (n == 5 && memcmp(s, "block", 5) == 0)
            result = "block";
        else
            Py_RETURN_NONE;
        if (!LIT(c, ",\"winner\":"))
            Py_RETURN_NONE;
        if (!LIT(c, "null") && (!uint31(c, &winner) || winner > 127))
            Py_RETURN_NONE;
        if (!LIT(c, ",\"points\":") || !int_list(c, pts, 16, &np) || !LIT(c, ",\"score\":") || !int_list(c, sc, 16, &ns))
            Py_RETURN_NONE;
        PyObject *notes;
        if (LIT(c, ",\"notes\":")) {
            notes = str_list(c, &bad);
            if (notes == NULL)
                return bad ? Py_NewRef(Py_None) : NULL;
        } else {
            notes = PyTuple_New(0);
            if (notes == NULL)
                return NULL;
        }
        if (!LIT(c, "}") || c->p != c->end) {
            Py_DECREF(notes);
            Py_RETURN_NONE;
        }
        PyObject *w = winner < 0 ? Py_NewRef(Py_None) : PyLong_FromLong(winner);
        PyObject *pt = ints_tuple(pts, np), *st = ints_tuple(sc, ns);
        if (w == NULL || pt == NULL || st == NULL) {
            Py_XDECREF(w);
            Py_XDECREF(pt);
            Py_XDECREF(st);
            Py_DECREF(notes);
            return NULL;
        }
        return Py_BuildValue("(ilnlOlsNNNNn)", K_HAND_END, line, off, seq, ts, hand, result, w, pt, st, notes, n_moves);
    }
    /* K_REVEAL */
    const uint8_t *s;
    Py_ssize_t n;
    if (!LIT(c, ",\"server_seed\":") || !str(c, &s, &n) || !LIT(c, "}") || c->p != c->end)
        Py_RETURN_NONE;
    PyObject *seed = ascii(s, n);
    if (seed == NULL)
        return NULL;
    return Py_BuildValue("(ilnlOlNn)", K_REVEAL, line, off, seq, ts, hand, seed, n_moves);
}

static void match_acc_free(match_acc *m)
{
    Py_XDECREF(m->id);
    Py_XDECREF(m->events);
    PyMem_Free(m->moves);
}

/* scan(data: bytes) -> (lines, others, matches)
 *
 * lines:   the number of lines (table-log.md's count: a final newline does
 *          not start another line)
 * others:  [(line, start, end), ...]: the lines to read in Python (byte
 *          offsets of the line without its \n, as replay.reader splits
 *          lines); blank lines are left out
 * matches: {match: (first_line, ordered, events, moves, count, first_seq,
 *          last_seq, first_ts, last_ts)} for every match with at least one
 *          line whose head (type, match, seq, ts) is canonical: `events`
 *          lists its deal, hand_end, reveal and other lines in file order,
 *          as tuples (see replay.canonical_reader), `moves` packs its plays, passes and
 *          draws, `count` is its number of lines with a canonical head,
 *          `ordered` says that their seqs go up by one from `first_seq` and
 *          their times never go back (same length, string order).
 */
PyObject *py_scan(PyObject *self, PyObject *args)
{
    Py_buffer buf;
    long line = 0, max_line;
    if (!PyArg_ParseTuple(args, "y*ll", &buf, &line, &max_line))
        return NULL;
    const uint8_t *data = buf.buf, *end = data + buf.len;
    PyObject *others = PyList_New(0), *result = NULL;
    id_table ids = {NULL, 0};
    match_acc *accs = NULL;
    Py_ssize_t n_accs = 0, cap_accs = 0;
    if (others == NULL)
        goto fail;
    const uint8_t *p = data;
    while (p < end) {
        const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
        const uint8_t *le = nl ? nl : end;
        const uint8_t *start = p;
        p = nl ? nl + 1 : end;
        line++;
        const uint8_t *e = le;
        if (e > start && e[-1] == '\r')
            e--;
        if (le - start <= max_line) { /* a longer line is too long, blank or not, as the reader says */
            const uint8_t *q = start;
            while (q < e && (*q == ' ' || *q == '\t'))
                q++;
            if (q == e)
                continue; /* blank: counted, not read */
        }
        cur c = {start, e};
        const uint8_t *ks, *ms, *tss;
        Py_ssize_t kn, mn, tsn;
        long seq, hand = 0;
        int kind = K_OTHER, head = 0;
        if (le - start <= max_line && LIT(&c, "{\"type\":") && str(&c, &ks, &kn) && LIT(&c, ",\"match\":") && str(&c, &ms, &mn) && mn > 0 &&
            LIT(&c, ",\"seq\":") && uint31(&c, &seq) && LIT(&c, ",\"ts\":") && str(&c, &tss, &tsn) && ts_ok(tss, tsn)) {
            head = 1;
            if (kn == 4 && memcmp(ks, "play", 4) == 0)
                kind = K_PLAY;
            else if (kn == 4 && memcmp(ks, "pass", 4) == 0)
                kind = K_PASS;
            else if (kn == 4 && memcmp(ks, "draw", 4) == 0)
                kind = K_DRAW;
            else if (kn == 4 && memcmp(ks, "deal", 4) == 0)
                kind = K_DEAL;
            else if (kn == 8 && memcmp(ks, "hand_end", 8) == 0)
                kind = K_HAND_END;
            else if (kn == 6 && memcmp(ks, "reveal", 6) == 0)
                kind = K_REVEAL;
            if (kind != K_OTHER && !(LIT(&c, ",\"hand\":") && uint31(&c, &hand) && hand >= 1))
                kind = K_OTHER;
        }
        if (!head) {
            PyObject *o = Py_BuildValue("(lnn)", line, (Py_ssize_t)(start - data), (Py_ssize_t)(le - data));
            if (o == NULL || PyList_Append(others, o) < 0) {
                Py_XDECREF(o);
                goto fail;
            }
            Py_DECREF(o);
            continue;
        }
        /* the match this line belongs to: a hash table of C strings, so
         * that no Python object is made per line */
        id_slot *slot = id_find(&ids, ms, mn, n_accs);
        if (slot == NULL)
            goto fail;
        Py_ssize_t mi;
        if (slot->p == NULL) {
            PyObject *mid = PyUnicode_DecodeASCII((const char *)ms, mn, NULL);
            if (mid == NULL)
                goto fail;
            if (n_accs == cap_accs) {
                Py_ssize_t cap = cap_accs ? 2 * cap_accs : 64;
                match_acc *na = PyMem_Realloc(accs, cap * sizeof(match_acc));
                if (na == NULL) {
                    Py_DECREF(mid);
                    PyErr_NoMemory();
                    goto fail;
                }
                accs = na;
                cap_accs = cap;
            }
            match_acc *m = &accs[n_accs];
            memset(m, 0, sizeof *m);
            m->id = mid;
            m->events = PyList_New(0);
            m->first_line = line;
            m->first_seq = m->next_seq = seq;
            m->first_ts = tss;
            m->first_ts_len = tsn;
            m->ordered = 1;
            n_accs++;
            if (m->events == NULL)
                goto fail;
            slot->p = ms;
            slot->n = mn;
            slot->ix = mi = n_accs - 1;
        } else {
            mi = slot->ix;
        }
        match_acc *m = &accs[mi];
        m->count++;
        if (seq != m->next_seq)
            m->ordered = 0;
        m->next_seq = seq + 1;
        if (m->last_ts != NULL) {
            if (tsn != m->last_ts_len || memcmp(tss, m->last_ts, (size_t)tsn) < 0)
                m->ordered = 0;
        }
        m->last_ts = tss;
        m->last_ts_len = tsn;

        if (kind == K_PLAY || kind == K_PASS || kind == K_DRAW) {
            long seat;
            int id = 0, first = 0, endv = 2;
            int ok = LIT(&c, ",\"seat\":") && uint31(&c, &seat) && seat <= 127;
            if (ok && kind != K_PASS)
                ok = LIT(&c, ",\"tile\":") && tile(&c, &id, &first);
            if (ok && kind == K_PLAY) {
                if (LIT(&c, ",\"end\":\"left\""))
                    endv = 0;
                else if (LIT(&c, ",\"end\":\"right\""))
                    endv = 1;
                else if (LIT(&c, ",\"end\":null"))
                    endv = 2;
                else
                    ok = 0;
            }
            ok = ok && LIT(&c, "}") && c.p == c.end;
            if (ok) {
                move_rec r = {(int32_t)line, (int32_t)(start - data), (int32_t)(tss - data), (int32_t)seq,
                              (int32_t)hand, (uint8_t)kind, (int8_t)seat, (int8_t)id, (int8_t)(endv + 4 * first)};
                if (add_move(m, &r) < 0) {
                    PyErr_NoMemory();
                    goto fail;
                }
                continue;
            }
            kind = K_OTHER;
        }
        PyObject *ev = NULL;
        if (kind == K_DEAL || kind == K_HAND_END || kind == K_REVEAL) {
            PyObject *ts = ascii(tss, tsn);
            if (ts == NULL)
                goto fail;
            ev = hand_event(&c, kind, line, start - data, seq, ts, hand, m->n_moves);
            Py_DECREF(ts);
            if (ev == NULL)
                goto fail;
            if (ev == Py_None) {
                Py_DECREF(ev);
                ev = NULL;
            }
        }
        if (ev == NULL) {
            /* read in Python; its place in the match is kept */
            ev = Py_BuildValue("(ilnls#n)", K_OTHER, line, (Py_ssize_t)(start - data), seq, (const char *)tss, tsn,
                               m->n_moves);
            PyObject *o = Py_BuildValue("(lnn)", line, (Py_ssize_t)(start - data), (Py_ssize_t)(le - data));
            if (ev == NULL || o == NULL || PyList_Append(others, o) < 0) {
                Py_XDECREF(ev);
                Py_XDECREF(o);
                goto fail;
            }
            Py_DECREF(o);
        }
        if (PyList_Append(m->events, ev) < 0) {
            Py_DECREF(ev);
            goto fail;
        }
        Py_DECREF(ev);
    }
    PyObject *matches = PyDict_New();
    if (matches == NULL)
        goto fail;
    for (Py_ssize_t i = 0; i < n_accs; i++) {
        match_acc *m = &accs[i];
        PyObject *mv = PyBytes_FromStringAndSize((const char *)m->moves, m->n_moves * (Py_ssize_t)sizeof(move_rec));
        PyObject *t = mv ? Py_BuildValue("(liONllls#s#)", m->first_line, m->ordered, m->events, mv, m->count,
                                         m->first_seq, m->next_seq - 1, (const char *)m->first_ts,
                                         m->first_ts_len, (const char *)m->last_ts, m->last_ts_len)
                         : NULL;
        if (t == NULL || PyDict_SetItem(matches, m->id, t) < 0) {
            Py_XDECREF(t);
            Py_DECREF(matches);
            goto fail;
        }
        Py_DECREF(t);
    }
    result = Py_BuildValue("(lON)", line, others, matches);
fail:
    for (Py_ssize_t i = 0; i < n_accs; i++)
        match_acc_free(&accs[i]);
    PyMem_Free(accs);
    Py_XDECREF(others);
    PyMem_Free(ids.tab);
    PyBuffer_Release(&buf);
    return result;
}

/* ------------------------------------------------------------------------
 * route: ingest's main loop (replay.ingest._Run._route_file), lines to matches
 */

typedef struct {
    const uint8_t *key;
    Py_ssize_t key_len;
    Py_ssize_t size, count; /* the bytes and the number of its lines */
    PyObject *blob;   /* bytes: the lines, joined by \n */
    PyObject *lines;  /* bytes: their numbers, int64 */
    long deals;
    int ended;
    Py_ssize_t start_off, start_len; /* the first match_start line, or -1 */
} route_acc;

/* A routed line: where it is and whose (the copies are made once the sizes are known). */
typedef struct {
    Py_ssize_t off, len, acc;
    int64_t line;
} route_line;

/* The routing key of a line as ingest._fast_key reads it: the match id of
 * a line starting {"type":"X","match":"ID" (no escape, ASCII, no second
 * "match" key after it), and the type; 0 when Python must read the line. */
static int fast_key(const uint8_t *p, const uint8_t *e, const uint8_t **key, Py_ssize_t *key_len,
                    const uint8_t **type, Py_ssize_t *type_len)
{
    static const char head[] = "{\"type\":\"", mk[] = "\",\"match\":\"";
    if (e - p < 9 || memcmp(p, head, 9) != 0)
        return 0;
    const uint8_t *j = memchr(p + 9, '"', (size_t)(e - p - 9));
    if (j == NULL || e - j < 11 || memcmp(j, mk, 11) != 0)
        return 0;
    const uint8_t *ks = j + 11, *k = memchr(ks, '"', (size_t)(e - ks));
    if (k == NULL || k == ks)
        return 0;
    for (const uint8_t *q = ks; q < k; q++)
        if (*q >= 0x80 || *q == '\\')
            return 0;
    /* memmem: the rest of a line is searched as a whole (a byte loop was a
     * third of the router's time) */
    if (memmem(k, (size_t)(e - k), "\"match\"", 7) != NULL)
        return 0;
    *key = ks;
    *key_len = k - ks;
    *type = p + 9;
    *type_len = j - (p + 9);
    return 1;
}

/* Twice the room (`first` items at first) for an array grown an item at a time. */
static int room(void **items, Py_ssize_t *cap, size_t size, Py_ssize_t first)
{
    Py_ssize_t n = *cap ? 2 * *cap : first;
    void *p = PyMem_Realloc(*items, (size_t)n * size);
    if (p == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    *items = p;
    *cap = n;
    return 0;
}

/* route(data, offset, lines_before, max_line) -> (offset, lines, groups)
 *
 * Reads data[offset:] line by line while each line has a routing key, and
 * stops before the first that has none (or is too long), or that belongs
 * to a match whose match_end came earlier in this call: Python reads that
 * line. Blank lines are counted and skipped. `offset` is where it stopped,
 * `lines` the number of lines before that point. Each group is
 * (key, blob, line_numbers, deals, ended, match_start_line or None), in the
 * order of each key's first line: blob (bytes) is the lines as read (a
 * trailing \r kept) joined by \n, line_numbers (bytes) their int64 numbers. */
PyObject *py_route(PyObject *self, PyObject *args)
{
    Py_buffer buf;
    Py_ssize_t off;
    long line, max_line;
    if (!PyArg_ParseTuple(args, "y*nll", &buf, &off, &line, &max_line))
        return NULL;
    const uint8_t *data = buf.buf, *end = data + buf.len, *p = data + off;
    route_acc *accs = NULL;
    Py_ssize_t n_accs = 0, cap_accs = 0;
    /* Two passes: the lines found first, each group's bytes made at their
     * size after. Grown a line at a time, the bytearrays were copied again
     * on every growth (a fifth of the router's time, and its page faults). */
    route_line *found = NULL;
    Py_ssize_t n_found = 0, cap_found = 0;
    id_table ids = {NULL, 0};
    PyObject *result = NULL, *groups = NULL;
    while (p < end) {
        const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
        const uint8_t *le = nl ? nl : end, *next = nl ? nl + 1 : end;
        const uint8_t *e = le;
        if (e > p && e[-1] == '\r')
            e--;
        const uint8_t *q = p;
        while (q < e && (*q == ' ' || *q == '\t'))
            q++;
        if (q == e) { /* blank */
            line++;
            p = next;
            continue;
        }
        const uint8_t *key, *type;
        Py_ssize_t kn, tn;
        if (le - p > max_line || !fast_key(p, le, &key, &kn, &type, &tn))
            break;
        id_slot *slot = id_find(&ids, key, kn, n_accs);
        if (slot == NULL)
            goto fail;
        route_acc *m;
        if (slot->p == NULL) {
            if (n_accs == cap_accs && room((void **)&accs, &cap_accs, sizeof *accs, 64) < 0)
                goto fail;
            m = &accs[n_accs];
            memset(m, 0, sizeof *m);
            m->key = key;
            m->key_len = kn;
            m->start_off = -1;
            n_accs++;
            slot->p = key;
            slot->n = kn;
            slot->ix = n_accs - 1;
        } else {
            m = &accs[slot->ix];
            if (m->ended)
                break; /* a line after its match_end: Python's (reopened) */
        }
        if (n_found == cap_found && room((void **)&found, &cap_found, sizeof *found, 4096) < 0)
            goto fail;
        Py_ssize_t len = le - p; /* as read, without \n */
        line++;
        found[n_found++] = (route_line){p - data, len, slot->ix, line};
        m->size += (m->count ? 1 : 0) + len;
        m->count++;
        if (tn == 4 && memcmp(type, "deal", 4) == 0)
            m->deals++;
        else if (tn == 9 && memcmp(type, "match_end", 9) == 0)
            m->ended = 1;
        else if (tn == 11 && memcmp(type, "match_start", 11) == 0 && m->start_off < 0) {
            m->start_off = p - data;
            m->start_len = len;
        }
        p = next;
    }
    for (Py_ssize_t i = 0; i < n_accs; i++) {
        route_acc *m = &accs[i];
        m->blob = PyBytes_FromStringAndSize(NULL, m->size);
        m->lines = PyBytes_FromStringAndSize(NULL, 8 * m->count);
        if (m->blob == NULL || m->lines == NULL)
            goto fail;
        m->size = m->count = 0; /* now the fill of each */
    }
    for (Py_ssize_t k = 0; k < n_found; k++) {
        const route_line *f = &found[k];
        route_acc *m = &accs[f->acc];
        char *b = PyBytes_AS_STRING(m->blob) + m->size;
        if (m->count)
            *b++ = '\n';
        memcpy(b, data + f->off, (size_t)f->len);
        m->size += (m->count ? 1 : 0) + f->len;
        memcpy(PyBytes_AS_STRING(m->lines) + 8 * m->count, &f->line, 8);
        m->count++;
    }
    groups = PyList_New(n_accs);
    if (groups == NULL)
        goto fail;
    for (Py_ssize_t i = 0; i < n_accs; i++) {
        route_acc *m = &accs[i];
        PyObject *start = m->start_off < 0 ? Py_NewRef(Py_None)
                                           : PyBytes_FromStringAndSize((const char *)data + m->start_off, m->start_len);
        PyObject *g = start ? Py_BuildValue("(y#OOliN)", (const char *)m->key, m->key_len, m->blob, m->lines,
                                            m->deals, m->ended, start)
                            : NULL;
        if (g == NULL)
            goto fail;
        PyList_SET_ITEM(groups, i, g);
    }
    result = Py_BuildValue("(nlO)", (Py_ssize_t)(p - data), line, groups);
fail:
    Py_XDECREF(groups);
    for (Py_ssize_t i = 0; i < n_accs; i++) {
        Py_XDECREF(accs[i].blob);
        Py_XDECREF(accs[i].lines);
    }
    PyMem_Free(accs);
    PyMem_Free(found);
    PyMem_Free(ids.tab);
    PyBuffer_Release(&buf);
    return result;
}
