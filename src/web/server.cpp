#include "web/server.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <cstdio>
#include <optional>
#include <vector>

#include "common/printable.hpp"
#include "hub/admission.hpp"
#include "web/access.hpp"
#include "web/assets.hpp"
#include "web/page_socket.hpp"
#include "wire/tls.hpp"

namespace dpdb::web {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

// Connections served at once (each page holds one or two); more wait in the kernel's backlog.
constexpr std::size_t kMaxConnections = 64;
constexpr auto kRequestTimeout = std::chrono::seconds(30);
constexpr auto kAdmissionTick = std::chrono::seconds(5);

// Over TLS (a port other hosts reach), strangers may hold half the connections at most, and each
// gives way to a newcomer after its grace, as on the hub's port (hub/admission): so a stranger
// who keeps connections open, or asks without the token again and again, cannot keep the owner
// out.
hub::Admission::Limits strangers_limits() {
    hub::Admission::Limits limits;
    limits.total = kMaxConnections / 2;
    limits.per_address = limits.total;
    return limits;
}

// The page runs only its own files: no inline script or style, nothing from elsewhere, not framed.
constexpr const char* kContentSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

}  // namespace

struct Server::State : std::enable_shared_from_this<Server::State> {
    State(asio::io_context& context, PageHandlers handlers)
        : acceptor(context),
          admission_timer(context),
          handlers(std::make_shared<const PageHandlers>(std::move(handlers))) {}

    tcp::acceptor acceptor;
    std::optional<asio::ssl::context> tls;  // none: plain HTTP (loopback only)
    // With TLS: the connections that have not shown the token or its cookie yet.
    std::optional<hub::Admission> admission;
    asio::steady_timer admission_timer;
    std::shared_ptr<const PageHandlers> handlers;
    std::unique_ptr<Access> access;
    std::string host;  // HOST:PORT, what the Host header must say
    std::vector<std::weak_ptr<PageSocket>> pages;
    std::size_t connections = 0;

    void accept_next();
    void serve(tcp::socket socket);
    void summarise_admission();
    void refuse(const std::string& what) {
        // The request's path and headers only as printable text, never its query (the token);
        // within the admission's log budget where strangers can reach the port.
        if (admission) return admission->note("refused " + what);
        std::fprintf(stderr, "dpdb web: refused %s\n", what.c_str());
    }
};

namespace {

using Request = PageSocket::Request;
using Response = http::response<http::string_body>;

Response answer(const Request& request, http::status status, std::string body,
                std::string_view type = "text/plain; charset=utf-8") {
    Response response(status, request.version());
    response.set(http::field::server, "dpdb");
    response.set(http::field::content_type, type);
    response.set(http::field::cache_control, "no-store");
    response.set("Content-Security-Policy", kContentSecurityPolicy);
    response.set("X-Content-Type-Options", "nosniff");
    response.set("Referrer-Policy", "no-referrer");
    response.set("X-Frame-Options", "DENY");
    response.keep_alive(request.keep_alive());
    response.body() = std::move(body);
    response.prepare_payload();
    if (request.method() == http::verb::head) response.body().clear();
    return response;
}

std::string path_of(std::string_view target) {
    return std::string(target.substr(0, target.find('?')));
}

// One connection: requests one after another, until it closes or becomes a page's WebSocket.
// `Stream` is beast::tcp_stream, or PageSocket::TlsStream over it.
template <typename Stream>
class HttpConnection : public std::enable_shared_from_this<HttpConnection<Stream>> {
  public:
    static constexpr bool kTls = std::is_same_v<Stream, PageSocket::TlsStream>;

    // `slot`: its place among strangers' connections (with TLS); `tls`: the server's context,
    // for a TlsStream.
    template <typename... Tls>
    HttpConnection(tcp::socket socket, std::shared_ptr<Server::State> state,
                   hub::Admission::Slot slot, Tls&... tls)
        : stream_(std::move(socket), tls...), state_(std::move(state)), slot_(std::move(slot)) {
        ++state_->connections;
    }
    ~HttpConnection() { --state_->connections; }

