#include "cli/hub_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace dpdb::cli {
namespace {

std::string lock_path(const std::string& socket_path) {
    return socket_path + ".lock";
}

}  // namespace

std::optional<HubLock> HubLock::take(const std::string& socket_path) {
    const std::string path = lock_path(socket_path);
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) throw std::runtime_error("cannot open " + path);
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        ::close(fd);
        return std::nullopt;
    }
    const std::string pid = std::to_string(::getpid()) + "\n";
    if (::ftruncate(fd, 0) != 0 ||
        ::pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
        ::close(fd);
        throw std::runtime_error("cannot write " + path);
    }
    return HubLock(fd);
}

HubLock::HubLock(HubLock&& other) noexcept : fd_(other.fd_) {
    other.fd_ = -1;
}

HubLock::~HubLock() {
    if (fd_ >= 0) ::close(fd_);
}

std::optional<pid_t> hub_holding(const std::string& socket_path) {
    const int fd = ::open(lock_path(socket_path).c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return std::nullopt;
    std::optional<pid_t> holder;
    // A shared lock is refused only while the hub holds its exclusive one.
    if (::flock(fd, LOCK_SH | LOCK_NB) != 0) {
        char text[32] = {};
        const long pid =
            ::pread(fd, text, sizeof(text) - 1, 0) > 0 ? std::strtol(text, nullptr, 10) : 0;
        holder = static_cast<pid_t>(pid > 0 ? pid : 0);  // 0: it has not written its pid yet
    }
    ::close(fd);
    return holder;
}

}  // namespace dpdb::cli
