// What the job's programs write to sys.stdout and sys.stderr, for the clients that show it (an
// IDE's `dpdb dap`: docs/ide.md). Nobody else pays for it: agents copy their program's output
// only while some client said `subscribe {program_output: true}`, and the hub passes each piece
// to those clients alone, as `event {kind: program_output, data: {pid, stream, text}}`. It is not
// stored: a client sees what was written while it watched.
#include <algorithm>

#include "hub/hub_impl.hpp"

namespace dpdb::hub {

void HubImpl::watch_program_output(const ConnectionPtr& client) {
    if (std::find(output_watchers_.begin(), output_watchers_.end(), client->id()) !=
        output_watchers_.end()) {
        return;
    }
    output_watchers_.push_back(client->id());
    if (output_watchers_.size() == 1) tell_agents_program_output(true);
}

void HubImpl::unwatch_program_output(std::uint64_t client) {
    const auto before = output_watchers_.size();
    output_watchers_.erase(std::remove(output_watchers_.begin(), output_watchers_.end(), client),
                           output_watchers_.end());
    if (before > 0 && output_watchers_.empty()) tell_agents_program_output(false);
}

void HubImpl::tell_agents_program_output(bool on) {
    const auto order = make("copy_output", {{"on", on}});
    for (const auto& [id, peer] : connections_) {
        if (peer->role == Role::Agent) peer->send(order);
    }
}

void HubImpl::greet_agent_program_output(const ConnectionPtr& agent) {
    if (!output_watchers_.empty()) agent->send(make("copy_output", {{"on", true}}));
}

void HubImpl::program_output_arrived(const Process& process, const Message& message) {
    const auto stream = message.body.value("stream", std::string());
    const auto text = message.body.value("text", std::string());
    if ((stream != "stdout" && stream != "stderr") || text.empty()) return;
    const auto event =
        make("event",
             {{"kind", "program_output"},
              {"data",
               {{"pid", process.info.value("pid", Json())}, {"stream", stream}, {"text", text}}}});
    for (auto id : output_watchers_) {
        if (auto watcher = connection(id)) watcher->send(event);
    }
}

}  // namespace dpdb::hub
