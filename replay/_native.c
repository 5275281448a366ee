/* replay._native: the hot loops of the validator, in C.
 *
 * Each function is the exact twin of Python code that stays the reference
 * (and the fallback when this module is not built):
 *
 *   shuffle(entropy, nonce, pers, ids)  deal-v1's HMAC_DRBG + Fisher-Yates
 *                                       (replay.deal.shuffle over deal_stream)
 *   deal(...)                           a hand's deal from its seeds, the
 *                                       match's encodings made once
 *                                       (replay.deal.derive_deal)
 *   scan(data)                          a log file's lines written in the
 *                                       server's canonical layout, grouped by
 *                                       match (replay.canonical_reader)
 *   replay_hand(...)                    a hand's legal plays, passes and draws
 *                                       (replay.engine), and
 *                                       with column buffers its moves rows
 *   route(data, ...)                    the ingest's routing of lines by
 *                                       match id (replay.ingest._route_python)
 *   deals(hands)                        deals flattened for the Arrow columns
 *                                       (replay.frames.deal_columns)
 *   Scorer                              a match's scoring and next lead
 *                                       (replay.match), from _match.c
 *   Maker                               positional constructors of frozen
 *                                       dataclasses (replay._records), from
 *                                       _maker.c
 *   Solver                              exact values of hand positions
 *                                       (replay.solver.PySolver), from _solve.c
 *   sha256, pips, use_shani             for the tests and the fallbacks
 *
 * Nothing here decides a finding: a line this code does not recognise, or
 * a hand it cannot replay cleanly, is handed back to the Python path,
 * which names every finding. So it only has to be exact on what it accepts.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "_hand.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define HAVE_X86 1
#endif

/* ------------------------------------------------------------------------
 * SHA-256 (FIPS 180-4): portable compression, and SHA-NI where the CPU has it
 */

static const uint32_t K256[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static const uint32_t IV256[8] = {
    0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void compress_portable(uint32_t st[8], const uint8_t *p)
{
    uint32_t w[64], a, b, c, d, e, f, g, h;
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    a = st[0]; b = st[1]; c = st[2]; d = st[3]; e = st[4]; f = st[5]; g = st[6]; h = st[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = h + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) + ((e & f) ^ (~e & g)) + K256[i] + w[i];
        uint32_t t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        h = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
    }
    st[0] += a; st[1] += b; st[2] += c; st[3] += d; st[4] += e; st[5] += f; st[6] += g; st[7] += h;
}

#ifdef HAVE_X86
/* The SHA extensions: four rounds per pair of sha256rnds2, the message
 * schedule by sha256msg1/msg2 (Intel's published construction). */
__attribute__((target("sha,sse4.1,ssse3")))
static void compress_shani(uint32_t st[8], const uint8_t *p)
{
    const __m128i mask = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    __m128i tmp = _mm_loadu_si128((const __m128i *)&st[0]);
    __m128i s1 = _mm_loadu_si128((const __m128i *)&st[4]);
    tmp = _mm_shuffle_epi32(tmp, 0xB1);          /* CDAB */
    s1 = _mm_shuffle_epi32(s1, 0x1B);            /* EFGH */
    __m128i s0 = _mm_alignr_epi8(tmp, s1, 8);    /* ABEF */
    s1 = _mm_blend_epi16(s1, tmp, 0xF0);         /* CDGH */
    const __m128i abef = s0, cdgh = s1;
    __m128i w[4];
    for (int g = 0; g < 16; g++) {
        __m128i m;
        if (g < 4) {
            m = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * g)), mask);
        } else {
            __m128i t = _mm_sha256msg1_epu32(w[g & 3], w[(g + 1) & 3]);
            t = _mm_add_epi32(t, _mm_alignr_epi8(w[(g + 3) & 3], w[(g + 2) & 3], 4));
            m = _mm_sha256msg2_epu32(t, w[(g + 3) & 3]);
        }
        w[g & 3] = m;
        __m128i k = _mm_loadu_si128((const __m128i *)&K256[4 * g]);
        __m128i msg = _mm_add_epi32(m, k);
        s1 = _mm_sha256rnds2_epu32(s1, s0, msg);
        msg = _mm_shuffle_epi32(msg, 0x0E);
        s0 = _mm_sha256rnds2_epu32(s0, s1, msg);
    }
    s0 = _mm_add_epi32(s0, abef);
    s1 = _mm_add_epi32(s1, cdgh);
    tmp = _mm_shuffle_epi32(s0, 0x1B);           /* FEBA */
    s1 = _mm_shuffle_epi32(s1, 0xB1);            /* DCHG */
    s0 = _mm_blend_epi16(tmp, s1, 0xF0);         /* DCBA */
    s1 = _mm_alignr_epi8(s1, tmp, 8);            /* ABEF */
    _mm_storeu_si128((__m128i *)&st[0], s0);
    _mm_storeu_si128((__m128i *)&st[4], s1);
}
#endif

