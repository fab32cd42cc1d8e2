// A blocking, framed, authenticated connection to a hub, as agents and clients hold it.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/address.hpp"
#include "wire/message.hpp"
#include "wire/transport.hpp"

namespace dpdb::wire {

class Channel {
  public:
    Channel() = default;
    // Adopts a connected plain socket, without a handshake (tests speak the protocol raw).
    explicit Channel(int fd) : transport_(plain_transport(fd)), open_(true) {}
    ~Channel();
    Channel(const Channel&) = delete;
    Channel& operator=(const Channel&) = delete;

    // Connects and runs the handshake as `role`; throws std::runtime_error with a one-line reason.
    // Returns the hub's description from its welcome. `connected`, when not -1, is a socket
    // already connected to `address`, which the channel takes over.
    static Json connect(Channel& channel, const HubAddress& address, const std::string& secret,
                        const std::string& role, const Json& proc = Json(), int connected = -1);

    // The first requests, made once it is known whether the hub speaks dpdb/2 (its requests'
    // optional fields; wire/tls.hpp): with the early hello they go in the hello's own write,
    // otherwise right after the welcome. Either way connect() returns once the welcome proved the
    // hub, and their answers are then read with receive().
    using FirstRequests = std::function<std::vector<Message>(bool hub_speaks_v2)>;
    static Json connect(Channel& channel, const HubAddress& address, const std::string& secret,
                        const std::string& role, const FirstRequests& first);

    bool is_open() const { return open_; }
    // For poll(): readable means receive() has something (with TLS, drain receive(0) first).
    int fd() const { return open_ ? transport_->fd() : -1; }

    // Any thread may send: writes are serialised by a mutex so frames never interleave.
    // Returns false once the connection is gone.
    bool send(const Message& message);
    // Like send(), but gives up after 200 ms if another thread is writing, and cuts its frame
    // short and closes the connection once `deadline` passes: a hub that has stopped reading
    // must not hold the heartbeat or the end of the process (for use at exit and for liveness).
    bool try_send(const Message& message, std::chrono::steady_clock::time_point deadline);

    // One thread reads. Waits up to timeout_ms (-1: forever) for the next message; nothing on
    // timeout. Throws ProtocolError on a malformed frame, std::runtime_error when the hub is gone.
    std::optional<Message> receive(int timeout_ms);

    // Closes the socket (shutdown first, so a reader blocked in another thread wakes up).
    void close();

    // After fork in the child: forget the parent's socket without touching the shared connection.
    void abandon_after_fork();

  private:
    static Json handshake(Channel& channel, const HubAddress& address, const std::string& secret,
                          const std::string& role, const Json& proc, int connected,
                          const FirstRequests& first);
    // Several messages in one write (one burst on the network).
    bool send_all(const std::vector<Message>& messages);

    // Replaced only by connect(), on the owning thread; close() from another thread only shuts
    // it down, so a reader blocked in it wakes up and the object stays valid.
    std::unique_ptr<Transport> transport_;
    std::atomic<bool> open_{false};
    std::timed_mutex write_mutex_;
    FrameDecoder decoder_;
};

}  // namespace dpdb::wire
