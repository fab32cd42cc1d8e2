// Whether the hub can still reach each agent over the network. A cut link says nothing: TCP
// only retransmits, for many minutes. So the hub and the agents send each other a heartbeat
// every kHeartbeatTicks, and an agent not heard from for kUnreachableAfter is shown unreachable
// (its record and sessions kept as they were, what its clients type kept for it), until it is
// heard again, or comes back on a fresh connection (it dials again once it stops hearing the hub:
// agent/link.cpp), or lost_after() has passed: then it is taken for lost. Agents on the Unix socket
// are left out: the kernel says at once when one of them is gone; so are peers that never sent a
// heartbeat (tests and tools speaking the protocol raw).
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "hub/hub_impl.hpp"
#include "hub/wall_clock.hpp"

namespace dpdb::hub {
namespace {

std::string clock_time(double seconds) {
    const auto when = static_cast<std::time_t>(seconds);
    std::tm local{};
    ::localtime_r(&when, &local);
    char text[16];
    std::strftime(text, sizeof text, "%H:%M:%S", &local);
    return text;
}

std::string who(const Process& process) {
    return "pid " + process.info.value("pid", Json()).dump() + " on " +
           (process.host.empty() ? std::string("its host") : process.host);
}

// Two minutes: a machine that reboots is back by then, and its processes are new ones anyway.
// DPDB_HUB_LOST_AFTER (seconds) shortens it, for the tests of a host that never returns.
std::chrono::seconds lost_after() {
    static const auto bound = [] {
        const char* given = std::getenv("DPDB_HUB_LOST_AFTER");
        const long seconds = given != nullptr ? std::strtol(given, nullptr, 10) : 0;
        return std::chrono::seconds(seconds > 0 ? seconds : 120);
    }();
    return bound;
}

bool over_network(const Connection& connection) {
    return connection.stream().peer() != "unix";
}

}  // namespace

void HubImpl::watch_liveness() {
    liveness_timer_.expires_after(kLivenessTick);
    liveness_timer_.async_wait([weak = weak_from_this()](const asio::error_code& ec) {
        auto self = weak.lock();
        // A tick already due when stop() cancelled the timer runs with no error: it must not
        // start another, or the io_context never runs out of work and the hub never stops.
        if (ec || !self || self->stopping_) return;
        self->check_liveness(++self->liveness_ticks_);
        self->watch_liveness();
    });
}

void HubImpl::check_liveness(std::uint64_t tick) {
    const auto now = std::chrono::steady_clock::now();
    std::vector<ConnectionPtr> agents;
    for (const auto& [id, peer] : connections_) {
        if (peer->authenticated && peer->role == Role::Agent && peer->beats &&
            over_network(*peer)) {
            agents.push_back(peer);
        }
    }
    const auto heartbeat = make("heartbeat", Json::object());
    for (const auto& agent : agents) {
        if (tick % kHeartbeatTicks == 0) agent->send(heartbeat);
        // Not read because the hub holds it (a console behind): it is not the one silent.
        if (agent->reading_held()) agent->last_heard = now;
        Process* process = registry_.process(agent->id());
        if (process != nullptr && now - agent->last_heard >= kUnreachableAfter &&
            !process->info.contains("unreachable_since")) {
            mark_unreachable(agent, *process);
        }
    }
    // Unreachable for too long, whether its old connection is still open or already gone.
    const double lost_before = now_seconds() - std::chrono::duration<double>(lost_after()).count();
    std::vector<std::uint64_t> lost;
    for (const auto& [connection, process] : registry_.processes()) {
        const auto since = process.info.find("unreachable_since");
        if (since != process.info.end() && since->get<double>() <= lost_before) {
            lost.push_back(connection);
        }
    }
    for (const auto connection : lost) {
        const auto since = registry_.process(connection)->info["unreachable_since"].get<double>();
        const std::string reason = "lost: unreachable since " + clock_time(since);
        log(who(*registry_.process(connection)) + " " + reason);
        if (auto agent = this->connection(connection)) {
            agent->close(reason);  // on_close forgets it
        } else {
            forget_process(connection, reason);
        }
    }
}

void HubImpl::mark_unreachable(const ConnectionPtr& agent, Process& process) {
    const double since = now_seconds();
    process.info["unreachable_since"] = since;
    log("connection " + std::to_string(agent->id()) + " (" + who(process) +
        ") unreachable: nothing heard from it for " +
        std::to_string(
            std::chrono::duration_cast<std::chrono::seconds>(kUnreachableAfter).count()) +
        " s");
    publish("process_update", registry_.describe(process));
    for (const auto id : registry_.sessions_of(agent->id())) {
        tell_client(*registry_.session(id), "dpdb: " + who(process) + " unreachable since " +
                                                clock_time(since) +
                                                ": what you type is kept until it is back");
    }
}

void HubImpl::reached_again(const ConnectionPtr& agent, Process& process) {
    process.info.erase("unreachable_since");
    publish("process_update", registry_.describe(process));
    for (const auto id : registry_.sessions_of(agent->id())) {
        Session& session = *registry_.session(id);
        tell_client(session, "dpdb: " + who(process) + " is reachable again");
        hand_over_kept_input(agent, session);
    }
}

bool HubImpl::came_back(const ConnectionPtr& agent, const Json& proc) {
    const auto pid = proc.find("pid");
    if (pid == proc.end() || !pid->is_number_integer()) return false;
    const auto old = registry_.connection_of(proc.value("host", ""), pid->get<std::int64_t>());
    const Process* known = old == 0 ? nullptr : registry_.process(old);
    // Only a process the hub had lost sight of: the same pid on a fresh connection is otherwise
    // another program (an exec) or an impostor.
    if (known == nullptr || old == agent->id() || !known->info.contains("unreachable_since")) {
        return false;
    }
    log("connection " + std::to_string(agent->id()) + ": " + who(*known) +
        " is back on a fresh connection");
    registry_.move_process(old, agent->id());
    for (const auto id : registry_.sessions_of(agent->id())) registry_.session(id)->carried = true;
    if (auto stale = connection(old)) stale->close("replaced by a fresh connection");
    return true;
}

void HubImpl::resume_session(const ConnectionPtr& agent, Session& session) {
    session.carried = false;
    const Process* process = registry_.process(agent->id());
    if (process != nullptr) tell_client(session, "dpdb: " + who(*process) + " is reachable again");
    if (connection(session.client)) {
        // Its agent took the lost link for a detach: attached again, it shows where it stands.
        agent->send(make("attach", {{"sid", session.agent_sid}, {"cols", session.columns}}));
    }
    hand_over_kept_input(agent, session);
}

void HubImpl::hand_over_kept_input(const ConnectionPtr& agent, const Session& session) {
    const auto kept = kept_input_.find(session.id);
    if (kept == kept_input_.end()) return;
    for (const auto& input : kept->second) agent->send(input);
    kept_input_.erase(kept);
}

void HubImpl::close_uncarried(std::uint64_t agent) {
    for (const auto id : registry_.sessions_of(agent)) {
        Session& session = *registry_.session(id);
        if (session.carried) close_session(session, "it ended while its process was unreachable");
    }
}

void HubImpl::tell_client(const Session& session, const std::string& line) {
    if (auto client = connection(session.client)) {
        client->send(make("output", {{"sid", session.id}, {"text", line + "\n"}}));
    }
}

}  // namespace dpdb::hub
