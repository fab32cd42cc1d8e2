#include "attach/python_process.hpp"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>

#include "attach/injector.hpp"
#include "attach/symbols.hpp"
#include "common/read_file.hpp"

namespace dpdb::attach {
namespace {

// "3.12" from a name such as libpython3.12.so.1.0, python3.12 or python3.12d.
std::string version_in(const std::string& name) {
    static const std::regex pattern(R"((?:libpython|python)(3\.\d+))");
    std::smatch match;
    return std::regex_search(name, match, pattern) ? match[1].str() : "";
}

// State and parent from /proc/PID/stat: {0, 0} if it cannot be read.
std::pair<char, pid_t> state_of(pid_t pid) {
    const std::string text = read_whole_file("/proc/" + std::to_string(pid) + "/stat");
    // pid (comm) state ppid ...: comm may hold spaces and parentheses; the last ')' ends it.
    const auto end = text.rfind(')');
    if (end == std::string::npos) return {0, 0};
    char state = 0;
    int parent = 0;
    if (std::sscanf(text.c_str() + end + 1, " %c %d", &state, &parent) != 2) return {0, 0};
    return {state, parent};
}

// The value of a field ("State:", "TracerPid:") of /proc/PID/status, or "".
std::string status_field(const std::string& status, const std::string& name) {
    const auto at = status.find("\n" + name);
    if (at == std::string::npos) return "";
    const auto start = status.find_first_not_of(" \t", at + 1 + name.size());
    const auto end = status.find('\n', start);
    return start == std::string::npos ? "" : status.substr(start, end - start);
}

std::string command_name(pid_t pid) {
    std::string name = read_whole_file("/proc/" + std::to_string(pid) + "/comm");
    while (!name.empty() && name.back() == '\n') name.pop_back();
    return name.empty() ? "pid " + std::to_string(pid) : name;
}

// Why no debugger can work in the process as it is now, from what /proc says of it (the OS
// itself only says EPERM, or nothing); "" if nothing stands in the way.
std::string why_not_now(pid_t pid) {
    // "\nState:" and "\nTracerPid:": the status starts with Name, never with these.
    const std::string status = "\n" + read_whole_file("/proc/" + std::to_string(pid) + "/status");
    const std::string state = status_field(status, "State:");
    const std::string who = "pid " + std::to_string(pid);
    if (!state.empty() && (state[0] == 'Z' || state[0] == 'X')) {
        return who +
               " has exited: a zombie whose parent has not reaped it yet, with nothing left "
               "to debug";
    }
    const pid_t tracer = std::atoi(status_field(status, "TracerPid:").c_str());
    if (tracer != 0) {
        return who + " is traced already, by pid " + std::to_string(tracer) + " (" +
               command_name(tracer) +
               "), and a process has one tracer at a time: detach that one first";
    }
    if (!state.empty() && state[0] == 'T') {
        return who +
               " is stopped (SIGSTOP, or Ctrl-Z in its shell): let it go on first (kill "
               "-CONT " +
               std::to_string(pid) + ")";
    }
    return "";
}

}  // namespace

std::optional<PythonProcess> inspect_python(pid_t pid, std::string* why) {
    const std::string proc = "/proc/" + std::to_string(pid);
    struct stat owner {};
    if (::stat(proc.c_str(), &owner) != 0) {
        *why = "no process " + std::to_string(pid);
        return std::nullopt;
    }
    *why = why_not_now(pid);
    if (!why->empty()) return std::nullopt;
    PythonProcess python;
    python.pid = pid;
    python.uid = owner.st_uid;
    python.gid = owner.st_gid;
    char exe[4096];
    const ssize_t n = ::readlink((proc + "/exe").c_str(), exe, sizeof(exe) - 1);
    if (n > 0) python.executable.assign(exe, static_cast<std::size_t>(n));
    const auto files = mapped_files(pid);
    if (files.empty()) {
        // Unreadable: another user's process (or it exited): say which, as the OS would not.
        *why = why_not_traceable(pid);
        return std::nullopt;
    }
    const MappedFile* interpreter = interpreter_image(files, python.executable);
    if (interpreter == nullptr || !symbol_address(pid, *interpreter, "Py_IsInitialized")) {
        *why =
            "pid " + std::to_string(pid) + " (" + python.executable + ") is not a CPython process";
        return std::nullopt;
    }
    python.version = version_in(interpreter->path.substr(interpreter->path.rfind('/') + 1));
    if (python.version.empty()) python.version = version_in(python.executable);
    if (python.version.empty()) {
        *why = "cannot tell which Python version pid " + std::to_string(pid) + " runs";
        return std::nullopt;
    }
    python.has_agent = find_mapped(files, "_agent.cpython-") != nullptr;
    return python;
}

const MappedFile* interpreter_image(const std::vector<MappedFile>& files,
                                    const std::string& executable) {
    if (const MappedFile* library = find_mapped(files, "libpython3")) return library;
    for (const auto& file : files) {
        if (file.path == executable) return &file;
    }
    return nullptr;
}

bool running(pid_t pid) {
    const char state = state_of(pid).first;
    return state != 0 && state != 'Z' && state != 'X';
}

std::vector<pid_t> descendants(pid_t pid) {
    std::multimap<pid_t, pid_t> children;
    if (DIR* dir = ::opendir("/proc")) {
        while (const dirent* entry = ::readdir(dir)) {
            const pid_t child = std::atoi(entry->d_name);
            if (child > 0) children.emplace(state_of(child).second, child);
        }
        ::closedir(dir);
    }
    std::vector<pid_t> below;
    std::vector<pid_t> next = {pid};
    while (!next.empty()) {
        const pid_t parent = next.front();
        next.erase(next.begin());
        const auto [first, last] = children.equal_range(parent);
        for (auto it = first; it != last; ++it) {
            below.push_back(it->second);
            next.push_back(it->second);
        }
    }
    return below;
}

}  // namespace dpdb::attach
