#include "hub/hub.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <unordered_map>
#include <vector>

#include "common/printable.hpp"
#include "hub/admission.hpp"
#include "hub/connection.hpp"
#include "hub/listener.hpp"
#include "hub/local_process.hpp"
#include "hub/logs.hpp"
#include "hub/pages.hpp"
#include "hub/registry.hpp"
#include "hub/stacks_requests.hpp"
#include "hub/store.hpp"
#include "hub/summary.hpp"
#include "wire/auth.hpp"
#include "wire/contents.hpp"

namespace dpdb::hub {

using wire::Json;
using wire::make;
using wire::Message;
using ConnectionPtr = std::shared_ptr<Connection>;

class HubImpl : public std::enable_shared_from_this<HubImpl> {
  public:
    HubImpl(asio::io_context& io, HubOptions options)
        : io_(io),
          options_(std::move(options)),
          listener_(std::make_shared<Listener>(io, options_,
                                               [this](const std::string& line) { log(line); })),
          agent_key_(wire::agent_key(options_.secret)),
          store_(options_.store_path) {
        if (!options_.log) options_.log = [](const std::string&) {};
        store_.on_bad_row([this](const std::string& line) { log(line); });
    }

    void start() {
        listener_->start(
            [weak = weak_from_this()](std::unique_ptr<Stream> stream, Admission::Slot slot) {
                if (auto self = weak.lock()) self->admit(std::move(stream), std::move(slot));
            });
    }

    int tcp_port() const { return listener_->tcp_port(); }

    void stop() {
        asio::post(io_, [self = shared_from_this()] {
            self->listener_->close();
            auto all = self->connections_;
            for (auto& [id, connection] : all) connection->close("hub stopping");
        });
    }

  private:
    // Every line goes through here: what a peer sent may be quoted in it, and the log may be
    // read in a terminal.
    void log(const std::string& line) { options_.log(printable(line, 2000)); }

    void admit(std::unique_ptr<Stream> stream, Admission::Slot slot) {
        auto connection = std::make_shared<Connection>(std::move(stream), next_connection_id_++);
        connections_[connection->id()] = connection;
        connection->nonce = wire::random_hex(16);
        connection->slot = std::move(slot);
        connection->slot.on_evict([weak = std::weak_ptr<Connection>(connection)] {
            if (auto evicted = weak.lock()) evicted->close("closed to make room (see Admission)");
        });
        std::weak_ptr<HubImpl> weak = shared_from_this();
        connection->start(
            [weak](const ConnectionPtr& c, const Message& m) {
                if (auto self = weak.lock()) self->on_message(c, m);
            },
            [weak](const ConnectionPtr& c, const std::string& reason) {
                if (auto self = weak.lock()) self->on_close(c, reason);
            });
        connection->send(
            make("challenge", {{"v", wire::kProtocolVersion}, {"nonce", connection->nonce}}));
    }

    void on_message(const ConnectionPtr& from, const Message& message) {
        // What the objects inside the message hold is checked before anything of it is used or
        // kept: a bad message is a malformed input (Connection drops the peer, one log line).
        // A hello's, once its sender proved the credential (handshake): until then it is a
        // stranger's, and only its proof counts.
        if (from->authenticated) wire::check_contents(message);
        try {
            if (!from->authenticated) {
                handshake(from, message);
            } else if (from->role == Role::Agent) {
                from_agent(from, message);
            } else {
                from_client(from, message);
            }
        } catch (const wire::ProtocolError&) {
            throw;
        } catch (const std::exception& error) {
            // A value the checks let through and the hub could not handle: this peer goes, the
            // hub and everyone else's connections stay.
            from->close("the hub could not handle its " + message.type + " message (" +
                        error.what() + ")");
        }
    }

    // A peer that fails the handshake: a stranger's line, within its budget (see Admission).
    void refuse(const ConnectionPtr& peer, const std::string& reason) {
        admission().note("refused connection " + std::to_string(peer->id()) + " from " +
                         peer->stream().peer() + ": " + reason);
        peer->send(make("refused", {{"reason", reason}}));
        peer->close("refused: " + reason);
    }

