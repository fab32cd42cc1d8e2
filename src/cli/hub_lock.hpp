// One hub per socket, whoever starts it: a hub holds a lock on SOCKET.lock (an flock, released by
// the kernel however the hub ends) for its whole life, with its pid written in the file, so that
// a second `dpdb hub` on the same socket (by hand, or the one `dpdb attach -p` starts) refuses
// instead of taking the socket over, and `dpdb hub --stop` finds the hub even if its socket was
// removed.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

namespace dpdb::cli {

class HubLock {
  public:
    // Takes the lock for this process, or returns nullopt if a live hub holds it.
    static std::optional<HubLock> take(const std::string& socket_path);
    HubLock(HubLock&& other) noexcept;
    HubLock& operator=(HubLock&&) = delete;
    HubLock(const HubLock&) = delete;
    ~HubLock();

  private:
    explicit HubLock(int fd) : fd_(fd) {}
    int fd_;
};

// The pid of the live hub that holds the lock of this socket (0 for a hub that has not written
// it yet), if one does.
std::optional<pid_t> hub_holding(const std::string& socket_path);

}  // namespace dpdb::cli
