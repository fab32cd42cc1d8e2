// The hub under test, as its own process (`dpdb hub`), that ends whatever happens to the
// benchmark: at the end of the scope (a measure that throws included), at SIGINT, SIGTERM or
// SIGHUP (a thread waits for them), and, should the benchmark itself be killed, through
// PR_SET_PDEATHSIG. Its log goes to a file, shown when the benchmark fails.
#pragma once

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace hub_scale {

// Ctrl-C and friends are taken by a thread (sigwait), never by a handler: the thread may then
// stop the hub and remove its directory, which a handler may not do.
inline sigset_t stop_signals() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    return set;
}

// Runs argv with stdout captured and stderr to `errors`; the child gets the signals the
// benchmark blocks. Returns the exit status (or 128 + signal) and fills `out`.
inline int run_captured(const std::vector<std::string>& argv, std::string& out,
                        const std::string& errors = "/dev/null") {
    int pipe_fds[2];
    if (::pipe(pipe_fds) != 0) throw std::runtime_error("pipe failed");
    const pid_t child = ::fork();
    if (child == 0) {
        const sigset_t set = stop_signals();
        ::sigprocmask(SIG_UNBLOCK, &set, nullptr);
        ::dup2(pipe_fds[1], STDOUT_FILENO);
        if (std::FILE* err = std::fopen(errors.c_str(), "a")) ::dup2(::fileno(err), STDERR_FILENO);
        ::close(pipe_fds[0]);
        ::close(pipe_fds[1]);
        std::vector<char*> args;
        for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        ::execv(args[0], args.data());
        ::_exit(127);
    }
    ::close(pipe_fds[1]);
    out.clear();
    char buffer[65536];
    for (;;) {
        const ssize_t n = ::read(pipe_fds[0], buffer, sizeof(buffer));
        if (n > 0) {
            out.append(buffer, static_cast<std::size_t>(n));
        } else if (n == 0 || errno != EINTR) {
            break;
        }
    }
    ::close(pipe_fds[0]);
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

class HubProcess {
  public:
    HubProcess(const std::string& dpdb, const std::string& dir) : dir_(dir) {
        const std::string socket = dir + "/hub.sock";
        const std::string log = dir + "/hub.log";
        const std::string state = dir + "/state";
        pid_ = ::fork();
        if (pid_ < 0) throw std::runtime_error("fork failed");
        if (pid_ == 0) {
            // Should the benchmark die without a word (SIGKILL), the kernel stops the hub.
            ::prctl(PR_SET_PDEATHSIG, SIGTERM);
            if (::getppid() == 1) ::_exit(0);  // the benchmark is already gone
            const sigset_t set = stop_signals();
            ::sigprocmask(SIG_UNBLOCK, &set, nullptr);
            if (std::FILE* err = std::fopen(log.c_str(), "w")) {
                ::dup2(::fileno(err), STDERR_FILENO);
                ::dup2(::fileno(err), STDOUT_FILENO);
            }
            ::execl(dpdb.c_str(), dpdb.c_str(), "hub", "--quiet", "--socket", socket.c_str(),
                    "--state-dir", state.c_str(), static_cast<char*>(nullptr));
            ::_exit(127);
        }
    }

    ~HubProcess() { stop(); }
    HubProcess(const HubProcess&) = delete;
    HubProcess& operator=(const HubProcess&) = delete;

    pid_t pid() const { return pid_; }

    // Whether the hub ended by itself (it could not start); it is then reaped.
    bool ended() {
        std::lock_guard<std::mutex> lock(mutex_);
        if (pid_ > 0 && ::waitpid(pid_, nullptr, WNOHANG) == pid_) pid_ = -1;
        return pid_ <= 0;
    }

    // SIGTERM, then SIGKILL after 5 s; removes the directory. Idempotent.
    void stop() {
        // The signal thread and the end of the scope may both get here.
        std::lock_guard<std::mutex> lock(mutex_);
        if (pid_ > 0) {
            ::kill(pid_, SIGTERM);
            const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
            while (::waitpid(pid_, nullptr, WNOHANG) == 0) {
                if (std::chrono::steady_clock::now() > deadline) {
                    ::kill(pid_, SIGKILL);
                    ::waitpid(pid_, nullptr, 0);
                    break;
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(10));
            }
            pid_ = -1;
        }
        if (!dir_.empty()) {
            std::error_code ignored;
            std::filesystem::remove_all(dir_, ignored);
            dir_.clear();
        }
    }

    // The end of the hub's log, for a failure report.
    std::string log_tail(std::size_t lines = 20) const {
        std::ifstream in(dir_ + "/hub.log");
        std::vector<std::string> all;
        for (std::string line; std::getline(in, line);) all.push_back(line);
        std::ostringstream out;
        for (std::size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i) {
            out << "  " << all[i] << "\n";
        }
        return out.str();
    }

  private:
    std::mutex mutex_;
    pid_t pid_ = -1;
    std::string dir_;
};

// Stops `hub` and ends the benchmark at SIGINT, SIGTERM or SIGHUP, which the calling thread (and
// every thread it starts afterwards) must have blocked.
inline void stop_on_signal(HubProcess& hub) {
    std::thread([&hub] {
        const sigset_t set = stop_signals();
        int sig = 0;
        sigwait(&set, &sig);
        std::fprintf(stderr, "hub_scale: signal %d: stopping the hub\n", sig);
        hub.stop();
        ::_exit(128 + sig);
    }).detach();
}

}  // namespace hub_scale
