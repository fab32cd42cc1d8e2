#include "agent/link.hpp"

#include <dirent.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

#include "agent/faults.hpp"
#include "agent/gil_state.hpp"
#include "agent/log_queue.hpp"
#include "agent/own_threads.hpp"
#include "common/runtime_dir.hpp"
#include "wire/openssl_lock.hpp"

namespace dpdb::agent {
namespace {

constexpr auto kReceiveTick = std::chrono::milliseconds(500);
constexpr auto kFirstBackoff = std::chrono::milliseconds(50);
// Short, so that a link that comes back is used within about a second (docs/remote.md).
constexpr auto kMaxBackoff = std::chrono::seconds(1);
// A dial over TCP that has no answer by then is given up and made again, rather than left to
// TCP's retransmissions (1, 3, 7 s ...), which would answer long after a cut link came back.
constexpr auto kDialWait = std::chrono::seconds(1);
// Over TCP the hub and the agent send each other a heartbeat this often; a hub not heard from
// for kHubSilence is taken for cut off, and dialled again on a fresh connection. The hub shows
// the process unreachable sooner (hub/hub_liveness.cpp), so that it keeps it for its return.
constexpr auto kHeartbeat = std::chrono::seconds(2);
constexpr auto kHubSilence = std::chrono::seconds(8);
constexpr auto kPythonAnswerWait = std::chrono::milliseconds(300);
// How long an input waits for the control thread to arm the breakpoint lists that came before it:
// it may be busy (a stacks request); past this, the command runs anyway.
constexpr auto kBreakpointsCatchUp = std::chrono::seconds(1);
constexpr auto kFirstConnectionWaitAtExit = std::chrono::milliseconds(300);
// How long the end's `exiting` may wait for the socket (a hub that stopped reading).
constexpr auto kExitingSendWait = std::chrono::seconds(1);
// Before an exec, longer: a child that a fork made an instant ago is still in its handshake, and
// a loaded machine (CI's) took more than 300 ms to finish it, so that the hub never heard of the
// child at all. Only a handshake under way is waited for: an unreachable hub ends it at once.
constexpr auto kFirstConnectionWaitAtExec = std::chrono::seconds(2);
// And the exec's own message, to a hub that may have stopped reading: the exec goes ahead then.
constexpr auto kExecSendWait = std::chrono::seconds(1);

wire::Json parse_object(const std::string& json) {
    auto value = wire::Json::parse(json, nullptr, /*allow_exceptions=*/false);
    if (!value.is_object()) throw std::invalid_argument("expected a JSON object");
    return value;
}

// Closes the descriptors of connections to the hub at `path` that a child inherited, tracked or
// not: one the parent's I/O thread was opening at the moment of fork() is in no Channel yet.
void close_inherited_unix_connections(const std::string& path) {
    DIR* dir = ::opendir("/proc/self/fd");
    if (dir == nullptr) return;
    std::vector<int> inherited;
    while (const dirent* entry = ::readdir(dir)) {
        const int fd = std::atoi(entry->d_name);
        if (entry->d_name[0] < '0' || entry->d_name[0] > '9' || fd == ::dirfd(dir)) continue;
        sockaddr_un peer{};
        socklen_t size = sizeof(peer);
        if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &size) != 0 ||
            peer.sun_family != AF_UNIX || size <= offsetof(sockaddr_un, sun_path)) {
            continue;
        }
        const std::size_t length = strnlen(peer.sun_path, size - offsetof(sockaddr_un, sun_path));
        if (path == std::string(peer.sun_path, length)) inherited.push_back(fd);
    }
    ::closedir(dir);
    for (const int fd : inherited) ::close(fd);
}

// Sends unless `deadline` passes first: try_send waits for another writer 200 ms at a time (a
// bound the heartbeat needs), so it is tried again until then, while the connection is open.
bool send_before(wire::Channel& channel, const wire::Message& message,
                 std::chrono::steady_clock::time_point deadline) {
    while (!channel.try_send(message, deadline)) {
        if (!channel.is_open() || std::chrono::steady_clock::now() >= deadline) return false;
    }
    return true;
}

}  // namespace

Link& Link::instance() {
    // Never destroyed: the I/O thread may outlive interpreter finalisation, and a process that
    // exits simply drops the connection, which the hub notices.
    static Link* link = new Link();
    return *link;
}

