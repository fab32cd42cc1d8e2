#include "agent/outbox.hpp"

#include <pthread.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <new>
#include <utility>

#include "agent/link.hpp"
#include "agent/own_threads.hpp"
#include "wire/message.hpp"

namespace dpdb::agent {
namespace {

struct Outbox {
    std::mutex mutex;
    std::condition_variable wake;
    std::map<std::string, std::string> statuses;  // type -> its latest fields
    std::deque<std::string> output;               // program_output fields, in order
    std::size_t output_bytes = 0;
    std::uint64_t output_dropped = 0;  // bytes of output not kept since the last piece sent
    pid_t sender_pid = 0;
    // Rounds of posts, and how many of them the sender handed to the link (sent or dropped).
    std::uint64_t posted_rounds = 0;
    std::uint64_t sent_rounds = 0;
    std::condition_variable sent;

    bool empty() const { return statuses.empty() && output.empty(); }
};

// Never destroyed: at exit the sender still waits on the condition variable (as log_queue.cpp).
Outbox& outbox() {
    static Outbox* const instance = new Outbox();
    return *instance;
}

std::string output_fields(const std::string& stream, const std::string& text) {
    return wire::Json{{"stream", stream}, {"text", text}}.dump();
}

std::string dropped_notice(std::uint64_t bytes) {
    return output_fields("stderr", "[dpdb: " + std::to_string(bytes) +
                                       " bytes of the program's output not copied: the hub did "
                                       "not take them in time]\n");
}

void send(const std::string& type, const std::string& fields) {
    try {
        Link::instance().send_process(type, fields);
    } catch (const std::exception&) {
        // one the wire refuses is lost; the program must never pay for it
    }
}

void send_forever(pid_t me) {
    Outbox& box = outbox();
    for (;;) {
        std::map<std::string, std::string> statuses;
        std::deque<std::string> output;
        std::uint64_t dropped = 0;
        std::uint64_t round = 0;
        {
            std::unique_lock<std::mutex> lock(box.mutex);
            box.wake.wait(lock, [&box, me] { return !box.empty() || box.sender_pid != me; });
            if (box.sender_pid != me) return;
            statuses.swap(box.statuses);
            output.swap(box.output);
            box.output_bytes = 0;
            dropped = std::exchange(box.output_dropped, 0);
            round = box.posted_rounds;
        }
        for (const auto& [type, fields] : statuses) send(type, fields);
        // What was dropped came after what was kept: the outbox was full.
        for (const auto& fields : output) send("program_output", fields);
        if (dropped > 0) send("program_output", dropped_notice(dropped));
        {
            std::lock_guard<std::mutex> lock(box.mutex);
            box.sent_rounds = round;
        }
        box.sent.notify_all();
    }
}

// With the outbox's lock held.
void wake_locked(Outbox& box) {
    ++box.posted_rounds;
    if (box.sender_pid != ::getpid()) {
        box.sender_pid = ::getpid();
        start_own_thread("outbox", [me = box.sender_pid] { send_forever(me); });
    }
    box.wake.notify_one();
}

void after_fork_in_child() {
    // The parent's sender is not here, and what it had to send is the parent's.
    Outbox& box = outbox();
    box.statuses.clear();
    box.output.clear();
    box.output_bytes = 0;
    box.output_dropped = 0;
    box.sender_pid = 0;
    box.posted_rounds = box.sent_rounds = 0;
    new (&box.wake) std::condition_variable();
    new (&box.sent) std::condition_variable();
    box.mutex.unlock();
}

const bool g_fork_handlers = [] {
    pthread_atfork([] { outbox().mutex.lock(); }, [] { outbox().mutex.unlock(); },
                   after_fork_in_child);
    return true;
}();

}  // namespace

void post_status(const std::string& type, const std::string& fields_json) {
    wire::make(type, wire::Json::parse(fields_json));  // refused here, to the caller, not later
    Outbox& box = outbox();
    std::lock_guard<std::mutex> lock(box.mutex);
    box.statuses[type] = fields_json;
    wake_locked(box);
}

void post_output(const std::string& stream, const std::string& text) {
    std::string fields = output_fields(stream, text);
    Outbox& box = outbox();
    std::lock_guard<std::mutex> lock(box.mutex);
    if (box.output_bytes + text.size() > kOutboxOutputBytes) {
        box.output_dropped += text.size();
    } else {
        box.output_bytes += text.size();
        box.output.push_back(std::move(fields));
    }
    wake_locked(box);
}

bool outbox_drain(std::optional<std::chrono::milliseconds> limit) {
    Outbox& box = outbox();
    std::unique_lock<std::mutex> lock(box.mutex);
    if (box.sender_pid != ::getpid()) return true;  // nothing posted in this process
    const std::uint64_t round = box.posted_rounds;
    const auto handed = [&box, round] { return box.sent_rounds >= round; };
    if (!limit) {
        box.sent.wait(lock, handed);
        return true;
    }
    return box.sent.wait_for(lock, *limit, handed);
}

}  // namespace dpdb::agent
