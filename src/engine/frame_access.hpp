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
// Where the code and the globals sit among those pointers.
#if PY_VERSION_HEX >= 0x030C0000
constexpr int kFrameCode = 0;
constexpr int kFrameGlobals = 3;
#else
constexpr int kFrameCode = 4;
constexpr int kFrameGlobals = 1;
#endif
#if PY_VERSION_HEX >= 0x030C0000
// The instruction a frame is at (3.12's prev_instr, 3.13's instr_ptr): in a LINE callback, the
// line's first unit, which the interpreter reads back after the callback (as a jump by f_lineno).
constexpr int kFrameInstruction = 7;
// A code unit as the interpreter reads it: the opcode byte, then its argument (or a cache entry).
struct CodeUnit {
    std::uint8_t op;
    std::uint8_t arg;
};
inline CodeUnit* code_units(PyObject* code) {
    return reinterpret_cast<CodeUnit*>(reinterpret_cast<PyCodeObject*>(code)->co_code_adaptive);
}
inline int frame_unit(const InterpreterFrameHead* f, PyObject* code) {
    return static_cast<int>(static_cast<const CodeUnit*>(f->pointers[kFrameInstruction]) -
                            code_units(code));
}
inline void set_frame_unit(InterpreterFrameHead* f, PyObject* code, int unit) {
    f->pointers[kFrameInstruction] = code_units(code) + unit;
}
#endif
// The frame a thread runs: a C function's caller, without making its frame object.
inline InterpreterFrameHead* running_frame(PyThreadState* ts) {
#if PY_VERSION_HEX >= 0x030D0000
    return reinterpret_cast<InterpreterFrameHead*>(ts->current_frame);
#else
    return reinterpret_cast<InterpreterFrameHead*>(ts->cframe->current_frame);
#endif
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

#if PY_VERSION_HEX < 0x030C0000
// The 3.9-3.11 backend's view of the frame the evaluator runs: its code, its position in code
// units, and the value stack a trace function sees.
#if PY_VERSION_HEX >= 0x030B0000
// 3.11's private _PyInterpreterFrame, up to its locals and stack.
struct InterpreterFrame {
    PyObject* f_func;
    PyObject* f_globals;
    PyObject* f_builtins;
    PyObject* f_locals;
    PyCodeObject* f_code;
    PyFrameObject* frame_obj;
    InterpreterFrame* previous;
    _Py_CODEUNIT* prev_instr;
    int stacktop;
    bool is_entry;
    char owner;
    PyObject* localsplus[1];
};
using EvalFrame = struct _PyInterpreterFrame*;
inline InterpreterFrame* iframe(EvalFrame f) {
    return reinterpret_cast<InterpreterFrame*>(f);
}
inline InterpreterFrame* iframe(PyFrameObject* f) {
    return static_cast<InterpreterFrame*>(head(f)->f_frame);
}
inline PyObject* eval_code(EvalFrame f) {
    return reinterpret_cast<PyObject*>(iframe(f)->f_code);
}
inline PyFrameObject* eval_frame_object(EvalFrame f) {
    return iframe(f)->frame_obj;
}
template <typename F>
inline int lasti_units(F f) {
    InterpreterFrame* i = iframe(f);
    return static_cast<int>(i->prev_instr - _PyCode_CODE(i->f_code));
}
inline void set_lasti_units(PyFrameObject* f, int unit) {
    InterpreterFrame* i = iframe(f);
    i->prev_instr = _PyCode_CODE(i->f_code) + unit;
}
inline void set_code(EvalFrame f, PyObject* code) {
    InterpreterFrame* i = iframe(f);
    auto* to = reinterpret_cast<PyCodeObject*>(code);
    i->prev_instr = _PyCode_CODE(to) + (i->prev_instr - _PyCode_CODE(i->f_code));
    Py_INCREF(to);
    Py_SETREF(i->f_code, to);
}
// The value on top of the frame's stack, as a trace function sees it.
inline PyObject** stack_top(PyFrameObject* f) {
    InterpreterFrame* i = iframe(f);
    return i->stacktop > i->f_code->co_nlocalsplus ? &i->localsplus[i->stacktop - 1] : nullptr;
}
inline void drop_stack_top(PyFrameObject* f) {
    --iframe(f)->stacktop;
}
#else
using EvalFrame = PyFrameObject*;
inline PyObject* eval_code(EvalFrame f) {
    return reinterpret_cast<PyObject*>(f->f_code);
}
inline PyFrameObject* eval_frame_object(EvalFrame f) {
    return f;
}
// f_lasti counts bytes on 3.9 and code units on 3.10.
constexpr int kLastiScale = PY_VERSION_HEX < 0x030A0000 ? 2 : 1;
inline int lasti_units(PyFrameObject* f) {
    return f->f_lasti < 0 ? -1 : f->f_lasti / kLastiScale;
}
inline void set_lasti_units(PyFrameObject* f, int unit) {
    f->f_lasti = unit * kLastiScale;
}
inline void set_code(EvalFrame f, PyObject* code) {
    Py_INCREF(code);
    Py_SETREF(f->f_code, reinterpret_cast<PyCodeObject*>(code));
}
#if PY_VERSION_HEX < 0x030A0000
inline PyObject** stack_top(PyFrameObject* f) {
    return f->f_stacktop && f->f_stacktop > f->f_valuestack ? f->f_stacktop - 1 : nullptr;
}
inline void drop_stack_top(PyFrameObject* f) {
    --f->f_stacktop;
}
#else
inline PyObject** stack_top(PyFrameObject* f) {
    return f->f_stackdepth > 0 ? &f->f_valuestack[f->f_stackdepth - 1] : nullptr;
}
inline void drop_stack_top(PyFrameObject* f) {
    --f->f_stackdepth;
}
#endif
#endif
#endif

}  // namespace dpdb::engine
