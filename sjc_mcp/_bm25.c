/* The BM25 passage index of ``sjc_mcp.evidence``, compiled: the same words, the same scores, bit for bit.

   ``evidence.EvidenceIndex`` uses it when it was built at install (a C compiler was there), and its own
   Python and numpy code otherwise. It reads the passages' lower-cased UTF-8 bytes, a batch at a time: a
   word is a run of [a-z0-9] bytes, a lone 0x01 byte closes a passage (the caller keeps 0x01 out of the
   text). A word of one byte or a stopword is dropped; every other word gets an id when first seen. Once
   closed, the caller works out each word's IDF from its document frequency (``close``), hands it back
   (``weigh``), and each posting's BM25 contribution is computed once, in the same order of operations as
   the Python code, so a query's score is the same double: its words' contributions added in query order.
   Memory is a few arrays of the postings' size; nothing is kept per passage but its length. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    uint64_t hash;
    Py_ssize_t off; /* the word's bytes in the arena */
    Py_ssize_t len;
    Py_ssize_t id; /* -2: dropped (a stopword or one byte) */
    int used;
} Slot;

typedef struct {
    PyObject_HEAD
    PyObject *stop; /* the stopwords, as a set or frozenset of bytes */
    PyObject *words; /* the kept words as str, in id order */
    Slot *slots;
    Py_ssize_t cap, filled;
    char *arena;
    Py_ssize_t arena_len, arena_cap;
    /* while reading: one posting per (word, passage), in passage order */
    int32_t *p_word, *p_pid, *p_tf;
    Py_ssize_t n_post, p_word_cap, p_pid_cap, p_tf_cap;
    int32_t *last_pid; /* per word: the last passage it was seen in, and its posting there */
    Py_ssize_t *last_post, last_pid_cap, last_post_cap;
    int64_t *lens; /* per passage: its kept words */
    Py_ssize_t n_pass, pass_cap;
    int64_t cur_len;
    int closed, weighed;
    /* once closed: the postings grouped by word (passage order within a word) */
    Py_ssize_t *starts;
    int32_t *pids;
    double *contrib;
    /* scratch for queries */
    double *acc;
    char *touched;
    int32_t *cand;
} Index;

static int grow(void **buf, Py_ssize_t *cap, Py_ssize_t need, size_t item) {
    if (need <= *cap)
        return 0;
    Py_ssize_t n = *cap ? *cap : 1024;
    while (n < need)
        n *= 2;
    void *p = PyMem_Realloc(*buf, (size_t)n * item);
    if (!p) {
        PyErr_NoMemory();
        return -1;
    }
    *buf = p;
    *cap = n;
    return 0;
}

static uint64_t fnv(const char *s, Py_ssize_t n) {
    uint64_t h = 1469598103934665603ULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ULL;
    }
    return h;
}

static int rehash(Index *ix) {
    Py_ssize_t cap = ix->cap ? ix->cap * 2 : 4096;
    Slot *slots = PyMem_Calloc((size_t)cap, sizeof(Slot));
    if (!slots) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < ix->cap; i++) {
        Slot *s = &ix->slots[i];
        if (!s->used)
            continue;
        Py_ssize_t j = (Py_ssize_t)(s->hash & (uint64_t)(cap - 1));
        while (slots[j].used)
            j = (j + 1) & (cap - 1);
        slots[j] = *s;
    }
    PyMem_Free(ix->slots);
    ix->slots = slots;
    ix->cap = cap;
    return 0;
}

