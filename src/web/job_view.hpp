// The job as the page shows it, kept from the hub's listing and events: what a browser that
// connects now is sent first; each later event is then passed on as it came.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>

#include "wire/message.hpp"

namespace dpdb::web {

class JobView {
  public:
    // The listing asked for with this id fills the view.
    explicit JobView(std::int64_t listing_id) : listing_id_(listing_id) {}

    // Applies a message from the hub; returns what the page is to be told of it, if anything.
    std::optional<wire::Json> apply(const wire::Message& message);

    // {"t": "snapshot", processes, sessions, exited, moments}: the whole job, for a page that
    // connects; `moments` are the latest starts, stops and ends as their events were passed on,
    // each stamped with when dpdb web heard of it (`at`).
    wire::Json snapshot() const;
    // A paused session as the hub last described it; nullptr if it is not open.
    const wire::Json* session(std::int64_t sid) const {
        const auto it = sessions_.find(sid);
        return it == sessions_.end() ? nullptr : &it->second;
    }

  private:
    void process_seen(const wire::Json& process);
    void session_seen(const wire::Json& session);
    void ended(wire::Json record);

    std::int64_t listing_id_;
    std::map<std::int64_t, wire::Json> processes_;  // by pid
    std::map<std::int64_t, wire::Json> sessions_;   // by the hub's session id
    std::map<std::int64_t, wire::Json> exited_;     // by pid: how each ended
    std::deque<std::int64_t> exit_order_;           // the oldest first, to bound exited_
    std::deque<wire::Json> moments_;                // the timeline's events, the oldest first
};

}  // namespace dpdb::web
