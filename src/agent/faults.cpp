#include "agent/faults.hpp"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "agent/gil_state.hpp"
#include "agent/link.hpp"
#include "agent/log_queue.hpp"
#include "agent/outbox.hpp"
#include "agent/own_threads.hpp"
#include "wire/message.hpp"

namespace dpdb::agent {
namespace {

// Markers around each dump in the pipe, so the reader knows what a dump is for.
constexpr char kBegin = '\x01';
constexpr int kFatalSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGABRT, SIGILL};
// How long a stacks request that Python has begun to answer waits for it before the native dump:
// with the 0.3 s before, still within the hub's 1 s for every process's answer.
constexpr auto kStartedAnswerWait = std::chrono::milliseconds(500);
// At a crash, what the outbox may take to hand over what the program printed last (an IDE shows
// it before the crash), ...
constexpr auto kCrashOutputWait = std::chrono::milliseconds(300);
// ... what the logpoint queue may take: a send under way, then a connection ...
constexpr auto kCrashLogSendWait = std::chrono::milliseconds(400);
constexpr auto kCrashLogConnectWait = std::chrono::milliseconds(200);
// ... and the crash report itself, to a hub that may have stopped reading: as long as an exit's
// report waits (agent/link.cpp), for the hub to read again the logs' batch under way.
constexpr auto kCrashSendWait = std::chrono::seconds(1);
// How long the crashed thread waits for the reader to do all that: the bounds above, which a hub
// that stopped reading uses up (the logpoint sender blocked mid-batch: its batch's own bound
// too), and time for a loaded machine to run the reader. Without that margin, the count of
// messages not sent could be lost with the process.
constexpr auto kCrashReportWait = kCrashOutputWait + kCrashLogSendWait + kLastLogBatchWait +
                                  kCrashLogConnectWait + kCrashSendWait +
                                  std::chrono::milliseconds(500);
// Signals whose default action ends the process without Python's exit (a Pool's terminate()
// sends SIGTERM): what the logpoint queue holds is sent first.
constexpr int kEndingSignals[] = {SIGTERM, SIGHUP};

std::atomic<int> g_pipe_read{-1};
std::atomic<int> g_pipe_write{-1};
std::atomic<int> g_dump_signal{0};
std::atomic<pid_t> g_pipe_pid{0};
std::atomic<bool> g_crash_reported{false};
std::atomic<bool> g_in_crash{false};
struct sigaction g_previous[sizeof(kFatalSignals) / sizeof(int)];
// Once per program image: a forked child inherits them, and installing them again would make
// our handler its own "previous" one.
std::atomic<bool> g_crash_handlers_installed{false};
std::atomic<bool> g_ending_handlers_installed{false};
// An ending signal came: a second one, or one whose flush cannot be handed over, ends at once.
std::atomic<bool> g_ending{false};
// How long an ending signal's flush may hold the process, set by flush_at_ending_signals.
std::atomic<std::int64_t> g_ending_wait_ms{0};
std::atomic<std::int64_t> g_ending_connect_wait_ms{0};

// Requests Python has answered, the GIL as seen when a native dump was taken, and the lock that
// keeps a dump at a time in the pipe.
std::mutex g_mutex;
std::condition_variable g_answer_came;
std::set<std::int64_t> g_started;  // Python runs: it is answering, however slowly
std::set<std::int64_t> g_answered;
std::map<std::int64_t, GilSnapshot> g_gil_at_dump;

void write_all(int fd, const char* text, std::size_t size) {
    while (size > 0) {
        const ssize_t n = ::write(fd, text, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        text += n;
        size -= static_cast<std::size_t>(n);
    }
}

void write_marker(const char* what) {
    char line[96];
    const int size = snprintf(line, sizeof(line), "%c%s\n", kBegin, what);
    write_all(g_pipe_write, line, static_cast<std::size_t>(size));
}

// faulthandler names threads "Thread 0x..." / "Current thread 0x..." by ident: say there which
// of them hold or wait for the GIL.
std::string annotate_gil(const std::string& text, const GilSnapshot& gil) {
    std::string out;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        std::string line = text.substr(start, end - start);
        const auto at = line.find("hread 0x");
        if (at != std::string::npos && line.compare(0, 1, " ") != 0) {
            std::size_t ident_end = 0;
            const unsigned long ident = std::stoul(line.substr(at + 6), &ident_end, 16);
            const std::string role = gil.role_of(ident);
            if (!role.empty()) line.insert(at + 6 + ident_end, " [" + role + "]");
        }
        out += line + "\n";
        start = end + 1;
    }
    const std::string unattributed = gil.unattributed_waiters();
    return unattributed.empty() ? out : out + unattributed + "\n";
}

std::string native_stacks_note(const GilSnapshot& gil) {
    std::string who = "a thread holds the GIL (in C code?)";
    if (gil.known && gil.holder != 0) {
        char ident[32];
        std::snprintf(ident, sizeof(ident), "0x%016lx", gil.holder);
        who = std::string("thread ") + ident + " holds the GIL";
    }
    return "no answer in Python within 0.3 s: " + who + "; stacks read without it";
}

void reset_to_default(int signal) {
    struct sigaction action {};
    action.sa_handler = SIG_DFL;
    sigemptyset(&action.sa_mask);
    ::sigaction(signal, &action, nullptr);
}

// What the process would have done without dpdb: the signal's default action, now. Sent to the
// process, so that whichever thread does not block it takes it (ours block it).
void end_by_default(int signal) {
    reset_to_default(signal);
    ::kill(::getpid(), signal);
}

// Drains the pipe; a dump is everything between a "\1KIND ARG" line and "\1END".
void read_dumps(int fd) {
    std::string buffer;
    char chunk[4096];
    for (;;) {
        const ssize_t n = ::read(fd, chunk, sizeof(chunk));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            ::close(fd);  // disable_dumps closed the other end, and left this one to us
            return;
        }
        buffer.append(chunk, static_cast<std::size_t>(n));
        for (;;) {
            const auto begin = buffer.find(kBegin);
            if (begin == std::string::npos) {
                buffer.clear();
                break;
            }
            const auto header_end = buffer.find('\n', begin);
            const auto end = buffer.find(std::string(1, kBegin) + "END\n", begin + 1);
            if (header_end == std::string::npos || end == std::string::npos) break;
            const std::string header = buffer.substr(begin + 1, header_end - begin - 1);
            const std::string text = buffer.substr(header_end + 1, end - header_end - 1);
            buffer.erase(0, end + 5);
            const auto space = header.find(' ');
            const std::string kind = header.substr(0, space);
            const std::string arg = space == std::string::npos ? "" : header.substr(space + 1);
            try {
                if (kind == "CRASH") {
                    // The program's last output and the logpoint messages queued before the
                    // crash go first, in order.
                    outbox_drain(kCrashOutputWait);
                    log_flush(kCrashLogSendWait, kCrashLogConnectWait);
                    wire::Json crash = {{"signal", arg}, {"stacks", text}};
                    // What the flush could not send is told in `dpdb logs` (hub/logs.hpp).
                    if (const auto unsent = log_unsent_at_end(); unsent > 0)
                        crash["unsent"] = unsent;
                    Link::instance().send_process(
                        "crash", crash.dump(), std::chrono::steady_clock::now() + kCrashSendWait);
                    g_crash_reported = true;
                } else if (kind == "ENDING") {
                    // As at exit (dpdb/_program_output.py, then the logpoints' flush).
                    outbox_drain(std::chrono::milliseconds(g_ending_wait_ms.load()));
                    log_flush(std::chrono::milliseconds(g_ending_wait_ms.load()),
                              std::chrono::milliseconds(g_ending_connect_wait_ms.load()));
                    end_by_default(std::stoi(arg));
                } else if (kind == "STACKS") {
                    const std::int64_t req = std::stoll(arg);
                    GilSnapshot gil;
                    {
                        std::lock_guard<std::mutex> lock(g_mutex);
                        gil = std::move(g_gil_at_dump[req]);
                        g_gil_at_dump.erase(req);
                    }
                    const wire::Json stacks = {{"text", annotate_gil(text, gil)},
                                               {"native", true},
                                               {"gil", gil.to_json()},
                                               {"note", native_stacks_note(gil)}};
                    Link::instance().send_process(
                        "stacks_reply", wire::Json{{"req", req}, {"stacks", stacks}}.dump());
                }
            } catch (const std::exception&) {
                // a dump that cannot be sent is lost; the process goes on
            }
        }
    }
}