    void handshake(const ConnectionPtr& peer, const Message& hello) {
        if (hello.type != "hello") return refuse(peer, "expected hello, got " + hello.type);
        if (hello.num("v") != wire::kProtocolVersion) {
            return refuse(peer, "protocol version " + std::to_string(hello.num("v")) +
                                    " is not supported (this hub speaks " +
                                    std::to_string(wire::kProtocolVersion) + ")");
        }
        const std::string role = hello.str("role");
        if (role != "agent" && role != "client") {
            return refuse(peer, "unknown role \"" + printable(role) + "\"");
        }
        const std::string peer_nonce = hello.str("nonce");
        const auto binding = peer->stream().binding();
        // An agent may prove the agent key instead of the secret (wire/auth.hpp); the hub
        // answers with the key the peer proved, which is all that peer can check.
        const std::string mac = hello.str("mac");
        std::string key = options_.secret;
        if (!wire::macs_equal(mac,
                              wire::handshake_mac(key, role, peer->nonce, peer_nonce, binding))) {
            key = agent_key_;
            if (role != "agent" ||
                !wire::macs_equal(
                    mac, wire::handshake_mac(key, role, peer->nonce, peer_nonce, binding))) {
                return refuse(peer, "authentication failed (wrong secret)");
            }
        }
        try {
            wire::check_contents(hello);
        } catch (const wire::ProtocolError& error) {
            // It holds the credential (a process of the job): not a stranger's failure.
            log("refused connection " + std::to_string(peer->id()) + ": " + error.what());
            peer->send(make("refused", {{"reason", std::string("bad hello: ") + error.what()}}));
            peer->close("refused: bad hello");
            return;
        }
        Json proc = hello.has("proc") ? wire::without_nulls(hello["proc"]) : Json::object();
        if (role == "client" && options_.job_parent > 0 &&
            descends_from(peer->stream().peer_pid(), options_.job_parent)) {
            const std::string reason = "a process of the job cannot be a client of its hub (pid " +
                                       std::to_string(peer->stream().peer_pid()) +
                                       "): run dpdb from another terminal";
            log("refused connection " + std::to_string(peer->id()) + ": " + reason);
            peer->send(make("refused", {{"reason", reason}}));
            peer->close("refused: " + reason);
            return;
        }
        if (role == "agent") {
            if (const auto impostor = agreed_pid(peer, proc)) {
                log("refused connection " + std::to_string(peer->id()) + ": " + *impostor);
                peer->send(make("refused", {{"reason", *impostor}}));
                peer->close("refused: " + *impostor);
                return;
            }
        }
        peer->authenticated = true;
        peer->slot.release();
        peer->role = role == "agent" ? Role::Agent : Role::Client;
        peer->send(make(
            "welcome",
            {{"mac", wire::handshake_mac(key, "hub", peer->nonce, peer_nonce, binding)},
             {"hub",
              {{"name", options_.name}, {"pid", ::getpid()}, {"socket", options_.socket_path}}}}));
        if (peer->role == Role::Agent) {
            peer->send(make("breakpoints", {{"list", store_.breakpoints()}}));
            registry_.add_process(peer->id(), std::move(proc));
            publish("process_start", registry_.describe(*registry_.process(peer->id())));
        }
    }

    Admission& admission() { return listener_->admission(); }

    // Why an agent's description cannot stand (it claims another process's pid), after making
    // it agree with what the kernel says of the connection (hub/local_process).
    std::optional<std::string> agreed_pid(const ConnectionPtr& agent, Json& proc) const {
        if (!options_.check_claimed_pids) return std::nullopt;
        return agree_on_pid(proc, agent->stream().peer_pid());
    }

    // --- agents -------------------------------------------------------------------------------