Link::Link() {
    // The link's own lock, then OpenSSL's calls (openssl_lock.hpp): a child must inherit neither
    // held by a thread it does not have.
    auto prepare = [] {
        instance().mutex_.lock();
        wire::openssl_mutex().lock();
    };
    auto in_parent = [] {
        wire::openssl_mutex().unlock();
        instance().mutex_.unlock();
    };
    // Before anything else runs in the child: a fork made in C runs no Python hook, and a child
    // that wrote on the parent's connection would interleave its frames with the parent's.
    auto in_child = [] {
        instance().let_go_of_parent_connections_locked();
        wire::openssl_mutex().unlock();
        instance().mutex_.unlock();
    };
    pthread_atfork(prepare, in_parent, in_child);
}

bool Link::start(const std::string& address, const std::string& secret,
                 const std::string& secret_file, const std::string& proc_json,
                 std::chrono::milliseconds connect_wait) {
    auto parsed = HubAddress::parse(address);
    parse_object(proc_json);
    std::unique_lock<std::mutex> lock(mutex_);
    if (!started_) {
        control_inbox_.clear();  // a stop meant for a control thread of an earlier start
        address_ = std::move(parsed);
        secret_ = secret;
        secret_file_ = secret_file;
        proc_json_ = proc_json;
        started_ = true;
        owner_pid_ = ::getpid();
        start_thread_locked();
    }
    lock.unlock();
    return wait_connected(connect_wait);
}

bool Link::wait_connected(std::chrono::milliseconds limit) {
    std::unique_lock<std::mutex> lock(mutex_);
    return changed_.wait_for(lock, limit, [this] { return connected_; });
}

bool Link::wait_first_attempt(std::chrono::milliseconds limit) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait_for(lock, limit, [this] { return attempted_; });
    return connected_;
}

bool Link::connected() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return connected_;
}

bool Link::started() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return started_;
}

void Link::stop() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!started_) return;
    started_ = false;
    ++generation_;  // the I/O thread ends at its next look
    for (const auto& open : {channel_, connecting_}) {
        if (open) open->close();
    }
    connected_ = false;
    control_inbox_.push_back(Event{"stop", "{}"});
    changed_.notify_all();
}

void Link::start_thread_locked() {
    start_own_thread("io", [this, generation = generation_] { run_io(generation); });
}

void Link::update_process(const std::string& proc_json) {
    auto proc = parse_object(proc_json);
    std::shared_ptr<wire::Channel> channel;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        proc_json_ = proc_json;
        if (connected_) channel = channel_;
    }
    if (channel) channel->send(wire::make("proc_update", {{"proc", std::move(proc)}}));
}

std::int64_t Link::open_session(const std::string& info_json) {
    auto info = parse_object(info_json);
    std::shared_ptr<wire::Channel> channel;
    std::int64_t sid = 0;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        sid = next_sid_++;
        sessions_[sid].info_json = info_json;
        if (connected_) channel = channel_;
    }
    if (channel)
        channel->send(wire::make("session_open", {{"sid", sid}, {"info", std::move(info)}}));
    return sid;
}

void Link::update_session(std::int64_t sid, const std::string& info_json) {
    auto info = parse_object(info_json);
    std::shared_ptr<wire::Channel> channel;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        const auto it = sessions_.find(sid);
        if (it == sessions_.end()) return;
        it->second.info_json = info_json;
        if (connected_) channel = channel_;
    }
    if (channel)
        channel->send(wire::make("session_update", {{"sid", sid}, {"info", std::move(info)}}));
}

void Link::close_session(std::int64_t sid, const std::string& reason) {
    std::shared_ptr<wire::Channel> channel;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (sessions_.erase(sid) == 0) return;
        if (connected_) channel = channel_;
    }
    if (channel) channel->send(wire::make("session_close", {{"sid", sid}, {"reason", reason}}));
}

void Link::send(const std::string& type, std::int64_t sid, const std::string& fields_json) {
    auto fields = parse_object(fields_json);
    fields["sid"] = sid;
    auto message = wire::make(type, std::move(fields));  // validates before anything is sent
    std::shared_ptr<wire::Channel> channel;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!connected_ || sessions_.count(sid) == 0) return;
        channel = channel_;
    }
    channel->send(message);
}

