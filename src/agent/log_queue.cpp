#include "agent/log_queue.hpp"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

#include "agent/link.hpp"
#include "agent/log_budget.hpp"
#include "agent/own_threads.hpp"
#include "wire/message.hpp"

namespace dpdb::agent {
namespace {

constexpr std::size_t kBatch = 500;  // lines a `log_lines` carries at most (well under a frame)
constexpr auto kGather = std::chrono::milliseconds(50);  // a woken sender lets a batch gather
constexpr auto kConnectTick = std::chrono::seconds(1);

// The queue: pushed with the GIL held, taken by the sender without it. A fork handler holds the
// lock across fork(), so that a child never inherits it locked.
struct Queue {
    std::mutex mutex;
    std::condition_variable wake;
    std::deque<std::string> lines;
    std::size_t capacity = 1000;
    bool woken = false;
    pid_t sender_pid = 0;
    // One sender at a time, the thread or the end's flush: a batch taken from the queue is being
    // sent under it, and the queue looks empty meanwhile.
    std::timed_mutex send_mutex;
};

// Never destroyed: at exit, the sender still waits on the condition variable, and destroying it
// then waits for that waiter for ever (glibc).
Queue& queue() {
    static Queue* const instance = new Queue();
    return *instance;
}

std::string drops_line(std::uint64_t dropped, double when) {
    return wire::Json{{"time", when},
                      {"thread", "dpdb"},
                      {"tid", 0},
                      {"dropped", dropped},
                      {"text", "… " + std::to_string(dropped) + " message" +
                                   (dropped == 1 ? "" : "s") + " dropped"}}
        .dump();
}

// Up to kBatch queued lines, then a line for the drops since the last batch; empty when there
// is nothing. Called with the send lock held.
std::vector<std::string> take_batch() {
    std::vector<std::string> batch;
    {
        std::lock_guard<std::mutex> lock(queue().mutex);
        auto& lines = queue().lines;
        while (!lines.empty() && batch.size() < kBatch) {
            batch.push_back(std::move(lines.front()));
            lines.pop_front();
        }
    }
    const auto [dropped, when] = log_take_drops();
    if (dropped > 0) batch.push_back(drops_line(dropped, when));
    return batch;
}

void send_batch(const std::vector<std::string>& batch) {
    std::string fields = "{\"lines\":[";
    for (std::size_t i = 0; i < batch.size(); ++i) {
        if (i > 0) fields += ',';
        fields += batch[i];
    }
    fields += "]}";
    Link::instance().send_process("log_lines", fields);
}

// Sends until the queue is empty. Called with the send lock held.
void send_queued() {
    for (auto batch = take_batch(); !batch.empty(); batch = take_batch()) {
        try {
            send_batch(batch);
        } catch (const std::exception&) {
            // a batch the wire refuses is lost; the program must never pay for it
        }
    }
}

void send_forever(pid_t me) {
    Link& link = Link::instance();
    for (;;) {
        {
            std::unique_lock<std::mutex> lock(queue().mutex);
            queue().wake.wait(lock, [] { return queue().woken; });
            if (queue().sender_pid != me) return;
        }
        std::this_thread::sleep_for(kGather);
        {
            std::lock_guard<std::mutex> lock(queue().mutex);
            queue().woken = false;
        }
        // Kept while the hub is away (bounded by the queue): it takes them when it is back.
        while (!link.connected()) link.wait_connected(kConnectTick);
        const std::lock_guard<std::timed_mutex> sending(queue().send_mutex);
        send_queued();
    }
}

// With the queue's lock held.
void wake_locked() {
    Queue& q = queue();
    if (q.sender_pid != ::getpid()) {
        q.sender_pid = ::getpid();
        start_own_thread("logs", [me = q.sender_pid] { send_forever(me); });
    }
    if (!q.woken) {
        q.woken = true;
        q.wake.notify_one();
    }
}

void after_fork_in_child() {
    // The parent's queue and drops were (or will be) sent by the parent, and its sender is not
    // here; it may have been sending, its lock held by a thread this child does not have.
    Queue& q = queue();
    q.lines.clear();
    q.woken = false;
    q.sender_pid = 0;
    log_take_drops();
    new (&q.wake) std::condition_variable();
    new (&q.send_mutex) std::timed_mutex();
    q.mutex.unlock();
}

const bool g_fork_handlers = [] {
    pthread_atfork([] { queue().mutex.lock(); }, [] { queue().mutex.unlock(); },
                   after_fork_in_child);
    return true;
}();

}  // namespace

void log_queue_capacity(std::size_t lines) {
    std::lock_guard<std::mutex> lock(queue().mutex);
    queue().capacity = std::max<std::size_t>(1, lines);
}

bool log_queue_has_room() {
    std::lock_guard<std::mutex> lock(queue().mutex);
    return queue().lines.size() < queue().capacity;
}

void log_push(double time, const std::string& text, const std::string& thread, std::int64_t tid,
              std::optional<std::int64_t> bp) {
    wire::Json line{{"time", time}, {"text", text}, {"thread", thread}, {"tid", tid}};
    if (bp) line["bp"] = *bp;  // the number `dpdb break --list` shows
    std::string encoded = line.dump(-1, ' ', false, wire::Json::error_handler_t::replace);
    std::lock_guard<std::mutex> lock(queue().mutex);
    queue().lines.push_back(std::move(encoded));
    wake_locked();
}

void log_queue_wake() {
    std::lock_guard<std::mutex> lock(queue().mutex);
    wake_locked();
}

void log_flush(std::chrono::milliseconds wait, std::chrono::milliseconds connect_wait) {
    std::unique_lock<std::timed_mutex> sending(queue().send_mutex, std::defer_lock);
    if (!sending.try_lock_for(wait)) return;
    {
        std::lock_guard<std::mutex> lock(queue().mutex);
        if (queue().lines.empty() && log_drops_pending() == 0) return;
    }
    Link& link = Link::instance();
    if (!link.connected() && !link.wait_connected(connect_wait)) return;
    send_queued();
}

}  // namespace dpdb::agent
