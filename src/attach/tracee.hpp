// One thread of another process under ptrace, for as long as this object lives: seized
// (PTRACE_SEIZE, which stops nothing by itself), stopped when asked, made to call a function,
// and given back exactly as it was — registers and all — when the object goes.
#pragma once

#include <sys/types.h>
#include <sys/user.h>

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace dpdb::attach {

// Why an attach cannot go on, in one line for the user.
class AttachError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

class Tracee {
  public:
    // Seizes thread `tid` of process `pid`; throws AttachError (with the reason) if the OS says no.
    Tracee(pid_t pid, pid_t tid);
    ~Tracee();
    Tracee(const Tracee&) = delete;
    Tracee& operator=(const Tracee&) = delete;

    // Stops the thread (it may have been inside a system call, which will be restarted).
    void stop();
    // Lets it run on for a moment, then stops it again: for a thread stopped where a call
    // would not be safe.
    void run_for(std::chrono::microseconds moment);
    const user_regs_struct& registers() const { return saved_; }
    // Whether it was stopped inside a system call (one that waits: sleep, poll, read...).
    bool in_system_call() const;

    // Calls function(a, b) in the thread on its own stack; returns what it returned. The thread
    // must be stopped. Its registers are put back afterwards.
    std::uint64_t call(std::uintptr_t function, std::uint64_t a, std::uint64_t b,
                       std::chrono::milliseconds limit);
    // Copies bytes into the thread's stack, below what it uses; returns their address.
    std::uintptr_t push_bytes(const std::string& bytes);

  private:
    void wait_for_stop(std::chrono::milliseconds limit);
    void set_registers(const user_regs_struct& regs);
    void write_at(std::uintptr_t address, const std::string& bytes);

    pid_t pid_;
    pid_t tid_;
    bool stopped_ = false;
    user_regs_struct saved_{};    // as the thread was when stopped
    std::uintptr_t scratch_ = 0;  // the lowest stack address in use by push_bytes
    int last_fault_ = 0;          // SIGSEGV or SIGBUS that stopped it, if one did
};

}  // namespace dpdb::attach
