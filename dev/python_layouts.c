/* Prints the offsets attach/python_layout.cpp keeps for one CPython version (3.9-3.12), from that
 * version's own headers, for checking the table or adding a version:
 *   P=$(pyenv prefix 3.12); cc -I$P/include/python3.12 dev/python_layouts.c -o /tmp/layout && /tmp/layout
 * (3.13 needs no table: its _PyRuntime starts with _Py_DebugOffsets.) */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <frameobject.h>
#include <internal/pycore_runtime.h>
#include <internal/pycore_interp.h>
#if PY_VERSION_HEX >= 0x030b0000
#include <internal/pycore_frame.h>
#include <internal/pycore_dict.h>
#endif
#include <stdio.h>
#include <stddef.h>
#define O(name, expr) printf("  %s = %zu\n", name, (size_t)(expr))
int main(void) {
    printf("%d.%d\n", PY_MAJOR_VERSION, PY_MINOR_VERSION);
    O("runtime_interpreters_head", offsetof(_PyRuntimeState, interpreters.head));
    O("interp_next", offsetof(PyInterpreterState, next));
#if PY_VERSION_HEX >= 0x030b0000
    O("interp_threads_head", offsetof(PyInterpreterState, threads.head));
#else
    O("interp_threads_head", offsetof(PyInterpreterState, tstate_head));
#endif
    O("thread_next", offsetof(PyThreadState, next));
    O("thread_id", offsetof(PyThreadState, thread_id));
#if PY_VERSION_HEX >= 0x030b0000
    O("thread_native_id", offsetof(PyThreadState, native_thread_id));
    O("thread_frame", offsetof(PyThreadState, cframe));
    O("cframe_current_frame", offsetof(_PyCFrame, current_frame));
    O("frame_previous", offsetof(_PyInterpreterFrame, previous));
    O("frame_code", offsetof(_PyInterpreterFrame, f_code));
    O("frame_instruction", offsetof(_PyInterpreterFrame, prev_instr));
    O("frame_owner", offsetof(_PyInterpreterFrame, owner));
    O("frame_localsplus", offsetof(_PyInterpreterFrame, localsplus));
    O("heaptype_cached_keys", offsetof(PyHeapTypeObject, ht_cached_keys));
    O("keys_log2_index_bytes", offsetof(PyDictKeysObject, dk_log2_index_bytes));
    O("keys_kind", offsetof(PyDictKeysObject, dk_kind));
    O("keys_nentries", offsetof(PyDictKeysObject, dk_nentries));
    O("keys_indices", offsetof(PyDictKeysObject, dk_indices));
    O("code_instructions", offsetof(PyCodeObject, co_code_adaptive));
    O("code_linetable", offsetof(PyCodeObject, co_linetable));
#else
    O("thread_frame", offsetof(PyThreadState, frame));
    O("frame_previous", offsetof(PyFrameObject, f_back));
    O("frame_code", offsetof(PyFrameObject, f_code));
    O("frame_instruction", offsetof(PyFrameObject, f_lasti));
    O("frame_localsplus", offsetof(PyFrameObject, f_localsplus));
    /* PyDictKeysObject is private (Objects/dict-common.h): dk_size at 8, dk_nentries at 32,
     * dk_indices at 40. */
#if PY_VERSION_HEX >= 0x030a0000
    O("code_linetable", offsetof(PyCodeObject, co_linetable));
#else
    O("code_linetable", offsetof(PyCodeObject, co_lnotab));
#endif
#endif
    O("code_filename", offsetof(PyCodeObject, co_filename));
    O("code_name", offsetof(PyCodeObject, co_name));
    O("code_firstlineno", offsetof(PyCodeObject, co_firstlineno));
#if PY_VERSION_HEX >= 0x030c0000
    O("interp_gil", offsetof(PyInterpreterState, ceval.gil));
    O("gil_locked", offsetof(struct _gil_runtime_state, locked));
    O("gil_holder", offsetof(struct _gil_runtime_state, last_holder));
#else
    O("runtime_gil_locked", offsetof(_PyRuntimeState, ceval.gil.locked));
    O("runtime_gil_holder", offsetof(_PyRuntimeState, ceval.gil.last_holder));
#endif
    O("unicode_state", offsetof(PyASCIIObject, state));
    O("unicode_ascii_size", sizeof(PyASCIIObject));
    O("unicode_compact_size", sizeof(PyCompactUnicodeObject));
    O("bytes_size", offsetof(PyVarObject, ob_size));
    O("bytes_data", offsetof(PyBytesObject, ob_sval));
    O("type_basicsize", offsetof(PyTypeObject, tp_basicsize));
    O("type_flags", offsetof(PyTypeObject, tp_flags));
    O("type_dictoffset", offsetof(PyTypeObject, tp_dictoffset));
    O("dict_keys", offsetof(PyDictObject, ma_keys));
    O("dict_values", offsetof(PyDictObject, ma_values));
    return 0;
}
