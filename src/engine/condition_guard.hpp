// A breakpoint line's conditions answered in the patched code's tail (3.9-3.11, patch.hpp) or a
// function's fast copy (3.12+, fast_copy.hpp) without a call. The tail starts `LOAD_CONST <guard>;
// POP_JUMP_IF_FALSE <past the check>`: the interpreter asks the guard's truth through its nb_bool
// slot, which answers from the line's snapshots in C (condition.hpp's conditions_false_known) with
// no argument tuple, no builtin call and no lookup of the site. False: every condition there is
// false, its hit is counted, and the frame skips the check; true (due, or anything the guard does
// not know, or a tracer on the thread): the check is called as before and decides. A guard never
// sets an exception and runs no Python code, so the jump cannot raise in the user's frame. On 3.12+
// true takes the copy's slow replica, whose line event decides.
#pragma once

#include <Python.h>

#if PY_VERSION_HEX >= 0x030C0000
#include "engine/fast_copy.hpp"
#endif

namespace dpdb::engine {

// Readies the guard's type. Returns -1 with an exception set.
int condition_guard_init();

// DPDB_ENGINE=noguard leaves the guards out of the tails (each hit calls the check) and, on
// 3.12+, gives no function a fast copy.
void condition_guard_allow(bool on);
bool condition_guard_allowed();

// A new guard for the check of the site at `line` that starts at code unit `start`, or null with
// an exception set.
PyObject* new_condition_guard(int line, int start);
bool is_condition_guard(PyObject* object);

#if PY_VERSION_HEX >= 0x030C0000
// 3.12+: a guard for `site` of a fast copy; it keeps the site's units, so that code the program
// derives from the copy (code.replace) can be read by its guards alone.
PyObject* new_fast_copy_guard(const FastSite& site);
const FastSite& condition_guard_site(PyObject* guard);
struct CodeInfo;
// The fast copy whose tail loads the guard, and its CodeInfo (both borrowed: the copy's
// FastCopy binds its guards and unbinds them, with nulls, when the copy goes).
void condition_guard_bind(PyObject* guard, PyObject* code, CodeInfo* info);
#endif

}  // namespace dpdb::engine
