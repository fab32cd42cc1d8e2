// CPython 3.12 only: putting back the superinstructions that sys.monitoring takes out of a code
// object for good.
//
// 3.12 fuses five pairs of instructions (LOAD_FAST + LOAD_CONST and the like) into one
// superinstruction, once, when a code object is created (_PyCode_Quicken). Whenever the events of
// a code object change, _Py_Instrument turns every superinstruction back into the first
// instruction of its pair, because a superinstruction would run its second instruction without
// the line event that may sit on it; nothing fuses them again. So a code object that ever had an
// event, even one answered with DISABLE at once, runs call-heavy code 3-7% slower for the rest of
// the process (bench/monitoring_floor.py). 3.13 makes its superinstructions in the compiler, and
// instrumentation leaves them alone.
#pragma once

#include <Python.h>

#include <vector>

namespace dpdb::engine {

// Reads the sizes of the inline caches from the opcode module. Returns -1 with an exception set.
int superinstructions_init();

// Fuses again, in `code` (a code object), every pair that code creation fused and that is free of
// instrumentation now: neither instruction of the pair carries a line or instruction event.
// Safe at any time with the GIL held: a frame stopped between the two instructions runs the
// second as before, and any later change of events goes through _Py_Instrument, which takes the
// superinstructions out before it instruments a line. Returns the pairs fused, or -1 with an
// exception set. Does nothing (returns 0) on other versions.
int restore_superinstructions(PyObject* code);

// The same for the pairs around the instructions that start at these code units only: where a
// line event was just taken out of an instruction that had kept its pairs apart since the last
// whole restore.
int restore_superinstructions_at(PyObject* code, const std::vector<int>& starts);

}  // namespace dpdb::engine
