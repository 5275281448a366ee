/* replay._native.Maker: positional constructors for frozen, slotted dataclasses.
 *
 * replay._records.positional builds, in Python, a function that sets each
 * slot of a new object through its descriptor; a hand report has 25 fields,
 * so that is 25 calls a hand. A Maker stores the same references at the
 * slots' offsets (read from the member descriptors the class's __slots__
 * made), which is what those descriptors' __set__ does: the same object,
 * without __init__ (_records checks the class has no __post_init__).
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

typedef struct {
    PyObject_HEAD
    PyTypeObject *cls;
    Py_ssize_t n;
    Py_ssize_t *offsets;
    vectorcallfunc vectorcall;
} Maker;

static PyObject *maker_call(Maker *mk, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs != mk->n || (kwnames != NULL && PyTuple_GET_SIZE(kwnames))) {
        PyErr_Format(PyExc_TypeError, "%s() takes its %zd fields positionally (%zd given)", mk->cls->tp_name, mk->n,
                     nargs);
        return NULL;
    }
    PyObject *o = mk->cls->tp_alloc(mk->cls, 0);
    if (o == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < nargs; i++)
        *(PyObject **)((char *)o + mk->offsets[i]) = Py_NewRef(args[i]);
    return o;
}

/* Maker(cls, names): the slots `names` of cls, in this order */
static PyObject *maker_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    PyObject *cls, *names;
    if (kw != NULL && PyDict_GET_SIZE(kw)) {
        PyErr_SetString(PyExc_TypeError, "Maker(cls, names)");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "O!O!", &PyType_Type, &cls, &PyTuple_Type, &names))
        return NULL;
    PyTypeObject *t = (PyTypeObject *)cls;
    if (t->tp_alloc == NULL || t->tp_new == NULL) {
        PyErr_SetString(PyExc_TypeError, "Maker: the class cannot be instantiated");
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(names);
    Maker *mk = (Maker *)type->tp_alloc(type, 0);
    if (mk == NULL)
        return NULL;
    mk->offsets = PyMem_Calloc(n ? n : 1, sizeof(Py_ssize_t));
    if (mk->offsets == NULL) {
        Py_DECREF(mk);
        return PyErr_NoMemory();
    }
    mk->cls = (PyTypeObject *)Py_NewRef(cls);
    mk->n = n;
    mk->vectorcall = (vectorcallfunc)maker_call;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *name = PyTuple_GET_ITEM(names, i);
        PyObject *d = PyUnicode_Check(name) ? PyDict_GetItemWithError(t->tp_dict, name) : NULL;
        if (d == NULL || !PyObject_TypeCheck(d, &PyMemberDescr_Type) ||
            ((PyMemberDescrObject *)d)->d_member->type != T_OBJECT_EX ||
            (((PyMemberDescrObject *)d)->d_member->flags & READONLY)) {
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_TypeError, "Maker: %R is not a slot of %s", name, t->tp_name);
            Py_DECREF(mk);
            return NULL;
        }
        mk->offsets[i] = ((PyMemberDescrObject *)d)->d_member->offset;
    }
    return (PyObject *)mk;
}

static void maker_dealloc(Maker *mk)
{
    Py_XDECREF(mk->cls);
    PyMem_Free(mk->offsets);
    Py_TYPE(mk)->tp_free((PyObject *)mk);
}

PyTypeObject Maker_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "replay._native.Maker",
    .tp_basicsize = sizeof(Maker),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "Maker(cls, names): cls(*fields) with every slot given, without __init__ (replay/_maker.c).",
    .tp_new = maker_new,
    .tp_dealloc = (destructor)maker_dealloc,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(Maker, vectorcall),
};
