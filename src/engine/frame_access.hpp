// Field access to PyFrameObject across CPython 3.9-3.13. From 3.11 on the struct is private, but
// its head (the fields a trace function owns) has the same layout in 3.11, 3.12 and 3.13, and the
// engine must read and write exactly what CPython's own trace trampoline reads and writes.
#pragma once

#include <Python.h>
#include <frameobject.h>

#include <cstdint>

namespace dpdb::engine {

#if PY_VERSION_HEX >= 0x030B0000
struct FrameHead {
    PyObject_HEAD PyFrameObject* f_back;
    void* f_frame;
    PyObject* f_trace;
    int f_lineno;
    char f_trace_lines;
    char f_trace_opcodes;
};
inline FrameHead* head(PyFrameObject* f) {
    return reinterpret_cast<FrameHead*>(f);
}
inline PyObject*& frame_trace(PyFrameObject* f) {
    return head(f)->f_trace;
}
inline char& frame_trace_lines(PyFrameObject* f) {
    return head(f)->f_trace_lines;
}
inline char& frame_trace_opcodes(PyFrameObject* f) {
    return head(f)->f_trace_opcodes;
}
inline int& frame_lineno(PyFrameObject* f) {
    return head(f)->f_lineno;
}
// The private _PyInterpreterFrame of 3.11, 3.12 and 3.13 differs in the order of its first eight
// pointers and in its small fields, never in where its locals start.
struct InterpreterFrameHead {
    void* pointers[8];
    int stacktop;
    std::uint16_t small;
    char owner;
    PyObject* localsplus[1];
};
// A running frame's fast locals, cells and free variables, as co_localsplusnames orders them.
inline PyObject** frame_localsplus(PyFrameObject* f) {
    return static_cast<InterpreterFrameHead*>(head(f)->f_frame)->localsplus;
}
#else
// As co_varnames, co_cellvars and co_freevars order them.
inline PyObject** frame_localsplus(PyFrameObject* f) {
    return f->f_localsplus;
}
inline PyObject*& frame_trace(PyFrameObject* f) {
    return f->f_trace;
}
inline char& frame_trace_lines(PyFrameObject* f) {
    return f->f_trace_lines;
}
inline char& frame_trace_opcodes(PyFrameObject* f) {
    return f->f_trace_opcodes;
}
#endif

}  // namespace dpdb::engine