std::optional<Event> Link::wait(std::int64_t sid,
                                std::optional<std::chrono::milliseconds> timeout) {
    std::unique_lock<std::mutex> lock(mutex_);
    auto ready = [&] {
        const auto it = sessions_.find(sid);
        return it == sessions_.end() || !it->second.inbox.empty();
    };
    if (timeout) {
        changed_.wait_for(lock, *timeout, ready);
    } else {
        changed_.wait(lock, ready);
    }
    const auto it = sessions_.find(sid);
    if (it == sessions_.end() || it->second.inbox.empty()) return std::nullopt;
    Event event = std::move(it->second.inbox.front());
    it->second.inbox.pop_front();
    if (control_running_) {
        changed_.wait_for(lock, kBreakpointsCatchUp,
                          [&] { return breakpoint_lists_armed_ >= event.breakpoint_lists_before; });
    }
    return event;
}

std::optional<Event> Link::wait_control(std::optional<std::chrono::milliseconds> timeout) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (breakpoint_lists_armed_ != breakpoint_lists_taken_ || !control_running_) {
        control_running_ = true;
        breakpoint_lists_armed_ = breakpoint_lists_taken_;
        changed_.notify_all();
    }
    auto ready = [&] { return !control_inbox_.empty(); };
    if (timeout) {
        changed_.wait_for(lock, *timeout, ready);
    } else {
        changed_.wait(lock, ready);
    }
    if (control_inbox_.empty()) return std::nullopt;
    Event event = std::move(control_inbox_.front());
    control_inbox_.pop_front();
    if (event.type == "breakpoints") ++breakpoint_lists_taken_;
    return event;
}

bool Link::send_process(const std::string& type, const std::string& fields_json,
                        std::optional<std::chrono::steady_clock::time_point> deadline) {
    auto message = wire::make(type, parse_object(fields_json));
    std::shared_ptr<wire::Channel> channel;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!connected_) return false;
        channel = channel_;
    }
    if (!deadline) return channel->send(message);
    return send_before(*channel, message, *deadline);
}

void Link::send_exit(int status) noexcept {
    // Other threads still run during exit() and hold the lock only briefly, but one may have
    // died holding it (os._exit from a signal handler): wait a little, never forever.
    std::unique_lock<std::mutex> lock(mutex_, std::defer_lock);
    for (int attempt = 0; attempt < 200 && !lock.try_lock(); ++attempt) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (!lock.owns_lock()) return;
    // A process that ends right after it started (or forked) may not have reached the hub yet.
    if (!connected_ && started_ && !ever_connected_) {
        changed_.wait_for(lock, kFirstConnectionWaitAtExit, [this] { return connected_; });
    }
    if (!connected_) return;
    const auto channel = channel_;
    lock.unlock();
    try {
        wire::Json fields = {{"status", status}};
        // Logpoint messages the end's flush could not send: the hub tells them in `dpdb logs`.
        const auto unsent = log_unsent_at_end();
        if (unsent > 0) fields["unsent"] = unsent;
        const auto exiting = wire::make("exiting", std::move(fields));
        // The logs' sender may still be writing its last batch to a slow hub: a count is worth
        // waiting a little longer for its end, but a hub that reads nothing gets none.
        const auto deadline = std::chrono::steady_clock::now() + kExitingSendWait;
        while (!channel->try_send(exiting, deadline) && unsent > 0 && channel->is_open() &&
               std::chrono::steady_clock::now() < deadline) {
        }
    } catch (const std::exception&) {
        // Nothing may escape from an exit handler; the hub then records a silent end.
    }
}

void Link::announce_exec(const std::string& path, const std::vector<std::string>& argv) {
    auto message = wire::make("exec", {{"path", path}, {"argv", argv}});
    std::shared_ptr<wire::Channel> channel;
    {
        std::unique_lock<std::mutex> lock(mutex_);
        if (!started_) return;
        changed_.wait_for(lock, kFirstConnectionWaitAtExec,
                          [this] { return connected_ || attempted_; });
        if (!connected_) return;
        channel = channel_;
    }
    send_before(*channel, message, std::chrono::steady_clock::now() + kExecSendWait);
}

void Link::let_go_of_parent_connections_locked() {
    // Every connection of the parent's must be closed here, a connection still in its handshake
    // too: a child that kept a descriptor would keep the parent's connection open after the
    // parent exits, and the hub would list the parent for as long as the child lives.
    for (auto* inherited : {&channel_, &connecting_}) {
        if (!*inherited) continue;
        (*inherited)->abandon_after_fork();
        // Deliberately leaked: its write lock may have been held by a thread that does not exist
        // in this child, so it must never be locked or destroyed here.
        new std::shared_ptr<wire::Channel>(std::move(*inherited));
        inherited->reset();
    }
    connected_ = false;
}

