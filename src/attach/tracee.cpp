#include "attach/tracee.hpp"

#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <thread>

namespace dpdb::attach {
namespace {

constexpr auto kStopWait = std::chrono::milliseconds(2000);
constexpr std::uintptr_t kRedZone = 128;  // below the stack pointer, the thread's own (x86-64 ABI)

std::string os_error(const char* what) {
    return std::string(what) + ": " + std::strerror(errno);
}

}  // namespace

Tracee::Tracee(pid_t pid, pid_t tid) : pid_(pid), tid_(tid) {
    if (::ptrace(PTRACE_SEIZE, tid_, nullptr, nullptr) != 0) {
        if (errno == ESRCH) throw AttachError("the process exited");
        throw AttachError(os_error("ptrace"));
    }
}

Tracee::~Tracee() {
    try {
        if (!stopped_) stop();
        set_registers(saved_);
    } catch (const std::exception&) {
        // Gone, or never stopped: there is nothing to put back.
    }
    ::ptrace(PTRACE_DETACH, tid_, nullptr, nullptr);
}

void Tracee::stop() {
    if (::ptrace(PTRACE_INTERRUPT, tid_, nullptr, nullptr) != 0) {
        throw AttachError(os_error("ptrace(INTERRUPT)"));
    }
    wait_for_stop(kStopWait);
    if (::ptrace(PTRACE_GETREGS, tid_, nullptr, &saved_) != 0) {
        throw AttachError(os_error("ptrace(GETREGS)"));
    }
    stopped_ = true;
    scratch_ = (saved_.rsp - kRedZone) & ~std::uintptr_t{15};
}

void Tracee::run_for(std::chrono::microseconds moment) {
    if (::ptrace(PTRACE_CONT, tid_, nullptr, nullptr) != 0) {
        throw AttachError(os_error("ptrace(CONT)"));
    }
    stopped_ = false;
    std::this_thread::sleep_for(moment);
    stop();
}

bool Tracee::in_system_call() const {
    return static_cast<long long>(saved_.orig_rax) >= 0;
}

// Waits for the thread's next stop. A signal that reaches it meanwhile is given to it (it is the
// program's), and the wait goes on.
void Tracee::wait_for_stop(std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    for (;;) {
        int status = 0;
        const pid_t got = ::waitpid(tid_, &status, __WALL | WNOHANG);
        if (got < 0) throw AttachError(os_error("waitpid"));
        if (got == 0) {
            if (std::chrono::steady_clock::now() >= deadline) {
                throw AttachError("the thread did not stop within " +
                                  std::to_string(limit.count()) + " ms");
            }
            std::this_thread::sleep_for(std::chrono::microseconds(200));
            continue;
        }
        if (WIFEXITED(status) || WIFSIGNALED(status)) throw AttachError("the process exited");
        if (!WIFSTOPPED(status)) continue;
        const int signal = WSTOPSIG(status);
        if ((status >> 16) == PTRACE_EVENT_STOP || signal == SIGTRAP) return;
        if (signal == SIGSEGV || signal == SIGBUS) {
            last_fault_ = signal;
            return;
        }
        ::ptrace(PTRACE_CONT, tid_, nullptr, reinterpret_cast<void*>(static_cast<long>(signal)));
    }
}

void Tracee::set_registers(const user_regs_struct& regs) {
    if (::ptrace(PTRACE_SETREGS, tid_, nullptr, &regs) != 0) {
        throw AttachError(os_error("ptrace(SETREGS)"));
    }
}

void Tracee::write_at(std::uintptr_t address, const std::string& bytes) {
    iovec local{const_cast<char*>(bytes.data()), bytes.size()};
    iovec remote{reinterpret_cast<void*>(address), bytes.size()};
    if (::process_vm_writev(pid_, &local, 1, &remote, 1, 0) != static_cast<ssize_t>(bytes.size())) {
        throw AttachError(os_error("writing into the process"));
    }
}

std::uintptr_t Tracee::push_bytes(const std::string& bytes) {
    scratch_ = (scratch_ - bytes.size()) & ~std::uintptr_t{15};
    write_at(scratch_, bytes);
    return scratch_;
}

std::uint64_t Tracee::call(std::uintptr_t function, std::uint64_t a, std::uint64_t b,
                           std::chrono::milliseconds limit) {
    user_regs_struct regs = saved_;
    regs.rdi = a;
    regs.rsi = b;
    regs.rax = 0;
    // Not inside a system call any more: the kernel must not restart one with these registers.
    // The saved registers, put back afterwards, restart it.
    regs.orig_rax = static_cast<unsigned long long>(-1);
    // A return address of 0: the function returns into a fault, which is this call's end. As
    // after a call instruction, the stack pointer is 8 bytes off a 16-byte boundary.
    regs.rsp = ((scratch_ - 64) & ~std::uintptr_t{15}) - sizeof(std::uint64_t);
    write_at(regs.rsp, std::string(sizeof(std::uint64_t), '\0'));
    regs.rip = function;
    set_registers(regs);
    last_fault_ = 0;
    if (::ptrace(PTRACE_CONT, tid_, nullptr, nullptr) != 0) {
        throw AttachError(os_error("ptrace(CONT)"));
    }
    stopped_ = false;
    wait_for_stop(limit);
    stopped_ = true;
    user_regs_struct after{};
    if (::ptrace(PTRACE_GETREGS, tid_, nullptr, &after) != 0) {
        throw AttachError(os_error("ptrace(GETREGS)"));
    }
    set_registers(saved_);
    if (last_fault_ == 0 || after.rip != 0) {
        throw AttachError("the call into the process did not return as expected (stopped at " +
                          std::to_string(after.rip) + ")");
    }
    return after.rax;
}

}  // namespace dpdb::attach