void crash_handler(int signal, siginfo_t* info, void*) {
    const int index = [signal] {
        for (std::size_t i = 0; i < sizeof(kFatalSignals) / sizeof(int); ++i) {
            if (kFatalSignals[i] == signal) return static_cast<int>(i);
        }
        return 0;
    }();
    if (!g_in_crash.exchange(true) && g_dump_signal != 0 && g_pipe_pid == ::getpid()) {
        char header[64];
        snprintf(header, sizeof(header), "CRASH SIG%s", sigabbrev_np(signal));
        write_marker(header);
        ::raise(g_dump_signal);  // faulthandler writes every thread's stack into the pipe
        write_marker("END");
        const auto deadline = std::chrono::steady_clock::now() + kCrashReportWait;
        while (!g_crash_reported && std::chrono::steady_clock::now() < deadline) {
            struct timespec pause = {0, 5L * 1000 * 1000};
            ::nanosleep(&pause, nullptr);
        }
    }
    // Let the previous handler do what it would have done: returning re-runs a faulting
    // instruction under it; a signal that was sent (kill, raise, abort) is sent again.
    ::sigaction(signal, &g_previous[index], nullptr);
    if (info == nullptr || info->si_code <= 0) ::raise(signal);
}

// An ending signal left at its default action: the reader thread sends the queued logpoint
// messages and then ends the process. Not a Python handler: Python runs one only when the main
// thread runs bytecode, and a main thread in a long C call (or one the signal did not interrupt)
// would keep the process alive, where without dpdb it ends at once.
void ending_handler(int signal) {
    const int saved_errno = errno;
    if (!g_ending.exchange(true) && g_pipe_pid == ::getpid() && g_pipe_write >= 0) {
        char header[32];
        snprintf(header, sizeof(header), "ENDING %d", signal);
        write_marker(header);
        write_marker("END");
    } else {
        end_by_default(signal);  // no reader of ours in this process yet (just forked)
    }
    errno = saved_errno;
}

