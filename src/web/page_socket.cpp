#include "web/page_socket.hpp"

#include <boost/beast/core/buffers_to_string.hpp>
#include <boost/beast/websocket.hpp>
#include <cstdio>

namespace dpdb::web {
namespace {

namespace beast = boost::beast;
namespace websocket = beast::websocket;

// What the page may send in one message (a console's line, a breakpoint), and how much may wait for
// a page that does not read: past that it is closed, and reloading it starts from a fresh snapshot.
constexpr std::size_t kMaxIncoming = std::size_t{64} * 1024;
constexpr std::size_t kMaxQueuedBytes = std::size_t{64} * 1024 * 1024;

}  // namespace

void PageSocket::accept(const Request& request,
                        std::function<void(std::shared_ptr<PageSocket>)> opened) {
    std::visit(
        [&](auto& socket) {
            beast::get_lowest_layer(socket).expires_never();
            socket.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
            socket.read_message_max(kMaxIncoming);
            socket.async_accept(request, [self = shared_from_this(), opened = std::move(opened)](
                                             beast::error_code error) mutable {
                if (error) return self->close();
                self->send(std::make_shared<const std::string>(self->handlers_->snapshot()));
                opened(self);
                self->read_next();
            });
        },
        socket_);
}

void PageSocket::read_next() {
    std::visit(
        [&](auto& socket) {
            socket.async_read(
                incoming_, [self = shared_from_this()](beast::error_code error, std::size_t) {
                    if (error) return self->close();
                    const auto text = beast::buffers_to_string(self->incoming_.data());
                    self->incoming_.clear();
                    self->handlers_->message(self, text);
                    if (!self->closed_) self->read_next();
                });
        },
        socket_);
}

void PageSocket::send(std::shared_ptr<const std::string> text) {
    if (closed_) return;
    queued_bytes_ += text->size();
    if (queued_bytes_ > kMaxQueuedBytes) {
        std::fprintf(stderr, "dpdb web: a page fell behind the job's updates; closed it\n");
        return close();
    }
    queue_.push_back(std::move(text));
    if (!writing_) write_next();
}

void PageSocket::write_next() {
    if (closed_ || queue_.empty()) {
        writing_ = false;
        return;
    }
    writing_ = true;
    std::visit(
        [&](auto& socket) {
            socket.text(true);
            socket.async_write(boost::asio::buffer(*queue_.front()),
                               [self = shared_from_this()](beast::error_code error, std::size_t) {
                                   if (error || self->closed_) return self->close();
                                   self->queued_bytes_ -= self->queue_.front()->size();
                                   self->queue_.pop_front();
                                   self->write_next();
                               });
        },
        socket_);
}

void PageSocket::close() {
    if (closed_) return;
    closed_ = true;
    queue_.clear();
    handlers_->closed(this);
    beast::error_code ignored;
    std::visit(
        [&](auto& socket) {
            beast::get_lowest_layer(socket).socket().shutdown(
                boost::asio::ip::tcp::socket::shutdown_both, ignored);
        },
        socket_);
}

}  // namespace dpdb::web
