// A blocking, framed, authenticated connection to a hub, as agents and clients hold it.
#pragma once

#include <atomic>
#include <mutex>
#include <optional>
#include <string>

#include "common/address.hpp"
#include "wire/message.hpp"

namespace dpdb::wire {

class Channel {
  public:
    Channel() = default;
    explicit Channel(int fd) : fd_(fd) {}
    ~Channel();
    Channel(const Channel&) = delete;
    Channel& operator=(const Channel&) = delete;

    // Connects and runs the handshake as `role`; throws std::runtime_error with a one-line reason.
    // Returns the hub's description from its welcome.
    static Json connect(Channel& channel, const HubAddress& address, const std::string& secret,
                        const std::string& role, const Json& proc = Json());

    bool is_open() const { return fd_ >= 0; }
    int fd() const { return fd_.load(); }

    // Any thread may send: writes are serialised by a mutex so frames never interleave.
    // Returns false once the connection is gone.
    bool send(const Message& message);

    // One thread reads. Waits up to timeout_ms (-1: forever) for the next message; nothing on
    // timeout. Throws ProtocolError on a malformed frame, std::runtime_error when the hub is gone.
    std::optional<Message> receive(int timeout_ms);

    // Closes the socket (shutdown first, so a reader blocked in another thread wakes up).
    void close();

    // After fork in the child: forget the parent's socket without touching the shared connection.
    void abandon_after_fork();

  private:
    // Atomic because close() from one thread may race a reader blocked in another.
    std::atomic<int> fd_{-1};
    std::mutex write_mutex_;
    FrameDecoder decoder_;
};

}  // namespace dpdb::wire