    // TLS first, within the first request's time: a peer that does not speak it (plain HTTP
    // included) is closed without an answer.
    void start() {
        slot_.on_evict([weak = this->weak_from_this()] {
            if (auto self = weak.lock()) self->close();
        });
        if constexpr (kTls) {
            beast::get_lowest_layer(stream_).expires_after(kRequestTimeout);
            stream_.async_handshake(
                asio::ssl::stream_base::server,
                [self = this->shared_from_this()](beast::error_code error) {
                    if (!error) return self->read_next();
                    beast::error_code gone;
                    const auto peer =
                        beast::get_lowest_layer(self->stream_).socket().remote_endpoint(gone);
                    self->state_->refuse(
                        "a connection from " + (gone ? "a peer gone" : peer.address().to_string()) +
                        ": its TLS handshake failed (" + printable(error.message()) + ")");
                    self->close();
                });
        } else {
            read_next();
        }
    }

  private:
    void read_next() {
        parser_.emplace();
        parser_->header_limit(16 * 1024);
        beast::get_lowest_layer(stream_).expires_after(kRequestTimeout);
        http::async_read(stream_, buffer_, *parser_,
                         [self = this->shared_from_this()](beast::error_code error, std::size_t) {
                             if (error) return self->close();
                             self->handle(parser_release(*self));
                         });
    }

    static Request parser_release(HttpConnection& self) { return self.parser_->release(); }

    void handle(const Request& request) {
        const auto path = path_of(request.target());
        const auto said = printable(std::string(request.method_string()) + " " + path);
        if (request[http::field::host] != state_->host) {
            state_->refuse(said + " for another host (" +
                           printable(std::string(request[http::field::host])) + ")");
            return reply(answer(request, http::status::forbidden, "dpdb web: wrong Host\n"));
        }
        if (request.method() != http::verb::get && request.method() != http::verb::head) {
            return reply(answer(request, http::status::method_not_allowed, "dpdb web: only GET\n"));
        }
        const bool holder = state_->access->holds_cookie(request[http::field::cookie]);
        if (holder) slot_.release();  // no longer a stranger
        const auto token = query_value(request.target(), "token");
        if (!token.empty()) {
            if (holder || state_->access->exchange(token)) {
                slot_.release();
                // The token leaves the address bar at once; the cookie stands for it from now.
                auto response = answer(request, http::status::see_other, "");
                response.set(http::field::location, "/");
                response.set(http::field::set_cookie, state_->access->cookie_header());
                return reply(std::move(response));
            }
            state_->refuse(said + ": a used or wrong token");
            return reply(answer(request, http::status::forbidden,
                                "dpdb web: this link was used already or is not this server's; "
                                "start `dpdb web` again for a new one\n"));
        }
        if (!holder) {
            state_->refuse(said + " without the token");
            return reply(answer(request, http::status::forbidden,
                                "dpdb web: open the URL `dpdb web` printed\n"));
        }
        if (path == "/ws") return upgrade(request, said);
        const Asset* asset = find_asset(path);
        if (asset == nullptr) return reply(answer(request, http::status::not_found, "not found\n"));
        reply(answer(request, http::status::ok, std::string(asset->body), asset->content_type));
    }

    void upgrade(const Request& request, const std::string& said) {
        const auto origin = std::string(request[http::field::origin]);
        if (!state_->access->same_origin(origin)) {
            state_->refuse(said + " from another origin (" + printable(origin) + ")");
            return reply(answer(request, http::status::forbidden, "dpdb web: wrong Origin\n"));
        }
        if (!beast::websocket::is_upgrade(request)) {
            return reply(answer(request, http::status::bad_request,
                                "dpdb web: a WebSocket upgrade wanted\n"));
        }
        auto page = std::make_shared<PageSocket>(std::move(stream_), state_->handlers);
        std::weak_ptr<Server::State> weak = state_;
        page->accept(request, [weak](const std::shared_ptr<PageSocket>& opened) {
            if (auto state = weak.lock()) state->pages.push_back(opened);
        });
    }