    void from_agent(const ConnectionPtr& agent, const Message& message) {
        const auto& type = message.type;
        if (type == "proc_update") {
            Json proc = wire::without_nulls(message["proc"]);
            if (const auto impostor = agreed_pid(agent, proc)) {
                log("dropped connection " + std::to_string(agent->id()) + ": " + *impostor);
                return agent->close("refused: " + *impostor);
            }
            registry_.add_process(agent->id(), std::move(proc));
            publish("process_update", registry_.describe(*registry_.process(agent->id())));
            return;
        }
        Process* process = registry_.process(agent->id());
        if (type == "break_status") {
            process->resolved_breakpoints = message["resolved"];
            process->breakpoint_notes =
                message.has("notes") ? message["notes"] : wire::Json::array();
            process->breakpoints_reported = true;
            return;
        }
        if (type == "stacks_reply") return stacks_answered(agent->id(), message);
        if (type == "log_lines") return logs_arrived(*process, message);
        if (type == "exiting") {
            process->ending = {{"status", message.num("status")}};
            return;
        }
        if (type == "exec") {
            // Its connection closes as the new program replaces it (close-on-exec): the record
            // carries the new command, and the process is not taken for vanished.
            process->ending = {{"exec", message.str("path")}, {"argv", message["argv"]}};
            return;
        }
        if (type == "released") {
            answer_releases(agent->id(),
                            " runs on without the debugger: breakpoints out, paused threads "
                            "resumed");
            return;
        }
        if (type == "exec_failed") {
            if (process->ending.contains("exec")) process->ending = Json();
            return;
        }
        if (type == "crash") {
            process->ending = {{"signal", message.str("signal")},
                               {"stacks", message.str("stacks")}};
            publish("process_crash", {{"pid", process->info.value("pid", Json())},
                                      {"run", process->info.value("run", Json())},
                                      {"signal", message.str("signal")},
                                      {"argv", process->info.value("argv", Json())}});
            return;
        }
        if (!message.has("sid")) return protocol_violation(agent, type);
        const auto agent_sid = message.num("sid");
        if (type == "session_open") {
            if (registry_.session_of_agent(agent->id(), agent_sid) != nullptr) {
                return protocol_violation(agent, "session_open for an open session");
            }
            auto& session = registry_.open_session(agent->id(), agent_sid,
                                                   wire::without_nulls(message["info"]));
            publish("session_open", registry_.describe(session));
            return;
        }
        Session* session = registry_.session_of_agent(agent->id(), agent_sid);
        if (session == nullptr) return;  // raced with a close: nothing to route
        if (type == "session_update") {
            const auto since = session->info.value("since", Json());
            session->info = wire::without_nulls(message["info"]);
            session->info["since"] = since;
            publish("session_update", registry_.describe(*session));
        } else if (type == "session_close") {
            close_session(*session, message.str("reason"));
        } else if (type == "output" || type == "prompt" || type == "completions" ||
                   type == "inspect_reply") {
            if (auto client = connection(session->client)) {
                Json body = message.body;
                body.erase("t");
                body["sid"] = session->id;
                client->send(make(type, std::move(body)));
                hold_while_congested(agent, client);
            }
        } else {
            protocol_violation(agent, type);
        }
    }

    // A console that cannot take the session's output yet (its terminal is not read) holds the
    // agent back, as a terminal holds a program: the hub stops reading it, its writes block,
    // and it goes on once the console has caught up. Without this the hub would queue the
    // output until its bound and then drop the console.
    static void hold_while_congested(const ConnectionPtr& agent, const ConnectionPtr& client) {
        if (!client->congested() || agent->reading_held()) return;
        agent->hold_reading();
        client->when_drained([weak = std::weak_ptr<Connection>(agent)] {
            if (auto held = weak.lock()) held->resume_reading();
        });
    }

    void close_session(Session& session, const std::string& reason) {
        const auto id = session.id;
        if (auto client = connection(session.client)) {
            client->send(make("detached", {{"sid", id}, {"reason", reason}}));
        }
        registry_.close_session(id);
        publish("session_close", {{"sid", id}, {"reason", reason}});
    }

    // --- clients ------------------------------------------------------------------------------

