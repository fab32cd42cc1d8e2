#include "engine/superinstructions.hpp"

#if PY_VERSION_HEX >= 0x030C0000 && PY_VERSION_HEX < 0x030D0000

#include <opcode.h>

#include <array>
#include <cstdint>

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

int restore_superinstructions(PyObject* code) {
    if (!cache_entries_read || !PyCode_Check(code)) return 0;
    auto* co = reinterpret_cast<PyCodeObject*>(code);
    // co_code is the bytecode as compiled: base opcodes, with no instrumentation and no
    // specialisation in it (cached on the code object by CPython), so the walk sees where each
    // instruction starts whatever the live bytecode holds.
    PyObject* compiled = PyCode_GetCode(co);
    if (!compiled) return -1;
    const auto* base = reinterpret_cast<const std::uint8_t*>(PyBytes_AS_STRING(compiled));
    const Py_ssize_t units = PyBytes_GET_SIZE(compiled) / 2;
    if (units != Py_SIZE(co)) {
        Py_DECREF(compiled);
        return 0;
    }
    _Py_CODEUNIT* live = _PyCode_CODE(co);
    int restored = 0;
    int previous = 0;
    Py_ssize_t previous_at = -1;
    for (Py_ssize_t i = 0; i < units; i += 1 + cache_entries[base[2 * i]]) {
        const int opcode = base[2 * i];
        const int superinstruction = previous_at >= 0 ? fused(previous, opcode) : 0;
        std::uint8_t& first = live[previous_at >= 0 ? previous_at : 0].op.code;
        if (superinstruction && first == previous && base_of_pair_half(live[i].op.code) == opcode) {
            first = static_cast<std::uint8_t>(superinstruction);
            ++restored;
        }
        previous = opcode;
        previous_at = i;
    }
    Py_DECREF(compiled);
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

}  // namespace dpdb::engine

#endif
