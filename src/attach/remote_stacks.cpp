#include "attach/remote_stacks.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "attach/line_table.hpp"
#include "attach/python_layout.hpp"
#include "attach/python_process.hpp"
#include "attach/remote_memory.hpp"
#include "attach/symbols.hpp"

namespace dpdb::attach {
namespace {

// Bounds on what a process that changes under the reader can make it walk.
constexpr int kMaxInterpreters = 256;
constexpr int kMaxThreads = 65536;
constexpr int kMaxFrames = 65536;
constexpr std::int64_t kMaxText = 65536;
constexpr std::int64_t kMaxLineTable = 16 << 20;
// _PyInterpreterFrame.owner of a frame the C stack owns (3.12 on): an entry shim, not code.
constexpr char kOwnedByCStack = 3;

// A compact str's text, as UTF-8.
std::string utf8_of(const RemoteMemory& memory, const PythonLayout& layout, std::uintptr_t text) {
    if (text == 0) return "?";
    const auto state = memory.read<std::uint32_t>(text + layout.unicode_state);
    const unsigned kind = (state >> 2) & 7;
    const bool compact = ((state >> 5) & 1) != 0;
    const bool ascii = ((state >> 6) & 1) != 0;
    const auto length = memory.read<std::int64_t>(text + 16);  // PyASCIIObject.length
    if (!compact || length < 0 || length > kMaxText || (kind != 1 && kind != 2 && kind != 4))
        return "?";
    const auto data = text + (ascii ? layout.unicode_ascii_size : layout.unicode_compact_size);
    std::string raw = memory.read_bytes(data, static_cast<std::size_t>(length) * kind);
    if (ascii) return raw;
    std::string out;
    for (std::int64_t i = 0; i < length; ++i) {
        std::uint32_t c = 0;
        for (unsigned b = 0; b < kind; ++b) {
            c |= static_cast<std::uint32_t>(static_cast<unsigned char>(raw[i * kind + b]))
                 << (8 * b);
        }
        if (c < 0x80) {
            out += static_cast<char>(c);
        } else if (c < 0x800) {
            out += static_cast<char>(0xc0 | (c >> 6));
            out += static_cast<char>(0x80 | (c & 0x3f));
        } else if (c < 0x10000) {
            out += static_cast<char>(0xe0 | (c >> 12));
            out += static_cast<char>(0x80 | ((c >> 6) & 0x3f));
            out += static_cast<char>(0x80 | (c & 0x3f));
        } else {
            out += static_cast<char>(0xf0 | (c >> 18));
            out += static_cast<char>(0x80 | ((c >> 12) & 0x3f));
            out += static_cast<char>(0x80 | ((c >> 6) & 0x3f));
            out += static_cast<char>(0x80 | (c & 0x3f));
        }
    }
    return out;
}

struct Code {
    std::string file;
    std::string function;
    int first_line = 0;
    std::string line_table;
};

class StackReader {
  public:
    StackReader(const RemoteMemory& memory, const PythonLayout& layout)
        : memory_(memory), layout_(layout) {}

    // The thread's frames, innermost first (the order of the chain).
    void read_frames(std::uintptr_t thread, RemoteThread* out) {
        std::uintptr_t frame = memory_.read_pointer(thread + layout_.thread_frame);
        if (frame != 0 && layout_.cframe_current_frame) {
            frame = memory_.read_pointer(frame + *layout_.cframe_current_frame);
        }
        std::set<std::uintptr_t> seen;
        for (int n = 0; frame != 0 && n < kMaxFrames; ++n) {
            if (!seen.insert(frame).second) {
                out->complete = false;
                break;
            }
            if (!layout_.frame_owner ||
                memory_.read<char>(frame + *layout_.frame_owner) != kOwnedByCStack) {
                out->frames.push_back(frame_at(frame));
            }
            frame = memory_.read_pointer(frame + layout_.frame_previous);
        }
    }

  private:
    RemoteFrame frame_at(std::uintptr_t frame) {
        const std::uintptr_t address = memory_.read_pointer(frame + layout_.frame_code);
        const Code& code = code_at(address);
        int line = -1;
        if (layout_.minor >= 11) {
            const auto instruction = memory_.read_pointer(frame + layout_.frame_instruction);
            const auto offset = static_cast<std::int64_t>(instruction) -
                                static_cast<std::int64_t>(address + layout_.code_instructions);
            line = location_table_line(code.line_table, code.first_line, static_cast<int>(offset));
        } else {
            const int lasti = memory_.read<int>(frame + layout_.frame_instruction);
            line = layout_.minor == 10 ? linetable_line(code.line_table, code.first_line,
                                                        lasti < 0 ? -1 : lasti * 2)
                                       : lnotab_line(code.line_table, code.first_line, lasti);
        }
        return RemoteFrame{code.file, line, code.function};
    }