    void reply(Response response) {
        auto shared = std::make_shared<Response>(std::move(response));
        http::async_write(
            stream_, *shared,
            [self = this->shared_from_this(), shared](beast::error_code error, std::size_t) {
                if (error || !shared->keep_alive()) return self->close();
                self->read_next();
            });
    }

    void close() {
        beast::error_code ignored;
        beast::get_lowest_layer(stream_).socket().shutdown(tcp::socket::shutdown_both, ignored);
    }

    Stream stream_;
    beast::flat_buffer buffer_;
    std::optional<http::request_parser<http::empty_body>> parser_;
    std::shared_ptr<Server::State> state_;
    hub::Admission::Slot slot_;
};

}  // namespace

// The refusal summaries of the admission's windows, written even when refusals stop.
void Server::State::summarise_admission() {
    admission_timer.expires_after(kAdmissionTick);
    admission_timer.async_wait([weak = weak_from_this()](beast::error_code error) {
        auto self = weak.lock();
        if (error || !self) return;
        self->admission->tick();
        self->summarise_admission();
    });
}

void Server::State::accept_next() {
    acceptor.async_accept([self = shared_from_this()](beast::error_code error, tcp::socket socket) {
        if (error == asio::error::operation_aborted) return;
        if (!error) self->serve(std::move(socket));
        self->accept_next();
    });
}

void Server::State::serve(tcp::socket socket) {
    if (connections >= kMaxConnections) {
        refuse("a connection: " + std::to_string(kMaxConnections) + " are open already");
        return;
    }
    if (!tls) {
        std::make_shared<HttpConnection<beast::tcp_stream>>(std::move(socket), shared_from_this(),
                                                            hub::Admission::Slot{})
            ->start();
        return;
    }
    beast::error_code gone;
    const auto peer = socket.remote_endpoint(gone);
    if (gone) return;
    auto slot = admission->admit(peer.address().to_string());
    if (!slot) return;  // every place is a younger stranger's: closed, the browser may retry
    std::make_shared<HttpConnection<PageSocket::TlsStream>>(std::move(socket), shared_from_this(),
                                                            std::move(*slot), *tls)
        ->start();
}

Server::Server(asio::io_context& context, const ListenAddress& listen,
               const std::optional<wire::CertificateFiles>& tls, PageHandlers handlers)
    : state_(std::make_shared<State>(context, std::move(handlers))) {
    if (tls) {
        state_->tls.emplace(asio::ssl::context::tls_server);
        wire::serve_with(state_->tls->native_handle(), *tls);
        state_->admission.emplace(
            [](const std::string& line) { std::fprintf(stderr, "dpdb web: %s\n", line.c_str()); },
            strangers_limits());
        state_->summarise_admission();
    }
    beast::error_code error;
    const auto address = asio::ip::make_address(listen.host, error);
    tcp::endpoint endpoint(address, static_cast<unsigned short>(listen.port));
    auto& acceptor = state_->acceptor;
    if (!error) acceptor.open(endpoint.protocol(), error);
    if (!error) acceptor.set_option(asio::socket_base::reuse_address(true), error);
    if (!error) acceptor.bind(endpoint, error);
    if (!error) acceptor.listen(asio::socket_base::max_listen_connections, error);
    if (error) {
        throw std::runtime_error("cannot listen on " + listen.to_string() + ": " + error.message());
    }
    auto bound = listen;
    bound.port = acceptor.local_endpoint().port();
    state_->host = bound.to_string();
    state_->access = std::make_unique<Access>((tls ? "https://" : "http://") + state_->host);
    state_->accept_next();
}

Server::~Server() {
    beast::error_code ignored;
    state_->acceptor.close(ignored);
    state_->admission_timer.cancel();
}

std::string Server::url() const {
    return state_->access->origin() + "/?token=" + state_->access->token();
}

void Server::broadcast(const std::string& text) {
    const auto shared = std::make_shared<const std::string>(text);
    auto& pages = state_->pages;
    for (auto it = pages.begin(); it != pages.end();) {
        const auto page = it->lock();
        if (!page || page->closed()) {
            it = pages.erase(it);
            continue;
        }
        page->send(shared);
        ++it;
    }
}

}  // namespace dpdb::web
