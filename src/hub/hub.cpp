#include <unistd.h>

#include <algorithm>

#include "hub/hub_impl.hpp"
#include "hub/local_process.hpp"
#include "hub/summary.hpp"
#include "wire/auth.hpp"
#include "wire/contents.hpp"
#include "wire/tls.hpp"

namespace dpdb::hub {

HubImpl::HubImpl(asio::io_context& io, HubOptions options)
    : io_(io),
      options_(std::move(options)),
      listener_(
          std::make_shared<Listener>(io, options_, [this](const std::string& line) { log(line); })),
      agent_key_(wire::agent_key(options_.secret)),
      store_(options_.store_path),
      liveness_timer_(io),
      breakpoints_version_(std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count()) {
    if (!options_.log) options_.log = [](const std::string&) {};
    store_.on_bad_row([this](const std::string& line) { log(line); });
    remembered_sessions_ = store_.take_session_ids();
    for (const auto& [key, id] : remembered_sessions_) registry_.number_from(id + 1);
}

void HubImpl::start() {
    watch_liveness();
    listener_->start(
        [weak = weak_from_this()](std::unique_ptr<Stream> stream, Admission::Slot slot) {
            if (auto self = weak.lock()) self->admit(std::move(stream), std::move(slot));
        });
}

void HubImpl::stop() {
    asio::post(io_, [self = shared_from_this()] {
        self->stopping_ = true;  // the sessions' ids stay remembered for the next start
        self->listener_->close();
        self->liveness_timer_.cancel();
        auto all = self->connections_;
        for (auto& [id, connection] : all) connection->close("hub stopping");
    });
}

void HubImpl::admit(std::unique_ptr<Stream> stream, Admission::Slot slot) {
    auto connection = std::make_shared<Connection>(std::move(stream), next_connection_id_++);
    connections_[connection->id()] = connection;
    // With the early hello the peer's hello is already on its way: the channel binding, fresh
    // for this TLS connection, makes its MAC fresh, and kEarlyHello stands in for the nonce.
    const bool early = connection->stream().early_hello();
    connection->nonce = early ? std::string(wire::kEarlyHello) : wire::random_hex(16);
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
    if (!early) {
        connection->send(
            make("challenge", {{"v", wire::kProtocolVersion}, {"nonce", connection->nonce}}));
    }
}

void HubImpl::on_message(const ConnectionPtr& from, const Message& message) {
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
        from->close("the hub could not handle its " + message.type + " message (" + error.what() +
                    ")");
    }
}

void HubImpl::refuse(const ConnectionPtr& peer, const std::string& reason) {
    admission().note("refused connection " + std::to_string(peer->id()) + " from " +
                     peer->stream().peer() + ": " + reason);
    peer->send(make("refused", {{"reason", reason}}));
    peer->close("refused: " + reason);
}

void HubImpl::handshake(const ConnectionPtr& peer, const Message& hello) {
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
    if (!wire::macs_equal(mac, wire::handshake_mac(key, role, peer->nonce, peer_nonce, binding))) {
        key = agent_key_;
        if (role != "agent" || !wire::macs_equal(mac, wire::handshake_mac(key, role, peer->nonce,
                                                                          peer_nonce, binding))) {
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
    peer->send(make("welcome",
                    {{"mac", wire::handshake_mac(key, "hub", peer->nonce, peer_nonce, binding)},
                     // "speaks": the requests' fields of dpdb/2 are understood (a summarize's
                     // list_up_to), for a peer that learns it only here, without the early hello.
                     {"hub",
                      {{"name", options_.name},
                       {"pid", ::getpid()},
                       {"socket", options_.socket_path},
                       {"speaks", wire::kEarlyHello}}}}));
    if (peer->role == Role::Agent) {
        // Before the breakpoints, which the program waits for at start-up: its first line of
        // output is copied too.
        greet_agent_program_output(peer);
        peer->send(breakpoints_message());
        const bool back = came_back(peer, proc);
        registry_.add_process(peer->id(), std::move(proc));
        publish(back ? "process_update" : "process_start",
                registry_.describe(*registry_.process(peer->id())));
    }
}

std::optional<std::string> HubImpl::agreed_pid(const ConnectionPtr& agent, Json& proc) const {
    if (!options_.check_claimed_pids) return std::nullopt;
    return agree_on_pid(proc, agent->stream().peer_pid());
}

void HubImpl::protocol_violation(const ConnectionPtr& peer, const std::string& what) {
    peer->close("unexpected " + what + " message");
}

void HubImpl::on_close(const ConnectionPtr& peer, const std::string& reason) {
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
    subscriber_runs_.erase(peer->id());
    unwatch_program_output(peer->id());
    if (peer->role == Role::Agent) {
        const Process* process = registry_.process(peer->id());
        // Its link was cut: what closed is the connection, not the process, which may come
        // back on a fresh one (hub_liveness.cpp) until it is taken for lost.
        if (process != nullptr && process->info.contains("unreachable_since") &&
            process->ending.is_null() && reason.rfind("lost", 0) != 0) {
            return;
        }
        forget_process(peer->id(), reason);
    } else if (peer->role == Role::Client) {
        std::vector<std::int64_t> attached;
        for (const auto& [id, session] : registry_.sessions()) {
            if (session.client == peer->id()) attached.push_back(id);
        }
        for (auto id : attached) detach(*registry_.session(id), "client went away");
    }
}

void HubImpl::forget_process(std::uint64_t connection, const std::string& reason) {
    const auto orphaned = registry_.sessions_of(connection);
    auto gone = registry_.remove_process(connection);
    const auto pid = gone ? gone->info.value("pid", Json()) : Json();
    for (auto id : orphaned) {
        close_session(*registry_.session(id),
                      "process " + pid.dump() + " went away (" + reason + ")");
    }
    if (gone) {
        gone->info.erase("unreachable_since");  // the reason says it, for a lost one
        Json record = exit_record(gone->info, gone->ending, reason);
        store_.record_exit(record);
        Json ended = {{"pid", pid}, {"reason", reason}};
        // How it ended, where it said so (an IDE's exited event carries the status).
        for (const char* key : {"status", "signal"}) {
            if (record.contains(key)) ended[key] = record[key];
        }
        publish("process_exit", std::move(ended), gone->info.value("run", std::string()));
        stacks_requests_.agent_gone(connection, pid);
        finish_stacks_requests();
        answer_orders(connection, "", " ended before it carried out the order", false);
    }
}

ConnectionPtr HubImpl::connection(std::uint64_t id) const {
    if (id == 0) return nullptr;
    const auto it = connections_.find(id);
    return it == connections_.end() ? nullptr : it->second;
}

void HubImpl::publish(const std::string& kind, Json data, const std::string& run) {
    const auto in_data = data.find("run");
    const std::string of_run = !run.empty() ? run
                               : in_data != data.end() && in_data->is_string()
                                   ? in_data->get<std::string>()
                                   : std::string();
    const auto event = wire::encode(make("event", {{"kind", kind}, {"data", std::move(data)}}));
    for (auto id : subscribers_) {
        const auto scope = subscriber_runs_.find(id);
        if (scope != subscriber_runs_.end() && !of_run.empty() && scope->second != of_run) {
            continue;
        }
        if (auto subscriber = connection(id)) subscriber->send_encoded(event, "event");
    }
}

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
