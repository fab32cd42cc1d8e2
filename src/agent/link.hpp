// The agent's link to the hub: one connection per process, owned by an I/O thread that reads
// the hub's messages and files them into per-session inboxes, and that reconnects (re-registering
// the process and re-opening its sessions) whenever the hub goes away and comes back.
//
// Python threads only enqueue and wait; none of this code calls into Python, so the I/O thread
// never needs the GIL and a paused thread waits with the GIL released.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/address.hpp"
#include "wire/channel.hpp"

namespace dpdb::agent {

struct Event {
    std::string type;  // attach, detach, input, complete, inspect, interrupt, or lost (hub gone)
    std::string body;  // the message as JSON
    // An input: how many breakpoint lists had come from the hub before it (see wait()).
    std::uint64_t breakpoint_lists_before = 0;
};

class Link {
  public:
    static Link& instance();

    // Remembers where the hub is and who this process is, and starts the I/O thread, which
    // connects at once and again after every loss. The secret is `secret`, or else the content
    // of `secret_file`, read again at every attempt (a hub started later writes it then). Waits
    // up to connect_wait for the first connection; returns whether the link is connected.
    bool start(const std::string& address, const std::string& secret,
               const std::string& secret_file, const std::string& proc_json,
               std::chrono::milliseconds connect_wait);
    bool connected() const;
    bool wait_connected(std::chrono::milliseconds limit);
    // Waits until the first attempt to connect has ended, either way; returns whether connected.
    bool wait_first_attempt(std::chrono::milliseconds limit);
    bool started() const;
    // Undoes start: the I/O thread ends, the connection closes, and the control thread is handed
    // a "stop" event. For a start-up that failed (an attach that could not reach its hub).
    void stop();
    void update_process(const std::string& proc_json);

    std::int64_t open_session(const std::string& info_json);
    void update_session(std::int64_t sid, const std::string& info_json);
    void close_session(std::int64_t sid, const std::string& reason);
    // Console traffic for the attached client; dropped while no hub is connected, since a client
    // that attaches later is shown the location and prompt afresh.
    void send(const std::string& type, std::int64_t sid, const std::string& fields_json);

    // The next event for this session, waiting at most `timeout` (forever if nullopt). An input
    // is handed over once the control thread has armed every breakpoint list the hub sent before
    // it (bounded by kBreakpointsCatchUp), so that a command typed after a breakpoint was
    // cleared elsewhere (an IDE's setBreakpoints, then continue) never runs into it once more.
    std::optional<Event> wait(std::int64_t sid, std::optional<std::chrono::milliseconds> timeout);

    // The process's own traffic, not tied to a session. The hub sends "breakpoints",
    // "stacks_request", "pause", "interrupt", "release" and "debug"; wait_control() hands them
    // to the agent's control thread.
    std::optional<Event> wait_control(std::optional<std::chrono::milliseconds> timeout);
    // Sends break_status, stacks_reply and the like; dropped while no hub is connected. Whether
    // it went (to the kernel, at least). With a deadline (at the end of the process) it waits
    // until then for another writer (the logs' sender, its batch held up by a slow hub) and for
    // the hub to read, then gives up, dropping the connection if the message was cut short.
    bool send_process(const std::string& type, const std::string& fields_json,
                      std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt);
    // As the process exits: says how, without waiting for a lock another thread may hold.
    void send_exit(int status) noexcept;
    // Tells the hub the process is about to exec another program (see exec_watch). A process
    // that forked a moment ago may still be in its first handshake: waits for it, bounded; and
    // for a hub that stopped reading, bounded too (the exec goes ahead without its message).
    void announce_exec(const std::string& path, const std::vector<std::string>& argv);

    // In the child after fork(): the parent's connection, thread and sessions are not ours.
    void after_fork_in_child(const std::string& proc_json);
    // Whether this process was forked from the one that started the link without Python's fork
    // hooks (a server forking its workers in C: uWSGI without its fork hooks, a program that
    // embeds CPython): its inherited connections were let go of at the fork, and the Python face
    // calls after_fork_in_child itself the first time it needs the link.
    bool forked_without_hooks() const;

  private:
    void let_go_of_parent_connections_locked();
    struct SessionState {
        std::string info_json;
        std::deque<Event> inbox;
    };

    Link();
    void run_io(std::uint64_t generation);
    // One dial and handshake; `timed_out` says the dial went unanswered (a cut link).
    bool connect_once(std::uint64_t generation, bool& timed_out);
    // Reads the hub's messages until the connection fails, the hub falls silent (over TCP,
    // with heartbeats both ways) or the link is stopped.
    void hear_hub(wire::Channel& channel, std::uint64_t generation);
    HubAddress::Kind address_kind() const;
    void dispatch(const wire::Message& message);
    void deliver(std::int64_t sid, Event event);
    void start_thread_locked();

    // Guards everything below; the I/O thread and every Python thread use it, and a fork handler
    // holds it across fork() so that the child never inherits it locked.
    mutable std::mutex mutex_;
    std::condition_variable changed_;
    std::shared_ptr<wire::Channel> channel_;
    std::shared_ptr<wire::Channel> connecting_;  // the I/O thread's connection in its handshake
    int forked_socket_ = -1;  // connected in the fork handler, for the child's first handshake
    bool connected_ = false;
    bool ever_connected_ = false;  // since start, or since fork in a child
    bool attempted_ = false;       // the same, of having tried to connect
    bool started_ = false;
    std::uint64_t generation_ = 0;  // a new I/O thread after fork; the old one's is void
    pid_t owner_pid_ = 0;           // the process the link was started (or restarted) in
    HubAddress address_;
    std::string secret_;
    std::string secret_file_;
    std::string proc_json_;
    std::map<std::int64_t, SessionState> sessions_;
    std::deque<Event> control_inbox_;
    // Breakpoint lists: filed for the control thread, taken by it, and armed (it asks for its
    // next event only once it has handled the last). Counted since start or fork; `control_
    // running_` once the control thread first asked, since a process without one arms nothing.
    std::uint64_t breakpoint_lists_filed_ = 0;
    std::uint64_t breakpoint_lists_taken_ = 0;
    std::uint64_t breakpoint_lists_armed_ = 0;
    bool control_running_ = false;
    std::int64_t next_sid_ = 1;
};

}  // namespace dpdb::agent
