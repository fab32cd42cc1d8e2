// CPython 3.12+: the code a fast copy (fast_copy.hpp) is made from, as its builder reads it: the
// running interpreter's opcodes, the code's instructions, lines, jumps and handlers, where its
// lines start and how they are reached; and the units of the instructions it writes.
#pragma once

#include <Python.h>

#if PY_VERSION_HEX >= 0x030C0000

#include <utility>
#include <vector>

#include "engine/frame_access.hpp"

namespace dpdb::engine::fast_copy_code {

constexpr bool kPy313 = PY_VERSION_HEX >= 0x030D0000;
// Units FOR_ITER's exhausted path skips at its target (END_FOR; 3.13: END_FOR, POP_TOP).
constexpr int kForExitSkip = kPy313 ? 2 : 1;

// What the builder knows of the running interpreter's opcodes (from the `opcode` module).
struct Opcodes {
    int caches[256] = {};
    bool jumps[256] = {};     // has a jump target (relative, in code units after its caches)
    bool backward[256] = {};  // ...counted backward
    bool refused[256] = {};   // never displaced: control flow, or state kept between instructions
    int extended_arg = -1, nop = -1, load_const = -1, to_bool = -1, pop_jump_if_false = -1;
    int jump_forward = -1, jump_back = -1, jump_backward = -1, resume = -1, for_iter = -1;
    bool loaded = false;
};
extern Opcodes g_op;

struct Instr {
    int start = 0;  // first unit (its EXTENDED_ARG prefixes included)
    int size = 0;   // units, prefixes and caches included
    int op = 0;
    int arg = 0;
};

struct Handler {
    int start, end, target, depth_lasti;
};

struct Decoded {
    const CodeUnit* units = nullptr;
    int n = 0;
    std::vector<Instr> instrs;
    std::vector<int> index_at;  // instruction index per unit where one starts, else -1
    std::vector<int> line_at;
    std::vector<char> target;                // a jump or a handler lands there
    std::vector<std::pair<int, int>> jumps;  // (the jump's first unit, where it lands)
    std::vector<Handler> handlers;
    int first_traceable = 0;
};

// Reads `code`, its units `raw` (co_code). False where a jump or handler lands outside the code.
bool decode(PyObject* code, PyObject* raw, Decoded& d);

// The exception handler covering `unit`, or null.
const Handler* handler_for(const Decoded& d, int unit);

// A line starts at `in` as 3.12's instrumentation sees it: its line differs from the previous
// instruction's, or something jumps there.
bool starts_line(const Decoded& d, int index);

// Whether the frame can reach `in` from its own line: falling through from the instruction before,
// or a jump of the same line. CPython reports no line there (a backward jump's JUMP event aside),
// where the tail's slow replica would report one: a second hit of the line, or a stop too many.
bool reached_within_line(const Decoded& d, int index);

// Whether whatever lands on `unit` comes from its own line (a same-line jump, which reports no
// line there), or nothing does: no handler, no jump from another line.
bool reached_from_own_line_only(const Decoded& d, int unit);

// The units of one instruction with `arg`, its EXTENDED_ARG prefixes and zeroed caches.
void emit(std::vector<CodeUnit>& out, int op, int arg, int width = 0);

// Units an instruction with `arg` takes, its EXTENDED_ARG prefixes included.
int arg_width(int arg);

// A jump `op` at `at` whose argument depends on where it ends: the argument that fits its own
// width.
int backward_arg(int at, int to, int op = g_op.jump_back);

}  // namespace dpdb::engine::fast_copy_code

#endif