    void from_client(const ConnectionPtr& client, const Message& message) {
        const auto& type = message.type;
        if (type == "list") return send_listing(client, message);
        if (type == "summarize") {
            Json body = summarize(registry_);
            body["id"] = message.num("id");
            client->send(make("summary", std::move(body)));
            return;
        }
        if (type == "subscribe") {
            // Once only: a repeated subscribe must not make every event arrive twice.
            if (std::find(subscribers_.begin(), subscribers_.end(), client->id()) ==
                subscribers_.end()) {
                subscribers_.push_back(client->id());
            }
            return;
        }
        if (type == "attach") return attach(client, message);
        if (type == "break_add" || type == "break_clear" || type == "break_list") {
            return breakpoints_request(client, message);
        }
        if (type == "stacks") return stacks_request(client, message);
        if (type == "pause_process" || type == "release_process" || type == "debug_process" ||
            type == "terminate_process") {
            return process_order(client, message);
        }
        if (type == "log") return log_request(client, message);
        if (type == "logs") return logs_request(client, message);
        if (type != "detach" && type != "input" && type != "complete" && type != "interrupt" &&
            type != "inspect") {
            return protocol_violation(client, type);
        }
        Session* session = session_asked(client, message);
        if (session == nullptr) return;
        if (session->client != client->id()) {
            client->send(make(
                "error", {{"message", "not attached to session " + std::to_string(session->id)}}));
            return;
        }
        if (type == "detach") {
            detach(*session, "detached");
            return;
        }
        if (auto agent = connection(session->agent)) {
            Json body = message.body;
            body.erase("t");
            body["sid"] = session->agent_sid;
            agent->send(make(type, std::move(body)));
        }
    }

    // The whole listing, as pages: 10,000 processes outgrow a frame. Built at once, so that the
    // pages together are one moment's registry; each description encoded once (hub/pages.hpp).
    void send_listing(const ConnectionPtr& client, const Message& message) {
        const bool sessions_only =
            message.has("sessions_only") && message["sessions_only"].get<bool>();
        EncodedArrays arrays(1, {"processes", {}});
        if (!sessions_only) {
            auto& processes = arrays.back().second;
            processes.reserve(registry_.processes().size());
            for (const auto& [connection, process] : registry_.processes()) {
                std::string text = registry_.encoded(process);
                if (text.size() > kMaxItemBytes) {
                    text = encode_item(registry_.describe(process), shrink_description);
                }
                processes.push_back(std::move(text));
            }
        }
        arrays.push_back({"sessions", {}});
        for (const auto& [id, session] : registry_.sessions()) {
            arrays.back().second.push_back(
                encode_item(registry_.describe(session), shrink_description));
        }
        if (!sessions_only) {
            arrays.push_back({"exited", {}});
            for (auto& record : store_.exits(kListedExits)) {
                refresh_outlived(record);
                arrays.back().second.push_back(encode_item(record, shrink_description));
            }
        }
        const std::string head = "\"t\":\"listing\",\"id\":" + std::to_string(message.num("id"));
        for (auto& page : encode_pages(head, arrays)) {
            client->send_encoded(std::move(page), "listing");
        }
    }

    // The session a client's message names, or null after telling the client there is none.
    Session* session_asked(const ConnectionPtr& client, const Message& message) {
        Session* session = registry_.session(message.num("sid"));
        if (session == nullptr) {
            client->send(
                make("error", {{"message", "no session " + std::to_string(message.num("sid"))}}));
        }
        return session;
    }

    void attach(const ConnectionPtr& client, const Message& message) {
        Session* session = session_asked(client, message);
        if (session == nullptr) return;
        if (session->client != 0 && session->client != client->id()) {
            detach(*session, "another client attached to it");
        }
        session->client = client->id();
        client->send(
            make("attached", {{"sid", session->id}, {"session", registry_.describe(*session)}}));
        if (auto agent = connection(session->agent)) {
            agent->send(
                make("attach", {{"sid", session->agent_sid}, {"cols", message.num("cols")}}));
        }
        publish("session_update", registry_.describe(*session));
    }

    void detach(Session& session, const std::string& reason) {
        if (auto client = connection(session.client)) {
            client->send(make("detached", {{"sid", session.id}, {"reason", reason}}));
        }
        session.client = 0;
        if (auto agent = connection(session.agent)) {
            agent->send(make("detach", {{"sid", session.agent_sid}}));
        }
        publish("session_update", registry_.describe(session));
    }

    // --- global breakpoints, stacks, pause, crash records (requests answered by "result") -----

