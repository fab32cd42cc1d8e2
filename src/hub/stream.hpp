// What a hub connection reads and writes: a Unix socket, a plain TCP socket (--insecure), or TLS
// over TCP. Connection uses only this interface.
#pragma once

#include <sys/socket.h>

#include <asio.hpp>
#include <asio/ssl.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace dpdb::hub {

class Stream {
  public:
    using Handler = std::function<void(const asio::error_code&, std::size_t)>;
    virtual ~Stream() = default;
    virtual void async_read_some(asio::mutable_buffer buffer, Handler handler) = 0;
    virtual void async_write(asio::const_buffer buffer, Handler handler) = 0;
    virtual void close() = 0;
    virtual asio::any_io_executor executor() = 0;
    // Who is at the other end, for logs and for rate limiting ("unix", "10.0.0.7"), as it was
    // when the connection was accepted.
    virtual std::string peer() const = 0;
    // The TLS channel binding both ends fold into the handshake MAC; empty without TLS.
    virtual std::string binding() const { return {}; }
    // TLS agreed on the early hello (wire/tls.hpp): the peer sends its hello without a challenge.
    virtual bool early_hello() const { return false; }
    // The process at the other end of the private Unix socket, as the kernel names it in the
    // hub's pid namespace (SO_PEERCRED, read when the connection was accepted); 0 elsewhere.
    virtual std::int64_t peer_pid() const { return 0; }
};

// The peer's address, read once when the connection is accepted: later (once the socket is
// closed, or reset by the peer) the system no longer tells it, and the address is the key of the
// peer's place among the unauthenticated connections (hub/admission) until the very end.
inline std::string address_of(const asio::local::stream_protocol::socket&) {
    return "unix";
}
inline std::string address_of(const asio::ip::tcp::socket& socket) {
    asio::error_code ec;
    const auto endpoint = socket.remote_endpoint(ec);
    return ec ? "tcp" : endpoint.address().to_string();
}

inline std::int64_t pid_of(asio::local::stream_protocol::socket& socket) {
    ucred credentials{};
    socklen_t size = sizeof credentials;
    if (::getsockopt(socket.native_handle(), SOL_SOCKET, SO_PEERCRED, &credentials, &size) != 0) {
        return 0;
    }
    return credentials.pid;
}
inline std::int64_t pid_of(asio::ip::tcp::socket&) {
    return 0;
}

template <typename Socket>
class PlainStream final : public Stream {
  public:
    explicit PlainStream(Socket socket)
        : socket_(std::move(socket)), peer_(address_of(socket_)), peer_pid_(pid_of(socket_)) {}
    void async_read_some(asio::mutable_buffer buffer, Handler handler) override {
        socket_.async_read_some(buffer, std::move(handler));
    }
    void async_write(asio::const_buffer buffer, Handler handler) override {
        asio::async_write(socket_, buffer, std::move(handler));
    }
    void close() override {
        asio::error_code ignored;
        socket_.shutdown(asio::socket_base::shutdown_both, ignored);
        socket_.close(ignored);
    }
    asio::any_io_executor executor() override { return socket_.get_executor(); }
    std::string peer() const override { return peer_; }
    std::int64_t peer_pid() const override { return peer_pid_; }

  private:
    Socket socket_;
    const std::string peer_;
    const std::int64_t peer_pid_;
};

class TlsStream final : public Stream {
  public:
    TlsStream(asio::ip::tcp::socket socket, asio::ssl::context& context)
        : peer_(address_of(socket)), stream_(std::move(socket), context) {}
    asio::ssl::stream<asio::ip::tcp::socket>& stream() { return stream_; }
    void async_read_some(asio::mutable_buffer buffer, Handler handler) override {
        stream_.async_read_some(buffer, std::move(handler));
    }
    void async_write(asio::const_buffer buffer, Handler handler) override {
        asio::async_write(stream_, buffer, std::move(handler));
    }
    void close() override {
        asio::error_code ignored;
        stream_.lowest_layer().shutdown(asio::socket_base::shutdown_both, ignored);
        stream_.lowest_layer().close(ignored);
    }
    asio::any_io_executor executor() override { return stream_.get_executor(); }
    std::string peer() const override { return peer_; }
    std::string binding() const override { return binding_; }
    void set_binding(std::string binding) { binding_ = std::move(binding); }
    bool early_hello() const override { return early_hello_; }
    void set_early_hello(bool early) { early_hello_ = early; }

  private:
    const std::string peer_;
    asio::ssl::stream<asio::ip::tcp::socket> stream_;
    std::string binding_;
    bool early_hello_ = false;
};

}  // namespace dpdb::hub
