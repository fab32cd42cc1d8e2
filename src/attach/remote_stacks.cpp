#include "attach/remote_stacks.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <string_view>

#include "attach/line_table.hpp"
#include "attach/python_layout.hpp"
#include "attach/python_process.hpp"
#include "attach/remote_memory.hpp"
#include "attach/remote_objects.hpp"
#include "attach/symbols.hpp"

namespace dpdb::attach {
namespace {

// Bounds on what a process that changes under the reader can make it walk.
constexpr int kMaxInterpreters = 256;
constexpr int kMaxThreads = 65536;
constexpr int kMaxFrames = 65536;
constexpr std::int64_t kMaxLineTable = 16 << 20;
// _PyInterpreterFrame.owner of a frame the C stack owns (3.12 on): an entry shim, not code.
constexpr char kOwnedByCStack = 3;

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

    // The thread's frames, innermost first (the order of the chain); the outermost's address.
    std::uintptr_t read_frames(std::uintptr_t thread, RemoteThread* out) {
        std::uintptr_t frame = memory_.read_pointer(thread + layout_.thread_frame);
        if (frame != 0 && layout_.cframe_current_frame) {
            frame = memory_.read_pointer(frame + *layout_.cframe_current_frame);
        }
        std::set<std::uintptr_t> seen;
        std::uintptr_t outermost = 0;
        for (int n = 0; frame != 0 && n < kMaxFrames; ++n) {
            if (!seen.insert(frame).second) {
                out->complete = false;
                break;
            }
            if (!layout_.frame_owner ||
                memory_.read<char>(frame + *layout_.frame_owner) != kOwnedByCStack) {
                out->frames.push_back(frame_at(frame));
                outermost = frame;
            }
            frame = memory_.read_pointer(frame + layout_.frame_previous);
        }
        return outermost;
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

    std::string text_at(std::uintptr_t pointer) {
        return remote_text(memory_, layout_, memory_.read_pointer(pointer)).value_or("?");
    }

    const Code& code_at(std::uintptr_t address) {
        const auto known = codes_.find(address);
        if (known != codes_.end()) return known->second;
        Code code;
        code.file = text_at(address + layout_.code_filename);
        code.function = text_at(address + layout_.code_name);
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

// The name of a thread that threading started: the `_name` of the Thread that its outermost frame,
// Thread._bootstrap, has as `self`; empty where that is not what the thread shows.
std::string thread_name(const RemoteMemory& memory, const PythonLayout& layout,
                        const RemoteThread& thread, std::uintptr_t outermost) {
    if (outermost == 0 || thread.frames.empty()) return "";
    const RemoteFrame& first = thread.frames.back();  // still innermost first
    const std::string_view module = "threading.py";
    if (first.function != "_bootstrap" || first.file.size() < module.size() ||
        first.file.compare(first.file.size() - module.size(), module.size(), module) != 0) {
        return "";
    }
    try {
        const auto self = memory.read_pointer(outermost + layout.frame_localsplus);
        const auto name = remote_attribute(memory, layout, self, "_name");
        return name == 0 ? "" : remote_text(memory, layout, name).value_or("");
    } catch (const RemoteReadError&) {
        return "";  // the thread ended, or `self` was not a Thread after all
    }
}

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
            std::uintptr_t outermost = 0;
            try {
                outermost = reader.read_frames(thread, &t);
            } catch (const RemoteReadError&) {
                t.complete = false;  // a frame ended (it runs) while it was read
            }
            if (t.complete) t.name = thread_name(memory, *layout, t, outermost);
            std::reverse(t.frames.begin(), t.frames.end());
            thread = memory.read_pointer(thread + layout->thread_next);
            stacks.threads.push_back(std::move(t));
        }
        interpreter = next_interpreter;
    }
    // Newest first in the lists, and the main interpreter last: its first thread is the last
    // read. Shown oldest first, as threads were started.
    if (!stacks.threads.empty()) {
        stacks.threads.back().main = true;
        stacks.threads.back().name = "MainThread";
    }
    std::reverse(stacks.threads.begin(), stacks.threads.end());
    return stacks;
}

}  // namespace dpdb::attach
