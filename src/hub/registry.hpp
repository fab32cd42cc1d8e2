// What the hub knows: connected processes and their paused sessions.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "wire/message.hpp"

namespace dpdb::hub {

struct Process {
    std::uint64_t connection = 0;
    wire::Json info;  // pid, ppid, host, argv, python, tags, ... as the agent described itself
    wire::Json resolved_breakpoints = wire::Json::array();  // global ones that match its code
    wire::Json breakpoint_notes = wire::Json::array();      // [{id, note}]: ambiguous specs, ...
    bool breakpoints_reported = false;  // its status answers the hub's latest list
    wire::Json ending;  // what the agent said as it ended: {"status"} or {"signal", "stacks"}
    // The host and the tags (by name) as text, kept beside the JSON: the summary reads them for
    // every process, and a JSON tree is a dozen allocations scattered over the heap, which made
    // summing up 10,000 processes memory-bound (hub/summary.cpp).
    std::string host;
    std::vector<std::pair<std::string, std::string>> tags;
};

struct Session {
    std::int64_t id = 0;         // the hub's number, what users type
    std::uint64_t agent = 0;     // connection of the process it lives in
    std::int64_t agent_sid = 0;  // the agent's own number for it
    std::uint64_t client = 0;    // connection of the attached client, 0 if none
    wire::Json info;             // thread, tid, file, line, function, since ...
    // Carried over to the process's fresh connection, not yet opened again on it.
    bool carried = false;
    std::int64_t columns = 80;  // the attached client's terminal width
};

class Registry {
  public:
    void add_process(std::uint64_t connection, wire::Json info);
    // Removes the process; its sessions stay until the caller closes them.
    std::optional<Process> remove_process(std::uint64_t connection);
    const Process* process(std::uint64_t connection) const;
    Process* process(std::uint64_t connection);
    // The connection of the live process with this pid (the first to connect, should two hosts
    // share a pid), or 0.
    std::uint64_t connection_of_pid(std::int64_t pid) const;
    // The connection of the process with this pid on this host, or 0.
    std::uint64_t connection_of(const std::string& host, std::int64_t pid) const;
    // The process on connection `from` now talks on `to` (it came back on a fresh connection):
    // its record and its sessions, with their ids, move over.
    void move_process(std::uint64_t from, std::uint64_t to);
    const std::map<std::uint64_t, Process>& processes() const { return processes_; }
    std::map<std::uint64_t, Process>& processes() { return processes_; }

    // `id`, when not 0 and free, is the session's number (the one it had before a hub restart).
    Session& open_session(std::uint64_t agent, std::int64_t agent_sid, wire::Json info,
                          std::int64_t id = 0);
    // New sessions are numbered from `next` on (ids remembered across a restart stay free).
    void number_from(std::int64_t next) { next_session_id_ = std::max(next_session_id_, next); }
    Session* session(std::int64_t id);
    Session* session_of_agent(std::uint64_t agent, std::int64_t agent_sid);
    void close_session(std::int64_t id);
    // The hub's ids of the sessions that live in this agent's process, in order.
    std::vector<std::int64_t> sessions_of(std::uint64_t agent) const;
    std::size_t session_count(std::uint64_t agent) const;

    // The JSON that clients see for a session or process.
    wire::Json describe(const Session& session) const;
    wire::Json describe(const Process& process) const;
    // describe(process) as JSON text, without copying the process's description first (a
    // listing of 10,000 processes is built while the hub answers nobody else).
    std::string encoded(const Process& process) const;

    const std::map<std::int64_t, Session>& sessions() const { return sessions_; }

  private:
    void index_pid(std::uint64_t connection, const wire::Json& info, bool add);

    std::map<std::uint64_t, Process> processes_;
    std::map<std::int64_t, Session> sessions_;
    // Indexes, so that nothing done per message or per process scans the whole registry (with
    // 10,000 processes that made listings and closes quadratic).
    std::map<std::uint64_t, std::map<std::int64_t, std::int64_t>> by_agent_;  // agent sid -> id
    std::map<std::int64_t, std::set<std::uint64_t>> by_pid_;                  // -> connections
    std::int64_t next_session_id_ = 1;
};

}  // namespace dpdb::hub