/* The id of a word (-2 when dropped), given one the first time it is seen; -3 on error. */
static Py_ssize_t word_id(Index *ix, const char *w, Py_ssize_t n) {
    if (2 * (ix->filled + 1) > ix->cap && rehash(ix) < 0)
        return -3;
    uint64_t h = fnv(w, n);
    Py_ssize_t j = (Py_ssize_t)(h & (uint64_t)(ix->cap - 1));
    while (ix->slots[j].used) {
        Slot *s = &ix->slots[j];
        if (s->hash == h && s->len == n && memcmp(ix->arena + s->off, w, (size_t)n) == 0)
            return s->id;
        j = (j + 1) & (ix->cap - 1);
    }
    Py_ssize_t id = -2;
    if (n >= 2) {
        PyObject *b = PyBytes_FromStringAndSize(w, n);
        if (!b)
            return -3;
        int stop = PySet_Contains(ix->stop, b);
        Py_DECREF(b);
        if (stop < 0)
            return -3;
        if (!stop) {
            PyObject *s = PyUnicode_DecodeASCII(w, n, NULL);
            if (!s)
                return -3;
            id = PyList_GET_SIZE(ix->words);
            int r = PyList_Append(ix->words, s);
            Py_DECREF(s);
            if (r < 0)
                return -3;
            if (grow((void **)&ix->last_pid, &ix->last_pid_cap, id + 1, sizeof(int32_t)) < 0 ||
                grow((void **)&ix->last_post, &ix->last_post_cap, id + 1, sizeof(Py_ssize_t)) < 0)
                return -3;
            ix->last_pid[id] = -1;
        }
    }
    if (grow((void **)&ix->arena, &ix->arena_cap, ix->arena_len + n, 1) < 0)
        return -3;
    memcpy(ix->arena + ix->arena_len, w, (size_t)n);
    Slot *s = &ix->slots[j];
    s->hash = h;
    s->off = ix->arena_len;
    s->len = n;
    s->id = id;
    s->used = 1;
    ix->arena_len += n;
    ix->filled++;
    return id;
}

static int end_passage(Index *ix) {
    if (ix->n_pass >= INT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "too many passages");
        return -1;
    }
    if (grow((void **)&ix->lens, &ix->pass_cap, ix->n_pass + 1, sizeof(int64_t)) < 0)
        return -1;
    ix->lens[ix->n_pass++] = ix->cur_len;
    ix->cur_len = 0;
    return 0;
}

static int add_word(Index *ix, const char *w, Py_ssize_t n) {
    Py_ssize_t id = word_id(ix, w, n);
    if (id == -3)
        return -1;
    if (id < 0)
        return 0;
    int32_t pid = (int32_t)ix->n_pass;
    ix->cur_len++;
    if (ix->last_pid[id] == pid) {
        ix->p_tf[ix->last_post[id]]++;
        return 0;
    }
    if (grow((void **)&ix->p_word, &ix->p_word_cap, ix->n_post + 1, sizeof(int32_t)) < 0 ||
        grow((void **)&ix->p_pid, &ix->p_pid_cap, ix->n_post + 1, sizeof(int32_t)) < 0 ||
        grow((void **)&ix->p_tf, &ix->p_tf_cap, ix->n_post + 1, sizeof(int32_t)) < 0)
        return -1;
    ix->p_word[ix->n_post] = (int32_t)id;
    ix->p_pid[ix->n_post] = pid;
    ix->p_tf[ix->n_post] = 1;
    ix->last_pid[id] = pid;
    ix->last_post[id] = ix->n_post++;
    return 0;
}

static inline int word_byte(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == 1; }

static PyObject *Index_add(Index *ix, PyObject *arg) {
    Py_buffer view;
    if (ix->closed) {
        PyErr_SetString(PyExc_RuntimeError, "the index is closed");
        return NULL;
    }
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    const char *s = view.buf;
    Py_ssize_t n = view.len, i = 0;
    while (i < n) {
        while (i < n && !word_byte((unsigned char)s[i]))
            i++;
        Py_ssize_t a = i;
        while (i < n && word_byte((unsigned char)s[i]))
            i++;
        if (i == a)
            break;
        int r = (i - a == 1 && s[a] == 1) ? end_passage(ix) : add_word(ix, s + a, i - a);
        if (r < 0) {
            PyBuffer_Release(&view);
            return NULL;
        }
    }
    PyBuffer_Release(&view);
    Py_RETURN_NONE;
}

