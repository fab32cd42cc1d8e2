/* CPython's private record of signals that arrived and whose Python handlers are still to run.
   C, not C++: the internal headers that define it only compile as C (as gil_view.c's). */
#define Py_BUILD_CORE_MODULE 1
/* Python.h comes before every other header, as CPython requires. */
/* clang-format off */
#include <Python.h>
#include "agent/signal_view.h"
/* clang-format on */

/* Checked against the internal headers of 3.9 to 3.13 only. */
#if PY_VERSION_HEX >= 0x030E0000

int dpdb_python_signal_due(unsigned long* main_thread) {
    (void)main_thread;
    return -1;
}

#else

#include "internal/pycore_runtime.h"

int dpdb_python_signal_due(unsigned long* main_thread) {
    *main_thread = _PyRuntime.main_thread;
#if PY_VERSION_HEX >= 0x030D0000
    return _Py_atomic_load_int(&_PyRuntime.signals.is_tripped) != 0;
#elif PY_VERSION_HEX >= 0x030C0000
    return _Py_atomic_load(&_PyRuntime.signals.is_tripped) != 0;
#else
    /* Before 3.12 the C handler's flag is static in signalmodule.c; the request it sets for the
       main thread goes with it (cleared by that thread only, as it runs the handlers). */
    return _Py_atomic_load(&_PyRuntime.ceval.signals_pending) != 0;
#endif
}

#endif
