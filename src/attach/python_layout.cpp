#include "attach/python_layout.hpp"

#include <cstring>

#include "attach/remote_memory.hpp"

namespace dpdb::attach {
namespace {

PythonLayout common_before_313(int minor) {
    PythonLayout l;
    l.minor = minor;
    l.interp_next = 0;
    l.thread_next = 8;
    l.code_filename = 104;
    l.code_name = 112;
    l.code_firstlineno = 40;
    l.code_linetable = 120;
    l.runtime_interpreters_head = 32;
    l.interp_threads_head = 8;
    l.thread_id = 176;
    l.thread_frame = 24;
    l.frame_previous = 24;
    l.frame_code = 32;
    l.runtime_gil = 352;  // ceval.gil
    l.gil_holder = 8;
    l.gil_locked = 16;
    l.unicode_state = 32;
    l.unicode_ascii_size = 48;
    l.unicode_compact_size = 72;
    l.bytes_size = 16;
    l.bytes_data = 32;
    l.keys_size = 8;
    l.keys_nentries = 32;
    l.keys_indices = 40;
    return l;
}

// From 3.11 on, the same PyDictKeysObject head.
void dict_keys_from_311(PythonLayout* l) {
    l->keys_size.reset();
    l->keys_log2_index_bytes = 9;
    l->keys_kind = 10;
    l->keys_nentries = 24;
    l->keys_indices = 32;
}

PythonLayout layout_39() {
    PythonLayout l = common_before_313(9);
    l.frame_instruction = 104;
    l.frame_localsplus = 360;
    return l;
}

PythonLayout layout_310() {
    PythonLayout l = common_before_313(10);
    l.frame_instruction = 96;
    l.frame_localsplus = 352;
    return l;
}

PythonLayout layout_311() {
    PythonLayout l = common_before_313(11);
    l.runtime_interpreters_head = 40;
    l.interp_threads_head = 16;
    l.thread_id = 152;
    l.thread_native_id = 160;
    l.thread_frame = 56;
    l.cframe_current_frame = 8;
    l.frame_previous = 48;
    l.frame_code = 32;
    l.frame_instruction = 56;
    l.frame_owner = 69;
    l.code_filename = 112;
    l.code_name = 120;
    l.code_firstlineno = 72;
    l.code_linetable = 136;
    l.code_instructions = 184;
    l.runtime_gil = 360;
    l.frame_localsplus = 72;
    l.heaptype_cached_keys = 872;
    l.instance_dict = PythonLayout::InstanceDict::dict_or_values_311;
    dict_keys_from_311(&l);
    return l;
}

PythonLayout layout_312() {
    PythonLayout l = common_before_313(12);
    l.runtime_interpreters_head = 40;
    l.interp_threads_head = 72;
    l.thread_id = 136;
    l.thread_native_id = 144;
    l.thread_frame = 56;
    l.cframe_current_frame = 0;
    l.frame_previous = 8;
    l.frame_code = 0;
    l.frame_instruction = 56;
    l.frame_owner = 70;
    l.code_filename = 112;
    l.code_name = 120;
    l.code_firstlineno = 68;
    l.code_linetable = 136;
    l.code_instructions = 192;
    l.runtime_gil.reset();
    l.interp_gil_pointer = 384;
    l.unicode_ascii_size = 40;
    l.unicode_compact_size = 56;
    l.frame_localsplus = 72;
    l.heaptype_cached_keys = 880;
    l.instance_dict = PythonLayout::InstanceDict::tagged_312;
    dict_keys_from_311(&l);
    return l;
}

// The head of 3.13's _Py_DebugOffsets (Include/internal/pycore_runtime.h), as far as dpdb reads
// it: every field a uint64_t, in this order for every 3.13 release.
struct DebugOffsets {
    char cookie[8];
    std::uint64_t version;
    std::uint64_t free_threaded;
    struct {
        std::uint64_t size, finalizing, interpreters_head;
    } runtime_state;
    struct {
        std::uint64_t size, id, next, threads_head, gc, imports_modules, sysdict, builtins,
            ceval_gil, gil_runtime_state, gil_runtime_state_enabled, gil_runtime_state_locked,
            gil_runtime_state_holder;
    } interpreter_state;
    struct {
        std::uint64_t size, prev, next, interp, current_frame, thread_id, native_thread_id,
            datastack_chunk, status;
    } thread_state;
    struct {
        std::uint64_t size, previous, executable, instr_ptr, localsplus, owner;
    } interpreter_frame;
    struct {
        std::uint64_t size, filename, name, qualname, linetable, firstlineno, argcount,
            localsplusnames, localspluskinds, co_code_adaptive;
    } code_object;
    struct {
        std::uint64_t size, ob_type;
    } pyobject;
    struct {
        std::uint64_t size, tp_name, tp_repr, tp_flags;
    } type_object;
    struct {
        std::uint64_t size, ob_item, ob_size;
    } tuple_object, list_object;
    struct {
        std::uint64_t size, ma_keys, ma_values;
    } dict_object;
    struct {
        std::uint64_t size, ob_fval;
    } float_object;
    struct {
        std::uint64_t size, lv_tag, ob_digit;
    } long_object;
    struct {
        std::uint64_t size, ob_size, ob_sval;
    } bytes_object;
    struct {
        std::uint64_t size, state, length, asciiobject_size;
    } unicode_object;
};

constexpr char kDebugCookie[] = "xdebugpy";
// PyCompactUnicodeObject adds utf8_length and utf8 to PyASCIIObject.
constexpr std::uint64_t kCompactExtra = 16;

std::optional<PythonLayout> layout_313(const RemoteMemory& memory, std::uintptr_t runtime,
                                       std::string* why) {
    const auto d = memory.read<DebugOffsets>(runtime);
    if (std::memcmp(d.cookie, kDebugCookie, sizeof d.cookie) != 0 ||
        ((d.version >> 16) & 0xffff) != 0x030d) {
        *why = "its _PyRuntime does not start with 3.13's debug offsets";
        return std::nullopt;
    }
    if (d.free_threaded != 0) {
        *why = "a free-threaded (no GIL) CPython, whose stacks dpdb cannot read yet";
        return std::nullopt;
    }
    PythonLayout l;
    l.minor = 13;
    l.runtime_interpreters_head = d.runtime_state.interpreters_head;
    l.interp_next = d.interpreter_state.next;
    l.interp_threads_head = d.interpreter_state.threads_head;
    l.thread_next = d.thread_state.next;
    l.thread_id = d.thread_state.thread_id;
    l.thread_native_id = d.thread_state.native_thread_id;
    l.thread_frame = d.thread_state.current_frame;
    l.frame_previous = d.interpreter_frame.previous;
    l.frame_code = d.interpreter_frame.executable;
    l.frame_instruction = d.interpreter_frame.instr_ptr;
    l.frame_owner = d.interpreter_frame.owner;
    l.code_filename = d.code_object.filename;
    l.code_name = d.code_object.name;
    l.code_firstlineno = d.code_object.firstlineno;
    l.code_linetable = d.code_object.linetable;
    l.code_instructions = d.code_object.co_code_adaptive;
    // The holder and lock fields are offsets in the interpreter state (its own _gil).
    l.interp_gil = 0;
    l.gil_holder = d.interpreter_state.gil_runtime_state_holder;
    l.gil_locked = d.interpreter_state.gil_runtime_state_locked;
    l.unicode_state = d.unicode_object.state;
    l.unicode_ascii_size = d.unicode_object.asciiobject_size;
    l.unicode_compact_size = d.unicode_object.asciiobject_size + kCompactExtra;
    l.bytes_size = d.bytes_object.ob_size;
    l.bytes_data = d.bytes_object.ob_sval;
    l.frame_localsplus = d.interpreter_frame.localsplus;
    l.object_type = d.pyobject.ob_type;
    l.type_flags = d.type_object.tp_flags;
    // Not in the debug offsets: PyHeapTypeObject's, and PyDictValues' header (4 bytes, aligned).
    l.heaptype_cached_keys = 880;
    l.instance_dict = PythonLayout::InstanceDict::inline_313;
    l.dict_keys = d.dict_object.ma_keys;
    l.dict_values = d.dict_object.ma_values;
    l.values_start = 8;
    dict_keys_from_311(&l);
    return l;
}

}  // namespace

std::optional<PythonLayout> python_layout(int minor, const RemoteMemory& memory,
                                          std::uintptr_t runtime, std::string* why) {
    switch (minor) {
        case 9:
            return layout_39();
        case 10:
            return layout_310();
        case 11:
            return layout_311();
        case 12:
            return layout_312();
        case 13:
            return layout_313(memory, runtime, why);
        default:
            *why = "dpdb reads the stacks of CPython 3.9 to 3.13 only";
            return std::nullopt;
    }
}

}  // namespace dpdb::attach
