// `dpdb dap`: the requests that look at a paused thread (stackTrace, scopes, variables,
// setVariable, evaluate, completions, source, exceptionInfo), each answered by the thread itself
// through the hub's `inspect` (python/dpdb/_inspect.py) or its pdb completer.
#include <unistd.h>

#include <algorithm>
#include <map>
#include <utility>

#include "dap/adapter.hpp"
#include "dap/json.hpp"

namespace dpdb::dap {

using wire::Json;

void Adapter::stack_trace(const Json& request) {
    auto& thread = stopped_thread(request, integer(request, "threadId"));
    const auto& args = arguments(request);
    const auto first = std::max<std::int64_t>(0, number(args, "startFrame"));
    const auto levels = number(args, "levels");
    const auto id = thread.id;
    inspect(request, thread, {{"command", "stack"}}, [this, request, id, first, levels](auto& m) {
        const auto all = shown_frames(m["body"].value("frames", Json::array()));
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

namespace {

bool contains(const std::string& path, const char* part) {
    return path.find(part) != std::string::npos;
}

bool ends_with(const std::string& text, const std::string& end) {
    return text.size() >= end.size() &&
           text.compare(text.size() - end.size(), end.size(), end) == 0;
}

// multiprocessing's start of a child process: a forked child never returns below it (it ends in
// os._exit), so the frames under it are the parent's, from before the fork.
bool child_start(const Json& frame) {
    return text(frame, "name") == "_bootstrap" &&
           ends_with(text(frame, "path"), "/multiprocessing/process.py");
}

}  // namespace

bool library_code(const std::string& path) {
    if (path.rfind("<frozen ", 0) == 0) return true;
    if (contains(path, "/site-packages/") || contains(path, "/dist-packages/")) return true;
    return contains(path, "/lib/python3");
}

// justMyCode (on unless the attach says false, as debugpy): the stop's own frame, and below it
// the frames of the user's code down to the start of a multiprocessing child.
Json Adapter::shown_frames(const Json& frames) const {
    if (!just_my_code_) return frames;
    Json shown = Json::array();
    for (std::size_t i = 0; i < frames.size(); ++i) {
        if (i > 0 && child_start(frames[i])) break;
        if (i == 0 || !library_code(text(frames[i], "path"))) shown.push_back(frames[i]);
    }
    return shown;
}

void Adapter::inspect_handle(const Json& request, const char* key, const char* field, Json question,
                             std::function<Json(const Thread&, const Json&)> shape) {
    const auto& held = handle(request, key, integer(request, key));
    auto& thread = thread_of(request, held);
    question[field] = held.agent;
    const auto id = thread.id;
    inspect(request, thread, std::move(question),
            [this, request, id, shape = std::move(shape)](auto& m) {
                respond(request, shape(threads_.at(id), m["body"]));
            });
}

void Adapter::scopes(const Json& request) {
    inspect_handle(
        request, "frameId", "frame", {{"command", "scopes"}},
        [this](const Thread& thread, const Json& body) {
            Json scopes = Json::array();
            for (const auto& scope : body.value("scopes", Json::array())) {
                const auto name = text(scope, "name");
                scopes.push_back({{"name", name},
                                  {"presentationHint", name == "Locals" ? "locals" : ""},
                                  {"variablesReference", keep(thread, number(scope, "ref"))},
                                  {"expensive", false}});
            }
            return Json{{"scopes", std::move(scopes)}};
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
    const auto& args = arguments(request);
    inspect_handle(
        request, "variablesReference", "ref",
        {{"command", "variables"},
         {"start", number(args, "start")},
         {"count", number(args, "count")}},
        [this](const Thread& thread, const Json& body) {
            Json list = Json::array();
            for (const auto& item : body.value("variables", Json::array())) {
                Json entry = variable(thread, item, "value");
                entry["name"] = text(item, "name");
                list.push_back(std::move(entry));
            }
            // A module's __name__, __builtins__ and the like after its own names.
            std::stable_partition(list.begin(), list.end(), [](const Json& entry) {
                const auto name = text(entry, "name");
                return !(name.size() > 4 && name.rfind("__", 0) == 0 && ends_with(name, "__"));
            });
            return Json{{"variables", std::move(list)}};
        });
}

void Adapter::set_variable(const Json& request) {
    const auto& args = arguments(request);
    inspect_handle(
        request, "variablesReference", "ref",
        {{"command", "set_variable"}, {"name", text(args, "name")}, {"value", text(args, "value")}},
        [this](const Thread& thread, const Json& body) { return variable(thread, body, "value"); });
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
    const auto context = text(args, "context", "watch");
    if (context == "repl" && repl_resumes(request, *thread, text(args, "expression"))) return;
    const auto id = thread->id;
    inspect(request, *thread,
            {{"command", "evaluate"},
             {"frame", frame},
             {"expression", text(args, "expression")},
             {"context", context}},
            [this, request, id](auto& m) {
                respond(request, variable(threads_.at(id), m["body"], "result"));
            });
}

// pdb's commands that resume, typed in the repl, run as at a terminal's prompt: the IDE is told
// that the thread runs (continued) and, when it stops again, where (stopped).
bool Adapter::repl_resumes(const Json& request, Thread& thread, const std::string& line) {
    static const std::map<std::string, std::string> resuming = {
        {"c", ""},          {"cont", ""},    {"continue", ""}, {"n", "step"},
        {"next", "step"},   {"s", "step"},   {"step", "step"}, {"r", "step"},
        {"return", "step"}, {"unt", "step"}, {"until", "step"}};
    const auto begin = line.find_first_not_of(" \t");
    if (begin == std::string::npos) return false;
    const auto end = line.find_first_of(" \t", begin);
    const auto found = resuming.find(line.substr(begin, end - begin));
    if (found == resuming.end()) return false;
    run_on(thread, line.substr(begin), found->second);
    respond(request, {{"result", ""}, {"variablesReference", 0}});
    send_event("continued", {{"threadId", thread.id}, {"allThreadsContinued", false}});
    return true;
}

// What the thread stopped for, when an exception breakpoint (or an uncaught exception) stopped
// it: the exception's type, its text and its traceback, from the process.
void Adapter::exception_info(const Json& request) {
    auto& thread = stopped_thread(request, integer(request, "threadId"));
    inspect(request, thread, {{"command", "exception"}}, [this, request](auto& m) {
        const auto& body = m["body"];
        const auto id = text(body, "id");
        respond(request, {{"exceptionId", id},
                          {"description", text(body, "description")},
                          {"breakMode", text(body, "mode", "always")},
                          {"details",
                           {{"typeName", id},
                            {"message", text(body, "description")},
                            {"stackTrace", text(body, "trace")}}}});
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

}  // namespace dpdb::dap
