#include "hub/registry.hpp"

#include <chrono>

namespace dpdb::hub {
namespace {

double now_seconds() {
    using namespace std::chrono;
    return duration_cast<duration<double>>(system_clock::now().time_since_epoch()).count();
}

}  // namespace

void Registry::add_process(std::uint64_t connection, wire::Json info) {
    auto& process = processes_[connection];
    // An update keeps the time the process first registered.
    const auto& first = process.info.is_object() ? process.info : info;
    info["since"] = first.value("since", now_seconds());
    process.connection = connection;
    process.info = std::move(info);
}

std::optional<Process> Registry::remove_process(std::uint64_t connection) {
    const auto it = processes_.find(connection);
    if (it == processes_.end()) return std::nullopt;
    Process gone = std::move(it->second);
    processes_.erase(it);
    return gone;
}

const Process* Registry::process(std::uint64_t connection) const {
    const auto it = processes_.find(connection);
    return it == processes_.end() ? nullptr : &it->second;
}

Process* Registry::process(std::uint64_t connection) {
    const auto it = processes_.find(connection);
    return it == processes_.end() ? nullptr : &it->second;
}

std::uint64_t Registry::connection_of_pid(std::int64_t pid) const {
    for (const auto& [connection, process] : processes_) {
        if (process.info.value("pid", std::int64_t{-1}) == pid) return connection;
    }
    return 0;
}

Session& Registry::open_session(std::uint64_t agent, std::int64_t agent_sid, wire::Json info) {
    info["since"] = now_seconds();
    const std::int64_t id = next_session_id_++;
    auto& session = sessions_[id];
    session = Session{id, agent, agent_sid, 0, std::move(info)};
    return session;
}

Session* Registry::session(std::int64_t id) {
    const auto it = sessions_.find(id);
    return it == sessions_.end() ? nullptr : &it->second;
}

Session* Registry::session_of_agent(std::uint64_t agent, std::int64_t agent_sid) {
    for (auto& [id, session] : sessions_) {
        if (session.agent == agent && session.agent_sid == agent_sid) return &session;
    }
    return nullptr;
}

void Registry::close_session(std::int64_t id) {
    sessions_.erase(id);
}

wire::Json Registry::describe(const Session& session) const {
    wire::Json out = session.info;
    out["sid"] = session.id;
    out["attached"] = session.client != 0;
    if (const Process* owner = process(session.agent)) {
        for (const char* key : {"pid", "host", "argv", "tags", "run"}) {
            if (owner->info.contains(key)) out[key] = owner->info[key];
        }
    }
    return out;
}

wire::Json Registry::describe(const Process& process) const {
    wire::Json out = process.info;
    wire::Json paused = wire::Json::array();
    for (const auto& [id, session] : sessions_) {
        if (session.agent == process.connection) paused.push_back(id);
    }
    out["sessions"] = std::move(paused);
    return out;
}

wire::Json Registry::processes_json() const {
    wire::Json out = wire::Json::array();
    for (const auto& [connection, process] : processes_) out.push_back(describe(process));
    return out;
}

wire::Json Registry::sessions_json() const {
    wire::Json out = wire::Json::array();
    for (const auto& [id, session] : sessions_) out.push_back(describe(session));
    return out;
}

}  // namespace dpdb::hub