    void reply(const ConnectionPtr& client, const Message& request, bool ok,
               const std::string& text, Json data = Json::object()) {
        client->send(make(
            "result",
            {{"id", request.num("id")}, {"ok", ok}, {"message", text}, {"data", std::move(data)}}));
    }

    // An answer in pages: a "result" each, all with the request's id, all but the last "more".
    static void send_result_pages(Connection& client, std::int64_t id, std::vector<Json> pages) {
        for (std::size_t i = 0; i < pages.size(); ++i) {
            Json page = {{"id", id}, {"ok", true}, {"message", ""}, {"data", std::move(pages[i])}};
            if (i + 1 < pages.size()) page["more"] = true;
            client.send(make("result", std::move(page)));
        }
    }

    void breakpoints_request(const ConnectionPtr& client, const Message& message) {
        const auto& type = message.type;
        if (type == "break_add") {
            const auto spec = message.str("spec");
            if (spec.empty() || spec.size() > 4096) {
                return reply(client, message, false, "a breakpoint needs FILE:LINE or FUNCTION");
            }
            const auto log = message.has("log") ? message.str("log") : std::string();
            const auto ignore = message.has("ignore") ? message.num("ignore") : 0;
            if (ignore < 0) return reply(client, message, false, "ignore takes a count of hits");
            const auto id = store_.add_breakpoint({{"spec", spec},
                                                   {"condition", message.str("condition")},
                                                   {"log", log},
                                                   {"ignore", ignore}});
            broadcast_breakpoints();
            return reply(
                client, message, true,
                (log.empty() ? "breakpoint " : "logpoint ") + std::to_string(id) + " at " + spec,
                {{"bp", id}});
        }
        if (type == "break_clear") {
            const auto bp = message.num("bp");
            if (bp == 0) {
                store_.clear_breakpoints();
            } else if (!store_.remove_breakpoint(bp)) {
                return reply(client, message, false, "no breakpoint " + std::to_string(bp));
            }
            broadcast_breakpoints();
            return reply(
                client, message, true,
                bp == 0 ? "cleared every breakpoint" : "cleared breakpoint " + std::to_string(bp));
        }
        reply(client, message, true, "", summarize_breakpoints(registry_, store_.breakpoints()));
    }

    void broadcast_breakpoints() {
        const auto update = make("breakpoints", {{"list", store_.breakpoints()}});
        for (auto& [connection, process] : registry_.processes()) {
            process.breakpoints_reported = false;
            if (auto agent = this->connection(connection)) agent->send(update);
        }
    }

    void stacks_request(const ConnectionPtr& client, const Message& message) {
        Json early = Json::array();
        std::set<std::uint64_t> agents;
        if (message["pids"].empty()) {
            for (const auto& [connection, process] : registry_.processes()) {
                if (this->connection(connection)) agents.insert(connection);
            }
        }
        for (const auto& pid : message["pids"]) {
            const auto connection =
                pid.is_number_integer() ? registry_.connection_of_pid(pid.get<std::int64_t>()) : 0;
            if (connection == 0) {
                early.push_back(
                    {{"pid", pid},
                     {"error", "no such process under this hub (gone, or never here)"}});
            } else if (this->connection(connection)) {
                agents.insert(connection);
            }
        }
        const auto number =
            stacks_requests_.open(client->id(), message.num("id"), std::move(early), agents);
        for (auto connection : agents) {
            this->connection(connection)->send(make("stacks_request", {{"req", number}}));
        }
        auto timer = std::make_shared<asio::steady_timer>(io_, StacksRequests::kTimeout);
        timer->async_wait([self = shared_from_this(), timer](const asio::error_code&) {
            self->finish_stacks_requests();
        });
        finish_stacks_requests();
    }

    void stacks_answered(std::uint64_t agent, const Message& message) {
        stacks_requests_.answered(message.num("req"), agent, [&] {
            Json entry = registry_.describe(*registry_.process(agent));
            entry["stacks"] = wire::without_nulls(message["stacks"]);
            return entry;
        });
        finish_stacks_requests();
    }