/* Close the reading: group the postings by word. Returns each word's document frequency, in id order. */
static PyObject *Index_close(Index *ix, PyObject *Py_UNUSED(arg)) {
    if (ix->closed) {
        PyErr_SetString(PyExc_RuntimeError, "the index is closed");
        return NULL;
    }
    Py_ssize_t nw = PyList_GET_SIZE(ix->words), np = ix->n_post;
    ix->starts = PyMem_Calloc((size_t)nw + 1, sizeof(Py_ssize_t));
    ix->pids = PyMem_Malloc((size_t)(np ? np : 1) * sizeof(int32_t));
    int32_t *tf = PyMem_Malloc((size_t)(np ? np : 1) * sizeof(int32_t));
    Py_ssize_t *fill = PyMem_Malloc((size_t)(nw ? nw : 1) * sizeof(Py_ssize_t));
    PyObject *df = PyList_New(nw);
    if (!ix->starts || !ix->pids || !tf || !fill || !df) {
        PyMem_Free(tf);
        PyMem_Free(fill);
        Py_XDECREF(df);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t j = 0; j < np; j++)
        ix->starts[ix->p_word[j] + 1]++;
    for (Py_ssize_t t = 0; t < nw; t++) {
        PyObject *v = PyLong_FromSsize_t(ix->starts[t + 1]);
        if (!v) {
            PyMem_Free(tf);
            PyMem_Free(fill);
            Py_DECREF(df);
            return NULL;
        }
        PyList_SET_ITEM(df, t, v);
        ix->starts[t + 1] += ix->starts[t];
        fill[t] = ix->starts[t];
    }
    for (Py_ssize_t j = 0; j < np; j++) { /* stable: passage order is kept within a word */
        Py_ssize_t at = fill[ix->p_word[j]]++;
        ix->pids[at] = ix->p_pid[j];
        tf[at] = ix->p_tf[j];
    }
    PyMem_Free(fill);
    PyMem_Free(ix->p_word);
    PyMem_Free(ix->p_pid);
    PyMem_Free(ix->last_pid);
    PyMem_Free(ix->last_post);
    ix->p_word = ix->p_pid = ix->last_pid = NULL;
    ix->last_post = NULL;
    PyMem_Free(ix->p_tf);
    ix->p_tf = tf; /* now in the grouped order */
    PyMem_Free(ix->slots);
    PyMem_Free(ix->arena);
    ix->slots = NULL;
    ix->arena = NULL;
    ix->closed = 1;
    return df;
}

/* Each posting's contribution, from every word's IDF: idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avgdl)). */
static PyObject *Index_weigh(Index *ix, PyObject *args) {
    PyObject *idf_seq;
    double k1, b;
    if (!PyArg_ParseTuple(args, "Odd", &idf_seq, &k1, &b))
        return NULL;
    if (!ix->closed || ix->weighed) {
        PyErr_SetString(PyExc_RuntimeError, "weigh comes once, after close");
        return NULL;
    }
    Py_ssize_t nw = PyList_GET_SIZE(ix->words), n = ix->n_pass;
    PyObject *fast = PySequence_Fast(idf_seq, "idf must be a sequence");
    if (!fast)
        return NULL;
    if (PySequence_Fast_GET_SIZE(fast) != nw) {
        Py_DECREF(fast);
        PyErr_SetString(PyExc_ValueError, "one idf per word");
        return NULL;
    }
    double *idf = PyMem_Malloc((size_t)(nw ? nw : 1) * sizeof(double));
    double *norm = PyMem_Malloc((size_t)(n ? n : 1) * sizeof(double));
    ix->contrib = PyMem_Malloc((size_t)(ix->n_post ? ix->n_post : 1) * sizeof(double));
    ix->acc = PyMem_Calloc((size_t)(n ? n : 1), sizeof(double));
    ix->touched = PyMem_Calloc((size_t)(n ? n : 1), 1);
    ix->cand = PyMem_Malloc((size_t)(n ? n : 1) * sizeof(int32_t));
    if (!idf || !norm || !ix->contrib || !ix->acc || !ix->touched || !ix->cand) {
        Py_DECREF(fast);
        PyMem_Free(idf);
        PyMem_Free(norm);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t t = 0; t < nw; t++) {
        idf[t] = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(fast, t));
        if (idf[t] == -1.0 && PyErr_Occurred()) {
            Py_DECREF(fast);
            PyMem_Free(idf);
            PyMem_Free(norm);
            return NULL;
        }
    }
    Py_DECREF(fast);
    int64_t total = 0;
    for (Py_ssize_t p = 0; p < n; p++)
        total += ix->lens[p];
    double avgdl = n ? (double)total / (double)n : 0.0;
    for (Py_ssize_t p = 0; p < n; p++)
        norm[p] = avgdl != 0.0 ? k1 * ((1 - b) + b * (double)ix->lens[p] / avgdl) : k1;
    for (Py_ssize_t t = 0; t < nw; t++)
        for (Py_ssize_t j = ix->starts[t]; j < ix->starts[t + 1]; j++) {
            double tf = (double)ix->p_tf[j];
            ix->contrib[j] = idf[t] * tf * (k1 + 1) / (tf + norm[ix->pids[j]]);
        }
    PyMem_Free(idf);
    PyMem_Free(norm);
    PyMem_Free(ix->p_tf);
    ix->p_tf = NULL;
    ix->weighed = 1;
    Py_RETURN_NONE;
}

