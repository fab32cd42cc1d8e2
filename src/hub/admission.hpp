// Who may hold an unauthenticated connection to the hub, and how much a stranger can make it
// write to its log.
//
// A connection holds a Slot from its acceptance until it authenticates; the slot goes back when
// it is released or destroyed, however the connection ends (closed, reset, timed out, a failed
// TLS or dpdb handshake). When the places are taken, the oldest unauthenticated connection that
// has had its grace (2 s: a peer that holds the secret proves it within a round trip) gives its
// place up — of the newcomer's address when that address is at its cap, else of the address that
// holds the most, else the oldest anywhere; only when every place is younger than that is the
// newcomer refused (it retries, as agents and clients do). So strangers who hold connections
// open, or fail handshakes from the owner's own address (a shared NAT, `ssh -L`, a
// port-forward), cannot keep the owner out unless they open more than 256 connections every 2 s;
// and a storm of agents reconnecting from one address after a hub restart goes through 256 at a
// time. What strangers cause is logged within a budget per window; the rest is summarised.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <list>
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
        std::size_t total = 256;          // unauthenticated connections open at once, in all
        std::size_t per_address = 256;    // ... and from one address
        std::chrono::seconds window{60};  // of the log budget and of the summaries
        int lines_per_window = 20;        // log lines about strangers per window
        std::size_t summarised = 20;      // addresses whose evictions are summarised one by one
        std::chrono::milliseconds grace{2000};  // a place is never taken from a younger one
    };

    struct Holder;
    struct Counts;

    // A place among the unauthenticated connections, given back once, when released or
    // destroyed (whichever comes first), or taken away by an eviction (which calls what
    // on_evict() set, to close the connection).
    class Slot {
      public:
        Slot() = default;
        Slot(Slot&& other) noexcept = default;
        Slot& operator=(Slot&& other) noexcept;
        Slot(const Slot&) = delete;
        Slot& operator=(const Slot&) = delete;
        ~Slot();
        void release();
        bool held() const;
        // When this connection was accepted: its handshakes (TLS, then dpdb) share one deadline.
        Clock::time_point admitted() const;
        void on_evict(std::function<void()> evict);

      private:
        friend class Admission;
        explicit Slot(std::shared_ptr<Holder> holder) : holder_(std::move(holder)) {}
        std::shared_ptr<Holder> holder_;
    };

    explicit Admission(Log log);
    Admission(Log log, Limits limits);

    // A slot for a new connection from `address`, evicting the oldest as the class says; none
    // when every place is younger than its grace (the connection is to be closed at once).
    std::optional<Slot> admit(const std::string& address, Clock::time_point now = Clock::now());
    // A log line about a stranger (a failed handshake, TLS or dpdb's, a protocol error before
    // authentication), within the budget. It blocks nobody: see the class.
    void note(const std::string& line, Clock::time_point now = Clock::now());
    // Writes the summaries of a window that has ended; the hub calls it from a timer.
    void tick(Clock::time_point now = Clock::now());

    std::size_t unauthenticated() const;
    std::size_t unauthenticated(const std::string& address) const;

  private:
    // Evicts the oldest connection of `address` (any address, when empty) if it has had its
    // grace; says whether it did.
    bool evict_oldest(const std::string& address, const std::string& why, Clock::time_point now);
    void count(std::map<std::string, std::size_t>& by_address, std::size_t& elsewhere,
               const std::string& address, const std::string& first_line, Clock::time_point now);

    Log log_;
    Limits limits_;
    std::shared_ptr<Counts> counts_;
    std::map<std::string, std::size_t> evicted_;  // this window, by address
    std::size_t evicted_elsewhere_ = 0;           // ... from addresses past `summarised`
    std::map<std::string, std::size_t> refused_;  // the same for refusals
    std::size_t refused_elsewhere_ = 0;
    Clock::time_point window_start_;
    int lines_ = 0;               // written this window
    std::size_t suppressed_ = 0;  // not written this window
};

}  // namespace dpdb::hub
