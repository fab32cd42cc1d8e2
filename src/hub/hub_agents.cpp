#include "hub/hub_impl.hpp"
#include "hub/logs.hpp"
#include "hub/wall_clock.hpp"
#include "wire/contents.hpp"

namespace dpdb::hub {

void HubImpl::from_agent(const ConnectionPtr& agent, const Message& message) {
    const auto& type = message.type;
    if (Process* known = registry_.process(agent->id());
        known != nullptr && known->info.contains("unreachable_since")) {
        reached_again(agent, *known);
    }
    if (type == "heartbeat") {
        agent->beats = true;
        // The first is sent once it has opened its sessions again on a fresh connection
        // (agent/link.cpp).
        return close_uncarried(agent->id());
    }
    if (type == "proc_update") {
        Json proc = wire::without_nulls(message["proc"]);
        if (const auto impostor = agreed_pid(agent, proc)) {
            log("dropped connection " + std::to_string(agent->id()) + ": " + *impostor);
            return agent->close("refused: " + *impostor);
        }
        registry_.add_process(agent->id(), std::move(proc));
        publish("process_update", registry_.describe(*registry_.process(agent->id())));
        return;
    }
    Process* process = registry_.process(agent->id());
    if (type == "break_status") {
        process->resolved_breakpoints = message["resolved"];
        process->breakpoint_notes = message.has("notes") ? message["notes"] : wire::Json::array();
        // Only an answer to the latest list counts: one to an earlier list, overtaken on the way,
        // is still news of what the process has armed, but says nothing of the latest change. An
        // agent of an earlier release echoes no version: taken, as then, for the latest.
        process->breakpoints_reported =
            !message.has("version") || message.num("version") == breakpoints_version_;
        return;
    }
    if (type == "stacks_reply") return stacks_answered(agent->id(), message);
    if (type == "log_lines") return logs_arrived(*process, message);
    if (type == "program_output") return program_output_arrived(*process, message);
    if (type == "exiting") {
        process->ending = {{"status", message.num("status")}};
        return unsent_at_end(*process, message);
    }
    if (type == "exec") {
        // Its connection closes as the new program replaces it (close-on-exec): the record
        // carries the new command, and the process is not taken for vanished.
        process->ending = {{"exec", message.str("path")}, {"argv", message["argv"]}};
        return;
    }
    if (type == "released") {
        answer_orders(agent->id(), "release",
                      " runs on without the debugger: breakpoints out, paused threads resumed");
        return;
    }
    if (type == "pause_armed") {
        // How many threads the pause asked (dpdb attach -p --all-threads waits for their
        // sessions); an older agent's says nothing.
        Json data = Json::object();
        if (message.has("threads")) data["threads"] = message["threads"];
        answer_orders(agent->id(), "pause", " pauses at its next Python line", true, data);
        return;
    }
    if (type == "exec_failed") {
        if (process->ending.contains("exec")) process->ending = Json();
        return;
    }
    if (type == "crash") {
        process->ending = {{"signal", message.str("signal")}, {"stacks", message.str("stacks")}};
        publish("process_crash", {{"pid", process->info.value("pid", Json())},
                                  {"run", process->info.value("run", Json())},
                                  {"signal", message.str("signal")},
                                  {"argv", process->info.value("argv", Json())}});
        return unsent_at_end(*process, message);
    }
    if (!message.has("sid")) return protocol_violation(agent, type);
    const auto agent_sid = message.num("sid");
    if (type == "session_open") {
        if (Session* carried = registry_.session_of_agent(agent->id(), agent_sid)) {
            if (!carried->carried)
                return protocol_violation(agent, "session_open for an open session");
            const auto since = carried->info.value("since", Json());
            carried->info = wire::without_nulls(message["info"]);
            carried->info["since"] = since;
            resume_session(agent, *carried);
            publish("session_update", registry_.describe(*carried));
            return;
        }
        const Store::SessionKey key{process->host, process->info.value("pid", std::int64_t{0}),
                                    agent_sid};
        const auto remembered = remembered_sessions_.find(key);
        std::int64_t id = 0;
        if (remembered != remembered_sessions_.end()) {
            id = remembered->second;
            remembered_sessions_.erase(remembered);
        }
        auto& session = registry_.open_session(agent->id(), agent_sid,
                                               wire::without_nulls(message["info"]), id);
        store_.remember_session(key, session.id);
        publish("session_open", registry_.describe(session));
        return;
    }
    Session* session = registry_.session_of_agent(agent->id(), agent_sid);
    if (session == nullptr) return;  // raced with a close: nothing to route
    if (type == "session_update") {
        const auto since = session->info.value("since", Json());
        session->info = wire::without_nulls(message["info"]);
        session->info["since"] = since;
        publish("session_update", registry_.describe(*session));
    } else if (type == "session_close") {
        close_session(*session, message.str("reason"));
    } else if (type == "output" || type == "prompt" || type == "completions" ||
               type == "inspect_reply") {
        if (auto client = connection(session->client)) {
            Json body = message.body;
            body.erase("t");
            body["sid"] = session->id;
            client->send(make(type, std::move(body)));
            hold_while_congested(agent, client);
        }
    } else {
        protocol_violation(agent, type);
    }
}

void HubImpl::hold_while_congested(const ConnectionPtr& agent, const ConnectionPtr& client) {
    if (!client->congested() || agent->reading_held()) return;
    agent->hold_reading();
    client->when_drained([weak = std::weak_ptr<Connection>(agent)] {
        if (auto held = weak.lock()) held->resume_reading();
    });
}

void HubImpl::close_session(Session& session, const std::string& reason) {
    const auto id = session.id;
    const Process* process = registry_.process(session.agent);
    const std::string run = process != nullptr ? process->info.value("run", std::string()) : "";
    if (auto client = connection(session.client)) {
        client->send(make("detached", {{"sid", id}, {"reason", reason}}));
    }
    registry_.close_session(id);
    if (!stopping_) store_.forget_session(id);
    kept_input_.erase(id);
    publish("session_close", {{"sid", id}, {"reason", reason}}, run);
}

void HubImpl::logs_arrived(const Process& process, const Message& message) {
    keep_logs(stamp_log_lines(message["lines"], process.info));
}

void HubImpl::unsent_at_end(const Process& process, const Message& message) {
    if (!message.has("unsent") || message.num("unsent") <= 0) return;
    keep_logs(
        Json::array({unsent_at_end_line(message.num("unsent"), now_seconds(), process.info)}));
}

void HubImpl::keep_logs(Json lines) {
    if (lines.empty()) return;
    store_.add_logs(lines);
    for (auto& line : lines) publish("log", std::move(line));
}

}  // namespace dpdb::hub
