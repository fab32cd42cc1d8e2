// `dpdb dap` as the job's session of an IDE that starts child sessions (startDebugging), and as
// one of those children: which processes a session shows, the children it starts, their ends.
#include "dap/adapter.hpp"
#include "dap/json.hpp"

namespace dpdb::dap {

using wire::Json;

bool Adapter::shown_here(std::int64_t pid) const {
    return only_pid_ == 0 || pid == only_pid_;
}

// The IDE starts another adapter (or connects again to --listen) with this configuration: the
// process's own session, its threads, stops and lifetime apart from every other process's.
void Adapter::start_child_session(std::int64_t pid, const Json& process) {
    if (!children_.emplace(pid, true).second) return;  // renamed: its own session says so
    Json configuration = attach_arguments_;
    configuration["request"] = "attach";
    configuration["pid"] = pid;
    configuration["name"] = "pid " + std::to_string(pid) + " " + label(process);
    to_ide_({{"seq", seq_++},
             {"type", "request"},
             {"command", "startDebugging"},
             {"arguments", {{"request", "attach"}, {"configuration", std::move(configuration)}}}});
}

// Its child session ends itself; the job ends with the last of them.
void Adapter::child_gone(std::int64_t pid, const Json& data) {
    const auto child = children_.find(pid);
    if (child == children_.end()) return;
    child->second = false;
    if (pid == first_pid_) exit_code_ = data.contains("signal") ? 1 : number(data, "status");
    for (const auto& [other, running] : children_) {
        if (running) return;
    }
    if (job_ended_) return;
    job_ended_ = true;
    send_event("exited", {{"exitCode", exit_code_}});
    send_event("terminated");
}

}  // namespace dpdb::dap
