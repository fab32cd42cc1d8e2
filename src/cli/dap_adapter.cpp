#include "cli/dap_adapter.hpp"

#include <unistd.h>

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "cli/dap_json.hpp"
#include "cli/hub_locator.hpp"

namespace dpdb::cli::dap {
namespace {

using wire::Json;

constexpr auto kAnswerTimeout = std::chrono::seconds(10);
const char* const kFunctions = "<function breakpoints>";

const Json& arguments(const Json& request) {
    static const Json none = Json::object();
    const auto it = request.find("arguments");
    return it != request.end() && it->is_object() ? *it : none;
}

std::int64_t integer(const Json& request, const char* key) {
    const auto& args = arguments(request);
    const auto it = args.find(key);
    if (it == args.end() || !it->is_number_integer()) {
        throw RequestError(std::string("arguments.") + key + " must be an integer");
    }
    return it->get<std::int64_t>();
}

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
                                              "completions"};
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
    if (command == "setExceptionBreakpoints") {
        const auto& filters = arguments(request).value("filters", Json::array());
        if (filters.is_array() && filters.empty()) return respond(request);
        return fail(request,
                    "exception breakpoints are not supported yet (`dpdb run "
                    "--post-mortem` stops on uncaught exceptions)");
    }
    const auto& args = arguments(request);
    if (command == "setFunctionBreakpoints") {
        Json specs = Json::array();
        for (const auto& bp : args.value("breakpoints", Json::array())) {
            specs.push_back({{"spec", text(bp, "name")},
                             {"condition", text(bp, "condition")},
                             {"hitCondition", text(bp, "hitCondition")}});
        }
        return set_breakpoints(request, kFunctions, std::move(specs));
    }
    const auto source = args.value("source", Json::object());
    const std::string path = source.is_object() ? text(source, "path") : "";
    if (path.empty()) return fail(request, "setBreakpoints needs source.path");
    Json specs = Json::array();
    for (const auto& bp : args.value("breakpoints", Json::array())) {
        specs.push_back({{"spec", to_remote(path) + ":" + std::to_string(number(bp, "line"))},
                         {"line", number(bp, "line")},
                         {"condition", text(bp, "condition")},
                         {"hitCondition", text(bp, "hitCondition")},
                         {"logMessage", text(bp, "logMessage")}});
    }
    set_breakpoints(request, path, std::move(specs));
}

void Adapter::initialize(const Json& request) {
    // Only what works: no hit counts, exception filters or terminate yet.
    respond(request, {{"supportsConfigurationDoneRequest", true},
                      {"supportsFunctionBreakpoints", true},
                      {"supportsConditionalBreakpoints", true},
                      {"supportsHitConditionalBreakpoints", false},
                      {"supportsLogPoints", true},
                      {"supportsEvaluateForHovers", true},
                      {"supportsSetVariable", true},
                      {"supportsCompletionsRequest", true},
                      {"supportsDelayedStackTraceLoading", true},
                      {"supportsTerminateRequest", false},
                      {"supportTerminateDebuggee", false},
                      {"supportsStepBack", false},
                      {"exceptionBreakpointFilters", Json::array()}});
}

