#include <algorithm>
#include <set>

#include "hub/hub_impl.hpp"
#include "hub/local_process.hpp"
#include "hub/logs.hpp"
#include "hub/pages.hpp"
#include "hub/summary.hpp"

namespace dpdb::hub {

void HubImpl::from_client(const ConnectionPtr& client, const Message& message) {
    const auto& type = message.type;
    if (type == "list") return send_listing(client, message);
    if (type == "summarize") {
        Json body = summarize(registry_);
        body["id"] = message.num("id");
        const bool listing =
            message.has("list_up_to") &&
            body.value("processes", std::int64_t{0}) <= message.num("list_up_to") &&
            body.value("sessions", std::int64_t{0}) <= message.num("list_up_to");
        if (listing) body["listing"] = true;
        client->send(make("summary", std::move(body)));
        if (listing) send_listing(client, make("list", {{"id", message.num("id")}}));
        return;
    }
    if (type == "subscribe") {
        // Once only: a repeated subscribe must not make every event arrive twice.
        if (std::find(subscribers_.begin(), subscribers_.end(), client->id()) ==
            subscribers_.end()) {
            subscribers_.push_back(client->id());
        }
        const auto run = message.body.value("run", std::string());
        if (!run.empty()) subscriber_runs_[client->id()] = run;
        if (message.body.value("program_output", false)) watch_program_output(client);
        return;
    }
    if (type == "attach") return attach(client, message);
    if (type == "break_add" || type == "break_clear" || type == "break_list") {
        return breakpoints_request(client, message);
    }
    if (type == "stacks") return stacks_request(client, message);
    if (type == "pause_process" || type == "release_process" || type == "debug_process" ||
        type == "terminate_process") {
        return process_order(client, message);
    }
    if (type == "log") return log_request(client, message);
    if (type == "logs") return logs_request(client, message);
    if (type != "detach" && type != "input" && type != "complete" && type != "interrupt" &&
        type != "inspect") {
        return protocol_violation(client, type);
    }
    Session* session = session_asked(client, message);
    if (session == nullptr) return;
    if (session->client != client->id()) {
        client->send(
            make("error", {{"message", "not attached to session " + std::to_string(session->id)}}));
        return;
    }
    if (type == "detach") {
        detach(*session, "detached");
        return;
    }
    Json body = message.body;
    body.erase("t");
    body["sid"] = session->agent_sid;
    const Process* process = registry_.process(session->agent);
    if (process != nullptr && process->info.contains("unreachable_since")) {
        // Handed over once it is back (hub_liveness.cpp); a completion or an inspection is
        // asked again by then.
        if (type == "input" || type == "interrupt")
            kept_input_[session->id].push_back(make(type, body));
        return;
    }
    if (auto agent = connection(session->agent)) agent->send(make(type, std::move(body)));
}

void HubImpl::send_listing(const ConnectionPtr& client, const Message& message) {
    const bool sessions_only = message.has("sessions_only") && message["sessions_only"].get<bool>();
    EncodedArrays arrays(1, {"processes", {}});
    if (!sessions_only) {
        auto& processes = arrays.back().second;
        processes.reserve(registry_.processes().size());
        for (const auto& [connection, process] : registry_.processes()) {
            std::string text = registry_.encoded(process);
            if (text.size() > kMaxItemBytes) {
                text = encode_item(registry_.describe(process), shrink_description);
            }
            processes.push_back(std::move(text));
        }
    }
    arrays.push_back({"sessions", {}});
    for (const auto& [id, session] : registry_.sessions()) {
        arrays.back().second.push_back(
            encode_item(registry_.describe(session), shrink_description));
    }
    if (!sessions_only) {
        arrays.push_back({"exited", {}});
        for (auto& record : store_.exits(kListedExits)) {
            refresh_outlived(record);
            arrays.back().second.push_back(encode_item(record, shrink_description));
        }
    }
    const std::string head = "\"t\":\"listing\",\"id\":" + std::to_string(message.num("id"));
    for (auto& page : encode_pages(head, arrays)) {
        client->send_encoded(std::move(page), "listing");
    }
}

Session* HubImpl::session_asked(const ConnectionPtr& client, const Message& message) {
    Session* session = registry_.session(message.num("sid"));
    if (session == nullptr) {
        client->send(
            make("error", {{"message", "no session " + std::to_string(message.num("sid"))}}));
    }
    return session;
}

void HubImpl::attach(const ConnectionPtr& client, const Message& message) {
    Session* session = session_asked(client, message);
    if (session == nullptr) return;
    if (session->client != 0 && session->client != client->id()) {
        detach(*session, "another client attached to it");
    }
    session->client = client->id();
    session->columns = message.num("cols");
    client->send(
        make("attached", {{"sid", session->id}, {"session", registry_.describe(*session)}}));
    if (auto agent = connection(session->agent)) {
        agent->send(make("attach", {{"sid", session->agent_sid}, {"cols", message.num("cols")}}));
    }
    publish("session_update", registry_.describe(*session));
}

void HubImpl::detach(Session& session, const std::string& reason) {
    if (auto client = connection(session.client)) {
        client->send(make("detached", {{"sid", session.id}, {"reason", reason}}));
    }
    session.client = 0;
    if (auto agent = connection(session.agent)) {
        agent->send(make("detach", {{"sid", session.agent_sid}}));
    }
    publish("session_update", registry_.describe(session));
}

void HubImpl::log_request(const ConnectionPtr& client, const Message& message) {
    const auto pid = message.num("pid");
    if (registry_.connection_of_pid(pid) != 0) {
        return reply(client, message, false,
                     "pid " + std::to_string(pid) + " is still running; `dpdb stacks " +
                         std::to_string(pid) + "` shows where");
    }
    for (auto& record : store_.exits(kListedExits * 10)) {
        if (record.value("pid", std::int64_t{-1}) == pid) {
            refresh_outlived(record);
            return reply(client, message, true, "", {{"process", record}});
        }
    }
    reply(client, message, false, "no record of pid " + std::to_string(pid) + " at this hub");
}

void HubImpl::logs_request(const ConnectionPtr& client, const Message& message) {
    std::set<std::int64_t> pids;
    for (const auto& pid : message["pids"]) {
        if (pid.is_number_integer()) pids.insert(pid.get<std::int64_t>());
    }
    const auto limit = message.has("limit") ? message.num("limit") : kListedLogs;
    send_result_pages(*client, message.num("id"),
                      log_pages(store_.logs(pids, static_cast<int>(std::clamp<std::int64_t>(
                                                      limit, 0, kListedLogs)))));
}

}  // namespace dpdb::hub
