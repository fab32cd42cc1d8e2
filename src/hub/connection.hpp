// One peer of the hub (agent or client): owns its stream, its read buffer and its write queue.
#pragma once

#include <asio.hpp>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hub/admission.hpp"
#include "hub/stream.hpp"
#include "wire/message.hpp"

namespace dpdb::hub {

enum class Role { Unknown, Agent, Client };

class Connection : public std::enable_shared_from_this<Connection> {
  public:
    using Handler = std::function<void(const std::shared_ptr<Connection>&, wire::Message)>;
    using Closer = std::function<void(const std::shared_ptr<Connection>&, const std::string&)>;

    Connection(std::unique_ptr<Stream> stream, std::uint64_t id);

    // Starts reading; every decoded message goes to on_message, and on_close is called exactly
    // once when the connection ends, with the reason.
    void start(Handler on_message, Closer on_close);
    void send(const wire::Message& message);
    // A message already encoded (hub/pages.hpp), `type` naming it in a failure.
    void send_encoded(std::string payload, const std::string& type);
    // Ends the connection once what is queued is written (at most 2 s) and reports `reason`.
    void close(const std::string& reason);

    // Backpressure, as a terminal gives it: a peer that has more than a few MiB waiting to be
    // written to it is congested, and whoever feeds it is held (not read) until it drains.
    bool congested() const;
    // Runs `resume` once this peer's queue has drained (or it has gone).
    void when_drained(std::function<void()> resume);
    // Stops reading from this peer after the messages already read; resume_reading goes on.
    void hold_reading();
    void resume_reading();
    bool reading_held() const { return reading_held_; }

    std::uint64_t id() const { return id_; }
    const Stream& stream() const { return *stream_; }
    Role role = Role::Unknown;
    std::string nonce;  // the hub's challenge to this peer
    bool authenticated = false;
    Admission::Slot slot;  // held from acceptance until the peer authenticates
    // When it last sent anything (hub/hub_liveness.cpp); a peer whose reading is held counts
    // as heard, since the hub is the one not listening.
    std::chrono::steady_clock::time_point last_heard = std::chrono::steady_clock::now();
    // It sends heartbeats (an agent over TCP does, from its first moment): only such a peer is
    // sent them and marked unreachable when they stop (a peer speaking the protocol raw is not).
    bool beats = false;

  private:
    void read_more();
    void enqueue(std::string bytes);
    void write_next();
    void write_failed(const std::string& reason);
    void finish();
    void run_drained();

    std::unique_ptr<Stream> stream_;
    std::uint64_t id_;
    wire::FrameDecoder decoder_;
    // Small: a hub holds one per connection, and frames larger than it arrive in several reads.
    std::array<char, 8192> read_buffer_{};
    std::deque<std::string> write_queue_;
    std::size_t queued_bytes_ = 0;
    // First the handshake deadline, then the bound on flushing at close (or on reading on after a
    // failed write).
    asio::steady_timer deadline_;
    Handler on_message_;
    Closer on_close_;
    std::string close_reason_;
    bool handshake_done_ = false;
    std::vector<std::function<void()>> on_drained_;
    bool reading_held_ = false;
    bool read_idle_ = false;     // held with no read in flight: resume_reading must start one
    bool closed_ = false;        // nothing more is read or queued
    std::string write_failure_;  // set once a write failed: nothing more is queued, reads go on
    bool finished_ = false;      // the socket is closed and on_close_ was called
};

}  // namespace dpdb::hub
