#include "attach/remote_memory.hpp"

#include <sys/uio.h>

#include <cerrno>
#include <cstring>

#include "attach/injector.hpp"

namespace dpdb::attach {

void RemoteMemory::read(std::uintptr_t address, void* out, std::size_t size) const {
    iovec local{out, size};
    // An address in the other process, never dereferenced here.
    iovec remote{reinterpret_cast<void*>(address), size};  // NOLINT(performance-no-int-to-ptr)
    const ssize_t n = ::process_vm_readv(pid_, &local, 1, &remote, 1, 0);
    if (n == static_cast<ssize_t>(size)) return;
    if (n < 0 && errno == EPERM) {
        throw RemoteReadError("cannot read the memory of pid " + std::to_string(pid_) + ": " +
                              why_not_traceable(pid_));
    }
    if (n < 0 && errno == ESRCH) throw RemoteReadError("pid " + std::to_string(pid_) + " exited");
    throw RemoteReadError("pid " + std::to_string(pid_) + " changed while it was read (" +
                          (n < 0 ? std::string(std::strerror(errno)) : "a short read") + ")");
}

std::string RemoteMemory::read_bytes(std::uintptr_t address, std::size_t size) const {
    std::string bytes(size, '\0');
    if (size > 0) read(address, bytes.data(), size);
    return bytes;
}

}  // namespace dpdb::attach
