// `dpdb dap`: one Debug Adapter Protocol session of an IDE, mapped onto a hub. The IDE's requests
// become hub messages (attach, input lines for stepping, global breakpoints, `inspect` questions
// answered by the paused thread: python/dpdb/_inspect.py); the hub's events become DAP events.
//
// Model: with a client that takes reverse `startDebugging` requests, this session is the job's:
// it holds the IDE's breakpoints and starts one child session per process, another adapter
// attached with "pid", whose threads are that process's. Without, one debug session where each
// process of the hub is a DAP thread (its main thread, "pid N <process>"), and each other Python
// thread that pauses one more ("pid N <process> <thread>"). See docs/ide.md for why.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "wire/channel.hpp"

namespace dpdb::dap {

// Code the user did not write, by its path: the standard library, installed packages, dpdb.
bool library_code(const std::string& path);

class Adapter {
  public:
    // `to_ide` sends one DAP message (framing is the caller's); `hub` is --hub or DPDB_HUB.
    Adapter(std::function<void(const wire::Json&)> to_ide, std::string hub);
    ~Adapter();

    // One message body from the IDE, as it came (it may be anything).
    void from_ide(const std::string& body);
    // A header the reader could not use: answered with an error response.
    void bad_frame(const std::string& reason);
    // Reads what the hub sent, without waiting; then answers requests whose time is up.
    void pump();
    // When pump() has something to do without a message (asking where breakpoints are armed).
    std::optional<std::chrono::steady_clock::time_point> standing_due() const;
    // The hub connection's descriptor for poll(), or -1 before attach.
    int hub_fd() const;
    // What a leaving IDE does with the threads paused under it.
    enum class Paused { resume, stay };
    // The IDE went away without a disconnect (it died, its connection closed): as a disconnect
    // that suspends the debuggee, since nobody could say otherwise.
    void leave(Paused paused = Paused::stay);
    // After disconnect, or once the hub went away.
    bool finished() const { return finished_; }

  private:
    struct Thread {
        std::int64_t id = 0;
        std::int64_t pid = 0;
        std::int64_t tid = 0;     // 0: the process's main thread
        std::string name;         // "pid N <process>", and " <thread>" for another thread
        std::string thread_name;  // the Python thread's own, for a thread besides the main one
        std::int64_t sid = 0;     // its open session, 0 while it runs
        bool ours = false;        // this adapter is the session's client
        bool held = false;        // another client (a terminal) is
        bool stopped = false;     // at a prompt, under this adapter
        std::string step;         // set by a step request: the reason of the next stop
        // Resumed by the IDE's continue, next, stepIn or stepOut (not by the repl): pdb's echo
        // of where it stops is not the IDE's, nor are the stops it makes only for pdb's sake.
        bool ide_resumed = false;
        bool pdb_stop = false;    // the echo said --Call-- or --Return--
        int steps_on = 0;         // steps taken past such stops since the IDE's request
        bool in_library = false;  // with justMyCode: the echo said library code
        int library_returns = 0;  // library functions left by `return` since the IDE's request
        std::uint64_t stop = 0;   // counts resumptions: handles of earlier stops are gone
    };
    // A frame id or variables reference the IDE holds: the thread's stop it belongs to, and the
    // agent's own number (pdb stack index, or the inspector's reference).
    struct Handle {
        std::int64_t thread = 0;
        std::uint64_t stop = 0;
        std::int64_t agent = 0;
    };
    using Done = std::function<void(const wire::Message&)>;
    struct Pending {
        wire::Json request;
        std::int64_t sid = 0;  // an inspect's session: its end fails the request
        Done done;
        std::chrono::steady_clock::time_point deadline;
    };

    void send_event(const std::string& event, wire::Json body = wire::Json::object());
    void respond(const wire::Json& request, wire::Json body = wire::Json::object());
    void fail(const wire::Json& request, const std::string& message);
    void request(const wire::Json& request);

    // Requests, one per DAP command.
    void initialize(const wire::Json& request);
    void attach(const wire::Json& request);
    void configuration_done(const wire::Json& request);
    void threads(const wire::Json& request);
    void stack_trace(const wire::Json& request);
    wire::Json shown_frames(const wire::Json& frames) const;
    void scopes(const wire::Json& request);
    void variables(const wire::Json& request);
    void set_variable(const wire::Json& request);
    void evaluate(const wire::Json& request);
    void completions(const wire::Json& request);
    std::pair<Thread*, std::int64_t> frame_asked(const wire::Json& request);
    void exception_info(const wire::Json& request);
    void resume(const wire::Json& request, const std::string& line, const std::string& reason);
    void run_on(Thread& thread, const std::string& line, const std::string& reason);
    bool repl_resumes(const wire::Json& request, Thread& thread, const std::string& line);
    void pause(const wire::Json& request);
    void source(const wire::Json& request);
    std::int64_t source_ref(std::int64_t pid, const std::string& path);
    void source_breakpoints(const wire::Json& request);
    void function_breakpoints(const wire::Json& request);
    void exception_breakpoints(const wire::Json& request);
    void set_breakpoints(const wire::Json& request, const std::string& key, wire::Json specs);
    // Whether they are verified: armed in some process (breakpoint_standing.cpp).
    void answer_when_armed(const wire::Json& request, wire::Json answers);
    void forget_standing(std::int64_t bp);
    void check_standing(std::chrono::steady_clock::time_point now);
    void standing_arrived(const wire::Json& data);
    bool standing_unknown() const;
    void disconnect(const wire::Json& request);
    void terminate(const wire::Json& request);
    std::vector<std::int64_t> job_pids() const;  // its processes, or those of its child sessions

