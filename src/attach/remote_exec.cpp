#include "attach/remote_exec.hpp"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "attach/tracee.hpp"

extern char** environ;

namespace dpdb::attach {
namespace {

// sys.remote_exec returns once the script's path is written into the target; it waits for
// nothing the target does, so a few seconds is ample.
constexpr int kHelperSeconds = 10;

constexpr const char* kHelperCode =
    "import sys\n"
    "try:\n"
    "    sys.remote_exec(int(sys.argv[1]), sys.argv[2])\n"
    "except Exception as error:\n"
    "    sys.exit('%s: %s' % (type(error).__name__, error))\n";

bool at_least_3_14(const std::string& version) {
    const auto dot = version.find('.');
    if (dot == std::string::npos) return false;
    const int major = std::atoi(version.substr(0, dot).c_str());
    const int minor = std::atoi(version.substr(dot + 1).c_str());
    return major > 3 || (major == 3 && minor >= 14);
}

std::string last_line(std::string text) {
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    const auto newline = text.rfind('\n');
    return newline == std::string::npos ? text : text.substr(newline + 1);
}

// Runs the helper with its output in a pipe; returns (exit status, what it printed), or throws
// if it could not be run or did not end in time (then it is killed).
std::pair<int, std::string> run_helper(const std::vector<std::string>& argv) {
    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0) throw AttachError("cannot make a pipe for sys.remote_exec");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDERR_FILENO);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    std::vector<char*> args;
    for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    pid_t helper = 0;
    const int failed = ::posix_spawn(&helper, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(out[1]);
    if (failed != 0) {
        ::close(out[0]);
        throw AttachError("cannot run " + argv[0] +
                          " for sys.remote_exec: " + std::strerror(failed));
    }
    std::string printed;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kHelperSeconds);
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        pollfd readable{out[0], POLLIN, 0};
        if (left.count() <= 0 || ::poll(&readable, 1, static_cast<int>(left.count())) == 0) {
            ::kill(helper, SIGKILL);
            ::waitpid(helper, nullptr, 0);
            ::close(out[0]);
            throw AttachError("sys.remote_exec did not return within " +
                              std::to_string(kHelperSeconds) + "s");
        }
        char buffer[4096];
        const ssize_t got = ::read(out[0], buffer, sizeof buffer);
        if (got > 0 && printed.size() < 64 * 1024) printed.append(buffer, got);
        if (got == 0 || (got < 0 && errno != EINTR)) break;
    }
    ::close(out[0]);
    int status = 0;
    while (::waitpid(helper, &status, 0) < 0 && errno == EINTR) {
    }
    return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), printed};
}

}  // namespace

Route route_for(const PythonProcess& target) {
    const char* asked = std::getenv("DPDB_ATTACH");
    const std::string name = asked ? asked : "";
    if (name.empty()) return at_least_3_14(target.version) ? Route::remote_exec : Route::inject;
    if (name == "inject") return Route::inject;
    if (name != "remote_exec") {
        throw AttachError("DPDB_ATTACH=" + name + " is not a route: inject or remote_exec");
    }
    if (!at_least_3_14(target.version)) {
        throw AttachError("DPDB_ATTACH=remote_exec needs CPython 3.14 or later (PEP 768); pid " +
                          std::to_string(target.pid) + " runs " + target.version +
                          ": unset DPDB_ATTACH to use dpdb's injector");
    }
    return Route::remote_exec;
}

void remote_exec(const PythonProcess& target, const std::string& script) {
    // The target's own interpreter, through /proc: the same build, whatever its path is in the
    // target's mount namespace.
    const std::string interpreter = "/proc/" + std::to_string(target.pid) + "/exe";
    const auto [status, printed] =
        run_helper({interpreter, "-I", "-c", kHelperCode, std::to_string(target.pid), script});
    if (status != 0) {
        const auto why = last_line(printed);
        throw AttachError("sys.remote_exec into pid " + std::to_string(target.pid) + " failed: " +
                          (why.empty() ? "exit status " + std::to_string(status) : why));
    }
}

}  // namespace dpdb::attach
