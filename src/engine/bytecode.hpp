// CPython 3.9-3.11: a code object read as the patcher (patch.hpp) needs it: its instructions, the
// line of every code unit, where line events fire, its jumps and exception handlers, and the
// static depth of its value stack.
#pragma once

#include <Python.h>

#if PY_VERSION_HEX < 0x030C0000

#include <cstddef>
#include <string>
#include <vector>

namespace dpdb::engine {

constexpr bool kPy39 = PY_VERSION_HEX < 0x030A0000;
constexpr bool kPy311 = PY_VERSION_HEX >= 0x030B0000;

struct Opcodes {
    int extended_arg = -1, nop = -1, load_const = -1, pop_top = -1, call_function = -1;
    int jump_absolute = -1, push_null = -1, precall = -1, call = -1, jump_forward = -1;
    int jump_backward = -1, return_generator = -1, gen_start = -1, for_iter = -1;
    int pop_jump_if_false = -1;  // 3.11: POP_JUMP_FORWARD_IF_FALSE, relative
    // Per opcode: 1 = relative jump, 2 = absolute jump, 3 = backward relative jump (3.11).
    std::vector<unsigned char> jump = std::vector<unsigned char>(256, 0);
    std::vector<unsigned char> caches = std::vector<unsigned char>(256, 0);
    std::vector<bool> no_fallthrough = std::vector<bool>(256, false);
    // Instructions that suspend or resume a frame: a line holding one keeps being traced, since
    // a frame resumed in it would not pass through the line's check.
    std::vector<bool> suspends = std::vector<bool>(256, false);
    // 3.9/3.10 block setups: their jump target is an exception handler.
    std::vector<bool> handler_setup = std::vector<bool>(256, false);
};
extern Opcodes g_op;
enum : unsigned char { kNoJump, kRelJump, kAbsJump, kBackJump };

struct Instr {
    int start;  // first code unit, EXTENDED_ARG prefixes included
    int op_at;  // code unit of the opcode itself
    int op;
    long arg;
    int size;  // code units, prefixes and inline caches included
};

struct Handler {
    int start, end, target, depth;
    bool lasti;
};

struct Edge {
    int source;  // op_at of the jumping instruction, -1 for an exception table handler
    int target;
    bool handler;
};

// A decoded code object: instructions, the line of every code unit, where line events fire on
// fall-through, jumps and (3.11) the exception table.
struct Decoded {
    PyCodeObject* co = nullptr;
    std::string bytes;
    int units = 0;
    std::vector<Instr> instrs;
    std::vector<int> index_at;  // code unit -> instruction index, -1 inside an instruction
    std::vector<int> line_at;   // code unit -> line, -1 for none
    std::vector<bool> starts;   // a line event fires on entering this unit in sequence
    std::vector<Handler> handlers;
    std::vector<Edge> edges;
    int end_line = 0;   // the line table's running line after its last entry
    int end_units = 0;  // 3.9: the address (in code units) of the lnotab's last entry
    std::string lines_table;
    std::string exception_table;
};

inline int op_of(const Decoded& d, int unit) {
    return static_cast<unsigned char>(d.bytes[2 * static_cast<std::size_t>(unit)]);
}
inline int arg_of(const Decoded& d, int unit) {
    return static_cast<unsigned char>(d.bytes[2 * static_cast<std::size_t>(unit) + 1]);
}

// Loads the opcode numbers and tables from the `opcode` module. Returns -1 with an exception set.
int opcodes_init();

// False with an exception set when `code` cannot be read.
bool decode(PyObject* code, Decoded& d);

// Static stack depth before every instruction, as the compiler computes co_stacksize. False if
// the code does not analyse cleanly (then it is not patched).
bool stack_depths(const Decoded& d, std::vector<int>& depth);

}  // namespace dpdb::engine

#endif
