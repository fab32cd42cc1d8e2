// The hub's side of `dpdb dap`: its events and console traffic become the IDE's threads, stops
// and output; its answers go to the IDE's requests that wait for them.
#include "dap/adapter.hpp"
#include "dap/json.hpp"

namespace dpdb::dap {
namespace {

using wire::Json;

constexpr int kColumns = 200;  // what pdb's `pp` fits its output to under an IDE
// Steps taken on past pdb's --Call-- and --Return-- stops for one IDE step (a return into a line
// that calls another function meets its --Call--): bounded, the last stop is shown as it is.
constexpr int kStepsOn = 3;
// With justMyCode, library functions an IDE's step reached and is taken out of by pdb's `return`
// (each adds its --Return-- to step on past): bounded, the last stop is shown as it is.
constexpr int kLibraryReturns = 4;

// Where pdb's echo says the thread is: "> FILE(LINE)FUNCTION()", or "" if it says nowhere.
std::string echoed_path(const std::string& said) {
    for (std::size_t start = 0; start < said.size();) {
        auto end = said.find('\n', start);
        if (end == std::string::npos) end = said.size();
        if (said.compare(start, 2, "> ") == 0) {
            const auto line = said.substr(start + 2, end - start - 2);
            // The line number's parenthesis: the last "(" that digits and ")" follow.
            for (auto open = line.rfind('('); open != std::string::npos && open > 0;
                 open = line.rfind('(', open - 1)) {
                const auto close = line.find(')', open);
                if (close != std::string::npos && close > open + 1 &&
                    line.find_first_not_of("0123456789", open + 1) == close) {
                    return line.substr(0, open);
                }
            }
        }
        start = end + 1;
    }
    return "";
}

// What pdb's stop reasons are called in DAP's stopped event.
std::string stop_reason(const std::string& reason) {
    if (reason == "pause") return "pause";
    if (reason == "post-mortem" || reason == "exception") return "exception";
    return "breakpoint";
}

}  // namespace

void Adapter::pump() {
    if (!channel_) return;
    try {
        while (auto message = channel_->receive(0)) from_hub(*message);
    } catch (const std::exception& error) {
        // dpdb's own words are the console's: stdout and stderr are the program's.
        send_event("output",
                   {{"category", "console"},
                    {"output", std::string("dpdb: the hub went away: ") + error.what() + "\n"}});
        send_event("terminated");
        channel_.reset();
        finished_ = true;
        return;
    }
    const auto now = std::chrono::steady_clock::now();
    expire(now);
    check_standing(now);
}

void Adapter::from_hub(const wire::Message& message) {
    const auto& type = message.type;
    if (type == "listing" && message.num("id") == list_id_) {
        for (const auto& process : message["processes"]) process_seen(process);
        for (const auto& session : message["sessions"]) session_seen(session);
        if (!message.has("more") && attach_request_) {
            const auto request = *attach_request_;
            attach_request_.reset();
            if (only_pid_ != 0 && first_pid_ == 0) {
                finished_ = true;
                return fail(request, "no process " + std::to_string(only_pid_) +
                                         " in this job (it ended, or `dpdb ls` names another)");
            }
            respond(request);
            // One debuggee for the IDE: the job (each of its processes a thread, or a child
            // session), or the one process of a child session.
            const auto name =
                only_pid_ != 0 ? text(attach_arguments_, "name", "pid " + std::to_string(only_pid_))
                               : std::string("dpdb job");
            send_event("process",
                       {{"name", name}, {"isLocalProcess", false}, {"startMethod", "attach"}});
            send_event("initialized");
        }
        return;
    }
    if (type == "event") return on_event(message.str("kind"), message["data"]);
    if (type == "result" || type == "inspect_reply" || type == "completions") {
        const auto it = pending_.find(message.num("id"));
        if (it == pending_.end()) return;
        auto pending = std::move(it->second);
        pending_.erase(it);
        if (type == "inspect_reply" && message["body"].contains("error")) {
            return fail(pending.request, text(message["body"], "error"));
        }
        try {
            pending.done(message);
        } catch (const std::exception& error) {
            fail(pending.request, error.what());
        }
        return;
    }
    if (type == "error") {
        send_event("output",
                   {{"category", "console"}, {"output", "dpdb: " + message.str("message") + "\n"}});
        return;
    }
    Thread* thread = message.has("sid") ? by_session(message.num("sid")) : nullptr;
    if (thread == nullptr) return;
    if (type == "attached") {
        thread->ours = true;
    } else if (type == "detached") {
        // Another client took it, or it ended: it is no longer paused under this IDE.
        thread->ours = false;
        if (!thread->stopped) return;
        ran_on(*thread);
        send_event("continued", {{"threadId", thread->id}, {"allThreadsContinued", false}});
    } else if (type == "prompt" && thread->ours && !thread->stopped) {
        if (thread->ide_resumed && thread->pdb_stop && thread->step == "step" &&
            thread->steps_on < kStepsOn + thread->library_returns) {
            // pdb's stop at a call (the def line) or a return, which no IDE shows: one step on
            // reaches the callee's first line, or the caller's.
            thread->pdb_stop = false;
            ++thread->steps_on;
            channel_->send(wire::make("input", {{"sid", thread->sid}, {"line", "step"}}));
            return;
        }
        if (thread->ide_resumed && thread->in_library && thread->step == "step" &&
            thread->library_returns < kLibraryReturns) {
            // justMyCode: a step that reached library code does not stop there; pdb's `return`
            // leaves the function, and its --Return-- is stepped past into the caller.
            thread->in_library = false;
            ++thread->library_returns;
            channel_->send(wire::make("input", {{"sid", thread->sid}, {"line", "return"}}));
            return;
        }
        thread->ide_resumed = false;
        thread->pdb_stop = false;
        thread->in_library = false;
        thread->steps_on = 0;
        thread->library_returns = 0;
        thread->stopped = true;
        std::string reason = thread->step;
        thread->step.clear();
        if (reason.empty()) reason = "breakpoint";
        send_event("stopped",
                   {{"reason", reason}, {"threadId", thread->id}, {"allThreadsStopped", false}});
    } else if (type == "output") {
        const auto said = message.str("text");
        if (thread->ide_resumed) {
            // pdb's echo of where an IDE's step went: the IDE shows that itself.
            if (said.find("--Call--") != std::string::npos ||
                said.find("--Return--") != std::string::npos) {
                thread->pdb_stop = true;
            }
            const auto path = echoed_path(said);
            if (!path.empty()) thread->in_library = just_my_code_ && library_code(path);
            return;
        }
        send_event("output", {{"category", "console"}, {"output", said}});
    }
}

void Adapter::on_event(const std::string& kind, const Json& data) {
    if (kind == "session_open" || kind == "session_update") return session_seen(data);
    if (kind == "process_start" || kind == "process_update") return process_seen(data);
    if (kind == "log") {
        if (only_pid_ != 0) return;  // the job's session shows the job's logpoints
        send_event("output", {{"category", "console"}, {"output", text(data, "text") + "\n"}});
        return;
    }
    if (kind == "program_output") {
        // A process's output is its own session's, in the job's only without child sessions.
        if (!shown_here(number(data, "pid", -1)) || job_session_) return;
        send_event("output", {{"category", text(data, "stream")}, {"output", text(data, "text")}});
        return;
    }
    if (kind == "session_close") return session_gone(number(data, "sid"), text(data, "reason"));
    if (kind == "process_exit") process_gone(data);
}

// Its threads exit; once the job's last process is gone, the job has ended: exited (the first
// process's status) and terminated, as when a program under a debugger ends.
void Adapter::process_gone(const Json& data) {
    const auto pid = number(data, "pid", -1);
    if (!shown_here(pid)) return;
    if (job_session_) return child_gone(pid, data);
    for (auto it = threads_.begin(); it != threads_.end();) {
        if (it->second.pid != pid) {
            ++it;
            continue;
        }
        send_event("thread", {{"reason", "exited"}, {"threadId", it->first}});
        thread_ids_.erase({it->second.pid, it->second.tid});
        it = threads_.erase(it);
    }
    if (pid == first_pid_) exit_code_ = data.contains("signal") ? 1 : number(data, "status");
    if (first_pid_ == 0 || !threads_.empty() || job_ended_) return;
    job_ended_ = true;
    send_event("exited", {{"exitCode", exit_code_}});
    send_event("terminated");
}

// What a process is called: its launcher's name for it (ForkPoolWorker-1, gw0), else its script.
std::string Adapter::label(const Json& process) {
    const auto name = text(process, "process_name");
    if (!name.empty()) return name;
    const auto argv = process.value("argv", Json::array());
    if (!argv.is_array() || argv.empty()) return "";
    const auto& shown = argv.size() > 1 ? argv[1] : argv[0];
    return shown.is_string() ? basename(shown.get<std::string>()) : "";
}

Adapter::Thread& Adapter::thread_for(std::int64_t pid, std::int64_t tid, const std::string& name) {
    const auto found = thread_ids_.find({pid, tid});
    if (found != thread_ids_.end()) return threads_.at(found->second);
    Thread thread;
    thread.id = next_thread_++;
    thread.pid = pid;
    thread.tid = tid;
    thread.name = name;
    thread_ids_.emplace(std::make_pair(pid, tid), thread.id);
    send_event("thread", {{"reason", "started"}, {"threadId", thread.id}});
    return threads_.emplace(thread.id, thread).first->second;
}

// Every process shows as one thread, its main thread, from the moment it connects: the IDE sees
// the whole job, and its pause button stops any process.
void Adapter::process_seen(const Json& process) {
    const auto pid = number(process, "pid");
    if (pid <= 0 || !shown_here(pid)) return;
    // A forked child is named by its launcher after it connected (process_update).
    if (first_pid_ == 0) first_pid_ = pid;
    if (job_session_) return start_child_session(pid, process);
    const auto name = "pid " + std::to_string(pid) + " " + label(process);
    thread_for(pid, 0, name).name = name;
    // Its other threads shown so far carry the process's name too.
    for (auto& entry : threads_) {
        auto& thread = entry.second;
        if (thread.pid == pid && thread.tid != 0) thread.name = name + " " + thread.thread_name;
    }
}

void Adapter::session_seen(const Json& session) {
    const auto sid = number(session, "sid");
    const auto pid = number(session, "pid");
    // The job's session leaves every stop to the process's child session.
    if (job_session_ || !shown_here(pid)) return;
    const bool main = session.value("main_thread", text(session, "thread") == "MainThread");
    const auto prefix = "pid " + std::to_string(pid) + " " + label(session);
    auto& thread =
        main ? thread_for(pid, 0, prefix)
             : thread_for(pid, number(session, "tid"), prefix + " " + text(session, "thread"));
    // A session says what its process and thread are called at the stop, the freshest names.
    if (!main) thread.thread_name = text(session, "thread");
    thread.name = main ? prefix : prefix + " " + thread.thread_name;
    // Another session of the thread (its last one ended, or still closing): not ours yet.
    if (thread.sid != sid) thread.ours = false;
    thread.sid = sid;
    const auto& stop = session.value("reason", Json());
    if (thread.step.empty() && stop.is_string()) thread.step = stop_reason(stop.get<std::string>());
    // A session nobody holds (new, or released by a terminal) is taken; one a terminal holds is
    // left to it.
    thread.held = session.value("attached", false) && !thread.ours;
    if (configured_ && !thread.held && !thread.ours) take(thread);
}

void Adapter::take(const Thread& thread) {
    channel_->send(wire::make("attach", {{"sid", thread.sid}, {"cols", kColumns}}));
}

void Adapter::session_gone(std::int64_t sid, const std::string& reason) {
    Thread* thread = by_session(sid);
    if (thread == nullptr) return;
    const bool was_stopped = thread->stopped;
    ran_on(*thread);
    // What a later session of the thread says is not the echo of a step of this one.
    thread->ide_resumed = false;
    thread->sid = 0;
    thread->ours = false;
    for (auto it = pending_.begin(); it != pending_.end();) {
        if (it->second.sid != sid) {
            ++it;
            continue;
        }
        fail(it->second.request, "the thread ran on (" + reason + ")");
        it = pending_.erase(it);
    }
    if (was_stopped || reason == "continued") {
        send_event("continued", {{"threadId", thread->id}, {"allThreadsContinued", false}});
    }
}

// The thread runs: what the IDE holds of its last stop is gone.
void Adapter::ran_on(Thread& thread) {
    thread.stopped = false;
    ++thread.stop;
    for (auto it = handles_.begin(); it != handles_.end();) {
        it = it->second.thread == thread.id ? handles_.erase(it) : std::next(it);
    }
}

void Adapter::expire(std::chrono::steady_clock::time_point now) {
    for (auto it = pending_.begin(); it != pending_.end();) {
        if (now < it->second.deadline) {
            ++it;
            continue;
        }
        // A question of the adapter's own (no request of the IDE's) is asked again later.
        if (!it->second.request.is_null()) {
            fail(it->second.request, "no answer from the hub or the process within 10 s");
        }
        it = pending_.erase(it);
    }
}

Adapter::Thread* Adapter::by_session(std::int64_t sid) {
    for (auto& [id, thread] : threads_) {
        if (thread.sid == sid && sid != 0) return &thread;
    }
    return nullptr;
}

}  // namespace dpdb::dap