bool Link::forked_without_hooks() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return started_ && owner_pid_ != ::getpid();
}

void Link::after_fork_in_child(const std::string& proc_json) {
    std::lock_guard<std::mutex> lock(mutex_);
    let_go_of_parent_connections_locked();
    owner_pid_ = ::getpid();
    if (started_ && address_.kind == HubAddress::Kind::Unix) {
        close_inherited_unix_connections(address_.path);
        // Connected before the program's code runs on: a worker that switches to another user
        // right after fork() (a server dropping privileges) could not connect to the socket
        // afterwards, and a connection made before keeps working.
        if (forked_socket_ >= 0) ::close(forked_socket_);
        forked_socket_ = connect_now(address_);
    }
    // Threads of the parent were waiting on this condition variable; in the child they do not
    // exist, but glibc's condvar still counts them, and a notify could wake nobody. A fresh one.
    new (&changed_) std::condition_variable();
    sessions_.clear();
    control_inbox_.clear();
    breakpoint_lists_filed_ = breakpoint_lists_taken_ = breakpoint_lists_armed_ = 0;
    control_running_ = false;
    connected_ = false;
    ever_connected_ = false;
    attempted_ = false;
    proc_json_ = proc_json;
    ++generation_;
    if (started_) start_thread_locked();
}

bool Link::connect_once(std::uint64_t generation, bool& timed_out) {
    timed_out = false;
    std::string secret;
    std::string secret_file;
    std::string proc_json;
    HubAddress address;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        secret = secret_;
        secret_file = secret_file_;
        proc_json = proc_json_;
        address = address_;
    }
    if (secret.empty() && !secret_file.empty()) {
        try {
            secret = read_private_file(secret_file);
        } catch (const std::exception&) {
            return false;  // not there yet, or not this user's: no hub of ours to talk to
        }
    }
    auto channel = std::make_shared<wire::Channel>();
    int connected = -1;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        connecting_ = channel;
        connected = std::exchange(forked_socket_, -1);
    }
    if (connected < 0 && address.kind == HubAddress::Kind::Tcp) {
        connected = connect_to(address, kDialWait);
        timed_out = connected < 0 && errno == ETIMEDOUT;
        if (connected < 0) {
            std::lock_guard<std::mutex> lock(mutex_);
            connecting_.reset();
            return false;
        }
    }
    try {
        wire::Channel::connect(*channel, address, secret, "agent", wire::Json::parse(proc_json),
                               connected);
    } catch (const std::exception&) {
        std::lock_guard<std::mutex> lock(mutex_);
        connecting_.reset();
        return false;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    connecting_.reset();
    if (generation_ != generation) {  // stopped during the handshake
        channel->close();
        return false;
    }
    channel_ = channel;
    connected_ = true;
    ever_connected_ = true;
    attempted_ = true;
    // What changed during the handshake (a thread renamed, tags set) was not sent: the hub has
    // the description the handshake carried.
    if (proc_json_ != proc_json) {
        channel->send(wire::make("proc_update", {{"proc", wire::Json::parse(proc_json_)}}));
    }
    // The hub knows nothing of us yet (first connection, or a restarted hub): tell it every
    // session that is waiting.
    for (const auto& [sid, state] : sessions_) {
        channel->send(wire::make("session_open",
                                 {{"sid", sid}, {"info", wire::Json::parse(state.info_json)}}));
    }
    changed_.notify_all();
    return true;
}

