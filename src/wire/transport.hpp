// The byte stream under a Channel: a plain socket (Unix, or TCP with --insecure) or TLS over TCP.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

namespace dpdb::wire {

class Transport {
  public:
    virtual ~Transport() = default;
    // Waits up to timeout_ms (-1: forever) for bytes; returns how many were read, 0 on timeout.
    // Throws std::runtime_error once the connection is gone.
    virtual std::size_t read(char* buffer, std::size_t size, int timeout_ms) = 0;
    // Safe from any thread, also while another thread reads. False once the connection is gone,
    // or once `deadline` (when there is one) has passed: the bytes may then be cut short, and the
    // caller must close the connection.
    virtual bool write_all(const char* data, std::size_t size,
                           std::optional<std::chrono::steady_clock::time_point> deadline) = 0;
    virtual int fd() const = 0;
    // Wakes a reader blocked in another thread; reads fail afterwards.
    virtual void shutdown() = 0;
    // The TLS channel binding (see tls.hpp), or empty for a plain socket.
    virtual std::string binding() const { return {}; }
    // The hub agreed to the early hello (tls.hpp: kEarlyHello); only over TLS 1.3 to a hub whose
    // certificate was pinned.
    virtual bool early_hello() const { return false; }
    // After fork, in the child: let go of the descriptor without touching the shared connection.
    virtual void abandon() = 0;
};

std::unique_ptr<Transport> plain_transport(int fd);

// Runs a TLS client handshake on a connected socket; throws std::runtime_error. When `pinned`
// ("sha256:…") is not empty the hub's certificate must have that fingerprint, and the early
// hello is offered (tls.hpp).
std::unique_ptr<Transport> tls_transport(int fd, const std::string& server_name,
                                         const std::string& pinned);

}  // namespace dpdb::wire
