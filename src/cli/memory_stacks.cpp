#include "cli/memory_stacks.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "attach/remote_memory.hpp"
#include "attach/remote_stacks.hpp"
#include "common/read_file.hpp"

namespace dpdb::cli {
namespace {

// The lines of the program's source files, read as the process sees them (its root, its working
// directory for a relative name), as a traceback in the process would show them.
class SourceLines {
  public:
    explicit SourceLines(pid_t pid) : proc_("/proc/" + std::to_string(pid)) {}

    std::string line(const std::string& file, int number) {
        auto known = files_.find(file);
        if (known == files_.end()) known = files_.emplace(file, lines_of(file)).first;
        const auto& lines = known->second;
        if (number < 1 || static_cast<std::size_t>(number) > lines.size()) return "";
        const std::string& text = lines[static_cast<std::size_t>(number) - 1];
        const auto start = text.find_first_not_of(" \t");
        const auto end = text.find_last_not_of(" \t\r");
        return start == std::string::npos ? "" : text.substr(start, end - start + 1);
    }

  private:
    std::vector<std::string> lines_of(const std::string& file) const {
        if (file.empty() || file[0] == '<') return {};
        std::ifstream in(file[0] == '/' ? proc_ + "/root" + file : proc_ + "/cwd/" + file);
        std::vector<std::string> lines;
        for (std::string text; std::getline(in, text);) lines.push_back(text);
        return lines;
    }

    std::string proc_;
    std::map<std::string, std::vector<std::string>> files_;
};

std::string name_of(const attach::RemoteThread& thread) {
    return thread.name.empty() ? "?" : thread.name;
}

// A thread's heading, as the agent writes it (python/dpdb/_control.py).
std::string heading(const attach::RemoteThread& thread) {
    std::string text = "  Thread " + name_of(thread) + " (" + std::to_string(thread.ident);
    if (thread.native_id != 0) text += ", native " + std::to_string(thread.native_id);
    text += ")";
    if (thread.holds_gil) text += " [holds the GIL]";
    return text + ", most recent call last:";
}

// A frame as a traceback shows it: its place, then its source line if there is one.
std::string frame_text(const attach::RemoteFrame& frame, const std::string& code) {
    std::string text = "    File \"" + frame.file + "\", line " + std::to_string(frame.line) +
                       ", in " + frame.function;
    return code.empty() ? text : text + "\n      " + code;
}

}  // namespace

bool stacks_from_agent() {
    const char* asked = std::getenv("DPDB_STACKS");
    const std::string strategy = asked == nullptr || *asked == '\0' ? "agent" : asked;
    if (strategy != "agent" && strategy != "memory") {
        throw std::runtime_error("DPDB_STACKS=" + strategy +
                                 " is not a way to read stacks: agent "
                                 "or memory");
    }
    return strategy == "agent";
}

wire::Json memory_stacks(pid_t pid) {
    wire::Json entry = {{"pid", pid}};
    attach::RemoteStacks stacks;
    try {
        stacks = attach::read_remote_stacks(pid);
    } catch (const attach::RemoteReadError& e) {
        entry["error"] = e.what();
        return entry;
    }
    entry["argv"] = command_line_of(pid);
    entry["read_from_memory"] = stacks.version;  // the CPython whose layout was read
    SourceLines source(pid);
    wire::Json threads = wire::Json::array();
    std::string text;
    for (const auto& thread : stacks.threads) {
        text += (text.empty() ? "" : "\n") + heading(thread);
        wire::Json frames = wire::Json::array();
        for (const auto& frame : thread.frames) {
            const std::string code = source.line(frame.file, frame.line);
            text += "\n" + frame_text(frame, code);
            frames.push_back({{"file", frame.file},
                              {"line", frame.line},
                              {"function", frame.function},
                              {"code", code}});
        }
        if (!thread.complete) {
            text += "\n    (the stack changed while it was read: the thread runs; ask again)";
        }
        threads.push_back(
            {{"ident", thread.ident},
             {"native_id", thread.native_id == 0 ? wire::Json() : wire::Json(thread.native_id)},
             {"name", name_of(thread)},
             {"gil", thread.holds_gil ? wire::Json("holds the GIL") : wire::Json()},
             {"complete", thread.complete},
             {"frames", std::move(frames)}});
    }
    entry["stacks"] = {{"threads", std::move(threads)}, {"text", text}};
    return entry;
}

std::string main_thread_stack(pid_t pid, std::size_t innermost) {
    attach::RemoteStacks stacks;
    try {
        stacks = attach::read_remote_stacks(pid);
    } catch (const attach::RemoteReadError&) {
        return "";
    }
    for (const auto& thread : stacks.threads) {
        if (!thread.main || !thread.complete || thread.frames.empty()) continue;
        SourceLines source(pid);
        const std::size_t shown = std::min(innermost, thread.frames.size());
        std::string text;
        if (shown < thread.frames.size()) {
            text += "    ... " + std::to_string(thread.frames.size() - shown) +
                    " frames above (dpdb stacks -p " + std::to_string(pid) + " shows them)\n";
        }
        for (std::size_t i = thread.frames.size() - shown; i < thread.frames.size(); ++i) {
            const auto& frame = thread.frames[i];
            text += frame_text(frame, source.line(frame.file, frame.line)) + "\n";
        }
        return text;
    }
    return "";
}

}  // namespace dpdb::cli