static void (*compress)(uint32_t st[8], const uint8_t *p) = compress_portable;

/* Hash `len` more bytes from `st` (which has already taken `done` bytes, a
 * multiple of 64) and write the digest. */
static void sha_finish(const uint32_t start[8], uint64_t done, const uint8_t *msg, size_t len, uint8_t out[32])
{
    uint32_t st[8];
    uint8_t block[64];
    memcpy(st, start, sizeof st);
    uint64_t total = (done + len) * 8;
    while (len >= 64) {
        compress(st, msg);
        msg += 64;
        len -= 64;
    }
    memcpy(block, msg, len);
    block[len++] = 0x80;
    if (len > 56) {
        memset(block + len, 0, 64 - len);
        compress(st, block);
        len = 0;
    }
    memset(block + len, 0, 56 - len);
    for (int i = 0; i < 8; i++)
        block[56 + i] = (uint8_t)(total >> (56 - 8 * i));
    compress(st, block);
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (uint8_t)(st[i] >> 24);
        out[4 * i + 1] = (uint8_t)(st[i] >> 16);
        out[4 * i + 2] = (uint8_t)(st[i] >> 8);
        out[4 * i + 3] = (uint8_t)st[i];
    }
}

/* ------------------------------------------------------------------------
 * HMAC-SHA256 with a 32-byte key: the pads hashed once per key
 */

typedef struct {
    uint32_t inner[8], outer[8];
} hmac_key;

static void hmac_set_key(hmac_key *k, const uint8_t key[32])
{
    uint8_t pad[64];
    for (int i = 0; i < 64; i++)
        pad[i] = (uint8_t)((i < 32 ? key[i] : 0) ^ 0x36);
    memcpy(k->inner, IV256, sizeof k->inner);
    compress(k->inner, pad);
    for (int i = 0; i < 64; i++)
        pad[i] = (uint8_t)((i < 32 ? key[i] : 0) ^ 0x5c);
    memcpy(k->outer, IV256, sizeof k->outer);
    compress(k->outer, pad);
}

static void hmac(const hmac_key *k, const uint8_t *msg, size_t len, uint8_t out[32])
{
    uint8_t inner[32];
    sha_finish(k->inner, 64, msg, len, inner);
    sha_finish(k->outer, 64, inner, 32, out);
}

/* ------------------------------------------------------------------------
 * HMAC_DRBG (SP 800-90A 10.1.2): no reseed, no additional input; every
 * Generate call asks for 32 bytes (deal-v1), read as eight big-endian words
 */

typedef struct {
    hmac_key key;
    uint8_t v[32];
    uint32_t words[8];
    int pos;
} drbg;