    // Answers every request whose agents have all answered or whose time is up.
    void finish_stacks_requests() {
        const auto finished = stacks_requests_.take_finished([this](std::uint64_t agent) {
            const Process* process = registry_.process(agent);
            return process != nullptr ? registry_.describe(*process) : Json::object();
        });
        for (const auto& answer : finished) {
            if (auto client = connection(answer.client)) {
                // The stacks of a whole job outgrow a frame: pages (hub/pages.hpp).
                send_result_pages(*client, answer.client_request,
                                  paginate({{"processes", answer.processes}}, shrink_stacks));
            }
        }
    }

    // dpdb pause, dpdb detach -p, dpdb attach -p and an IDE's terminate: an order to one
    // process as a whole.
    void process_order(const ConnectionPtr& client, const Message& message) {
        const auto pid = message.num("pid");
        const auto connection = registry_.connection_of_pid(pid);
        auto agent = this->connection(connection);
        if (!agent)
            return reply(client, message, false,
                         "no process " + std::to_string(pid) + " under this hub");
        if (message.type == "release_process") {
            // Answered once the agent says it is done (or a bound passed): a program the client
            // lets run on must not meet a breakpoint the release has not taken out yet.
            agent->send(make("release", Json::object()));
            auto& waiting = releases_[connection];
            waiting.push_back({client->id(), message.num("id"), pid});
            auto timer = std::make_shared<asio::steady_timer>(io_, kReleaseWait);
            timer->async_wait(
                [self = shared_from_this(), timer, connection](const asio::error_code&) {
                    self->answer_releases(connection,
                                          " runs on without the debugger: breakpoints out, paused "
                                          "threads resumed as soon as it runs Python (it did not "
                                          "confirm within 2 s)");
                });
            return;
        }
        if (message.type == "terminate_process") {
            agent->send(make("terminate", Json::object()));
            return reply(
                client, message, true,
                "pid " + std::to_string(pid) + " released and sent SIGTERM (an IDE's terminate)");
        }
        if (message.type == "debug_process") {
            agent->send(make("debug", Json::object()));
            return reply(client, message, true,
                         "pid " + std::to_string(pid) + " is debugged again: breakpoints armed");
        }
        agent->send(make("pause", {{"all_threads", message["all_threads"].get<bool>()}}));
        reply(client, message, true,
              "pausing pid " + std::to_string(pid) + " at its next Python line");
    }

    // Answers every client waiting for the release of the agent on `connection`.
    void answer_releases(std::uint64_t connection, const std::string& how, bool ok = true) {
        const auto it = releases_.find(connection);
        if (it == releases_.end()) return;
        const auto waiting = std::move(it->second);
        releases_.erase(it);
        for (const auto& release : waiting) {
            if (auto client = this->connection(release.client)) {
                client->send(
                    make("result", {{"id", release.request},
                                    {"ok", ok},
                                    {"message", "pid " + std::to_string(release.pid) + how},
                                    {"data", Json::object()}}));
            }
        }
    }

    void log_request(const ConnectionPtr& client, const Message& message) {
        const auto pid = message.num("pid");
        if (registry_.connection_of_pid(pid) != 0) {
            return reply(client, message, false,
                         "pid " + std::to_string(pid) + " is still running; `dpdb stacks " +
                             std::to_string(pid) + "` shows where");
        }
        for (auto& record : store_.exits(kListedExits * 10)) {
            if (record.value("pid", std::int64_t{-1}) == pid) {
                refresh_outlived(record);
                return reply(client, message, true, "", {{"process", record}});
            }
        }
        reply(client, message, false, "no record of pid " + std::to_string(pid) + " at this hub");
    }

    // --- logpoint messages (hub/logs.hpp) -------------------------------------------------------

    void logs_arrived(const Process& process, const Message& message) {
        auto lines = stamp_log_lines(message["lines"], process.info);
        if (lines.empty()) return;
        store_.add_logs(lines);
        for (auto& line : lines) publish("log", std::move(line));
    }

    void logs_request(const ConnectionPtr& client, const Message& message) {
        std::set<std::int64_t> pids;
        for (const auto& pid : message["pids"]) {
            if (pid.is_number_integer()) pids.insert(pid.get<std::int64_t>());
        }
        const auto limit = message.has("limit") ? message.num("limit") : kListedLogs;
        send_result_pages(*client, message.num("id"),
                          log_pages(store_.logs(pids, static_cast<int>(std::clamp<std::int64_t>(
                                                          limit, 0, kListedLogs)))));
    }

