/* replay._native's deals: SHA-256 (with SHA-NI where the CPU has it),
 * deal-v1's HMAC_DRBG and Fisher-Yates shuffle, a hand's deal from its seeds
 * (replay.deal), and the deals flattened for the Arrow columns
 * (replay.frames.deal_columns).
 */
#include "_native.h"

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
PyObject *py_shuffle(PyObject *self, PyObject *args)
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
PyObject *py_deal(PyObject *self, PyObject *args)
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
PyObject *py_sha256(PyObject *self, PyObject *args)
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

PyObject *py_deals(PyObject *self, PyObject *arg)
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

PyObject *py_use_shani(PyObject *self, PyObject *arg)
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

/* At import: SHA-NI where the CPU has it (and SSE4.1), else the portable code. */
void sha256_setup(void)
{
#ifdef HAVE_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("sha") && __builtin_cpu_supports("sse4.1"))
        compress = compress_shani;
#endif
}