/* K = HMAC(K, V || tag || provided); V = HMAC(K, V) */
static int drbg_round(drbg *d, uint8_t tag, const uint8_t *provided, size_t len)
{
    uint8_t stackbuf[512], k[32];
    uint8_t *buf = len + 33 <= sizeof stackbuf ? stackbuf : PyMem_Malloc(len + 33);
    if (buf == NULL)
        return -1;
    memcpy(buf, d->v, 32);
    buf[32] = tag;
    if (len)
        memcpy(buf + 33, provided, len);
    hmac(&d->key, buf, len + 33, k);
    if (buf != stackbuf)
        PyMem_Free(buf);
    hmac_set_key(&d->key, k);
    hmac(&d->key, d->v, 32, d->v);
    return 0;
}

static int drbg_init(drbg *d, const uint8_t *seed, size_t len)
{
    uint8_t zero[32] = {0};
    hmac_set_key(&d->key, zero);
    memset(d->v, 1, 32);
    d->pos = 8;
    if (drbg_round(d, 0, seed, len) < 0)
        return -1;
    return len ? drbg_round(d, 1, seed, len) : 0;
}

static uint32_t drbg_word(drbg *d)
{
    if (d->pos == 8) {
        hmac(&d->key, d->v, 32, d->v);
        for (int i = 0; i < 8; i++)
            d->words[i] = (uint32_t)d->v[4 * i] << 24 | (uint32_t)d->v[4 * i + 1] << 16 |
                          (uint32_t)d->v[4 * i + 2] << 8 | d->v[4 * i + 3];
        drbg_round(d, 0, NULL, 0); /* cannot fail: no allocation */
        d->pos = 0;
    }
    return d->words[d->pos++];
}

static uint32_t drbg_uniform(drbg *d, uint32_t m)
{
    uint64_t limit = (1ULL << 32) - ((1ULL << 32) % m);
    uint32_t w = drbg_word(d);
    while (w >= limit)
        w = drbg_word(d);
    return w % m;
}

/* Fisher-Yates over deck[0..n) with the stream of HMAC_DRBG(entropy || nonce || pers). */
static int shuffle_deck(const Py_buffer *ent, const Py_buffer *nonce, const Py_buffer *pers, uint8_t *deck,
                        Py_ssize_t n)
{
    size_t len = (size_t)(ent->len + nonce->len + pers->len);
    uint8_t *seed = PyMem_Malloc(len ? len : 1);
    if (seed == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    memcpy(seed, ent->buf, ent->len);
    memcpy(seed + ent->len, nonce->buf, nonce->len);
    memcpy(seed + ent->len + nonce->len, pers->buf, pers->len);
    drbg d;
    int rc = drbg_init(&d, seed, len);
    PyMem_Free(seed);
    if (rc < 0) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = n - 1; i > 0; i--) {
        uint32_t j = drbg_uniform(&d, (uint32_t)(i + 1));
        uint8_t t = deck[i];
        deck[i] = deck[j];
        deck[j] = t;
    }
    return 0;
}

/* shuffle(entropy, nonce, personalization, ids) -> bytes */
static PyObject *py_shuffle(PyObject *self, PyObject *args)
{
    Py_buffer ent, nonce, pers, ids;
    if (!PyArg_ParseTuple(args, "y*y*y*y*", &ent, &nonce, &pers, &ids))
        return NULL;
    PyObject *out = PyBytes_FromStringAndSize(ids.buf, ids.len);
    if (out != NULL && shuffle_deck(&ent, &nonce, &pers, (uint8_t *)PyBytes_AS_STRING(out), ids.len) < 0)
        Py_CLEAR(out);
    PyBuffer_Release(&ent);
    PyBuffer_Release(&nonce);
    PyBuffer_Release(&pers);
    PyBuffer_Release(&ids);
    return out;
}

/* deal(entropy, nonce_head, hand, pers_head, client_seeds, ids, players) -> (masks, stock):
 * deal-v1's deal with nonce = nonce_head || enc_int(hand) and personalization =
 * pers_head || enc_str(seed) for each client seed (replay.deal.deal_nonce and
 * deal_personalization, whose heads are the same for every hand of a match):
 * the shuffled deck dealt 7 a seat (masks by seat) and the rest (bytes, in order). */