    const Code& code_at(std::uintptr_t address) {
        const auto known = codes_.find(address);
        if (known != codes_.end()) return known->second;
        Code code;
        code.file =
            utf8_of(memory_, layout_, memory_.read_pointer(address + layout_.code_filename));
        code.function =
            utf8_of(memory_, layout_, memory_.read_pointer(address + layout_.code_name));
        code.first_line = memory_.read<int>(address + layout_.code_firstlineno);
        const auto table = memory_.read_pointer(address + layout_.code_linetable);
        if (table != 0) {
            const auto size = memory_.read<std::int64_t>(table + layout_.bytes_size);
            if (size > 0 && size <= kMaxLineTable) {
                code.line_table =
                    memory_.read_bytes(table + layout_.bytes_data, static_cast<std::size_t>(size));
            }
        }
        return codes_.emplace(address, std::move(code)).first->second;
    }

    const RemoteMemory& memory_;
    const PythonLayout& layout_;
    std::map<std::uintptr_t, Code> codes_;
};

// The thread state holding the GIL, or 0.
std::uintptr_t gil_holder(const RemoteMemory& memory, const PythonLayout& layout,
                          std::uintptr_t runtime, std::uintptr_t interpreter) {
    std::uintptr_t gil = 0;
    if (layout.runtime_gil) {
        gil = runtime + *layout.runtime_gil;
    } else if (layout.interp_gil_pointer) {
        gil = memory.read_pointer(interpreter + *layout.interp_gil_pointer);
    } else if (layout.interp_gil) {
        gil = interpreter + *layout.interp_gil;
    }
    if (gil == 0 || memory.read<int>(gil + layout.gil_locked) == 0) return 0;
    return memory.read_pointer(gil + layout.gil_holder);
}

}  // namespace

RemoteStacks read_remote_stacks(pid_t pid) {
    std::string why;
    const auto python = inspect_python(pid, &why);
    if (!python) throw RemoteReadError(why);
    const auto files = mapped_files(pid);
    const MappedFile* image = interpreter_image(files, python->executable);
    const auto runtime = image ? symbol_address(pid, *image, "_PyRuntime") : std::nullopt;
    if (!runtime) {
        throw RemoteReadError("pid " + std::to_string(pid) +
                              ": its interpreter exports no _PyRuntime");
    }
    const RemoteMemory memory(pid);
    const int minor = std::stoi(python->version.substr(python->version.find('.') + 1));
    const auto layout = python_layout(minor, memory, *runtime, &why);
    if (!layout) throw RemoteReadError("pid " + std::to_string(pid) + ": " + why);

    RemoteStacks stacks;
    stacks.version = python->version;
    StackReader reader(memory, *layout);
    std::uintptr_t interpreter = memory.read_pointer(*runtime + layout->runtime_interpreters_head);
    if (interpreter == 0) {
        throw RemoteReadError("pid " + std::to_string(pid) +
                              " has no Python interpreter yet (starting) or any more (exiting)");
    }
    const std::uintptr_t holder = gil_holder(memory, *layout, *runtime, interpreter);
    for (int i = 0; interpreter != 0 && i < kMaxInterpreters; ++i) {
        const auto next_interpreter = memory.read_pointer(interpreter + layout->interp_next);
        std::uintptr_t thread = memory.read_pointer(interpreter + layout->interp_threads_head);
        for (int n = 0; thread != 0 && n < kMaxThreads; ++n) {
            RemoteThread t;
            t.ident = memory.read<unsigned long>(thread + layout->thread_id);
            if (layout->thread_native_id != 0) {
                t.native_id = memory.read<long>(thread + layout->thread_native_id);
            }
            t.holds_gil = thread == holder;
            try {
                reader.read_frames(thread, &t);
            } catch (const RemoteReadError&) {
                t.complete = false;  // a frame ended (it runs) while it was read
            }
            std::reverse(t.frames.begin(), t.frames.end());
            thread = memory.read_pointer(thread + layout->thread_next);
            stacks.threads.push_back(std::move(t));
        }
        interpreter = next_interpreter;
    }
    // Newest first in the lists, and the main interpreter last: its first thread is the last
    // read. Shown oldest first, as threads were started.
    if (!stacks.threads.empty()) stacks.threads.back().main = true;
    std::reverse(stacks.threads.begin(), stacks.threads.end());
    return stacks;
}

}  // namespace dpdb::attach
