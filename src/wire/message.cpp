#include "wire/message.hpp"

#include <algorithm>
#include <array>
#include <initializer_list>
#include <unordered_map>
#include <vector>

namespace dpdb::wire {
namespace {

enum class Kind { String, Int, Bool, Object, Array };

struct Field {
    const char* name;
    Kind kind;
    bool required = true;
};

// Console text and listings may be long; names, nonces and paths are short.
constexpr std::size_t kMaxTextBytes = kMaxFrameBytes;
constexpr std::size_t kMaxStringBytes = std::size_t{64} * 1024;
constexpr int kMaxDepth = 16;

// Never destroyed: messages are still made in exit handlers, after static destructors ran.
const std::unordered_map<std::string_view, std::vector<Field>>& schemas() {
    static const auto* table = new std::unordered_map<std::string_view, std::vector<Field>>{
        // Handshake, in this order: challenge (hub), hello (peer), welcome or refused (hub).
        {"challenge", {{"v", Kind::Int}, {"nonce", Kind::String}}},
        {"hello",
         {{"v", Kind::Int},
          {"role", Kind::String},
          {"nonce", Kind::String},
          {"mac", Kind::String},
          {"proc", Kind::Object, false}}},
        {"welcome", {{"mac", Kind::String}, {"hub", Kind::Object}}},
        {"refused", {{"reason", Kind::String}}},
        // Both ways between hub and agent over TCP, every few seconds: a link that carries none
        // for longer is taken for cut (hub/hub_liveness.cpp, agent/link.cpp).
        {"heartbeat", {}},
        // Agent -> hub. "sid" is the agent's own session number.
        {"session_open", {{"sid", Kind::Int}, {"info", Kind::Object}}},
        {"session_update", {{"sid", Kind::Int}, {"info", Kind::Object}}},
        {"session_close", {{"sid", Kind::Int}, {"reason", Kind::String}}},
        {"proc_update", {{"proc", Kind::Object}}},
        // Which global breakpoints resolve to code in this process (ids), and what the user
        // should know of the others ([{id, note}]: an ambiguous spec, a line that is not code);
        // "version" echoes that of the hub's list it answers (an agent of an earlier release
        // sends none).
        {"break_status",
         {{"resolved", Kind::Array}, {"notes", Kind::Array, false}, {"version", Kind::Int, false}}},
        // The answer to a stacks request: every thread's Python stack, without pausing any.
        {"stacks_reply", {{"req", Kind::Int}, {"stacks", Kind::Object}}},
        // The process is ending: exit status, or the fatal signal and its threads' stacks.
        // "unsent": logpoint messages its end could not send (an agent of an earlier release,
        // or one that sent them all, sends none).
        {"exiting", {{"status", Kind::Int}, {"unsent", Kind::Int, false}}},
        {"crash",
         {{"signal", Kind::String}, {"stacks", Kind::String}, {"unsent", Kind::Int, false}}},
        // The process is about to exec another program (its connection then closes).
        {"exec", {{"path", Kind::String}, {"argv", Kind::Array}}},
        // ... and it did not: the exec failed (no such file, not executable) and Python goes on.
        {"exec_failed", {}},
        // Logpoint messages, queued in the process and sent in batches: [{time, thread, tid, bp,
        // text, dropped?}]; the hub adds who sent them (pid, host, tags) and keeps them.
        {"log_lines", {{"lines", Kind::Array}}},
        // What the program wrote to sys.stdout or sys.stderr ("stream"), while told to copy it.
        {"program_output", {{"stream", Kind::String}, {"text", Kind::String}}},
        // Console traffic, both ways. Between hub and client "sid" is the hub's session id.
        {"output", {{"sid", Kind::Int}, {"text", Kind::String}}},
        // A nested prompt (interact, commands, input()) takes Ctrl-D as end of input; at pdb's
        // own prompt Ctrl-D detaches.
        {"prompt", {{"sid", Kind::Int}, {"text", Kind::String}, {"nested", Kind::Bool, false}}},
        {"input", {{"sid", Kind::Int}, {"line", Kind::String}, {"eof", Kind::Bool, false}}},
        {"complete",
         {{"sid", Kind::Int},
          {"id", Kind::Int},
          {"text", Kind::String},
          {"line", Kind::String},
          {"begidx", Kind::Int},
          {"endidx", Kind::Int}}},
        {"completions", {{"sid", Kind::Int}, {"id", Kind::Int}, {"matches", Kind::Array}}},
        {"interrupt", {{"sid", Kind::Int}}},
        // An IDE's structured question about a paused thread (stack, scopes, variables, evaluate:
        // python/dpdb/_inspect.py), client -> hub -> agent, and its answer back to the client
        // attached to the session.
        {"inspect", {{"sid", Kind::Int}, {"id", Kind::Int}, {"request", Kind::Object}}},
        {"inspect_reply", {{"sid", Kind::Int}, {"id", Kind::Int}, {"body", Kind::Object}}},
        // Hub -> agent, and client -> hub.
        {"attach", {{"sid", Kind::Int}, {"cols", Kind::Int}}},
        {"detach", {{"sid", Kind::Int}}},
        // Hub -> agent: the whole set of global breakpoints, at connect and on every change, and
        // its version (stepped at each change; the agent's break_status echoes it).
        {"breakpoints", {{"list", Kind::Array}, {"version", Kind::Int, false}}},
        {"stacks_request", {{"req", Kind::Int}}},
        {"pause", {{"all_threads", Kind::Bool}, {"view", Kind::Bool, false}}},
        // Stop debugging the process: breakpoints out, paused threads resumed (dpdb detach -p).
        {"release", {}},
        // Agent -> hub: done, nothing of the debugger is armed any more (the hub answers the
        // client's release_process then, so that the program never runs into a breakpoint that
        // a detach that said "breakpoints out" left).
        {"released", {}},
        // Agent -> hub: the pause asked is armed (the hub answers the client's pause_process
        // then, so that nothing the user does next can run before it), for `threads` threads.
        {"pause_armed", {{"threads", Kind::Int, false}}},
        // Debug it again after a release or `q` (dpdb attach -p of a process that has the agent).
        {"debug", {}},
        // Release it, then SIGTERM (an IDE's terminate request).
        {"terminate", {}},
        // Copy the program's output to the hub ("program_output"), or stop: on while a client
        // watches it.
        {"copy_output", {{"on", Kind::Bool}}},
        // Client -> hub.
        // Answered by one or more "listing" pages; sessions_only leaves the processes out.
        {"list", {{"id", Kind::Int}, {"sessions_only", Kind::Bool, false}}},
        // Answered by one "summary": the job grouped by host, tags and state (hub/summary.hpp).
        // list_up_to (dpdb/2): when the job has at most that many processes and paused sessions,
        // the summary says "listing" and the whole listing follows it, with the same id, so that
        // `dpdb ls` asks once.
        {"summarize", {{"id", Kind::Int}, {"list_up_to", Kind::Int, false}}},
        // Every event; with program_output, the programs' output as events too; with run, only
        // the events of that run's processes and of none (`dpdb run`'s console).
        {"subscribe", {{"program_output", Kind::Bool, false}, {"run", Kind::String, false}}},
        // Requests answered by a "result" with the same id.
        // With "log", a logpoint: the message is sent instead of stopping; "ignore": the hits
        // passed before it stops.
        {"break_add",
         {{"id", Kind::Int},
          {"spec", Kind::String},
          {"condition", Kind::String},
          {"log", Kind::String, false},
          {"ignore", Kind::Int, false}}},
        {"break_clear", {{"id", Kind::Int}, {"bp", Kind::Int}}},  // bp 0: all
        {"break_list", {{"id", Kind::Int}}},
        {"stacks", {{"id", Kind::Int}, {"pids", Kind::Array}}},  // no pids: every process
        // view: a thread that waits in C code gets its session at once, over its frames.
        {"pause_process",
         {{"id", Kind::Int},
          {"pid", Kind::Int},
          {"all_threads", Kind::Bool},
          {"view", Kind::Bool, false}}},
        {"release_process", {{"id", Kind::Int}, {"pid", Kind::Int}}},
        {"debug_process", {{"id", Kind::Int}, {"pid", Kind::Int}}},
        {"terminate_process", {{"id", Kind::Int}, {"pid", Kind::Int}}},
        {"log", {{"id", Kind::Int}, {"pid", Kind::Int}}},
        // The kept logpoint messages, oldest first (no pids: every process), in "result" pages.
        {"logs", {{"id", Kind::Int}, {"pids", Kind::Array}, {"limit", Kind::Int, false}}},
        // Hub -> client.
        // A listing or a result too large for one frame comes as pages of the same id, each the
        // next slice of its arrays, every page but the last marked "more" (hub/pages.hpp).
        {"listing",
         {{"id", Kind::Int},
          {"processes", Kind::Array},
          {"sessions", Kind::Array},
          {"exited", Kind::Array, false},
          {"more", Kind::Bool, false}}},
        {"summary",
         {{"id", Kind::Int},
          {"processes", Kind::Int},
          {"sessions", Kind::Int},
          {"attached", Kind::Int},
          {"hosts", Kind::Int},
          {"group_count", Kind::Int},
          {"groups", Kind::Array},
          {"places", Kind::Array},
          {"paused", Kind::Array},
          {"listing", Kind::Bool, false}}},
        {"result",
         {{"id", Kind::Int},
          {"ok", Kind::Bool},
          {"message", Kind::String},
          {"data", Kind::Object, false},
          {"more", Kind::Bool, false}}},
        {"event", {{"kind", Kind::String}, {"data", Kind::Object}}},
        {"attached", {{"sid", Kind::Int}, {"session", Kind::Object}}},
        {"detached", {{"sid", Kind::Int}, {"reason", Kind::String}}},
        {"error", {{"message", Kind::String}}},
    };
    return *table;
}

bool kind_matches(const Json& value, Kind kind) {
    switch (kind) {
        case Kind::String:
            return value.is_string();
        case Kind::Int:
            return value.is_number_integer();
        case Kind::Bool:
            return value.is_boolean();
        case Kind::Object:
            return value.is_object();
        case Kind::Array:
            return value.is_array();
    }
    return false;
}

void check(const Json& body) {
    if (!body.is_object()) throw ProtocolError("message is not a JSON object");
    const auto type_it = body.find("t");
    if (type_it == body.end() || !type_it->is_string()) {
        throw ProtocolError("message has no string field \"t\"");
    }
    const auto& type = type_it->get_ref<const std::string&>();
    const auto schema_it = schemas().find(type);
    if (schema_it == schemas().end()) throw ProtocolError("unknown message type \"" + type + "\"");
    const auto& fields = schema_it->second;
    for (const auto& field : fields) {
        const auto it = body.find(field.name);
        if (it == body.end()) {
            if (field.required) {
                throw ProtocolError(type + " message lacks field \"" + field.name + "\"");
            }
            continue;
        }
        if (!kind_matches(*it, field.kind)) {
            throw ProtocolError(type + " message field \"" + field.name + "\" has the wrong type");
        }
        if (it->is_string()) {
            const bool is_text = std::string_view(field.name) == "text";
            const auto limit = is_text ? kMaxTextBytes : kMaxStringBytes;
            if (it->get_ref<const std::string&>().size() > limit) {
                throw ProtocolError(type + " message field \"" + field.name + "\" is too long");
            }
        }
    }
    for (const auto& item : body.items()) {
        // Not a structured binding: C++17 does not let a lambda capture one (clang rejects it).
        const std::string& key = item.key();
        if (key == "t") continue;
        const bool known = std::any_of(fields.begin(), fields.end(),
                                       [&](const Field& f) { return key == f.name; });
        if (!known) throw ProtocolError(type + " message has unexpected field \"" + key + "\"");
    }
}

}  // namespace

Message make(std::string_view type, Json fields) {
    fields["t"] = std::string(type);
    check(fields);
    return Message{std::string(type), std::move(fields)};
}

Message decode(std::string_view payload) {
    // Size is bounded by the frame; nesting is bounded here so that no peer can make anyone recurse
    // deeply; invalid UTF-8 is rejected by the parser.
    // The parser takes a NUL byte for the end of input and would ignore whatever follows it; JSON
    // allows none outside strings (and inside them only escaped), so reject it here.
    if (payload.find('\0') != std::string_view::npos) {
        throw ProtocolError("message is not valid JSON (NUL byte)");
    }
    bool too_deep = false;
    const Json::parser_callback_t depth_guard = [&too_deep](int depth, Json::parse_event_t, Json&) {
        if (depth > kMaxDepth) too_deep = true;
        return !too_deep;
    };
    Json body = Json::parse(payload.begin(), payload.end(), depth_guard,
                            /*allow_exceptions=*/false);
    if (too_deep) throw ProtocolError("message nests deeper than " + std::to_string(kMaxDepth));
    if (body.is_discarded()) throw ProtocolError("message is not valid JSON");
    check(body);
    std::string type = body["t"].get<std::string>();
    return Message{std::move(type), std::move(body)};
}

std::string encode(const Message& message) {
    // Replace rather than throw on invalid UTF-8: program output may hold any bytes.
    return message.body.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace dpdb::wire