static PyObject *py_deal(PyObject *self, PyObject *args)
{
    Py_buffer ent, nhead, phead, ids;
    unsigned long long hand;
    PyObject *seeds;
    int players;
    if (!PyArg_ParseTuple(args, "y*y*Ky*O!y*i", &ent, &nhead, &hand, &phead, &PyTuple_Type, &seeds, &ids, &players))
        return NULL;
    PyObject *out = NULL;
    uint8_t deck[256], *nbuf = NULL, *pbuf = NULL;
    Py_ssize_t plen = phead.len;
    if (ids.len > 256 || players < 1 || 7 * (Py_ssize_t)players > ids.len) {
        PyErr_SetString(PyExc_ValueError, "deal: bad deck or player count");
        goto done;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(seeds); i++) {
        Py_ssize_t len;
        if (!PyUnicode_Check(PyTuple_GET_ITEM(seeds, i)) || PyUnicode_AsUTF8AndSize(PyTuple_GET_ITEM(seeds, i), &len) == NULL) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError, "deal: client seeds must be str");
            goto done;
        }
        plen += 4 + len;
    }
    nbuf = PyMem_Malloc(nhead.len + 8);
    pbuf = PyMem_Malloc(plen ? plen : 1);
    if (nbuf == NULL || pbuf == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    memcpy(nbuf, nhead.buf, nhead.len);
    for (int i = 0; i < 8; i++)
        nbuf[nhead.len + i] = (uint8_t)(hand >> (56 - 8 * i));
    memcpy(pbuf, phead.buf, phead.len);
    Py_ssize_t at = phead.len;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(seeds); i++) {
        Py_ssize_t len;
        const char *u = PyUnicode_AsUTF8AndSize(PyTuple_GET_ITEM(seeds, i), &len);
        for (int k = 0; k < 4; k++)
            pbuf[at + k] = (uint8_t)((uint64_t)len >> (24 - 8 * k));
        memcpy(pbuf + at + 4, u, len);
        at += 4 + len;
    }
    Py_buffer nonce = {.buf = nbuf, .len = nhead.len + 8}, pers = {.buf = pbuf, .len = plen};
    memcpy(deck, ids.buf, ids.len);
    if (shuffle_deck(&ent, &nonce, &pers, deck, ids.len) < 0)
        goto done;
    PyObject *masks = PyTuple_New(players);
    if (masks == NULL)
        goto done;
    for (int s = 0; s < players; s++) {
        uint32_t mk = 0;
        for (int k = 0; k < 7; k++)
            mk |= 1u << (deck[7 * s + k] & 31);
        PyObject *v = PyLong_FromUnsignedLong(mk);
        if (v == NULL) {
            Py_DECREF(masks);
            goto done;
        }
        PyTuple_SET_ITEM(masks, s, v);
    }
    out = Py_BuildValue("(Ny#)", masks, (const char *)deck + 7 * players, ids.len - 7 * (Py_ssize_t)players);
done:
    PyMem_Free(nbuf);
    PyMem_Free(pbuf);
    PyBuffer_Release(&ent);
    PyBuffer_Release(&nhead);
    PyBuffer_Release(&phead);
    PyBuffer_Release(&ids);
    return out;
}

/* sha256(data) -> bytes: for the tests of the compression functions */
static PyObject *py_sha256(PyObject *self, PyObject *args)
{
    Py_buffer b;
    if (!PyArg_ParseTuple(args, "y*", &b))
        return NULL;
    uint8_t out[32];
    sha_finish(IV256, 0, b.buf, (size_t)b.len, out);
    PyBuffer_Release(&b);
    return PyBytes_FromStringAndSize((const char *)out, 32);
}

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

static int digits(const uint8_t *s, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return 0;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 1;
}

