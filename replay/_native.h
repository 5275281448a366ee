/* replay/_native.h: what the C files of replay._native share.
 *
 * _native.c holds the module (its method table and init) and ints_tuple;
 * _deal.c the SHA-256, the DRBG, the deals and their flattening; _scan.c
 * the line scanner and the router; _hand.c the hand replayer. The packed
 * move is written by the scanner and read by the replayer; digits is
 * static inline here because both call it for every line they read.
 */
#ifndef REPLAY_NATIVE_H
#define REPLAY_NATIVE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "_hand.h"

enum { K_PLAY, K_PASS, K_DRAW, K_DEAL, K_HAND_END, K_REVEAL, K_OTHER };

/* One move, packed for replay_hand (the layout is replay.canonical_reader.MOVE, struct.Struct("=iiiiiBbbb")):
 * line number, offset of the line and of its ts in the buffer, seq, hand, kind, seat, tile, end. */
typedef struct {
    int32_t line, off, ts_off, seq, hand;
    uint8_t kind;
    int8_t seat, tile, end; /* end: 0 left, 1 right, 2 null; + 4*face's first digit for a play */
} move_rec;

/* The n decimal digits at s as an int in *out; 0 when one is not a digit. */
static inline int digits(const uint8_t *s, int n, int *out)
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

/* _deal.c */
PyObject *py_shuffle(PyObject *self, PyObject *args);
PyObject *py_deal(PyObject *self, PyObject *args);
PyObject *py_sha256(PyObject *self, PyObject *args);
PyObject *py_deals(PyObject *self, PyObject *arg);
PyObject *py_use_shani(PyObject *self, PyObject *arg);
void sha256_setup(void);

/* _scan.c */
PyObject *py_scan(PyObject *self, PyObject *args);
PyObject *py_route(PyObject *self, PyObject *args);

/* _belief.c */
PyObject *py_play_logp(PyObject *self, PyObject *args);

/* _hand.c */
PyObject *py_replay_hand(PyObject *self, PyObject *args);
PyObject *py_pips(PyObject *self, PyObject *arg);

#endif
