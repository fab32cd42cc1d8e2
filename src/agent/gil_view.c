/* The GIL as CPython's private runtime state shows it, read without taking it: which thread holds
   it, and where a thread that waits for it sleeps. C, not C++: the internal headers that define
   these structures only compile as C. Everything here is for diagnostics; reading another
   thread's state while it changes may give a stale answer; thread states are only read where
   none can be freed meanwhile (see dpdb_list_threads). */
#define Py_BUILD_CORE_MODULE 1
/* Python.h comes before every other header, as CPython requires. */
/* clang-format off */
#include <Python.h>
#include "agent/gil_view.h"
/* clang-format on */

/* Checked against the internal headers of 3.9 to 3.13 only; a free-threaded build has no GIL. */
#if PY_VERSION_HEX >= 0x030E0000 || defined(Py_GIL_DISABLED)

int dpdb_read_gil_view(struct dpdb_gil_view* view) {
    (void)view;
    return -1;
}

int dpdb_list_threads(uintptr_t holder, struct dpdb_gil_thread* threads, int capacity,
                      unsigned long* holder_ident) {
    (void)holder;
    (void)threads;
    (void)capacity;
    (void)holder_ident;
    return -1;
}

#else

#if PY_VERSION_HEX >= 0x030C0000
#include "internal/pycore_interp.h"
#else
#include "internal/pycore_runtime.h"
#endif
#include "internal/pycore_gil.h"

static struct _gil_runtime_state* main_gil(void) {
#if PY_VERSION_HEX >= 0x030C0000
    PyInterpreterState* interp = PyInterpreterState_Main();
    return interp ? interp->ceval.gil : NULL;
#else
    return &_PyRuntime.ceval.gil;
#endif
}

static PyThreadState* gil_last_holder(struct _gil_runtime_state* gil) {
#if PY_VERSION_HEX >= 0x030D0000
    return (PyThreadState*)_Py_atomic_load_ptr_relaxed(&gil->last_holder);
#else
    return (PyThreadState*)_Py_atomic_load_relaxed(&gil->last_holder);
#endif
}

static int gil_locked(struct _gil_runtime_state* gil) {
#if PY_VERSION_HEX >= 0x030D0000
    return _Py_atomic_load_int_relaxed(&gil->locked);
#else
    return _Py_atomic_load_relaxed(&gil->locked);
#endif
}

static unsigned long native_id_of(PyThreadState* ts) {
#if PY_VERSION_HEX >= 0x030B0000
    return ts->native_thread_id;
#else
    (void)ts;
    return 0; /* 3.9 and 3.10 do not keep it */
#endif
}

int dpdb_read_gil_view(struct dpdb_gil_view* view) {
    struct _gil_runtime_state* gil = main_gil();
    if (!gil || !Py_IsInitialized()) return -1;
    view->wait_begin = (uintptr_t)&gil->cond;
    view->wait_end = (uintptr_t)&gil->mutex + sizeof(gil->mutex);
    view->holder = gil_locked(gil) ? (uintptr_t)gil_last_holder(gil) : 0;
    return 0;
}

int dpdb_list_threads(uintptr_t holder, struct dpdb_gil_thread* threads, int capacity,
                      unsigned long* holder_ident) {
    PyInterpreterState* interp = PyInterpreterState_Main();
    if (!interp || !Py_IsInitialized()) return -1;
    *holder_ident = 0;
    int count = 0;
    for (PyThreadState* ts = PyInterpreterState_ThreadHead(interp); ts;
         ts = PyThreadState_Next(ts)) {
        if ((uintptr_t)ts == holder) *holder_ident = ts->thread_id;
        if (count < capacity) {
            threads[count].ident = ts->thread_id;
            threads[count].native_id = native_id_of(ts);
            ++count;
        }
    }
    return count;
}

#endif
