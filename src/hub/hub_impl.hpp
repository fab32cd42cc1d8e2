// The hub's inside (hub/hub.hpp is its face): one object on the io_context thread that owns
// every connection, the registry and the store. Its handling is split by whom it serves:
// hub.cpp admits peers and handles closes, hub_agents.cpp what agents send, hub_clients.cpp what
// clients ask of sessions and listings, hub_requests.cpp the requests answered by "result"
// (global breakpoints, stacks, orders to a process).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/printable.hpp"
#include "hub/admission.hpp"
#include "hub/connection.hpp"
#include "hub/hub.hpp"
#include "hub/listener.hpp"
#include "hub/registry.hpp"
#include "hub/stacks_requests.hpp"
#include "hub/store.hpp"
#include "wire/message.hpp"

namespace dpdb::hub {

using wire::Json;
using wire::make;
using wire::Message;
using ConnectionPtr = std::shared_ptr<Connection>;

class HubImpl : public std::enable_shared_from_this<HubImpl> {
  public:
    HubImpl(asio::io_context& io, HubOptions options);

    void start();

    int tcp_port() const { return listener_->tcp_port(); }

    void stop();

  private:
    // Every line goes through here: what a peer sent may be quoted in it, and the log may be
    // read in a terminal.
    void log(const std::string& line) { options_.log(printable(line, 2000)); }

    void admit(std::unique_ptr<Stream> stream, Admission::Slot slot);

    void on_message(const ConnectionPtr& from, const Message& message);

    // A peer that fails the handshake: a stranger's line, within its budget (see Admission).
    void refuse(const ConnectionPtr& peer, const std::string& reason);

    void handshake(const ConnectionPtr& peer, const Message& hello);

    Admission& admission() { return listener_->admission(); }

    // Why an agent's description cannot stand (it claims another process's pid), after making
    // it agree with what the kernel says of the connection (hub/local_process).
    std::optional<std::string> agreed_pid(const ConnectionPtr& agent, Json& proc) const;

    // --- agents -------------------------------------------------------------------------------

    void from_agent(const ConnectionPtr& agent, const Message& message);

    // A console that cannot take the session's output yet (its terminal is not read) holds the
    // agent back, as a terminal holds a program: the hub stops reading it, its writes block,
    // and it goes on once the console has caught up. Without this the hub would queue the
    // output until its bound and then drop the console.
    static void hold_while_congested(const ConnectionPtr& agent, const ConnectionPtr& client);

    void close_session(Session& session, const std::string& reason);

    // --- liveness (hub_liveness.cpp) -----------------------------------------------------------

    // Every kLivenessTick: heartbeats to agents over TCP, and the agents not heard from marked
    // unreachable, then lost.
    void watch_liveness();
    void check_liveness(std::uint64_t tick);
    void mark_unreachable(const ConnectionPtr& agent, Process& process);
    // Heard again on its own connection: what was kept for its sessions goes through.
    void reached_again(const ConnectionPtr& agent, Process& process);
    // A process that was known on another connection (it lost the link and dialed again, or the
    // hub had not noticed yet): its record and sessions move to `agent`, keeping their ids, and
    // the old connection is closed. Returns whether it did.
    bool came_back(const ConnectionPtr& agent, const Json& proc);
    // The agent has opened its carried sessions again: any left were closed while it was away.
    void close_uncarried(std::uint64_t agent);
    // A session carried over, opened again by its agent: its client is attached to it again and
    // its kept input handed over.
    void resume_session(const ConnectionPtr& agent, Session& session);
    void tell_client(const Session& session, const std::string& line);
    void hand_over_kept_input(const ConnectionPtr& agent, const Session& session);
    // The process on `connection` is gone (its connection closed, or lost): its record is kept
    // among the exits, its sessions closed, its waiting clients answered.
    void forget_process(std::uint64_t connection, const std::string& reason);

    // --- clients ------------------------------------------------------------------------------

    void from_client(const ConnectionPtr& client, const Message& message);

    // The whole listing, as pages: 10,000 processes outgrow a frame. Built at once, so that the
    // pages together are one moment's registry; each description encoded once (hub/pages.hpp).
    void send_listing(const ConnectionPtr& client, const Message& message);

    // The session a client's message names, or null after telling the client there is none.
    Session* session_asked(const ConnectionPtr& client, const Message& message);

    void attach(const ConnectionPtr& client, const Message& message);

    void detach(Session& session, const std::string& reason);

    // --- global breakpoints, stacks, pause, crash records (requests answered by "result") -----

    void reply(const ConnectionPtr& client, const Message& request, bool ok,
               const std::string& text, Json data = Json::object());

    // An answer in pages: a "result" each, all with the request's id, all but the last "more".
    static void send_result_pages(Connection& client, std::int64_t id, std::vector<Json> pages);

    void breakpoints_request(const ConnectionPtr& client, const Message& message);

    void broadcast_breakpoints();

    // The "breakpoints" message of the table as it is now, stamped with its version.
    Message breakpoints_message() const;

