#include "web/job_view.hpp"

#include <chrono>

namespace dpdb::web {
namespace {

using wire::Json;

// Ended processes kept for the page (the hub's store keeps its own, longer record).
constexpr std::size_t kKeptExits = 10000;
// The starts, stops and ends kept for the timeline of a page that connects later.
constexpr std::size_t kKeptMoments = 10000;

// Now, in seconds since the epoch: when dpdb web heard of an event (the hub's events carry no
// time of their own; logpoint messages do, from the process's clock).
double now() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// The events the timeline shows beside logpoint messages.
bool is_moment(const std::string& kind) {
    return kind == "process_start" || kind == "session_open" || kind == "process_crash" ||
           kind == "process_exit";
}

std::int64_t id_of(const Json& object, const char* key) {
    const auto it = object.find(key);
    return it != object.end() && it->is_number_integer() ? it->get<std::int64_t>() : 0;
}

Json values(const std::map<std::int64_t, Json>& by_id) {
    Json out = Json::array();
    for (const auto& [id, value] : by_id) out.push_back(value);
    return out;
}

}  // namespace

void JobView::process_seen(const Json& process) {
    const auto pid = id_of(process, "pid");
    if (pid != 0) processes_[pid] = process;
}

void JobView::session_seen(const Json& session) {
    const auto sid = id_of(session, "sid");
    if (sid != 0) sessions_[sid] = session;
}

void JobView::ended(Json record) {
    const auto pid = id_of(record, "pid");
    if (pid == 0) return;
    if (exited_.count(pid) == 0) exit_order_.push_back(pid);
    exited_[pid] = std::move(record);
    while (exited_.size() > kKeptExits) {
        exited_.erase(exit_order_.front());
        exit_order_.pop_front();
    }
}

std::optional<Json> JobView::apply(const wire::Message& message) {
    if (message.type == "listing" && message.num("id") == listing_id_) {
        for (const auto& process : message["processes"]) process_seen(process);
        for (const auto& session : message["sessions"]) session_seen(session);
        if (message.has("exited")) {
            for (const auto& record : message["exited"]) ended(record);
        }
        // Pages come in one after another: the page is told once the last is in.
        if (message.has("more")) return std::nullopt;
        return snapshot();
    }
    if (message.type != "event") return std::nullopt;
    const auto kind = message.str("kind");
    const auto& data = message["data"];
    Json told = data;
    if (kind == "process_start" || kind == "process_update") {
        process_seen(data);
    } else if (kind == "session_open" || kind == "session_update") {
        session_seen(data);
    } else if (kind == "session_close") {
        sessions_.erase(id_of(data, "sid"));
    } else if (kind == "process_crash") {
        const auto it = processes_.find(id_of(data, "pid"));
        if (it != processes_.end() && data.contains("signal")) it->second["crash"] = data["signal"];
    } else if (kind == "process_exit") {
        const auto pid = id_of(data, "pid");
        const auto it = processes_.find(pid);
        Json record = it != processes_.end() ? it->second : Json::object();
        if (it != processes_.end()) processes_.erase(it);
        record.update(data);
        // The hub names the pid only: the page's timeline wants the lane (host) it ended in.
        if (record.contains("host")) told["host"] = record["host"];
        ended(std::move(record));
    } else if (kind != "log" && kind != "breakpoints") {
        return std::nullopt;
    }
    Json event = {{"t", "event"}, {"kind", kind}};
    if (is_moment(kind) && told.is_object()) {
        told["at"] = now();
        event["data"] = std::move(told);
        moments_.push_back(event);
        if (moments_.size() > kKeptMoments) moments_.pop_front();
    } else {
        event["data"] = std::move(told);
    }
    return event;
}

Json JobView::snapshot() const {
    return {{"t", "snapshot"},
            {"processes", values(processes_)},
            {"sessions", values(sessions_)},
            {"exited", values(exited_)},
            {"moments", Json(moments_)}};
}

}  // namespace dpdb::web
