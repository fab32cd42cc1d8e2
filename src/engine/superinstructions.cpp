#include "engine/superinstructions.hpp"

#if PY_VERSION_HEX >= 0x030C0000 && PY_VERSION_HEX < 0x030D0000

#include <opcode.h>

#include <array>
#include <cstdint>
#include <vector>

namespace dpdb::engine {
namespace {

// Inline cache entries after each base opcode (opcode._inline_cache_entries): where the next
// instruction starts. Written once, by superinstructions_init, before any code is restored.
std::array<std::uint8_t, 256> cache_entries{};
bool cache_entries_read = false;

// The superinstruction code creation makes of a pair of base opcodes, or 0 (_PyCode_Quicken's
// table).
int fused(int first, int second) {
    switch (first << 8 | second) {
        case LOAD_CONST << 8 | LOAD_FAST:
            return LOAD_CONST__LOAD_FAST;
        case LOAD_FAST << 8 | LOAD_CONST:
            return LOAD_FAST__LOAD_CONST;
        case LOAD_FAST << 8 | LOAD_FAST:
            return LOAD_FAST__LOAD_FAST;
        case STORE_FAST << 8 | LOAD_FAST:
            return STORE_FAST__LOAD_FAST;
        case STORE_FAST << 8 | STORE_FAST:
            return STORE_FAST__STORE_FAST;
        default:
            return 0;
    }
}

// The base opcode of an opcode as it sits in the live bytecode when it is either that base or
// the first half of a superinstruction; anything else (an instrumented opcode) maps to itself,
// which never equals a base opcode of a pair.
int base_of_pair_half(int opcode) {
    switch (opcode) {
        case LOAD_CONST__LOAD_FAST:
            return LOAD_CONST;
        case LOAD_FAST__LOAD_CONST:
        case LOAD_FAST__LOAD_FAST:
            return LOAD_FAST;
        case STORE_FAST__LOAD_FAST:
        case STORE_FAST__STORE_FAST:
            return STORE_FAST;
        default:
            return opcode;
    }
}

}  // namespace

int superinstructions_init() {
    if (cache_entries_read) return 0;
    PyObject* opcode_module = PyImport_ImportModule("opcode");
    if (!opcode_module) return -1;
    PyObject* entries = PyObject_GetAttrString(opcode_module, "_inline_cache_entries");
    Py_DECREF(opcode_module);
    if (!entries) return -1;
    PyObject* seq = PySequence_Fast(entries, "opcode._inline_cache_entries is not a sequence");
    Py_DECREF(entries);
    if (!seq) return -1;
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    for (Py_ssize_t i = 0; i < n && i < 256; ++i) {
        long count = PyLong_AsLong(PySequence_Fast_GET_ITEM(seq, i));
        if (count < 0 || count > 255) {
            Py_DECREF(seq);
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "dpdb engine: odd inline cache size");
            return -1;
        }
        cache_entries[i] = static_cast<std::uint8_t>(count);
    }
    Py_DECREF(seq);
    cache_entries_read = true;
    return 0;
}

namespace {

// The bytecode as compiled (co_code: base opcodes, caches zeroed, no instrumentation or
// specialisation; CPython keeps it on the code object) beside the live one.
class Bytecode {
  public:
    explicit Bytecode(PyCodeObject* co) : compiled_(PyCode_GetCode(co)), live_(_PyCode_CODE(co)) {
        if (compiled_ && PyBytes_GET_SIZE(compiled_) / 2 == Py_SIZE(co)) units_ = Py_SIZE(co);
    }
    ~Bytecode() { Py_XDECREF(compiled_); }
    Bytecode(const Bytecode&) = delete;
    Bytecode& operator=(const Bytecode&) = delete;

    bool failed() const { return compiled_ == nullptr; }
    Py_ssize_t units() const { return units_; }
    int base(Py_ssize_t unit) const {
        return reinterpret_cast<const std::uint8_t*>(PyBytes_AS_STRING(compiled_))[2 * unit];
    }
    Py_ssize_t next(Py_ssize_t unit) const { return unit + 1 + cache_entries[base(unit)]; }

    // Fuses the instructions at `first` and `second` (consecutive instruction starts) if code
    // creation would have, and both are themselves in the live bytecode. Returns 1 if it did.
    int fuse(Py_ssize_t first, Py_ssize_t second) {
        const int superinstruction = fused(base(first), base(second));
        std::uint8_t& opcode = live_[first].op.code;
        if (!superinstruction || opcode != base(first) ||
            base_of_pair_half(live_[second].op.code) != base(second))
            return 0;
        opcode = static_cast<std::uint8_t>(superinstruction);
        return 1;
    }

  private:
    PyObject* compiled_;
    _Py_CODEUNIT* live_;
    Py_ssize_t units_ = 0;
};

}  // namespace

int restore_superinstructions(PyObject* code) {
    if (!cache_entries_read || !PyCode_Check(code)) return 0;
    Bytecode bytecode(reinterpret_cast<PyCodeObject*>(code));
    if (bytecode.failed()) return -1;
    int restored = 0;
    for (Py_ssize_t i = 0, j = 0; i < bytecode.units(); i = j) {
        j = bytecode.next(i);
        if (j < bytecode.units()) restored += bytecode.fuse(i, j);
    }
    return restored;
}

int restore_superinstructions_at(PyObject* code, const std::vector<int>& starts) {
    if (!cache_entries_read || !PyCode_Check(code)) return 0;
    Bytecode bytecode(reinterpret_cast<PyCodeObject*>(code));
    if (bytecode.failed()) return -1;
    int restored = 0;
    const Py_ssize_t units = bytecode.units();
    for (int start : starts) {
        if (start < 0 || start >= units) continue;
        // Every unit of co_code is an instruction start but a cache, which reads as opcode 0
        // (CACHE) and pairs with nothing: the unit before is the previous instruction, if it
        // can begin a pair (none of the five has caches).
        if (start > 0) restored += bytecode.fuse(start - 1, start);
        const Py_ssize_t after = bytecode.next(start);
        if (after < units) restored += bytecode.fuse(start, after);
    }
    return restored;
}

}  // namespace dpdb::engine

#else

namespace dpdb::engine {

int superinstructions_init() {
    return 0;
}

int restore_superinstructions(PyObject*) {
    return 0;
}

int restore_superinstructions_at(PyObject*, const std::vector<int>&) {
    return 0;
}

}  // namespace dpdb::engine

#endif