    // --- both ---------------------------------------------------------------------------------

    void protocol_violation(const ConnectionPtr& peer, const std::string& what) {
        peer->close("unexpected " + what + " message");
    }

    void on_close(const ConnectionPtr& peer, const std::string& reason) {
        connections_.erase(peer->id());
        peer->slot.release();
        // An eviction was told once for its address (Admission), not once per connection.
        const bool quiet = reason == "disconnected" || reason == "hub stopping" ||
                           reason.rfind("refused", 0) == 0 ||
                           reason.rfind("closed to make room", 0) == 0;
        const std::string dropped = "dropped connection " + std::to_string(peer->id()) + " from " +
                                    peer->stream().peer() + ": " + printable(reason);
        if (!peer->authenticated) {
            if (!quiet) admission().note(dropped);  // a stranger's: within its budget
        } else if (!quiet) {
            log(dropped);
        }
        subscribers_.erase(std::remove(subscribers_.begin(), subscribers_.end(), peer->id()),
                           subscribers_.end());
        if (peer->role == Role::Agent) {
            const auto orphaned = registry_.sessions_of(peer->id());
            auto gone = registry_.remove_process(peer->id());
            const auto pid = gone ? gone->info.value("pid", Json()) : Json();
            for (auto id : orphaned) {
                close_session(*registry_.session(id),
                              "process " + pid.dump() + " went away (" + reason + ")");
            }
            if (gone) {
                Json record = exit_record(gone->info, gone->ending, reason);
                store_.record_exit(record);
                Json ended = {{"pid", pid}, {"reason", reason}};
                // How it ended, where it said so (an IDE's exited event carries the status).
                for (const char* key : {"status", "signal"}) {
                    if (record.contains(key)) ended[key] = record[key];
                }
                publish("process_exit", std::move(ended));
                stacks_requests_.agent_gone(peer->id(), pid);
                finish_stacks_requests();
                answer_releases(peer->id(), " ended before it said it was released", false);
            }
        } else if (peer->role == Role::Client) {
            std::vector<std::int64_t> attached;
            for (const auto& [id, session] : registry_.sessions()) {
                if (session.client == peer->id()) attached.push_back(id);
            }
            for (auto id : attached) detach(*registry_.session(id), "client went away");
        }
    }

    ConnectionPtr connection(std::uint64_t id) const {
        if (id == 0) return nullptr;
        const auto it = connections_.find(id);
        return it == connections_.end() ? nullptr : it->second;
    }

    void publish(const std::string& kind, Json data) {
        const auto event = make("event", {{"kind", kind}, {"data", std::move(data)}});
        for (auto id : subscribers_) {
            if (auto subscriber = connection(id)) subscriber->send(event);
        }
    }

    static constexpr int kListedExits = 200;
    // How long a release_process waits for the agent to say it is done (a process whose threads
    // all wait in C code does so at once: the agent's own thread answers).
    static constexpr auto kReleaseWait = std::chrono::seconds(2);

    struct Release {
        std::uint64_t client;
        std::int64_t request;
        std::int64_t pid;
    };
    std::map<std::uint64_t, std::vector<Release>> releases_;  // by the agent's connection
    static constexpr std::int64_t kListedLogs = 100000;

    asio::io_context& io_;
    HubOptions options_;
    std::shared_ptr<Listener> listener_;
    const std::string agent_key_;
    Registry registry_;
    Store store_;
    std::unordered_map<std::uint64_t, ConnectionPtr> connections_;
    std::vector<std::uint64_t> subscribers_;
    StacksRequests stacks_requests_;
    std::uint64_t next_connection_id_ = 1;
};

Hub::Hub(asio::io_context& io, HubOptions options)
    : impl_(std::make_shared<HubImpl>(io, std::move(options))) {}

Hub::~Hub() = default;

void Hub::start() {
    impl_->start();
}

void Hub::stop() {
    impl_->stop();
}

int Hub::tcp_port() const {
    return impl_->tcp_port();
}

}  // namespace dpdb::hub
