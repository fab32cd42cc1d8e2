// Who may hold an unauthenticated connection to the hub, and how much a stranger can make it
// write to its log.
//
// A connection holds a Slot from its acceptance until it authenticates; the slot goes back when
// it is released or destroyed, however the connection ends (closed, reset, timed out, a failed
// TLS or dpdb handshake), so strangers can never use up the places for good. Failures before
// authentication (a wrong secret, a protocol error) block an address for a while. What strangers
// cause is logged within a budget per window; the rest is counted and summarised once a window.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace dpdb::hub {

class Admission {
  public:
    using Clock = std::chrono::steady_clock;
    using Log = std::function<void(const std::string&)>;

    struct Limits {
        std::size_t total = 256;       // unauthenticated connections open at once, in all
        std::size_t per_address = 32;  // ... and from one address
        int failures = 5;              // failures within failure_window that block an address
        std::chrono::seconds failure_window{60};
        std::chrono::seconds block{30};
        std::chrono::seconds window{60};  // of the log budget and of the summaries
        int lines_per_window = 20;        // log lines about strangers per window, and again
                                          // for blocked addresses
        std::size_t summarised = 20;      // addresses whose refusals are summarised one by one
    };

    // A place among the unauthenticated connections, given back once, when released or
    // destroyed (whichever comes first).
    class Slot {
      public:
        Slot() = default;
        Slot(Slot&& other) noexcept;
        Slot& operator=(Slot&& other) noexcept;
        Slot(const Slot&) = delete;
        Slot& operator=(const Slot&) = delete;
        ~Slot();
        void release();
        bool held() const { return !address_.empty(); }

      private:
        friend class Admission;
        struct Counts;
        Slot(std::weak_ptr<Counts> counts, std::string address);
        std::weak_ptr<Counts> counts_;
        std::string address_;
    };

    explicit Admission(Log log);
    Admission(Log log, Limits limits);

    // A slot for a new connection from `address`, or none: the connection is to be closed at
    // once (the refusal is counted for the summary).
    std::optional<Slot> admit(const std::string& address, Clock::time_point now = Clock::now());
    // Why `address` is refused for now, if it is.
    std::optional<std::string> blocked(const std::string& address,
                                       Clock::time_point now = Clock::now());
    // A failure before authentication: logs `what` (within the budget) and counts it towards
    // blocking the address. The private Unix socket ("unix") is never blocked.
    void failure(const std::string& address, const std::string& what,
                 Clock::time_point now = Clock::now());
    // A log line about a stranger, within the budget.
    void note(const std::string& line, Clock::time_point now = Clock::now());
    // The same, with a budget of its own: that an address is now blocked is worth more than
    // what its connections sent.
    void note_block(const std::string& line, Clock::time_point now);
    // Writes the summaries of a window that has ended; the hub calls it from a timer.
    void tick(Clock::time_point now = Clock::now());

    std::size_t unauthenticated() const;
    std::size_t unauthenticated(const std::string& address) const;

  private:
    struct Failures {
        Clock::time_point window_start;
        int count = 0;
        Clock::time_point blocked_until;
    };

    Log log_;
    Limits limits_;
    std::shared_ptr<Slot::Counts> counts_;
    std::map<std::string, Failures> failures_;
    std::map<std::string, std::size_t> refused_;  // this window, by address
    std::size_t refused_elsewhere_ = 0;           // ... from addresses past `summarised`
    Clock::time_point window_start_;
    int lines_ = 0;               // written this window
    int block_lines_ = 0;         // written this window by note_block
    std::size_t suppressed_ = 0;  // not written this window
};

}  // namespace dpdb::hub
