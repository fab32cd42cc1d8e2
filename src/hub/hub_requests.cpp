#include <algorithm>
#include <set>

#include "hub/hub_impl.hpp"
#include "hub/pages.hpp"
#include "hub/summary.hpp"
#include "wire/contents.hpp"

namespace dpdb::hub {

void HubImpl::reply(const ConnectionPtr& client, const Message& request, bool ok,
                    const std::string& text, Json data) {
    client->send(make(
        "result",
        {{"id", request.num("id")}, {"ok", ok}, {"message", text}, {"data", std::move(data)}}));
}

void HubImpl::send_result_pages(Connection& client, std::int64_t id, std::vector<Json> pages) {
    for (std::size_t i = 0; i < pages.size(); ++i) {
        Json page = {{"id", id}, {"ok", true}, {"message", ""}, {"data", std::move(pages[i])}};
        if (i + 1 < pages.size()) page["more"] = true;
        client.send(make("result", std::move(page)));
    }
}

void HubImpl::breakpoints_request(const ConnectionPtr& client, const Message& message) {
    const auto& type = message.type;
    if (type == "break_add") {
        const auto spec = message.str("spec");
        if (spec.empty() || spec.size() > 4096) {
            return reply(client, message, false, "a breakpoint needs FILE:LINE or FUNCTION");
        }
        const auto log = message.has("log") ? message.str("log") : std::string();
        const auto ignore = message.has("ignore") ? message.num("ignore") : 0;
        if (ignore < 0) return reply(client, message, false, "ignore takes a count of hits");
        const auto id = store_.add_breakpoint({{"spec", spec},
                                               {"condition", message.str("condition")},
                                               {"log", log},
                                               {"ignore", ignore}});
        broadcast_breakpoints();
        return reply(
            client, message, true,
            (log.empty() ? "breakpoint " : "logpoint ") + std::to_string(id) + " at " + spec,
            {{"bp", id}});
    }
    if (type == "break_clear") {
        const auto bp = message.num("bp");
        if (bp == 0) {
            store_.clear_breakpoints();
        } else if (!store_.remove_breakpoint(bp)) {
            return reply(client, message, false, "no breakpoint " + std::to_string(bp));
        }
        broadcast_breakpoints();
        return reply(
            client, message, true,
            bp == 0 ? "cleared every breakpoint" : "cleared breakpoint " + std::to_string(bp));
    }
    reply(client, message, true, "", summarize_breakpoints(registry_, store_.breakpoints()));
}

Message HubImpl::breakpoints_message() const {
    return make("breakpoints", {{"list", store_.breakpoints()}, {"version", breakpoints_version_}});
}

void HubImpl::broadcast_breakpoints() {
    ++breakpoints_version_;
    const auto update = breakpoints_message();
    for (auto& [connection, process] : registry_.processes()) {
        process.breakpoints_reported = false;
        if (auto agent = this->connection(connection)) agent->send(update);
    }
    // Clients that show the list (dpdb web's page) ask for it again, with where each is armed.
    publish("breakpoints", Json::object());
}

void HubImpl::stacks_request(const ConnectionPtr& client, const Message& message) {
    Json early = Json::array();
    std::set<std::uint64_t> agents;
    if (message["pids"].empty()) {
        for (const auto& [connection, process] : registry_.processes()) {
            if (this->connection(connection)) agents.insert(connection);
        }
    }
    for (const auto& pid : message["pids"]) {
        const auto connection =
            pid.is_number_integer() ? registry_.connection_of_pid(pid.get<std::int64_t>()) : 0;
        if (connection == 0) {
            early.push_back(
                {{"pid", pid}, {"error", "no such process under this hub (gone, or never here)"}});
        } else if (this->connection(connection)) {
            agents.insert(connection);
        }
    }
    const auto number =
        stacks_requests_.open(client->id(), message.num("id"), std::move(early), agents);
    for (auto connection : agents) {
        this->connection(connection)->send(make("stacks_request", {{"req", number}}));
    }
    auto timer = std::make_shared<asio::steady_timer>(io_, StacksRequests::kTimeout);
    timer->async_wait([self = shared_from_this(), timer](const asio::error_code&) {
        self->finish_stacks_requests();
    });
    finish_stacks_requests();
}

void HubImpl::stacks_answered(std::uint64_t agent, const Message& message) {
    stacks_requests_.answered(message.num("req"), agent, [&] {
        Json entry = registry_.describe(*registry_.process(agent));
        entry["stacks"] = wire::without_nulls(message["stacks"]);
        return entry;
    });
    finish_stacks_requests();
}

void HubImpl::finish_stacks_requests() {
    const auto finished = stacks_requests_.take_finished([this](std::uint64_t agent) {
        const Process* process = registry_.process(agent);
        return process != nullptr ? registry_.describe(*process) : Json::object();
    });
    for (const auto& answer : finished) {
        if (auto client = connection(answer.client)) {
            // The stacks of a whole job outgrow a frame: pages (hub/pages.hpp).
            send_result_pages(*client, answer.client_request,
                              paginate({{"processes", answer.processes}}, shrink_stacks));
        }
    }
}

void HubImpl::process_order(const ConnectionPtr& client, const Message& message) {
    const auto pid = message.num("pid");
    const auto connection = registry_.connection_of_pid(pid);
    auto agent = this->connection(connection);
    if (!agent)
        return reply(client, message, false,
                     "no process " + std::to_string(pid) + " under this hub");
    if (message.type == "release_process") {
        // Answered once the agent says it is done: a program the client lets run on must not
        // meet a breakpoint the release has not taken out yet.
        agent->send(make("release", Json::object()));
        return order_awaiting_agent(client, message, connection, "release",
                                    " runs on without the debugger: breakpoints out, paused "
                                    "threads resumed as soon as it runs Python (it did not "
                                    "confirm within 2 s)");
    }
    if (message.type == "terminate_process") {
        agent->send(make("terminate", Json::object()));
        return reply(
            client, message, true,
            "pid " + std::to_string(pid) + " released and sent SIGTERM (an IDE's terminate)");
    }
    if (message.type == "debug_process") {
        agent->send(make("debug", Json::object()));
        return reply(client, message, true,
                     "pid " + std::to_string(pid) + " is debugged again: breakpoints armed");
    }
    // Answered once the pause is armed: what the client says next ("it waits in C code") and
    // what the user does next (wake the program) must not come before it.
    agent->send(make("pause", {{"all_threads", message["all_threads"].get<bool>()},
                               {"view", message.has("view") && message["view"].get<bool>()}}));
    order_awaiting_agent(client, message, connection, "pause",
                         " is asked to pause at its next Python line (it did not confirm "
                         "within 2 s: a thread holds the GIL in C code)");
}

void HubImpl::order_awaiting_agent(const ConnectionPtr& client, const Message& message,
                                   std::uint64_t agent, const std::string& order,
                                   const std::string& unconfirmed) {
    awaited_orders_[agent].push_back({order, client->id(), message.num("id"), message.num("pid")});
    auto timer = std::make_shared<asio::steady_timer>(io_, kOrderWait);
    timer->async_wait(
        [self = shared_from_this(), timer, agent, order, unconfirmed](const asio::error_code&) {
            self->answer_orders(agent, order, unconfirmed);
        });
}

void HubImpl::answer_orders(std::uint64_t connection, const std::string& order,
                            const std::string& how, bool ok, const Json& data) {
    const auto it = awaited_orders_.find(connection);
    if (it == awaited_orders_.end()) return;
    auto& waiting = it->second;
    const auto answered = std::stable_partition(
        waiting.begin(), waiting.end(),
        [&order](const AwaitedOrder& awaited) { return !order.empty() && awaited.order != order; });
    for (auto awaited = answered; awaited != waiting.end(); ++awaited) {
        if (auto client = this->connection(awaited->client)) {
            client->send(make("result", {{"id", awaited->request},
                                         {"ok", ok},
                                         {"message", "pid " + std::to_string(awaited->pid) + how},
                                         {"data", data}}));
        }
    }
    waiting.erase(answered, waiting.end());
    if (waiting.empty()) awaited_orders_.erase(it);
}

}  // namespace dpdb::hub