    // The hub's side.
    void from_hub(const wire::Message& message);
    void on_event(const std::string& kind, const wire::Json& data);
    void process_seen(const wire::Json& process);
    void session_seen(const wire::Json& session);
    bool shown_here(std::int64_t pid) const;
    void start_child_session(std::int64_t pid, const wire::Json& process);
    void child_gone(std::int64_t pid, const wire::Json& data);
    static std::string label(const wire::Json& process);
    Thread& thread_for(std::int64_t pid, std::int64_t tid, const std::string& name);
    void session_gone(std::int64_t sid, const std::string& reason);
    void process_gone(const wire::Json& data);
    void take(const Thread& thread);
    void ran_on(Thread& thread);
    void expire(std::chrono::steady_clock::time_point now);

    // Helpers.
    std::int64_t ask(const std::string& type, wire::Json fields, const wire::Json& request,
                     std::int64_t sid, Done done);
    void inspect(const wire::Json& request, Thread& thread, wire::Json question, Done done);
    // An inspect question about what a handle the IDE holds names (`key` in the arguments,
    // sent to the agent as `field`); `shape` makes the response body of the answer's.
    void inspect_handle(const wire::Json& request, const char* key, const char* field,
                        wire::Json question,
                        std::function<wire::Json(const Thread&, const wire::Json&)> shape);
    Thread& stopped_thread(const wire::Json& request, std::int64_t id);
    Thread& thread_of(const wire::Json& request, const Handle& handle);
    std::int64_t keep(const Thread& thread, std::int64_t agent);
    const Handle& handle(const wire::Json& request, const char* key, std::int64_t id);
    Thread* by_session(std::int64_t sid);
    std::string to_remote(const std::string& path) const;
    std::string to_local(const std::string& path) const;
    wire::Json variable(const Thread& thread, const wire::Json& item, const char* value_key);

    std::function<void(const wire::Json&)> to_ide_;
    std::string hub_option_;
    std::unique_ptr<wire::Channel> channel_;
    bool configured_ = false;
    bool finished_ = false;
    std::int64_t seq_ = 1;
    std::int64_t next_id_ = 1;  // hub request ids (result, listing, inspect_reply)
    std::int64_t list_id_ = 0;
    std::optional<wire::Json> attach_request_;  // until the hub's listing is in
    std::map<std::int64_t, Pending> pending_;
    std::map<std::int64_t, Thread> threads_;  // DAP thread id -> thread
    std::int64_t next_thread_ = 1;
    std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> thread_ids_;  // (pid, tid)
    std::map<std::int64_t, Handle> handles_;
    std::int64_t next_handle_ = 1;
    std::map<std::string, std::vector<std::int64_t>> breakpoints_;          // per source: hub ids
    std::map<std::int64_t, std::pair<std::int64_t, std::string>> sources_;  // ref: pid, path
    // The IDE's source and function breakpoints (hub id) as last shown, and whether the IDE has
    // been told of them yet (a change after that is a `breakpoint` event).
    struct Standing {
        wire::Json body;
        bool announced = false;
    };
    std::map<std::int64_t, Standing> shown_breakpoints_;
    // setBreakpoints answers waiting for the processes to say where they are armed.
    struct Answering {
        wire::Json request;
        wire::Json answers;
        std::chrono::steady_clock::time_point deadline;
    };
    std::vector<Answering> answering_;
    std::chrono::steady_clock::time_point next_standing_{};           // when to ask the hub again
    std::vector<std::pair<std::string, std::string>> path_mappings_;  // local root, remote root
    // The IDE said it takes startDebugging; the attach's arguments, each child's starting point.
    bool ide_starts_children_ = false;
    wire::Json attach_arguments_ = wire::Json::object();
    // A child session: the one process it shows. The job's session: the processes it started a
    // child session for, until they end.
    std::int64_t only_pid_ = 0;
    bool just_my_code_ = true;  // the attach's "justMyCode"
    bool job_session_ = false;
    std::map<std::int64_t, bool> children_;  // pid -> still running
    // The job's first process (its exit status is the IDE's exitCode), and its status once seen;
    // the job ended once every process it had is gone.
    std::int64_t first_pid_ = 0;
    std::int64_t exit_code_ = 0;
    bool job_ended_ = false;
};

}  // namespace dpdb::dap
