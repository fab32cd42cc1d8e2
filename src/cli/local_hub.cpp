#include "cli/local_hub.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <thread>

#include "cli/hub_lock.hpp"
#include "cli/installation.hpp"
#include "common/address.hpp"
#include "common/runtime_dir.hpp"

namespace dpdb::cli {
namespace {

constexpr auto kStartWait = std::chrono::seconds(5);
constexpr long kIdleSeconds = 600;

// DPDB_LOCAL_HUB_IDLE: seconds the on-demand hub waits with no process before it exits.
long local_hub_idle_seconds() {
    const char* env = std::getenv("DPDB_LOCAL_HUB_IDLE");
    if (env == nullptr || *env == '\0') return kIdleSeconds;
    char* end = nullptr;
    const long seconds = std::strtol(env, &end, 10);
    if (*end != '\0' || seconds <= 0) {
        throw std::runtime_error("DPDB_LOCAL_HUB_IDLE wants a number of seconds, not \"" +
                                 std::string(env) + "\"");
    }
    return seconds;
}

// `dpdb hub --quiet` in a session of its own, outliving this command; its output goes to a log.
void start_local_hub(const std::string& log_path) {
    local_hub_idle_seconds();  // a bad value said here, not in the hub's log
    const pid_t child = ::fork();
    if (child < 0) throw std::runtime_error("cannot start a hub: fork failed");
    if (child > 0) {
        int status = 0;
        ::waitpid(child, &status, 0);  // the intermediate process ends at once
        return;
    }
    ::setsid();
    if (::fork() != 0) ::_exit(0);  // the hub is nobody's child: no terminal, no zombie
    const int null = ::open("/dev/null", O_RDONLY);
    const int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    ::dup2(null, STDIN_FILENO);
    if (log >= 0) {
        ::dup2(log, STDOUT_FILENO);
        ::dup2(log, STDERR_FILENO);
    }
    const std::string self = this_executable();
    const std::string idle = std::to_string(local_hub_idle_seconds());
    ::execl(self.c_str(), "dpdb", "hub", "--quiet", "--idle-exit", idle.c_str(),
            static_cast<char*>(nullptr));
    ::_exit(127);
}

}  // namespace

HubTarget hub_for_attach(const std::string& explicit_address) {
    std::string chosen = explicit_address;
    if (chosen.empty()) {
        if (const char* env = std::getenv("DPDB_HUB"); env != nullptr) chosen = env;
    }
    if (!chosen.empty()) return locate_hubs(chosen).front();
    HubAddress local;
    local.path = runtime_dir() + "/hub.sock";
    if (!hub_answers(local)) {
        const std::string log = runtime_dir() + "/hub.log";
        start_local_hub(log);
        const auto deadline = std::chrono::steady_clock::now() + kStartWait;
        while (!hub_answers(local) ||
               ::access(token_path_for_socket(local.path).c_str(), R_OK) != 0) {
            if (std::chrono::steady_clock::now() >= deadline) {
                throw std::runtime_error("the local hub did not start within 5 s; see " + log);
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        const pid_t pid = hub_holding(local.path).value_or(0);
        // News, not an error: on stdout, before what the command itself reports.
        std::printf(
            "dpdb: started your local hub on unix:%s (pid %d, log %s); it serves every "
            "`dpdb attach -p` of yours until `dpdb hub --stop`, or until it has had no "
            "process for %ld s\n",
            local.path.c_str(), static_cast<int>(pid), log.c_str(), local_hub_idle_seconds());
        std::fflush(stdout);
    }
    return HubTarget{local, secret_for(local)};
}

}  // namespace dpdb::cli
