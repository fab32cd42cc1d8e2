#include "hub/registry.hpp"

#include <algorithm>

#include "hub/wall_clock.hpp"

namespace dpdb::hub {
namespace {

std::string dump(const wire::Json& value) {
    return value.dump(-1, ' ', false, wire::Json::error_handler_t::replace);
}

std::string text_of(const wire::Json& info, const char* key) {
    const auto it = info.find(key);
    if (it == info.end() || it->is_null()) return "";
    return it->is_string() ? it->get<std::string>() : dump(*it);
}

}  // namespace

void Registry::index_pid(std::uint64_t connection, const wire::Json& info, bool add) {
    const auto it = info.find("pid");
    if (it == info.end() || !it->is_number_integer()) return;
    const auto pid = it->get<std::int64_t>();
    if (add) {
        by_pid_[pid].insert(connection);
        return;
    }
    const auto found = by_pid_.find(pid);
    if (found == by_pid_.end()) return;
    found->second.erase(connection);
    if (found->second.empty()) by_pid_.erase(found);
}

void Registry::add_process(std::uint64_t connection, wire::Json info) {
    auto& process = processes_[connection];
    info.erase("unreachable_since");  // the hub's to say (hub_liveness), never the agent's
    // An update keeps the time the process first registered.
    const auto& first = process.info.is_object() ? process.info : info;
    info["since"] = first.value("since", now_seconds());
    if (process.info.is_object()) index_pid(connection, process.info, false);
    process.connection = connection;
    process.info = std::move(info);
    index_pid(connection, process.info, true);
    process.host = text_of(process.info, "host");
    process.tags.clear();
    const auto tags = process.info.find("tags");
    if (tags != process.info.end() && tags->is_object()) {
        for (const auto& [name, value] : tags->items()) {
            process.tags.emplace_back(name,
                                      value.is_string() ? value.get<std::string>() : dump(value));
        }
    }
}

std::optional<Process> Registry::remove_process(std::uint64_t connection) {
    const auto it = processes_.find(connection);
    if (it == processes_.end()) return std::nullopt;
    Process gone = std::move(it->second);
    processes_.erase(it);
    index_pid(connection, gone.info, false);
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
    const auto it = by_pid_.find(pid);
    return it == by_pid_.end() ? 0 : *it->second.begin();
}

std::uint64_t Registry::connection_of(const std::string& host, std::int64_t pid) const {
    const auto it = by_pid_.find(pid);
    if (it == by_pid_.end()) return 0;
    for (const auto connection : it->second) {
        if (processes_.at(connection).host == host) return connection;
    }
    return 0;
}

void Registry::move_process(std::uint64_t from, std::uint64_t to) {
    const auto it = processes_.find(from);
    if (it == processes_.end() || from == to) return;
    Process moved = std::move(it->second);
    processes_.erase(it);
    index_pid(from, moved.info, false);
    moved.connection = to;
    index_pid(to, moved.info, true);
    processes_[to] = std::move(moved);
    const auto sessions = by_agent_.find(from);
    if (sessions == by_agent_.end()) return;
    for (const auto& [agent_sid, id] : sessions->second) sessions_.at(id).agent = to;
    by_agent_[to] = std::move(sessions->second);
    by_agent_.erase(from);
}

Session& Registry::open_session(std::uint64_t agent, std::int64_t agent_sid, wire::Json info,
                                std::int64_t id) {
    info["since"] = now_seconds();
    if (id <= 0 || sessions_.count(id) != 0) id = next_session_id_;
    next_session_id_ = std::max(next_session_id_, id + 1);
    auto& session = sessions_[id];
    session.id = id;
    session.agent = agent;
    session.agent_sid = agent_sid;
    session.info = std::move(info);
    by_agent_[agent][agent_sid] = id;
    return session;
}

Session* Registry::session(std::int64_t id) {
    const auto it = sessions_.find(id);
    return it == sessions_.end() ? nullptr : &it->second;
}

Session* Registry::session_of_agent(std::uint64_t agent, std::int64_t agent_sid) {
    const auto it = by_agent_.find(agent);
    if (it == by_agent_.end()) return nullptr;
    const auto found = it->second.find(agent_sid);
    return found == it->second.end() ? nullptr : session(found->second);
}

void Registry::close_session(std::int64_t id) {
    const auto it = sessions_.find(id);
    if (it == sessions_.end()) return;
    const auto agent = by_agent_.find(it->second.agent);
    if (agent != by_agent_.end()) {
        agent->second.erase(it->second.agent_sid);
        if (agent->second.empty()) by_agent_.erase(agent);
    }
    sessions_.erase(it);
}

std::vector<std::int64_t> Registry::sessions_of(std::uint64_t agent) const {
    std::vector<std::int64_t> ids;
    const auto it = by_agent_.find(agent);
    if (it == by_agent_.end()) return ids;
    for (const auto& [agent_sid, id] : it->second) ids.push_back(id);
    std::sort(ids.begin(), ids.end());
    return ids;
}

std::size_t Registry::session_count(std::uint64_t agent) const {
    const auto it = by_agent_.find(agent);
    return it == by_agent_.end() ? 0 : it->second.size();
}

wire::Json Registry::describe(const Session& session) const {
    wire::Json out = session.info;
    out["sid"] = session.id;
    out["attached"] = session.client != 0;
    if (const Process* owner = process(session.agent)) {
        for (const char* key : {"pid", "host", "argv", "tags", "run", "unreachable_since"}) {
            if (owner->info.contains(key)) out[key] = owner->info[key];
        }
    }
    return out;
}

wire::Json Registry::describe(const Process& process) const {
    wire::Json out = process.info;
    wire::Json paused = wire::Json::array();
    for (const auto id : sessions_of(process.connection)) paused.push_back(id);
    out["sessions"] = std::move(paused);
    return out;
}

std::string Registry::encoded(const Process& process) const {
    // The description's text with "sessions" added before its closing brace; an agent that named
    // a field "sessions" itself gets the copy that replaces it.
    if (!process.info.is_object() || process.info.contains("sessions")) {
        return dump(describe(process));
    }
    std::string text = dump(process.info);
    text.pop_back();  // '}'
    text += text.size() > 1 ? ",\"sessions\":[" : "\"sessions\":[";
    bool first = true;
    for (const auto id : sessions_of(process.connection)) {
        text += first ? "" : ",";
        text += std::to_string(id);
        first = false;
    }
    return text + "]}";
}

}  // namespace dpdb::hub
