// The hub's doors: its private Unix socket and, when asked, a TCP port (TLS unless insecure).
// A connection comes out of here as a Stream ready for the dpdb handshake, with the Admission
// slot it holds until it authenticates; what strangers cause on the way in (refusals, failed TLS
// handshakes) is the Admission's to count and log.
//
// Runs on the hub's io_context thread, like the hub; its callbacks hold it alive, so it is a
// shared object.
#pragma once

#include <asio.hpp>
#include <asio/ssl.hpp>
#include <functional>
#include <memory>
#include <string>

#include "hub/admission.hpp"
#include "hub/hub.hpp"
#include "hub/stream.hpp"

namespace dpdb::hub {

class Listener : public std::enable_shared_from_this<Listener> {
  public:
    using Arrival = std::function<void(std::unique_ptr<Stream>, Admission::Slot)>;

    // `options` gives the socket path, the TCP address and the TLS material; `log` takes the
    // admission's lines.
    Listener(asio::io_context& io, const HubOptions& options, Admission::Log log);

    // Binds and listens (throws as Hub::start() says), then hands each connection to `arrival`.
    void start(Arrival arrival);
    // Closes both doors and removes the socket file; connections already in are not touched.
    void close();

    int tcp_port() const { return tcp_port_; }
    Admission& admission() { return admission_; }

  private:
    void start_tcp();
    void accept_unix();
    void accept_tcp();
    void secure(asio::ip::tcp::socket socket);
    void summarise_admission();

    static constexpr auto kHandshakeTimeout = std::chrono::seconds(10);
    static constexpr auto kAdmissionTick = std::chrono::seconds(5);

    asio::io_context& io_;
    const HubOptions& options_;  // the hub's, which outlives its listener
    asio::local::stream_protocol::acceptor unix_acceptor_;
    asio::ip::tcp::acceptor tcp_acceptor_;
    asio::ssl::context tls_;
    int tcp_port_ = -1;
    Admission admission_;
    asio::steady_timer admission_timer_;
    // Set by close(): a tick already due when the timer was cancelled runs with no error, and
    // must not start another (the hub's io_context would never run out of work).
    bool closed_ = false;
    Arrival arrival_;
};

}  // namespace dpdb::hub
