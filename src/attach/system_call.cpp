#include "attach/system_call.hpp"

#include <sys/syscall.h>

#include <cstdlib>
#include <string>

#include "common/read_file.hpp"

namespace dpdb::attach {
namespace {

struct Known {
    long number;
    const char* name;
    const char* what;
};

// The calls a Python program waits in: time.sleep, locks and queues, socket and pipe reads,
// selectors and event loops, os.waitpid, signal.pause.
constexpr Known kKnown[] = {
    {SYS_clock_nanosleep, "clock_nanosleep", "a sleep"},
    {SYS_nanosleep, "nanosleep", "a sleep"},
    {SYS_futex, "futex", "a lock, a condition or an event"},
    {SYS_read, "read", "a read"},
    {SYS_recvfrom, "recvfrom", "a socket's recv"},
    {SYS_recvmsg, "recvmsg", "a socket's recv"},
    {SYS_accept, "accept", "a socket's accept"},
    {SYS_accept4, "accept4", "a socket's accept"},
    {SYS_connect, "connect", "a socket's connect"},
    {SYS_select, "select", "select"},
    {SYS_pselect6, "pselect6", "select"},
    {SYS_poll, "poll", "poll"},
    {SYS_ppoll, "ppoll", "poll"},
    {SYS_epoll_wait, "epoll_wait", "an event loop's epoll"},
    {SYS_epoll_pwait, "epoll_pwait", "an event loop's epoll"},
    {SYS_wait4, "wait4", "waitpid"},
    {SYS_waitid, "waitid", "waitpid"},
    {SYS_pause, "pause", "signal.pause"},
    {SYS_rt_sigtimedwait, "rt_sigtimedwait", "a wait for a signal"},
    {SYS_write, "write", "a write"},
};

}  // namespace

std::string waiting_in(pid_t pid, pid_t tid) {
    // "NUMBER ARGS...", "running", or "-1 ..." (stopped outside a system call).
    const std::string text = read_whole_file("/proc/" + std::to_string(pid) + "/task/" +
                                             std::to_string(tid) + "/syscall");
    if (text.empty() || text[0] < '0' || text[0] > '9') return "";
    const long number = std::strtol(text.c_str(), nullptr, 10);
    for (const auto& known : kKnown) {
        if (known.number == number) return std::string(known.what) + " (" + known.name + ")";
    }
    return "system call " + std::to_string(number);
}

}  // namespace dpdb::attach