void Adapter::attach(const Json& request) {
    if (channel_) return fail(request, "already attached");
    const auto& args = arguments(request);
    for (const auto& mapping : args.value("pathMappings", Json::array())) {
        if (!mapping.is_object()) continue;
        const auto local = text(mapping, "localRoot");
        const auto remote = text(mapping, "remoteRoot");
        if (!local.empty() && !remote.empty()) path_mappings_.emplace_back(local, remote);
    }
    const auto targets = locate_hubs(text(args, "hub", hub_option_));
    if (targets.size() > 1) {
        return fail(request,
                    "several hubs are running: name one with \"hub\" in the attach "
                    "configuration, --hub or DPDB_HUB (`dpdb ls` shows them)");
    }
    auto channel = std::make_unique<wire::Channel>();
    connect_client(*channel, targets.front());
    channel_ = std::move(channel);
    channel_->send(wire::make("subscribe"));
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

void Adapter::stack_trace(const Json& request) {
    auto& thread = stopped_thread(request, integer(request, "threadId"));
    const auto& args = arguments(request);
    const auto first = std::max<std::int64_t>(0, number(args, "startFrame"));
    const auto levels = number(args, "levels");
    const auto id = thread.id;
    inspect(request, thread, {{"command", "stack"}}, [this, request, id, first, levels](auto& m) {
        const auto all = m["body"].value("frames", Json::array());
        Json frames = Json::array();
        for (std::size_t i = first; i < all.size(); ++i) {
            if (levels > 0 && static_cast<std::int64_t>(frames.size()) == levels) break;
            const auto& frame = all[i];
            const auto remote = text(frame, "path");
            const auto path = to_local(remote);
            Json source = {{"name", basename(path)}, {"path", path}};
            // A file the IDE cannot read (another machine, no sshfs): the process sends it.
            if (::access(path.c_str(), R_OK) != 0) {
                source["sourceReference"] = source_ref(threads_.at(id).pid, remote);
            }
            frames.push_back({{"id", keep(threads_.at(id), number(frame, "frame"))},
                              {"name", text(frame, "name")},
                              {"source", std::move(source)},
                              {"line", number(frame, "line")},
                              {"column", 1}});
        }
        respond(request, {{"stackFrames", std::move(frames)}, {"totalFrames", all.size()}});
    });
}

void Adapter::scopes(const Json& request) {
    const auto& frame = handle(request, "frameId", integer(request, "frameId"));
    auto& thread = thread_of(request, frame);
    const auto id = thread.id;
    inspect(request, thread, {{"command", "scopes"}, {"frame", frame.agent}},
            [this, request, id](auto& m) {
                Json scopes = Json::array();
                for (const auto& scope : m["body"].value("scopes", Json::array())) {
                    scopes.push_back(
                        {{"name", text(scope, "name")},
                         {"presentationHint", text(scope, "name") == "Locals" ? "locals" : ""},
                         {"variablesReference", keep(threads_.at(id), number(scope, "ref"))},
                         {"expensive", false}});
                }
                respond(request, {{"scopes", std::move(scopes)}});
            });
}

Json Adapter::variable(const Thread& thread, const Json& item, const char* value_key) {
    const auto ref = number(item, "ref");
    Json out = {{value_key, text(item, "value")},
                {"type", text(item, "type")},
                {"variablesReference", ref > 0 ? keep(thread, ref) : 0}};
    if (number(item, "named") > 0) out["namedVariables"] = number(item, "named");
    if (number(item, "indexed") > 0) out["indexedVariables"] = number(item, "indexed");
    return out;
}

void Adapter::variables(const Json& request) {
    const auto& ref = handle(request, "variablesReference", integer(request, "variablesReference"));
    auto& thread = thread_of(request, ref);
    const auto& args = arguments(request);
    const auto id = thread.id;
    inspect(request, thread,
            {{"command", "variables"},
             {"ref", ref.agent},
             {"start", number(args, "start")},
             {"count", number(args, "count")}},
            [this, request, id](auto& m) {
                Json list = Json::array();
                for (const auto& item : m["body"].value("variables", Json::array())) {
                    Json entry = variable(threads_.at(id), item, "value");
                    entry["name"] = text(item, "name");
                    list.push_back(std::move(entry));
                }
                respond(request, {{"variables", std::move(list)}});
            });
}

void Adapter::set_variable(const Json& request) {
    const auto& ref = handle(request, "variablesReference", integer(request, "variablesReference"));
    auto& thread = thread_of(request, ref);
    const auto& args = arguments(request);
    const auto id = thread.id;
    inspect(request, thread,
            {{"command", "set_variable"},
             {"ref", ref.agent},
             {"name", text(args, "name")},
             {"value", text(args, "value")}},
            [this, request, id](auto& m) {
                respond(request, variable(threads_.at(id), m["body"], "value"));
            });
}

// The frame a request names (frameId), else the current frame of the one paused thread.
std::pair<Adapter::Thread*, std::int64_t> Adapter::frame_asked(const Json& request) {
    if (arguments(request).contains("frameId")) {
        const auto& h = handle(request, "frameId", integer(request, "frameId"));
        return {&thread_of(request, h), h.agent};
    }
    Thread* thread = nullptr;
    for (auto& [id, candidate] : threads_) {
        if (!candidate.stopped) continue;
        if (thread != nullptr) throw RequestError("several threads are paused: pick a frame");
        thread = &candidate;
    }
    if (thread == nullptr) throw RequestError("no paused thread");
    return {thread, -1};  // -1: the thread's current frame
}

void Adapter::evaluate(const Json& request) {
    const auto& args = arguments(request);
    const auto [thread, frame] = frame_asked(request);
    const auto id = thread->id;
    inspect(request, *thread,
            {{"command", "evaluate"},
             {"frame", frame},
             {"expression", text(args, "expression")},
             {"context", text(args, "context", "watch")}},
            [this, request, id](auto& m) {
                respond(request, variable(threads_.at(id), m["body"], "result"));
            });
}

// The repl's completions are pdb's, as a terminal's are (its `complete` message): commands,
// and names in the current frame. Columns are taken as bytes (ASCII lines).
void Adapter::completions(const Json& request) {
    const auto& args = arguments(request);
    const auto thread = frame_asked(request).first;
    const auto line = text(args, "text");
    const auto end = static_cast<std::size_t>(std::clamp<std::int64_t>(
        number(args, "column", static_cast<std::int64_t>(line.size()) + 1) - 1, 0,
        static_cast<std::int64_t>(line.size())));
    // readline's word delimiters, which pdb's completers expect.
    const auto delimiter =
        end == 0 ? std::string::npos : line.find_last_of(" \t\n\"\\'`@$><=;|&{(", end - 1);
    const std::size_t begin = delimiter == std::string::npos ? 0 : delimiter + 1;
    ask("complete",
        {{"sid", thread->sid},
         {"text", line.substr(begin, end - begin)},
         {"line", line},
         {"begidx", begin},
         {"endidx", end}},
        request, thread->sid, [this, request, begin, end](auto& m) {
            Json targets = Json::array();
            for (const auto& match : m["matches"]) {
                if (!match.is_string()) continue;
                targets.push_back({{"label", match},
                                   {"text", match},
                                   {"start", begin + 1},
                                   {"length", end - begin}});
            }
            respond(request, {{"targets", std::move(targets)}});
        });
}

// continue, next, stepIn, stepOut: pdb's own commands, so that pdb's semantics hold.
void Adapter::resume(const Json& request, const std::string& line, const std::string& reason) {
    auto& thread = stopped_thread(request, integer(request, "threadId"));
    channel_->send(wire::make("input", {{"sid", thread.sid}, {"line", line}}));
    ran_on(thread);
    thread.step = reason;
    respond(request, line == "continue" ? Json{{"allThreadsContinued", false}} : Json::object());
}

std::int64_t Adapter::source_ref(std::int64_t pid, const std::string& path) {
    for (const auto& [ref, known] : sources_) {
        if (known.first == pid && known.second == path) return ref;
    }
    const auto ref = static_cast<std::int64_t>(sources_.size()) + 1;
    sources_[ref] = {pid, path};
    return ref;
}

void Adapter::source(const Json& request) {
    const auto& args = arguments(request);
    auto ref = number(args, "sourceReference");
    if (ref == 0) ref = number(args.value("source", Json::object()), "sourceReference");
    const auto it = sources_.find(ref);
    if (it == sources_.end()) throw RequestError("no source " + std::to_string(ref));
    for (auto& [id, thread] : threads_) {
        if (thread.pid != it->second.first || !thread.stopped) continue;
        return inspect(request, thread, {{"command", "source"}, {"path", it->second.second}},
                       [this, request](auto& m) {
                           respond(request, {{"content", text(m["body"], "content")},
                                             {"mimeType", "text/x-python"}});
                       });
    }
    throw RequestError("no paused thread of pid " + std::to_string(it->second.first) + " to read " +
                       it->second.second + " from");
}

void Adapter::pause(const Json& request) {
    const auto id = integer(request, "threadId");
    const auto it = threads_.find(id);
    if (it == threads_.end()) throw RequestError("no thread " + std::to_string(id));
    if (it->second.stopped) return respond(request);
    ask("pause_process", {{"pid", it->second.pid}, {"all_threads", false}}, request, 0,
        [this, request](auto& m) {
            if (m["ok"].template get<bool>()) return respond(request);
            fail(request, m.str("message"));
        });
}

// The IDE's breakpoints of one source (or its function breakpoints) become the hub's global
// breakpoints: the ones this adapter set there before are cleared, the new ones added, so every
// process of the job, and those that start later, gets them.
void Adapter::set_breakpoints(const Json& request, const std::string& key, Json specs) {
    for (const auto bp : breakpoints_[key]) {
        ask("break_clear", {{"bp", bp}}, request, 0, [](auto&) {});
    }
    breakpoints_[key].clear();
    auto answers = std::make_shared<Json>(Json::array());
    auto left = std::make_shared<std::size_t>(specs.size());
    if (specs.empty()) return respond(request, {{"breakpoints", Json::array()}});
    for (std::size_t i = 0; i < specs.size(); ++i) {
        const auto& spec = specs[i];
        Json shown = {{"verified", false}};
        if (spec.contains("line")) shown["line"] = spec["line"];
        std::string refusal;
        if (!text(spec, "hitCondition").empty()) refusal = "hit counts are not supported yet";
        if (text(spec, "spec").empty()) refusal = "no function name";
        answers->push_back(shown);
        if (!refusal.empty()) {
            (*answers)[i]["message"] = refusal;
            if (--*left == 0) respond(request, {{"breakpoints", *answers}});
            continue;
        }
        // A log message is a dpdb logpoint: its {expression} fields are formatted in the process
        // (as DAP's are), and the messages come back as hub events, shown as output.
        Json fields = {{"spec", text(spec, "spec")}, {"condition", text(spec, "condition")}};
        if (!text(spec, "logMessage").empty()) fields["log"] = text(spec, "logMessage");
        ask("break_add", std::move(fields), request, 0,
            [this, request, key, answers, left, i](auto& m) {
                auto& shown = (*answers)[i];
                shown["message"] = m.str("message");
                if (m["ok"].template get<bool>()) {
                    const auto bp = number(m["data"], "bp");
                    breakpoints_[key].push_back(bp);
                    // The hub holds it and arms it in every process where its file runs, now or
                    // later: for an IDE that is a verified breakpoint.
                    shown["verified"] = true;
                    shown["id"] = bp;
                }
                if (--*left == 0) respond(request, {{"breakpoints", *answers}});
            });
    }
}

// The job runs on: sessions paused under the IDE stay paused, for a terminal to attach; the
// IDE's breakpoints go, as they would with any debugger that leaves.
void Adapter::disconnect(const Json& request) {
    leave();
    respond(request);
}

void Adapter::leave() {
    if (channel_ && !finished_) {
        // Breakpoints first: whoever sees the sessions released sees the breakpoints gone.
        for (const auto& [key, ids] : breakpoints_) {
            for (const auto bp : ids) {
                channel_->send(wire::make("break_clear", {{"id", next_id_++}, {"bp", bp}}));
            }
        }
        breakpoints_.clear();
        for (auto& [id, thread] : threads_) {
            if (thread.ours && thread.sid != 0) {
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

}  // namespace dpdb::cli::dap
