#include "agent/log_queue.hpp"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <mutex>
#include <new>
#include <optional>
#include <thread>
#include <vector>

#include "agent/link.hpp"
#include "agent/log_budget.hpp"
#include "agent/own_threads.hpp"
#include "wire/message.hpp"

namespace dpdb::agent {
namespace {

// What a `log_lines` carries at most: 500 lines, and well under a frame in bytes (a message of
// 4,096 characters is up to ~25 KB encoded, and 500 of them would not fit in one frame: the wire
// would refuse the batch whole).
constexpr std::size_t kBatch = 500;
constexpr std::size_t kBatchBytes = wire::kMaxFrameBytes / 4;
// A thread's name is the program's to choose, of any length: what a line carries of it is cut,
// so that a line always fits in a batch.
constexpr std::size_t kThreadNameBytes = 1024;
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

// Messages of batches the wire did not take (the hub went away mid-send): told with the next
// batch as dropped, or at the end as not sent.
std::atomic<std::uint64_t> g_unsent{0};

std::string drops_line(std::uint64_t dropped, double when) {
    return wire::Json{{"time", when},
                      {"thread", "dpdb"},
                      {"tid", 0},
                      {"dropped", dropped},
                      {"text", "… " + std::to_string(dropped) + " message" +
                                   (dropped == 1 ? "" : "s") + " dropped"}}
        .dump();
}

struct Batch {
    std::vector<std::string> lines;
    std::uint64_t messages = 0;  // the lines' messages, and those the drops line counts
};

// Up to kBatch queued lines and kBatchBytes (at least one line), then a line for the drops
// since the last batch; empty when there is nothing. Called with the send lock held.
Batch take_batch() {
    Batch batch;
    {
        std::lock_guard<std::mutex> lock(queue().mutex);
        auto& lines = queue().lines;
        std::size_t bytes = 0;
        while (!lines.empty() && batch.lines.size() < kBatch &&
               (batch.lines.empty() || bytes + lines.front().size() <= kBatchBytes)) {
            bytes += lines.front().size() + 1;
            batch.lines.push_back(std::move(lines.front()));
            lines.pop_front();
        }
    }
    batch.messages = batch.lines.size();
    const auto [dropped, when] = log_take_drops();
    const std::uint64_t lost = dropped + g_unsent.exchange(0);
    if (lost > 0) batch.lines.push_back(drops_line(lost, when));
    batch.messages += lost;
    return batch;
}

// Without a deadline the send takes as long as the hub does (the sender's own thread); with one
// (the end's flush) it gives up then, and the connection with it.
using Deadline = std::optional<std::chrono::steady_clock::time_point>;

bool send_batch(const std::vector<std::string>& lines, const Deadline& deadline) {
    std::string fields = "{\"lines\":[";
    for (std::size_t i = 0; i < lines.size(); ++i) {
        if (i > 0) fields += ',';
        fields += lines[i];
    }
    fields += "]}";
    return Link::instance().send_process("log_lines", fields, deadline);
}

// Set once the end's flush is past its bound: the sender stops after its batch under way, so that
// what is counted as not sent (tell_unsent_at_end) is what stays unsent.
std::atomic<bool> g_ended{false};

// Sends until the queue is empty, or the end's bound has passed: then not a batch more, in this
// round or the sender's next (what is left was counted as not sent, and would be told twice).
// Called with the send lock held.
void send_queued(const Deadline& deadline) {
    const auto next_batch = [] { return g_ended ? Batch{} : take_batch(); };
    for (auto batch = next_batch(); !batch.lines.empty(); batch = next_batch()) {
        bool sent = false;
        try {
            sent = send_batch(batch.lines, deadline);
        } catch (const std::exception&) {
            // a batch the wire refuses is lost; the program must never pay for it
        }
        if (!sent) {
            g_unsent += batch.messages;
            return;  // the link is gone: what is left waits for the next connection
        }
    }
}

// What is left unsent as the process ends: one line on stderr, the only place left to say it;
// once, however many ways the end comes (os._exit's flush, then a SIGTERM's).
// The count is also kept for the `exiting` message, which tells the hub (agent/link.cpp).
std::atomic<bool> g_unsent_told{false};
std::atomic<std::uint64_t> g_unsent_at_end{0};

void tell_unsent_at_end() {
    if (g_unsent_told) return;
    std::uint64_t unsent = g_unsent + log_drops_pending();
    {
        std::lock_guard<std::mutex> lock(queue().mutex);
        unsent += queue().lines.size();
    }
    if (unsent == 0 || g_unsent_told.exchange(true)) return;
    g_unsent_at_end = unsent;
    char line[160];
    const int n = std::snprintf(line, sizeof(line),
                                "dpdb: pid %d ended with %llu logpoint message%s not sent: the "
                                "hub was not reached in time\n",
                                static_cast<int>(::getpid()),
                                static_cast<unsigned long long>(unsent), unsent == 1 ? "" : "s");
    if (n <= 0) return;
    // Written whole or not at all: nothing more can be done about a stderr that refuses it.
    if (::write(STDERR_FILENO, line, std::min<std::size_t>(n, sizeof(line) - 1)) < 0) return;
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
        send_queued(std::nullopt);
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
    g_unsent = 0;
    g_unsent_told = false;
    g_unsent_at_end = 0;
    g_ended = false;
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
    wire::Json line{{"time", time},
                    {"text", text},
                    {"thread", thread.substr(0, kThreadNameBytes)},  // a cut character: U+FFFD
                    {"tid", tid}};
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
    if (!sending.try_lock_for(wait)) {
        // The sender is still at it (a slow hub, a long queue): it stops after its batch, which
        // is sent or counted as not sent, and then what stays is counted.
        g_ended = true;
        if (!sending.try_lock_for(kLastLogBatchWait)) return tell_unsent_at_end();
    }
    {
        std::lock_guard<std::mutex> lock(queue().mutex);
        if (queue().lines.empty() && log_drops_pending() == 0 && g_unsent == 0) return;
    }
    Link& link = Link::instance();
    // Its own sending is bounded too: a hub that stopped reading (hung, SIGSTOPped) with the
    // socket full would otherwise hold the end for as long as the link lasts.
    if (!g_ended && (link.connected() || link.wait_connected(connect_wait))) {
        send_queued(std::chrono::steady_clock::now() + wait);
    }
    tell_unsent_at_end();
}

std::uint64_t log_unsent_at_end() {
    return g_unsent_at_end;
}

}  // namespace dpdb::agent
