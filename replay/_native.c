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
 *   play_logp(coef, ctx, hand, ...)     a linear play model's log-probability
 *                                       of a played move (replay.belief.weights),
 *                                       from _belief.c
 *   sha256, pips, use_shani             for the tests and the fallbacks
 *
 * This file holds the module (method table and init) and ints_tuple;
 * shuffle, deal, deals, sha256 and use_shani are in _deal.c, scan and route
 * in _scan.c, replay_hand and pips in _hand.c; replay/_native.h declares
 * what they share.
 *
 * Nothing here decides a finding: a line this code does not recognise, or
 * a hand it cannot replay cleanly, is handed back to the Python path,
 * which names every finding. So it only has to be exact on what it accepts.
 */
#include "_native.h"

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

static PyMethodDef methods[] = {
    {"shuffle", py_shuffle, METH_VARARGS, "shuffle(entropy, nonce, personalization, ids) -> bytes"},
    {"deal", py_deal, METH_VARARGS, "deal(entropy, nonce_head, hand, pers_head, client_seeds, ids, players) -> (masks, stock)"},
    {"sha256", py_sha256, METH_VARARGS, "sha256(data) -> digest (bytes)"},
    {"scan", py_scan, METH_VARARGS, "scan(data, lines_before, max_line) -> (lines, others, matches)"},
    {"replay_hand", py_replay_hand, METH_VARARGS, "replay_hand(...) -> final position or None"},
    {"pips", py_pips, METH_O, "pips(mask) -> int"},
    {"route", py_route, METH_VARARGS, "route(data, offset, lines_before, max_line) -> (offset, lines, groups)"},
    {"deals", py_deals, METH_O, "deals(hands) -> (tiles int8, tiles per seat int32, seats per hand int32)"},
    {"play_logp", py_play_logp, METH_VARARGS, "play_logp(coef, ctx, hand, moves, played) -> log-probability"},
    {"use_shani", py_use_shani, METH_O, "use_shani(on) -> whether the SHA extensions are now used"},
    {NULL, NULL, 0, NULL},
};

extern PyTypeObject Scorer_Type; /* replay/_match.c */
extern PyTypeObject Maker_Type;  /* replay/_maker.c */
extern PyTypeObject Solver_Type; /* replay/_solve.c */

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "replay._native", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__native(void)
{
    sha256_setup();
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
