// One page's WebSocket: the job's snapshot, then every update, in order; what the page sends
// (a console's line, a breakpoint to set: web/page_requests) is handed on as it comes.
#pragma once

#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <boost/beast/websocket/stream.hpp>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <variant>

namespace dpdb::web {

class PageSocket;

// What the server does with its pages, the same for all of them.
struct PageHandlers {
    std::function<std::string()> snapshot;  // the first thing a page is sent
    std::function<void(const std::shared_ptr<PageSocket>&, const std::string&)> message;
    std::function<void(const PageSocket*)> closed;
};

class PageSocket : public std::enable_shared_from_this<PageSocket> {
  public:
    using Request = boost::beast::http::request<boost::beast::http::empty_body>;

    using TlsStream = boost::beast::ssl_stream<boost::beast::tcp_stream>;

    // Over plain TCP (loopback) or TLS, as the page's connection came.
    PageSocket(boost::beast::tcp_stream stream, std::shared_ptr<const PageHandlers> handlers)
        : socket_(std::in_place_index<0>, std::move(stream)), handlers_(std::move(handlers)) {}
    PageSocket(TlsStream stream, std::shared_ptr<const PageHandlers> handlers)
        : socket_(std::in_place_index<1>, std::move(stream)), handlers_(std::move(handlers)) {}

    // Answers the upgrade; once done, sends the snapshot and calls `opened` (where updates
    // start).
    void accept(const Request& request, std::function<void(std::shared_ptr<PageSocket>)> opened);
    // Queues a message; a page that falls too far behind is closed rather than buffered for.
    void send(std::shared_ptr<const std::string> text);
    bool closed() const { return closed_; }

  private:
    void read_next();
    void write_next();
    void close();

    std::variant<boost::beast::websocket::stream<boost::beast::tcp_stream>,
                 boost::beast::websocket::stream<TlsStream>>
        socket_;
    std::shared_ptr<const PageHandlers> handlers_;
    boost::beast::flat_buffer incoming_;
    std::deque<std::shared_ptr<const std::string>> queue_;
    std::size_t queued_bytes_ = 0;
    bool writing_ = false;
    bool closed_ = false;
};

}  // namespace dpdb::web