    void stacks_request(const ConnectionPtr& client, const Message& message);

    void stacks_answered(std::uint64_t agent, const Message& message);

    // Answers every request whose agents have all answered or whose time is up.
    void finish_stacks_requests();

    // dpdb pause, dpdb detach -p, dpdb attach -p and an IDE's terminate: an order to one
    // process as a whole.
    void process_order(const ConnectionPtr& client, const Message& message);

    // An order answered once the agent says it is carried out (or after kOrderWait).
    void order_awaiting_agent(const ConnectionPtr& client, const Message& message,
                              std::uint64_t agent, const std::string& order,
                              const std::string& unconfirmed);

    // Answers every client waiting for `order` ("" for any) from the agent on `connection`, with
    // what the agent said of it as the result's data.
    void answer_orders(std::uint64_t connection, const std::string& order, const std::string& how,
                       bool ok = true, const Json& data = Json::object());

    void log_request(const ConnectionPtr& client, const Message& message);

    // --- logpoint messages (hub/logs.hpp) -------------------------------------------------------

    void logs_arrived(const Process& process, const Message& message);

    // An `exiting` or `crash` that counts logpoint messages its end could not send: a line of the
    // process's log saying how many.
    void unsent_at_end(const Process& process, const Message& message);

    // Stamped log lines: stored (each gets its number), then passed on to the subscribers.
    void keep_logs(Json lines);

    void logs_request(const ConnectionPtr& client, const Message& message);

    // --- the programs' output, for the clients that watch it (hub/program_output.cpp) ------------

    void watch_program_output(const ConnectionPtr& client);
    void unwatch_program_output(std::uint64_t client);
    void tell_agents_program_output(bool on);
    void greet_agent_program_output(const ConnectionPtr& agent);
    void program_output_arrived(const Process& process, const Message& message);

    // --- both ---------------------------------------------------------------------------------

    void protocol_violation(const ConnectionPtr& peer, const std::string& what);

    void on_close(const ConnectionPtr& peer, const std::string& reason);

    ConnectionPtr connection(std::uint64_t id) const;

    // To every subscriber, encoded once; a subscriber scoped to a run (`dpdb run`'s console)
    // hears only of that run's processes and of what belongs to none. `run` names the event's
    // run where its data does not.
    void publish(const std::string& kind, Json data, const std::string& run = "");

    static constexpr auto kLivenessTick = std::chrono::seconds(1);
    static constexpr std::uint64_t kHeartbeatTicks =
        2;  // agent/link.cpp sends as often (kHeartbeat)
    // Silence after which an agent is shown unreachable (docs/remote.md: within 10 s of a cut);
    // it is taken for lost after lost_after() (hub_liveness.cpp).
    static constexpr auto kUnreachableAfter = std::chrono::seconds(6);

    static constexpr int kListedExits = 200;
    // How long a release or a pause waits for the agent to say it is done (a process whose
    // threads all wait in C code does so at once: the agent's own thread answers; one holding
    // the GIL in C code does not).
    static constexpr auto kOrderWait = std::chrono::seconds(2);

    struct AwaitedOrder {
        std::string order;  // "release", "pause"
        std::uint64_t client;
        std::int64_t request;
        std::int64_t pid;
    };
    std::map<std::uint64_t, std::vector<AwaitedOrder>>
        awaited_orders_;  // by the agent's connection
    static constexpr std::int64_t kListedLogs = 100000;

    asio::io_context& io_;
    HubOptions options_;
    std::shared_ptr<Listener> listener_;
    const std::string agent_key_;
    Registry registry_;
    Store store_;
    std::unordered_map<std::uint64_t, ConnectionPtr> connections_;
    std::vector<std::uint64_t> subscribers_;
    // Subscribers that asked for one run's events only: with a job of N `dpdb run`s each
    // hearing every event, N processes pausing made N * N events.
    std::unordered_map<std::uint64_t, std::string> subscriber_runs_;
    std::vector<std::uint64_t> output_watchers_;  // subscribed with program_output: true
    StacksRequests stacks_requests_;
    std::uint64_t next_connection_id_ = 1;
    asio::steady_timer liveness_timer_;
    // Session ids of the hub's last run (Store::take_session_ids), given again as they come back.
    std::map<Store::SessionKey, std::int64_t> remembered_sessions_;
    bool stopping_ = false;
    // By session: what its client typed while its process was unreachable, handed over once it
    // is back (hub_liveness.cpp).
    std::map<std::int64_t, std::vector<Message>> kept_input_;
    std::uint64_t liveness_ticks_ = 0;
    // The global breakpoints' version, stepped at every change and sent with each list: a
    // process's break_status answers the list whose version it echoes, so an answer to an
    // earlier change (a clear just before an add) is not taken for one to the latest. Started
    // from the clock so that a restarted hub does not reuse the versions of its last run, which
    // an agent that reconnects may still echo.
    std::int64_t breakpoints_version_;
};

}  // namespace dpdb::hub
