#include "hub/listener.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <stdexcept>

#include "common/address.hpp"
#include "common/printable.hpp"
#include "wire/tls.hpp"

namespace dpdb::hub {

Listener::Listener(asio::io_context& io, const HubOptions& options, Admission::Log log)
    : io_(io),
      options_(options),
      unix_acceptor_(io),
      tcp_acceptor_(io),
      tls_(asio::ssl::context::tls_server),
      admission_(std::move(log)),
      admission_timer_(io) {}

void Listener::start(Arrival arrival) {
    arrival_ = std::move(arrival);
    if (!options_.socket_path.empty()) {
        ::unlink(options_.socket_path.c_str());
        const asio::local::stream_protocol::endpoint endpoint(options_.socket_path);
        unix_acceptor_.open(endpoint.protocol());
        unix_acceptor_.bind(endpoint);
        ::chmod(options_.socket_path.c_str(), 0600);
        unix_acceptor_.listen(asio::socket_base::max_listen_connections);
        accept_unix();
    }
    if (options_.tcp_port >= 0) {
        start_tcp();
        summarise_admission();
    }
}

void Listener::close() {
    asio::error_code ignored;
    unix_acceptor_.close(ignored);
    tcp_acceptor_.close(ignored);
    closed_ = true;
    admission_timer_.cancel();
    if (!options_.socket_path.empty()) ::unlink(options_.socket_path.c_str());
}

// The refusal summaries of the admission's windows, written even when refusals stop.
void Listener::summarise_admission() {
    admission_timer_.expires_after(kAdmissionTick);
    admission_timer_.async_wait([weak = weak_from_this()](const asio::error_code& ec) {
        auto self = weak.lock();
        if (ec || !self || self->closed_) return;
        self->admission_.tick();
        self->summarise_admission();
    });
}

void Listener::start_tcp() {
    if (!options_.insecure) {
        if (options_.tls_cert.empty() || options_.tls_key.empty()) {
            throw std::invalid_argument("TCP needs a TLS certificate and key (or --insecure)");
        }
        wire::serve_with(tls_.native_handle(), {options_.tls_cert, options_.tls_key});
        if (options_.early_hello) wire::accept_early_hello(tls_.native_handle());
    }
    const asio::ip::tcp::endpoint endpoint(asio::ip::make_address(options_.tcp_host),
                                           static_cast<unsigned short>(options_.tcp_port));
    tcp_acceptor_.open(endpoint.protocol());
    tcp_acceptor_.set_option(asio::socket_base::reuse_address(true));
    tcp_acceptor_.bind(endpoint);
    tcp_acceptor_.listen(asio::socket_base::max_listen_connections);
    tcp_port_ = tcp_acceptor_.local_endpoint().port();
    accept_tcp();
}

void Listener::accept_unix() {
    unix_acceptor_.async_accept(
        [self = shared_from_this()](const asio::error_code& ec,
                                    asio::local::stream_protocol::socket socket) {
            if (ec == asio::error::operation_aborted) return;
            if (!ec) {
                // Only this user reaches the private socket: it holds no slot.
                self->arrival_(std::make_unique<PlainStream<asio::local::stream_protocol::socket>>(
                                   std::move(socket)),
                               Admission::Slot{});
            }
            self->accept_unix();
        });
}

void Listener::accept_tcp() {
    tcp_acceptor_.async_accept(
        [self = shared_from_this()](const asio::error_code& ec, asio::ip::tcp::socket socket) {
            if (ec == asio::error::operation_aborted) return;
            if (!ec) self->secure(std::move(socket));
            self->accept_tcp();
        });
}

// TLS first (unless --insecure), bounded in time like the handshake that follows it. From here
// until it authenticates, a TCP connection holds a slot among the unauthenticated.
void Listener::secure(asio::ip::tcp::socket socket) {
    asio::error_code ec;
    const auto endpoint = socket.remote_endpoint(ec);
    if (ec) return;  // already gone
    const std::string peer = endpoint.address().to_string();
    keep_alive(socket.native_handle(), /*bound_unanswered=*/false);
    auto slot = admission_.admit(peer);
    if (!slot) return;  // the socket closes as it goes out of scope; the peer retries
    if (options_.insecure) {
        arrival_(std::make_unique<PlainStream<asio::ip::tcp::socket>>(std::move(socket)),
                 std::move(*slot));
        return;
    }
    auto held = std::make_shared<Admission::Slot>(std::move(*slot));
    auto stream = std::make_shared<std::unique_ptr<TlsStream>>(
        std::make_unique<TlsStream>(std::move(socket), tls_));
    // Evicted during its TLS handshake (see Admission): the handshake fails and it is gone.
    held->on_evict([stream] {
        if (*stream) (*stream)->close();
    });
    // The TLS handshake and the dpdb handshake after it share one deadline (Connection).
    auto timer = std::make_shared<asio::steady_timer>(io_, held->admitted() + kHandshakeTimeout);
    timer->async_wait([stream](const asio::error_code& ec) {
        if (!ec && *stream) (*stream)->close();
    });
    (*stream)->stream().async_handshake(
        asio::ssl::stream_base::server,
        [self = shared_from_this(), stream, timer, held, peer](const asio::error_code& ec) {
            timer->cancel();
            std::string failure = ec ? ec.message() : "";
            if (!ec) {
                try {
                    SSL* ssl = (*stream)->stream().native_handle();
                    (*stream)->set_binding(wire::channel_binding(ssl));
                    (*stream)->set_early_hello(wire::early_hello(ssl));
                } catch (const std::exception& error) {
                    failure = error.what();
                }
            }
            if (!failure.empty()) {
                (*stream)->close();
                held->release();
                self->admission_.note("TLS handshake with " + peer +
                                      " failed: " + printable(failure));
                return;
            }
            self->arrival_(std::move(*stream), std::move(*held));
        });
}

}  // namespace dpdb::hub