void Link::run_io(std::uint64_t generation) {
    auto current = [&] {
        std::lock_guard<std::mutex> lock(mutex_);
        return generation_ == generation;
    };
    auto backoff = std::chrono::milliseconds(kFirstBackoff);
    // The processes of a job lose the hub together: each waits between half its backoff and all
    // of it, so that they do not all dial again in step.
    std::minstd_rand random(std::random_device{}());
    while (current()) {
        bool timed_out = false;
        if (!connect_once(generation, timed_out)) {
            // A dial that went unanswered has waited already: the next one goes at once.
            const auto wait = timed_out ? std::chrono::milliseconds(0) : backoff;
            std::uniform_int_distribution<long> spread(wait.count() / 2, wait.count());
            {
                std::unique_lock<std::mutex> lock(mutex_);
                attempted_ = true;
                changed_.notify_all();
                // A stop ends the wait.
                changed_.wait_for(lock, std::chrono::milliseconds(spread(random)),
                                  [&] { return generation_ != generation; });
            }
            backoff = std::min<std::chrono::milliseconds>(backoff * 2, kMaxBackoff);
            continue;
        }
        backoff = kFirstBackoff;
        std::shared_ptr<wire::Channel> channel;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            channel = channel_;
        }
        try {
            hear_hub(*channel, generation);
        } catch (const std::exception&) {
            // The hub went away, fell silent or spoke nonsense: drop the connection, dial again.
        }
        std::lock_guard<std::mutex> lock(mutex_);
        if (generation_ != generation) return;
        channel_->close();
        connected_ = false;
        for (auto& [sid, state] : sessions_) state.inbox.push_back(Event{"lost", "{}"});
        changed_.notify_all();
    }
}

void Link::hear_hub(wire::Channel& channel, std::uint64_t generation) {
    using Clock = std::chrono::steady_clock;
    const bool over_network = address_kind() == HubAddress::Kind::Tcp;
    const auto heartbeat = wire::make("heartbeat", wire::Json::object());
    // The first one says the sessions are open again (hub_liveness.cpp: close_uncarried).
    auto heard = Clock::now();
    // A hub that stops reading is as silent as one that stops writing: a heartbeat the socket
    // cannot take by the time silence is declared cuts the link instead of holding this thread.
    if (over_network) channel.try_send(heartbeat, heard + kHubSilence);
    auto beaten = heard;
    for (;;) {
        auto message = channel.receive(kReceiveTick.count());
        const auto now = Clock::now();
        if (message) heard = now;
        if (over_network && now - heard >= kHubSilence) {
            throw std::runtime_error("nothing heard from the hub");
        }
        if (over_network && now - beaten >= kHeartbeat) {
            // Never blocks for long: a thread writing a large message may hold the channel.
            channel.try_send(heartbeat, heard + kHubSilence);
            beaten = now;
        }
        if (message) dispatch(*message);
        std::lock_guard<std::mutex> lock(mutex_);
        if (generation_ != generation) return;
    }
}

HubAddress::Kind Link::address_kind() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return address_.kind;
}

void Link::dispatch(const wire::Message& message) {
    const auto& type = message.type;
    if (type == "release" || type == "terminate") {
        // Every paused thread quits its session (pdb's `q` in dpdb: stop debugging, run on);
        // the control thread takes the breakpoints out (and, for terminate, sends SIGTERM).
        std::lock_guard<std::mutex> lock(mutex_);
        for (auto& [sid, state] : sessions_) {
            state.inbox.push_back(
                Event{"input", wire::encode(wire::make("input", {{"sid", sid}, {"line", "q"}}))});
        }
        changed_.notify_all();
    }
    if (type == "breakpoints" || type == "stacks_request" || type == "pause" ||
        type == "interrupt" || type == "release" || type == "debug" || type == "terminate" ||
        type == "copy_output") {
        wire::Json body = message.body;
        // Seen now, from this thread, before the control thread takes the GIL to answer.
        if (type == "stacks_request") body["gil"] = take_gil_snapshot().unresolved_json();
        {
            std::lock_guard<std::mutex> lock(mutex_);
            control_inbox_.push_back(Event{type, body.dump()});
            if (type == "breakpoints") ++breakpoint_lists_filed_;
            changed_.notify_all();
        }
        if (type == "stacks_request") {
            // If Python cannot answer (a thread holds the GIL), the stacks are read without it.
            start_own_thread("stacks", [req = message.num("req")] {
                std::this_thread::sleep_for(kPythonAnswerWait);
                answer_stacks_natively(req);
            });
        }
        return;
    }
    if (type != "attach" && type != "detach" && type != "input" && type != "complete" &&
        type != "inspect") {
        return;  // nothing else is addressed to an agent; ignore rather than fail
    }
    deliver(message.num("sid"), Event{type, wire::encode(message)});
}

void Link::deliver(std::int64_t sid, Event event) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = sessions_.find(sid);
    if (it == sessions_.end()) return;
    if (event.type == "input") event.breakpoint_lists_before = breakpoint_lists_filed_;
    it->second.inbox.push_back(std::move(event));
    changed_.notify_all();
}

}  // namespace dpdb::agent
