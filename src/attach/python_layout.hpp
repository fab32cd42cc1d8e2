// Where CPython keeps what a stack reader needs (threads, frames, code objects, strings), per
// version: the one table of these offsets in dpdb. 3.9-3.12 from the table in python_layout.cpp
// (64-bit Linux release builds; dev/python_layouts.c prints it from each version's own headers);
// 3.13 says its own, in the _Py_DebugOffsets at the start of _PyRuntime.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace dpdb::attach {

class RemoteMemory;

struct PythonLayout {
    int minor = 0;  // 9 for 3.9
    // _PyRuntimeState
    std::uint64_t runtime_interpreters_head = 0;
    // PyInterpreterState
    std::uint64_t interp_next = 0;
    std::uint64_t interp_threads_head = 0;
    // PyThreadState
    std::uint64_t thread_next = 0;
    std::uint64_t thread_id = 0;
    std::uint64_t thread_native_id = 0;  // 3.11 on; 0: not kept
    // 3.9/3.10: the PyFrameObject; 3.11/3.12: the _PyCFrame, whose current_frame is the
    // _PyInterpreterFrame; 3.13: the _PyInterpreterFrame itself.
    std::uint64_t thread_frame = 0;
    std::optional<std::uint64_t> cframe_current_frame;
    // The frame (PyFrameObject before 3.11, _PyInterpreterFrame after)
    std::uint64_t frame_previous = 0;
    std::uint64_t frame_code = 0;
    std::uint64_t frame_instruction = 0;       // f_lasti (an int) before 3.11; a pointer after
    std::optional<std::uint64_t> frame_owner;  // 3.11 on (a char)
    std::uint64_t frame_localsplus = 0;        // the arguments, then the other locals
    // PyCodeObject
    std::uint64_t code_filename = 0;
    std::uint64_t code_name = 0;
    std::uint64_t code_firstlineno = 0;
    std::uint64_t code_linetable = 0;     // co_lnotab in 3.9
    std::uint64_t code_instructions = 0;  // co_code_adaptive, 3.11 on
    // The GIL: before 3.12 in _PyRuntime; 3.12 through a pointer in the interpreter state;
    // 3.13 inside the interpreter state.
    std::optional<std::uint64_t> runtime_gil;         // _PyRuntime.ceval.gil
    std::optional<std::uint64_t> interp_gil_pointer;  // PyInterpreterState.ceval.gil
    std::optional<std::uint64_t> interp_gil;          // PyInterpreterState._gil
    std::uint64_t gil_locked = 0;                     // in struct _gil_runtime_state
    std::uint64_t gil_holder = 0;
    // PyUnicodeObject, PyBytesObject
    std::uint64_t unicode_state = 0;
    std::uint64_t unicode_ascii_size = 0;    // sizeof(PyASCIIObject): where ASCII text starts
    std::uint64_t unicode_compact_size = 0;  // sizeof(PyCompactUnicodeObject): other text
    std::uint64_t bytes_size = 0;
    std::uint64_t bytes_data = 0;
    // Instances and dicts, as far as reading a Thread's _name needs: PyTypeObject is public and
    // alike in every version; where an instance keeps its attributes is not.
    std::uint64_t object_type = 8;
    std::uint64_t type_basicsize = 32;
    std::uint64_t type_flags = 168;
    std::uint64_t type_dictoffset = 288;
    std::uint64_t heaptype_cached_keys = 0;  // the keys a class's instances share, 3.11 on
    enum class InstanceDict {
        at_dictoffset,       // 3.9/3.10: a dict at the type's tp_dictoffset
        dict_or_values_311,  // 3.11: the dict at -3 pointers, or shared-key values at -4
        tagged_312,          // 3.12: at -3 pointers, values (low bit set) or the dict
        inline_313,          // 3.13: the dict at -3 pointers, or values after the object
    };
    InstanceDict instance_dict = InstanceDict::at_dictoffset;
    std::uint64_t dict_keys = 32;  // PyDictObject.ma_keys, ma_values
    std::uint64_t dict_values = 40;
    std::uint64_t values_start = 0;  // where PyDictValues' array starts (after a header, 3.13)
    // PyDictKeysObject: 3.9/3.10 keep dk_size and 24-byte entries; 3.11 on the size's log2 and
    // the index width's, and 16-byte entries for str keys (kinds 1 and 2).
    std::optional<std::uint64_t> keys_size;
    std::optional<std::uint64_t> keys_log2_index_bytes;
    std::uint64_t keys_kind = 0;
    std::uint64_t keys_nentries = 0;
    std::uint64_t keys_indices = 0;
};

// The layout of CPython 3.`minor`, reading 3.13's own offsets from the process's _PyRuntime;
// nothing (and `why`) for a version dpdb does not know.
std::optional<PythonLayout> python_layout(int minor, const RemoteMemory& memory,
                                          std::uintptr_t runtime, std::string* why);

}  // namespace dpdb::attach