/* Add up the query's words (ids; a repeated id counts again). Returns the number of passages touched. */
static Py_ssize_t accumulate(Index *ix, PyObject *ids) {
    if (!ix->weighed) {
        PyErr_SetString(PyExc_RuntimeError, "the index is not weighed yet");
        return -1;
    }
    PyObject *fast = PySequence_Fast(ids, "ids must be a sequence");
    if (!fast)
        return -1;
    Py_ssize_t nw = PyList_GET_SIZE(ix->words), nc = 0;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(fast); i++) {
        Py_ssize_t t = PyLong_AsSsize_t(PySequence_Fast_GET_ITEM(fast, i));
        if (t == -1 && PyErr_Occurred()) {
            Py_DECREF(fast);
            return -1;
        }
        if (t < 0 || t >= nw) {
            Py_DECREF(fast);
            PyErr_SetString(PyExc_IndexError, "no such word id");
            return -1;
        }
        for (Py_ssize_t j = ix->starts[t]; j < ix->starts[t + 1]; j++) {
            int32_t p = ix->pids[j];
            if (!ix->touched[p]) {
                ix->touched[p] = 1;
                ix->cand[nc++] = p;
            }
            ix->acc[p] += ix->contrib[j];
        }
    }
    Py_DECREF(fast);
    return nc;
}

static void reset(Index *ix, Py_ssize_t nc) {
    for (Py_ssize_t i = 0; i < nc; i++) {
        ix->acc[ix->cand[i]] = 0.0;
        ix->touched[ix->cand[i]] = 0;
    }
}

/* The k best passages for the query's word ids, best first (ties: the earlier passage): [(pid, score)]. */
static PyObject *Index_top(Index *ix, PyObject *args) {
    PyObject *ids;
    Py_ssize_t k;
    if (!PyArg_ParseTuple(args, "On", &ids, &k))
        return NULL;
    Py_ssize_t nc = accumulate(ix, ids);
    if (nc < 0)
        return NULL;
    int32_t best[64];
    if (k < 0 || k > 64) {
        reset(ix, nc);
        PyErr_SetString(PyExc_ValueError, "k must be 0 to 64");
        return NULL;
    }
    Py_ssize_t nb = 0;
    for (Py_ssize_t i = 0; i < nc; i++) {
        int32_t p = ix->cand[i];
        double s = ix->acc[p];
        /* where p goes among the best so far: after every better one, and every equal one with a lower id */
        Py_ssize_t at = nb;
        while (at > 0) {
            int32_t q = best[at - 1];
            if (ix->acc[q] > s || (ix->acc[q] == s && q < p))
                break;
            at--;
        }
        if (at >= k)
            continue;
        Py_ssize_t last = nb < k ? nb : k - 1;
        for (Py_ssize_t m = last; m > at; m--)
            best[m] = best[m - 1];
        best[at] = p;
        if (nb < k)
            nb++;
    }
    PyObject *out = PyList_New(nb);
    if (out)
        for (Py_ssize_t i = 0; i < nb; i++) {
            PyObject *item = Py_BuildValue("(id)", (int)best[i], ix->acc[best[i]]);
            if (!item) {
                Py_CLEAR(out);
                break;
            }
            PyList_SET_ITEM(out, i, item);
        }
    reset(ix, nc);
    return out;
}

