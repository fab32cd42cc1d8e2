#include "dap/adapter.hpp"

#include <unistd.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <utility>

#include "cli/hub_locator.hpp"
#include "dap/json.hpp"

namespace dpdb::dap {
namespace {

using wire::Json;

constexpr auto kAnswerTimeout = std::chrono::seconds(10);

}  // namespace

Adapter::Adapter(std::function<void(const Json&)> to_ide, std::string hub)
    : to_ide_(std::move(to_ide)), hub_option_(std::move(hub)) {}

Adapter::~Adapter() = default;

int Adapter::hub_fd() const {
    return channel_ ? channel_->fd() : -1;
}

// --- to the IDE ------------------------------------------------------------------------------

void Adapter::send_event(const std::string& event, Json body) {
    to_ide_({{"seq", seq_++}, {"type", "event"}, {"event", event}, {"body", std::move(body)}});
}

void Adapter::respond(const Json& request, Json body) {
    to_ide_({{"seq", seq_++},
             {"type", "response"},
             {"request_seq", number(request, "seq")},
             {"success", true},
             {"command", text(request, "command")},
             {"body", std::move(body)}});
}

void Adapter::fail(const Json& request, const std::string& message) {
    to_ide_({{"seq", seq_++},
             {"type", "response"},
             {"request_seq", number(request, "seq")},
             {"success", false},
             {"command", text(request, "command")},
             {"message", message},
             {"body", {{"error", {{"id", 1}, {"format", message}, {"showUser", false}}}}}});
}

void Adapter::bad_frame(const std::string& reason) {
    fail(Json::object(), "malformed message: " + reason);
}

// --- from the IDE ----------------------------------------------------------------------------

void Adapter::from_ide(const std::string& body) {
    Json message = Json::parse(body, nullptr, /*allow_exceptions=*/false);
    if (message.is_discarded()) return fail(Json::object(), "malformed message: not JSON");
    if (!message.is_object()) return fail(Json::object(), "malformed message: not an object");
    if (text(message, "type") != "request" || text(message, "command").empty() ||
        !message.contains("seq") || !message["seq"].is_number_integer()) {
        // Responses to reverse requests included: this adapter sends none.
        if (text(message, "type") == "response") return;
        return fail(message,
                    "malformed message: a request needs seq, type \"request\" and command");
    }
    try {
        request(message);
    } catch (const std::exception& error) {
        fail(message, error.what());
    }
}

void Adapter::request(const Json& request) {
    const std::string command = text(request, "command");
    const bool attached = channel_ != nullptr;
    if (command == "initialize") return initialize(request);
    if (command == "attach") return attach(request);
    if (command == "launch") {
        return fail(request,
                    "dpdb dap attaches to a job: run it with `dpdb run` (DPDB_HUB set), "
                    "then attach");
    }
    if (command == "disconnect") return disconnect(request);
    static const char* const needing_hub[] = {"configurationDone",
                                              "threads",
                                              "stackTrace",
                                              "scopes",
                                              "variables",
                                              "setVariable",
                                              "evaluate",
                                              "continue",
                                              "next",
                                              "stepIn",
                                              "stepOut",
                                              "pause",
                                              "setBreakpoints",
                                              "setFunctionBreakpoints",
                                              "setExceptionBreakpoints",
                                              "source",
                                              "completions",
                                              "exceptionInfo",
                                              "terminate"};
    bool known = false;
    for (const char* name : needing_hub) known = known || command == name;
    if (!known) return fail(request, "unknown request \"" + command + "\"");
    if (!attached) return fail(request, command + " before attach: there is no hub yet");
    if (command == "configurationDone") return configuration_done(request);
    if (command == "threads") return threads(request);
    if (command == "stackTrace") return stack_trace(request);
    if (command == "scopes") return scopes(request);
    if (command == "variables") return variables(request);
    if (command == "setVariable") return set_variable(request);
    if (command == "evaluate") return evaluate(request);
    if (command == "completions") return completions(request);
    if (command == "continue") return resume(request, "continue", "");
    if (command == "next") return resume(request, "next", "step");
    if (command == "stepIn") return resume(request, "step", "step");
    if (command == "stepOut") return resume(request, "return", "step");
    if (command == "pause") return pause(request);
    if (command == "source") return source(request);
    if (command == "setExceptionBreakpoints") return exception_breakpoints(request);
    if (command == "setFunctionBreakpoints") return function_breakpoints(request);
    if (command == "setBreakpoints") return source_breakpoints(request);
    if (command == "exceptionInfo") return exception_info(request);
    if (command == "terminate") return terminate(request);
}

void Adapter::initialize(const Json& request) {
    const auto& args = arguments(request);
    const auto starts = args.find("supportsStartDebuggingRequest");
    ide_starts_children_ = starts != args.end() && starts->is_boolean() && starts->get<bool>();
    // Only what works (docs/ide.md says what each does underneath).
    respond(request,
            {{"supportsConfigurationDoneRequest", true},
             {"supportsFunctionBreakpoints", true},
             {"supportsConditionalBreakpoints", true},
             {"supportsHitConditionalBreakpoints", true},
             {"supportsLogPoints", true},
             {"supportsEvaluateForHovers", true},
             {"supportsSetVariable", true},
             {"supportsCompletionsRequest", true},
             {"supportsDelayedStackTraceLoading", true},
             {"supportsExceptionInfoRequest", true},
             {"supportsTerminateRequest", true},
             {"supportTerminateDebuggee", true},
             {"supportSuspendDebuggee", true},
             {"supportsStepBack", false},
             {"exceptionBreakpointFilters",
              Json::array({{{"filter", "raised"},
                            {"label", "Raised Exceptions"},
                            {"description",
                             "Stop where your code raises (Python 3.12+ processes), before any "
                             "handler runs"},
                            {"default", false}},
                           {{"filter", "uncaught"},
                            {"label", "Uncaught Exceptions"},
                            {"description",
                             "A post-mortem stop where an exception would end a thread or "
                             "process, or where a framework catches it (a request's, a task's, "
                             "a test's: userUnhandled)"},
                            {"default", false}}})}});
}

void Adapter::attach(const Json& request) {
    if (channel_) return fail(request, "already attached");
    const auto& args = arguments(request);
    attach_arguments_ = args;
    const auto mine = args.find("justMyCode");
    just_my_code_ = mine == args.end() || !mine->is_boolean() || mine->get<bool>();
    if (args.contains("pid")) {
        only_pid_ = number(args, "pid");
        if (only_pid_ <= 0) return fail(request, "\"pid\" names a process: a positive number");
    }
    job_session_ = ide_starts_children_ && only_pid_ == 0;
    for (const auto& mapping : args.value("pathMappings", Json::array())) {
        if (!mapping.is_object()) continue;
        const auto local = text(mapping, "localRoot");
        const auto remote = text(mapping, "remoteRoot");
        if (!local.empty() && !remote.empty()) path_mappings_.emplace_back(local, remote);
    }
    const auto targets = cli::locate_hubs(text(args, "hub", hub_option_));
    if (targets.size() > 1) {
        return fail(request,
                    "several hubs are running: name one with \"hub\" in the attach "
                    "configuration, --hub or DPDB_HUB (`dpdb ls` shows them)");
    }
    auto channel = std::make_unique<wire::Channel>();
    cli::connect_client(*channel, targets.front());
    channel_ = std::move(channel);
    // The programs' stdout and stderr come as events too (hub/program_output.cpp).
    channel_->send(wire::make("subscribe", {{"program_output", true}}));
    list_id_ = next_id_++;
    channel_->send(wire::make("list", {{"id", list_id_}}));
    // Answered once the job is known (the listing's last page): a threads request right after
    // the attach shows every process.
    attach_request_ = request;
}

void Adapter::configuration_done(const Json& request) {
    configured_ = true;
    respond(request);
    for (const auto& [id, thread] : threads_) {
        if (thread.sid != 0 && !thread.ours && !thread.held) take(thread);
    }
}

void Adapter::threads(const Json& request) {
    Json list = Json::array();
    for (const auto& [id, thread] : threads_) {
        // Paused in a terminal's session: shown, and taken once the terminal lets it go.
        const std::string held = thread.held ? " (paused, attached elsewhere)" : "";
        list.push_back({{"id", id}, {"name", thread.name + held}});
    }
    respond(request, {{"threads", std::move(list)}});
}

// continue, next, stepIn, stepOut: pdb's own commands (`continue`, `next`, `step`, `return`),
// where the IDE's user expects to land (the hub's side steps on past pdb's --Call-- and
// --Return-- stops: stepIn lands in the callee's body, stepOut and a next off a function's end in
// the caller).
void Adapter::resume(const Json& request, const std::string& line, const std::string& reason) {
    auto& thread = stopped_thread(request, integer(request, "threadId"));
    run_on(thread, line, reason);
    thread.ide_resumed = true;
    respond(request, line == "continue" ? Json{{"allThreadsContinued", false}} : Json::object());
}

void Adapter::run_on(Thread& thread, const std::string& line, const std::string& reason) {
    channel_->send(wire::make("input", {{"sid", thread.sid}, {"line", line}}));
    ran_on(thread);
    thread.step = reason;
    thread.ide_resumed = false;
    thread.pdb_stop = false;
    thread.in_library = false;
    thread.steps_on = 0;
    thread.library_returns = 0;
}

void Adapter::pause(const Json& request) {
    const auto id = integer(request, "threadId");
    const auto it = threads_.find(id);
    if (it == threads_.end()) throw RequestError("no thread " + std::to_string(id));
    if (it->second.stopped) return respond(request);
    // A main thread that waits in C code stops at once, its frames shown as it waits.
    ask("pause_process", {{"pid", it->second.pid}, {"all_threads", false}, {"view", true}}, request,
        0, [this, request](auto& m) {
            if (m["ok"].template get<bool>()) return respond(request);
            fail(request, m.str("message"));
        });
}

// The IDE's breakpoints go, as they would with any debugger that leaves; then, as the spec's
// defaults for an attach say, what this IDE paused runs on: unless it asked to suspend the
// debuggee (left paused, for a terminal to attach) or to terminate it (ended as by terminate).
void Adapter::disconnect(const Json& request) {
    const auto& args = arguments(request);
    const auto flag = [&](const char* key) {
        const auto it = args.find(key);
        return it != args.end() && it->is_boolean() && it->get<bool>();
    };
    if (flag("terminateDebuggee") && channel_ && !finished_) {
        for (const auto pid : job_pids()) {
            channel_->send(wire::make("terminate_process", {{"id", next_id_++}, {"pid", pid}}));
        }
    }
    leave(flag("suspendDebuggee") ? Paused::stay : Paused::resume);
    respond(request);
}

// The job ends as under a supervisor: every process is released (its paused threads run on
// without the debugger) and sent SIGTERM, through the hub, wherever it runs. The IDE sees its
// threads exit, then exited and terminated once the last process is gone.
void Adapter::terminate(const Json& request) {
    const auto pids = job_pids();
    if (pids.empty()) {
        respond(request);
        if (!job_ended_) send_event("terminated");
        job_ended_ = true;
        return;
    }
    auto left = std::make_shared<std::size_t>(pids.size());
    auto refused = std::make_shared<std::string>();
    for (const auto pid : pids) {
        ask("terminate_process", {{"pid", pid}}, request, 0,
            [this, request, left, refused](auto& m) {
                if (!m["ok"].template get<bool>()) *refused += m.str("message") + "; ";
                if (--*left > 0) return;
                if (refused->empty()) return respond(request);
                fail(request, "not every process could be ended: " + *refused);
            });
    }
}

std::vector<std::int64_t> Adapter::job_pids() const {
    std::vector<std::int64_t> pids;
    for (const auto& [id, thread] : threads_) {
        if (thread.tid == 0) pids.push_back(thread.pid);
    }
    for (const auto& [pid, running] : children_) {
        if (running) pids.push_back(pid);
    }
    return pids;
}

void Adapter::leave(Paused paused) {
    if (channel_ && !finished_) {
        // Breakpoints first: whoever sees the sessions released sees the breakpoints gone.
        for (const auto& [key, ids] : breakpoints_) {
            for (const auto bp : ids) {
                channel_->send(wire::make("break_clear", {{"id", next_id_++}, {"bp", bp}}));
            }
        }
        breakpoints_.clear();
        for (auto& [id, thread] : threads_) {
            if (!thread.ours || thread.sid == 0) continue;
            if (paused == Paused::resume && thread.stopped) {
                channel_->send(wire::make("input", {{"sid", thread.sid}, {"line", "continue"}}));
            } else {
                channel_->send(wire::make("detach", {{"sid", thread.sid}}));
            }
        }
    }
    finished_ = true;
}

// The hub's side (pump, events, sessions, threads) is in dap_adapter_hub.cpp.

// --- helpers ---------------------------------------------------------------------------------

std::int64_t Adapter::ask(const std::string& type, Json fields, const Json& request,
                          std::int64_t sid, Done done) {
    const auto id = next_id_++;
    fields["id"] = id;
    pending_[id] =
        Pending{request, sid, std::move(done), std::chrono::steady_clock::now() + kAnswerTimeout};
    channel_->send(wire::make(type, std::move(fields)));
    return id;
}

void Adapter::inspect(const Json& request, Thread& thread, Json question, Done done) {
    if (!thread.stopped) throw RequestError("thread " + std::to_string(thread.id) + " is running");
    ask("inspect", {{"sid", thread.sid}, {"request", std::move(question)}}, request, thread.sid,
        std::move(done));
}

Adapter::Thread& Adapter::stopped_thread(const Json&, std::int64_t id) {
    const auto it = threads_.find(id);
    if (it == threads_.end()) throw RequestError("no thread " + std::to_string(id));
    if (!it->second.stopped) throw RequestError("thread " + std::to_string(id) + " is running");
    return it->second;
}

Adapter::Thread& Adapter::thread_of(const Json& request, const Handle& handle) {
    auto& thread = stopped_thread(request, handle.thread);
    if (thread.stop != handle.stop) throw RequestError("that frame is gone: the thread ran on");
    return thread;
}

std::int64_t Adapter::keep(const Thread& thread, std::int64_t agent) {
    const auto id = next_handle_++;
    handles_[id] = Handle{thread.id, thread.stop, agent};
    return id;
}

const Adapter::Handle& Adapter::handle(const Json&, const char* key, std::int64_t id) {
    const auto it = handles_.find(id);
    if (it == handles_.end()) {
        throw RequestError(std::string("no ") + key + " " + std::to_string(id) +
                           " (its thread ran on, or it never was)");
    }
    return it->second;
}

std::string Adapter::to_remote(const std::string& path) const {
    for (const auto& [local, remote] : path_mappings_) {
        if (path.rfind(local, 0) == 0) return remote + path.substr(local.size());
    }
    return path;
}

std::string Adapter::to_local(const std::string& path) const {
    for (const auto& [local, remote] : path_mappings_) {
        if (path.rfind(remote, 0) == 0) return local + path.substr(remote.size());
    }
    return path;
}

}  // namespace dpdb::dap