bool is_ending_handler(const struct sigaction& action) {
    return (action.sa_flags & SA_SIGINFO) == 0 && action.sa_handler == ending_handler;
}

}  // namespace

int dump_pipe() {
    if (g_pipe_pid != ::getpid()) {
        // After fork: the parent's pipe and its reader thread are not ours.
        if (g_pipe_read >= 0) ::close(g_pipe_read);
        if (g_pipe_write >= 0) ::close(g_pipe_write);
        int fds[2];
        if (::pipe2(fds, O_CLOEXEC) != 0) return -1;
        g_pipe_read = fds[0];
        g_pipe_write = fds[1];
        g_pipe_pid = ::getpid();
        g_crash_reported = false;
        g_in_crash = false;
        g_ending = false;
        start_own_thread("dumps", [fd = fds[0]] { read_dumps(fd); });
    }
    return g_pipe_write;
}

void enable_dumps(int signal) {
    g_dump_signal = signal;
}

void disable_dumps() {
    g_dump_signal = 0;
    if (g_ending_handlers_installed.exchange(false)) {
        for (const int signal : kEndingSignals) {
            struct sigaction current {};
            // The program's own handler, set since, stays.
            if (::sigaction(signal, nullptr, &current) == 0 && is_ending_handler(current)) {
                reset_to_default(signal);
            }
        }
    }
    if (g_crash_handlers_installed.exchange(false)) {
        for (std::size_t i = 0; i < sizeof(kFatalSignals) / sizeof(int); ++i) {
            ::sigaction(kFatalSignals[i], &g_previous[i], nullptr);
        }
    }
    if (g_pipe_pid != ::getpid()) return;
    g_pipe_pid = 0;
    g_pipe_read = -1;  // the reader closes it when it sees the end of the pipe
    ::close(g_pipe_write.exchange(-1));
}

void install_crash_handlers() {
    if (g_crash_handlers_installed.exchange(true)) return;
    struct sigaction action {};
    action.sa_sigaction = crash_handler;
    sigemptyset(&action.sa_mask);
    // SA_NODEFER: the dump signal must get through while we handle a crash.
    action.sa_flags = SA_NODEFER | SA_SIGINFO;
    for (std::size_t i = 0; i < sizeof(kFatalSignals) / sizeof(int); ++i) {
        ::sigaction(kFatalSignals[i], &action, &g_previous[i]);
    }
}

void flush_at_ending_signals(std::chrono::milliseconds wait,
                             std::chrono::milliseconds connect_wait) {
    g_ending_wait_ms = wait.count();
    g_ending_connect_wait_ms = connect_wait.count();
    if (g_ending_handlers_installed.exchange(true)) return;
    for (const int signal : kEndingSignals) {
        struct sigaction current {};
        if (::sigaction(signal, nullptr, &current) != 0) continue;
        // Ignored (nohup) or the program's own: left as they are.
        if ((current.sa_flags & SA_SIGINFO) != 0 || current.sa_handler != SIG_DFL) continue;
        struct sigaction action {};
        action.sa_handler = ending_handler;
        sigemptyset(&action.sa_mask);
        action.sa_flags = SA_RESTART;  // the interrupted thread goes on as if nothing came
        ::sigaction(signal, &action, nullptr);
    }
}

void stacks_started(std::int64_t req) {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_started.insert(req);
}

void stacks_answered(std::int64_t req) {
    std::lock_guard<std::mutex> lock(g_mutex);
    g_started.erase(req);
    g_answered.insert(req);
    g_answer_came.notify_all();
}

void answer_stacks_natively(std::int64_t req) {
    if (g_dump_signal == 0 || g_pipe_pid != ::getpid()) return;
    std::unique_lock<std::mutex> lock(g_mutex);
    // Python has begun (reading source lines from a slow disk, say): its answer, which hides the
    // debugger's frames of paused threads, is worth waiting for, boundedly.
    if (g_started.count(req) > 0) {
        g_answer_came.wait_for(lock, kStartedAnswerWait, [req] { return g_answered.count(req); });
        g_started.erase(req);
    }
    if (g_answered.erase(req) > 0) return;
    // Python did not answer: a thread holds the GIL in C code, so no thread state goes away now.
    GilSnapshot& gil = g_gil_at_dump[req] = take_gil_snapshot();
    gil.resolve();
    write_marker(("STACKS " + std::to_string(req)).c_str());
    ::raise(g_dump_signal);  // runs faulthandler's dump on this thread, before raise returns
    write_marker("END");
}

}  // namespace dpdb::agent
