#include "hub/connection.hpp"

#include <chrono>

namespace dpdb::hub {
namespace {

// A peer that does not finish the handshake in this time is dropped (slow or hostile).
constexpr auto kHandshakeTimeout = std::chrono::seconds(10);
// A peer that does not read what we send it cannot make the hub hold more than this.
constexpr std::size_t kMaxQueuedBytes = 64u << 20;
// Above this a peer is congested and its feeders are held; below the second they go on.
constexpr std::size_t kCongestedBytes = 4u << 20;
constexpr std::size_t kDrainedBytes = 1u << 20;
constexpr auto kFlushTimeout = std::chrono::seconds(2);

}  // namespace

Connection::Connection(std::unique_ptr<Stream> stream, std::uint64_t id)
    : stream_(std::move(stream)), id_(id), deadline_(stream_->executor()) {}

void Connection::start(Handler on_message, Closer on_close) {
    on_message_ = std::move(on_message);
    on_close_ = std::move(on_close);
    // From its acceptance: a TLS handshake before this one spent part of the same time.
    deadline_.expires_at(slot.held() ? slot.admitted() + kHandshakeTimeout
                                     : std::chrono::steady_clock::now() + kHandshakeTimeout);
    deadline_.async_wait([self = shared_from_this()](const asio::error_code& ec) {
        if (!ec && !self->authenticated) self->close("no handshake within 10 s");
    });
    read_more();
}

void Connection::read_more() {
    stream_->async_read_some(
        asio::buffer(read_buffer_),
        [self = shared_from_this()](const asio::error_code& ec, std::size_t size) {
            if (self->closed_) return;
            if (ec) {
                // A TLS peer that exits without close_notify has simply gone, like one at EOF.
                const bool gone =
                    ec == asio::error::eof || ec == asio::ssl::error::stream_truncated;
                self->close(gone ? "disconnected" : ec.message());
                return;
            }
            self->last_heard = std::chrono::steady_clock::now();
            self->decoder_.feed(self->read_buffer_.data(), size);
            try {
                while (auto payload = self->decoder_.next()) {
                    self->on_message_(self, wire::decode(*payload));
                    if (self->closed_) return;
                }
            } catch (const wire::ProtocolError& error) {
                self->close(std::string("malformed input: ") + error.what());
                return;
            }
            if (self->authenticated && !self->handshake_done_) {
                self->handshake_done_ = true;
                self->deadline_.cancel();
            }
            if (self->reading_held_) {
                self->read_idle_ = true;
                return;
            }
            self->read_more();
        });
}

void Connection::send(const wire::Message& message) {
    if (closed_ || !write_failure_.empty()) return;
    send_encoded(wire::encode(message), message.type);
}

void Connection::send_encoded(std::string payload, const std::string& type) {
    if (closed_ || !write_failure_.empty()) return;
    std::string bytes;
    try {
        bytes = wire::encode_frame(payload);
    } catch (const wire::ProtocolError& error) {
        // What the hub assembles (a session with its process's details) can outgrow a frame
        // although every message it came from fitted. Tell the peer instead of letting the
        // exception escape into whatever handler triggered the send (from a close handler it
        // would leave the io_context, ending the hub).
        bytes = wire::frame(wire::make(
            "error",
            {{"message", "a " + type + " message was too large to send (" + error.what() + ")"}}));
    }
    enqueue(std::move(bytes));
}

void Connection::enqueue(std::string bytes) {
    queued_bytes_ += bytes.size();
    if (queued_bytes_ > kMaxQueuedBytes) {
        close("does not read what it is sent");
        return;
    }
    write_queue_.push_back(std::move(bytes));
    if (write_queue_.size() == 1) write_next();
}

void Connection::write_next() {
    stream_->async_write(asio::buffer(write_queue_.front()),
                         [self = shared_from_this()](const asio::error_code& ec, std::size_t) {
                             if (self->finished_) return;
                             if (ec) return self->write_failed(ec.message());
                             self->queued_bytes_ -= self->write_queue_.front().size();
                             self->write_queue_.pop_front();
                             if (self->queued_bytes_ < kDrainedBytes) self->run_drained();
                             if (!self->write_queue_.empty()) {
                                 self->write_next();
                             } else if (self->closed_) {
                                 self->finish();
                             }
                         });
}

// The peer can no longer be written to (it exited, or shut its end): what it sent before that
// is still read and handled, in order, up to its close (a client's last requests, written just
// before it exited while the hub had an event on the way to it). One that neither closes nor
// sends any more is dropped within the flush bound.
void Connection::write_failed(const std::string& reason) {
    write_queue_.clear();
    queued_bytes_ = 0;
    run_drained();  // whoever was held for this peer goes on without it
    if (closed_) return finish();
    write_failure_ = reason;
    deadline_.expires_after(kFlushTimeout);
    deadline_.async_wait([self = shared_from_this()](const asio::error_code& ec) {
        if (!ec) self->close(self->write_failure_);
    });
}

bool Connection::congested() const {
    return queued_bytes_ > kCongestedBytes;
}

void Connection::when_drained(std::function<void()> resume) {
    if (finished_ || queued_bytes_ < kDrainedBytes) {
        resume();
        return;
    }
    on_drained_.push_back(std::move(resume));
}

void Connection::run_drained() {
    auto waiting = std::move(on_drained_);
    on_drained_.clear();
    for (auto& resume : waiting) resume();
}

void Connection::hold_reading() {
    reading_held_ = true;
}

void Connection::resume_reading() {
    reading_held_ = false;
    if (read_idle_ && !closed_) {
        read_idle_ = false;
        read_more();
    }
}

void Connection::close(const std::string& reason) {
    if (closed_) return;
    closed_ = true;
    close_reason_ = reason;
    if (write_queue_.empty()) {
        finish();
        return;
    }
    // Let the queue (an error or a refusal) drain, but never wait long for a slow peer.
    deadline_.expires_after(kFlushTimeout);
    deadline_.async_wait([self = shared_from_this()](const asio::error_code& ec) {
        if (!ec) self->finish();
    });
}

void Connection::finish() {
    if (finished_) return;
    finished_ = true;
    deadline_.cancel();
    write_queue_.clear();
    queued_bytes_ = 0;
    stream_->close();
    run_drained();  // whoever was held for this peer goes on without it
    if (on_close_) on_close_(shared_from_this(), close_reason_);
    on_message_ = nullptr;
    on_close_ = nullptr;
}

}  // namespace dpdb::hub
