#include "cli/program_command.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <fstream>

#include "cli/installation.hpp"

namespace dpdb::cli {
namespace {

bool is_native_executable(const std::string& path) {
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) return false;
    std::ifstream file(path, std::ios::binary);
    static constexpr char kElfMagic[] = {0x7f, 'E', 'L', 'F'};
    char magic[sizeof kElfMagic] = {};
    return file.read(magic, sizeof magic) && std::memcmp(magic, kElfMagic, sizeof magic) == 0;
}

// The file args[0] names, as python (a script path) or a shell (a command on PATH) finds it.
std::string file_named(const std::string& name) {
    if (name.find('/') != std::string::npos || ::access(name.c_str(), F_OK) == 0) return name;
    const std::string found = on_path(name);
    return found.empty() ? name : found;
}

}  // namespace

std::vector<std::string> program_command(const std::string& python, const std::string& module,
                                         const std::vector<std::string>& args) {
    if (module.empty() && !args.empty()) {
        const std::string executable = file_named(args.front());
        if (is_native_executable(executable)) {
            std::vector<std::string> argv = args;
            argv.front() = executable;
            return argv;
        }
    }
    std::vector<std::string> argv = {python};
    if (!module.empty()) argv.insert(argv.end(), {"-m", module});
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
}

void set_environment_for_embedders() {
    // uWSGI reads any option from UWSGI_<OPTION>. Threads: older releases run none unless
    // enabled, and the agent's control thread must run (2.0.22+ enable them always).
    ::setenv("UWSGI_PY_CALL_UWSGI_FORK_HOOKS", "1", 0);
    ::setenv("UWSGI_ENABLE_THREADS", "1", 0);
}

}  // namespace dpdb::cli