/* YYYY-MM-DDTHH:MM:SS[.f+]Z, with the calendar of RFC3339_PATTERN. */
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
    if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || se > 60)
        return 0;
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

enum { K_PLAY, K_PASS, K_DRAW, K_DEAL, K_HAND_END, K_REVEAL, K_OTHER };

/* One move, packed for replay_hand (the layout is replay.canonical_reader.MOVE, struct.Struct("=iiiiiBbbb")):
 * line number, offset of the line and of its ts in the buffer, seq, hand, kind, seat, tile, end. */
typedef struct {
    int32_t line, off, ts_off, seq, hand;
    uint8_t kind;
    int8_t seat, tile, end; /* end: 0 left, 1 right, 2 null; + 4*face's first digit for a play */
} move_rec;

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

/* A tuple of n ints (also used by replay/_match.c) */
PyObject *ints_tuple(const long *v, int n)
{
    PyObject *t = PyTuple_New(n);
    if (t == NULL)
        return NULL;
    for (int i = 0; i < n; i++) {
        PyObject *x = PyLong_FromLong(v[i]);
        if (x == NULL) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, i, x);
    }
    return t;
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
static PyObject *py_scan(PyObject *self, PyObject *args)
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
        {
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
static PyObject *py_replay_hand(PyObject *self, PyObject *args)
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
static PyObject *py_pips(PyObject *self, PyObject *arg)
{
    unsigned long m = PyLong_AsUnsignedLong(arg);
    if (PyErr_Occurred())
        return NULL;
    return PyLong_FromLong(pips_of_mask((uint32_t)m));
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
static PyObject *py_route(PyObject *self, PyObject *args)
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

/* ------------------------------------------------------------------------
 * deals(hands) -> (tiles, per_seat, per_hand): ingest's hands columns
 * (replay.frames.deal_columns) from the deals as Python gives them, a
 * sequence per hand of a sequence per seat of tile ids: the tiles as int8,
 * the tiles of each seat and the seats of each hand as int32 (the Arrow
 * list offsets' steps). The Python loop it replaces built three lists of
 * Python ints for 280,000 tiles a batch.
 */

static int grow(PyObject *buf, Py_ssize_t *len, const void *item, Py_ssize_t size)
{
    if (*len + size > PyByteArray_GET_SIZE(buf) &&
        PyByteArray_Resize(buf, 2 * PyByteArray_GET_SIZE(buf) + size) < 0)
        return -1;
    memcpy(PyByteArray_AS_STRING(buf) + *len, item, (size_t)size);
    *len += size;
    return 0;
}

static PyObject *py_deals(PyObject *self, PyObject *arg)
{
    PyObject *hands = PySequence_Fast(arg, "deals(): a sequence of hands");
    if (hands == NULL)
        return NULL;
    PyObject *tiles = PyByteArray_FromStringAndSize(NULL, 0), *seats = PyByteArray_FromStringAndSize(NULL, 0),
             *per_hand = PyByteArray_FromStringAndSize(NULL, 0), *result = NULL;
    Py_ssize_t nt = 0, ns = 0, nh = 0;
    if (tiles == NULL || seats == NULL || per_hand == NULL)
        goto done;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(hands); i++) {
        PyObject *hand = PySequence_Fast(PySequence_Fast_GET_ITEM(hands, i), "deals(): a hand is a sequence of seats");
        if (hand == NULL)
            goto done;
        int32_t n_seats = (int32_t)PySequence_Fast_GET_SIZE(hand);
        int bad = grow(per_hand, &nh, &n_seats, 4);
        for (Py_ssize_t j = 0; !bad && j < n_seats; j++) {
            PyObject *seat = PySequence_Fast(PySequence_Fast_GET_ITEM(hand, j), "deals(): a seat is a sequence of tiles");
            if (seat == NULL) {
                bad = 1;
                break;
            }
            int32_t n = (int32_t)PySequence_Fast_GET_SIZE(seat);
            bad = grow(seats, &ns, &n, 4);
            for (Py_ssize_t k = 0; !bad && k < n; k++) {
                long t = PyLong_AsLong(PySequence_Fast_GET_ITEM(seat, k));
                if (t == -1 && PyErr_Occurred())
                    bad = 1;
                else if (t < 0 || t > 127) {
                    PyErr_Format(PyExc_ValueError, "deals(): tile id %ld out of range", t);
                    bad = 1;
                } else {
                    int8_t v = (int8_t)t;
                    bad = grow(tiles, &nt, &v, 1);
                }
            }
            Py_DECREF(seat);
        }
        Py_DECREF(hand);
        if (bad)
            goto done;
    }
    if (PyByteArray_Resize(tiles, nt) == 0 && PyByteArray_Resize(seats, ns) == 0 &&
        PyByteArray_Resize(per_hand, nh) == 0)
        result = PyTuple_Pack(3, tiles, seats, per_hand);
done:
    Py_XDECREF(tiles);
    Py_XDECREF(seats);
    Py_XDECREF(per_hand);
    Py_DECREF(hands);
    return result;
}

/* ------------------------------------------------------------------------ */

static PyObject *py_use_shani(PyObject *self, PyObject *arg)
{
    int on = PyObject_IsTrue(arg);
    if (on < 0)
        return NULL;
#ifdef HAVE_X86
    if (on && __builtin_cpu_supports("sha") && __builtin_cpu_supports("sse4.1")) {
        compress = compress_shani;
        Py_RETURN_TRUE;
    }
#endif
    compress = compress_portable;
    Py_RETURN_FALSE;
}

static PyMethodDef methods[] = {
    {"shuffle", py_shuffle, METH_VARARGS, "shuffle(entropy, nonce, personalization, ids) -> bytes"},
    {"deal", py_deal, METH_VARARGS, "deal(entropy, nonce_head, hand, pers_head, client_seeds, ids, players) -> (masks, stock)"},
    {"sha256", py_sha256, METH_VARARGS, "sha256(data) -> digest (bytes)"},
    {"scan", py_scan, METH_VARARGS, "scan(data, lines_before, max_line) -> (lines, others, matches)"},
    {"replay_hand", py_replay_hand, METH_VARARGS, "replay_hand(...) -> final position or None"},
    {"pips", py_pips, METH_O, "pips(mask) -> int"},
    {"route", py_route, METH_VARARGS, "route(data, offset, lines_before, max_line) -> (offset, lines, groups)"},
    {"deals", py_deals, METH_O, "deals(hands) -> (tiles int8, tiles per seat int32, seats per hand int32)"},
    {"use_shani", py_use_shani, METH_O, "use_shani(on) -> whether the SHA extensions are now used"},
    {NULL, NULL, 0, NULL},
};

extern PyTypeObject Scorer_Type; /* replay/_match.c */
extern PyTypeObject Maker_Type;  /* replay/_maker.c */
extern PyTypeObject Solver_Type; /* replay/_solve.c */

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "replay._native", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__native(void)
{
#ifdef HAVE_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("sha") && __builtin_cpu_supports("sse4.1"))
        compress = compress_shani;
#endif
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    if (PyModule_AddIntConstant(m, "MOVE_SIZE", (long)sizeof(move_rec)) < 0 ||
        PyModule_AddStringConstant(m, "RULES_H", RULES_H_DIGEST) < 0 || PyType_Ready(&Scorer_Type) < 0 ||
        PyModule_AddObjectRef(m, "Scorer", (PyObject *)&Scorer_Type) < 0 || PyType_Ready(&Maker_Type) < 0 ||
        PyModule_AddObjectRef(m, "Maker", (PyObject *)&Maker_Type) < 0 || PyType_Ready(&Solver_Type) < 0 ||
        PyModule_AddObjectRef(m, "Solver", (PyObject *)&Solver_Type) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
