// Another process's memory, read with process_vm_readv: nothing is loaded into it and it is not
// stopped. The OS allows it to the process's own user or root, under the same rules as ptrace
// (yama's ptrace_scope, CAP_SYS_PTRACE in a container).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace dpdb::attach {

// A read the OS refused or that fell outside the process's mappings: a one-line reason.
class RemoteReadError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

class RemoteMemory {
  public:
    explicit RemoteMemory(pid_t pid) : pid_(pid) {}

    // `size` bytes at `address`, whole, or RemoteReadError.
    void read(std::uintptr_t address, void* out, std::size_t size) const;
    std::string read_bytes(std::uintptr_t address, std::size_t size) const;

    template <typename T>
    T read(std::uintptr_t address) const {
        T value{};
        read(address, &value, sizeof value);
        return value;
    }

    std::uintptr_t read_pointer(std::uintptr_t address) const {
        return read<std::uintptr_t>(address);
    }

  private:
    pid_t pid_;
};

}  // namespace dpdb::attach
