#include "attach/injector.hpp"

#include <dlfcn.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <optional>

#include "attach/symbols.hpp"

namespace dpdb::attach {
namespace {

// How long the thread may take to reach a safe point, and to run each call.
constexpr auto kSafePointWait = std::chrono::seconds(3);
constexpr auto kSafePointStep = std::chrono::microseconds(2000);
constexpr auto kCallLimit = std::chrono::milliseconds(5000);

struct Loader {
    const MappedFile* libc = nullptr;
    const MappedFile* dynamic_linker = nullptr;
    std::uintptr_t dlopen = 0;
    std::uintptr_t dlsym = 0;
};

Loader find_loader(pid_t pid, const std::vector<MappedFile>& files) {
    Loader loader;
    loader.libc = find_mapped(files, "libc.so");
    if (loader.libc == nullptr) loader.libc = find_mapped(files, "libc-");
    loader.dynamic_linker = find_mapped(files, "ld-linux");
    // glibc 2.34 and later have dlopen in libc; before, in libdl (if the program loaded it).
    for (const char* name : {"libc.so", "libc-", "libdl.so", "libdl-"}) {
        const MappedFile* file = find_mapped(files, name);
        if (file == nullptr) continue;
        const auto open = symbol_address(pid, *file, "dlopen");
        const auto find = symbol_address(pid, *file, "dlsym");
        if (open && find) {
            loader.dlopen = *open;
            loader.dlsym = *find;
            return loader;
        }
    }
    throw AttachError(
        "the process has no dlopen() to load the agent with (a statically linked interpreter, "
        "or a libc other than glibc's)");
}

// A thread stopped outside libc and the dynamic linker holds none of their locks (malloc's,
// the loader's), and one stopped in a system call is waiting, not in the middle of one.
bool safe_to_call(const Tracee& thread, const Loader& loader) {
    if (thread.in_system_call()) return true;
    const auto at = thread.registers().rip;
    return !(loader.libc && loader.libc->contains(at)) &&
           !(loader.dynamic_linker && loader.dynamic_linker->contains(at));
}

std::optional<std::string> read_line_of(const std::string& path) {
    std::ifstream in(path);
    std::string line;
    if (!std::getline(in, line)) return std::nullopt;
    return line;
}

}  // namespace

std::string why_not_traceable(pid_t pid) {
    struct stat owner {};
    if (::stat(("/proc/" + std::to_string(pid)).c_str(), &owner) != 0) return "the process exited";
    if (::geteuid() != 0 && owner.st_uid != ::geteuid()) {
        const passwd* user = ::getpwuid(owner.st_uid);
        return "pid " + std::to_string(pid) + " belongs to " +
               (user ? std::string(user->pw_name) : "uid " + std::to_string(owner.st_uid)) +
               ": only that user or root may debug it";
    }
    const auto scope = read_line_of("/proc/sys/kernel/yama/ptrace_scope");
    if (scope == "1") {
        return "kernel.yama.ptrace_scope is 1: a process may only be traced by its parent; as "
               "root: `sysctl kernel.yama.ptrace_scope=0`, or run dpdb attach as root";
    }
    if (scope == "2") {
        return "kernel.yama.ptrace_scope is 2: only a process with CAP_SYS_PTRACE may trace "
               "(run dpdb attach as root)";
    }
    if (scope == "3") return "kernel.yama.ptrace_scope is 3: no process may be traced until reboot";
    return "the OS refused ptrace (in a container, it needs CAP_SYS_PTRACE: docker run "
           "--cap-add=SYS_PTRACE, or securityContext.capabilities.add: [SYS_PTRACE])";
}

void inject_library(pid_t pid, const std::string& library, const std::string& start,
                    const std::string& argument) {
    const auto files = mapped_files(pid);
    if (files.empty())
        throw AttachError("cannot read the memory map of pid " + std::to_string(pid));
    const Loader loader = find_loader(pid, files);

    std::optional<Tracee> holder;
    try {
        holder.emplace(pid, pid);  // the main thread
    } catch (const AttachError& error) {
        if (std::string(error.what()).find("Operation not permitted") != std::string::npos) {
            throw AttachError(why_not_traceable(pid));
        }
        throw;
    }
    Tracee& thread = *holder;
    thread.stop();
    const auto deadline = std::chrono::steady_clock::now() + kSafePointWait;
    while (!safe_to_call(thread, loader)) {
        if (std::chrono::steady_clock::now() >= deadline) {
            throw AttachError(
                "the process did not reach a point where loading the agent is "
                "safe within 3 s (it stays inside libc); nothing was changed");
        }
        thread.run_for(kSafePointStep);
    }
    const auto path = thread.push_bytes(library + '\0');
    const auto handle = thread.call(loader.dlopen, path, RTLD_NOW, kCallLimit);
    if (handle == 0) {
        throw AttachError("the process could not load " + library +
                          " (in a container, it must see that path as well)");
    }
    const auto name = thread.push_bytes(start + '\0');
    const auto function = thread.call(loader.dlsym, handle, name, kCallLimit);
    if (function == 0) throw AttachError(library + " has no " + start);
    const auto text = thread.push_bytes(argument + '\0');
    if (static_cast<int>(thread.call(function, text, 0, kCallLimit)) != 0) {
        throw AttachError("the agent's loader refused to start in the process");
    }
}

}  // namespace dpdb::attach