/* Every passage the query touches, with its score: {pid: score}, in the order first touched. */
static PyObject *Index_scores(Index *ix, PyObject *ids) {
    Py_ssize_t nc = accumulate(ix, ids);
    if (nc < 0)
        return NULL;
    PyObject *out = PyDict_New();
    for (Py_ssize_t i = 0; out && i < nc; i++) {
        PyObject *key = PyLong_FromLong(ix->cand[i]), *val = PyFloat_FromDouble(ix->acc[ix->cand[i]]);
        if (!key || !val || PyDict_SetItem(out, key, val) < 0)
            Py_CLEAR(out);
        Py_XDECREF(key);
        Py_XDECREF(val);
    }
    reset(ix, nc);
    return out;
}

static PyObject *Index_get_passages(Index *ix, void *Py_UNUSED(closure)) { return PyLong_FromSsize_t(ix->n_pass); }

static PyObject *Index_get_words(Index *ix, void *Py_UNUSED(closure)) { return Py_NewRef(ix->words); }

static int Index_init(Index *ix, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"stopwords", NULL};
    PyObject *stop;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O", kwlist, &stop))
        return -1;
    if (!PyAnySet_Check(stop)) {
        PyErr_SetString(PyExc_TypeError, "stopwords must be a set of bytes");
        return -1;
    }
    if (ix->words) {
        PyErr_SetString(PyExc_RuntimeError, "an index is made once");
        return -1;
    }
    ix->words = PyList_New(0);
    if (!ix->words)
        return -1;
    Py_INCREF(stop);
    ix->stop = stop;
    return 0;
}

static void Index_dealloc(Index *ix) {
    Py_XDECREF(ix->stop);
    Py_XDECREF(ix->words);
    PyMem_Free(ix->slots);
    PyMem_Free(ix->arena);
    PyMem_Free(ix->p_word);
    PyMem_Free(ix->p_pid);
    PyMem_Free(ix->p_tf);
    PyMem_Free(ix->last_pid);
    PyMem_Free(ix->last_post);
    PyMem_Free(ix->lens);
    PyMem_Free(ix->starts);
    PyMem_Free(ix->pids);
    PyMem_Free(ix->contrib);
    PyMem_Free(ix->acc);
    PyMem_Free(ix->touched);
    PyMem_Free(ix->cand);
    Py_TYPE(ix)->tp_free((PyObject *)ix);
}

static PyMethodDef Index_methods[] = {
    {"add", (PyCFunction)Index_add, METH_O, "Read a batch: lower-cased UTF-8 bytes, each passage closed by a lone 0x01."},
    {"close", (PyCFunction)Index_close, METH_NOARGS, "End the reading; each word's document frequency, in id order."},
    {"weigh", (PyCFunction)Index_weigh, METH_VARARGS, "weigh(idf, k1, b): every posting's BM25 contribution."},
    {"top", (PyCFunction)Index_top, METH_VARARGS, "top(ids, k): the k best (passage, score), best first."},
    {"scores", (PyCFunction)Index_scores, METH_O, "scores(ids): {passage: score} of every passage touched."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Index_getset[] = {
    {"passages", (getter)Index_get_passages, NULL, "passages read so far", NULL},
    {"words", (getter)Index_get_words, NULL, "the kept words, in id order", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject IndexType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "sjc_mcp._bm25.Index",
    .tp_basicsize = sizeof(Index),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A BM25 inverted index over passages of lower-cased text.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Index_init,
    .tp_dealloc = (destructor)Index_dealloc,
    .tp_methods = Index_methods,
    .tp_getset = Index_getset,
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_bm25",
    .m_doc = "The compiled BM25 passage index of sjc_mcp.evidence.",
    .m_size = -1,
};

PyMODINIT_FUNC PyInit__bm25(void) {
    if (PyType_Ready(&IndexType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m)
        return NULL;
    Py_INCREF(&IndexType);
    if (PyModule_AddObject(m, "Index", (PyObject *)&IndexType) < 0) {
        Py_DECREF(&IndexType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
