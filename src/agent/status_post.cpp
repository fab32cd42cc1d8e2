#include "agent/status_post.hpp"

#include <pthread.h>
#include <unistd.h>

#include <condition_variable>
#include <map>
#include <mutex>
#include <new>
#include <utility>

#include "agent/link.hpp"
#include "agent/own_threads.hpp"
#include "wire/message.hpp"

namespace dpdb::agent {
namespace {

struct Posted {
    std::mutex mutex;
    std::condition_variable wake;
    std::map<std::string, std::string> statuses;  // type -> its latest fields
    pid_t poster_pid = 0;
};

// Never destroyed: at exit the poster still waits on the condition variable (as log_queue.cpp).
Posted& posted() {
    static Posted* const instance = new Posted();
    return *instance;
}

void post_forever(pid_t me) {
    Posted& p = posted();
    for (;;) {
        std::map<std::string, std::string> statuses;
        {
            std::unique_lock<std::mutex> lock(p.mutex);
            p.wake.wait(lock, [&p, me] { return !p.statuses.empty() || p.poster_pid != me; });
            if (p.poster_pid != me) return;
            statuses.swap(p.statuses);
        }
        for (const auto& [type, fields] : statuses) {
            try {
                Link::instance().send_process(type, fields);
            } catch (const std::exception&) {
                // one the wire refuses is lost; the program must never pay for it
            }
        }
    }
}

void after_fork_in_child() {
    // The parent's poster is not here, and what it had to send is the parent's.
    Posted& p = posted();
    p.statuses.clear();
    p.poster_pid = 0;
    new (&p.wake) std::condition_variable();
    p.mutex.unlock();
}

const bool g_fork_handlers = [] {
    pthread_atfork([] { posted().mutex.lock(); }, [] { posted().mutex.unlock(); },
                   after_fork_in_child);
    return true;
}();

}  // namespace

void post_status(const std::string& type, const std::string& fields_json) {
    wire::make(type, wire::Json::parse(fields_json));  // refused here, to the caller, not later
    Posted& p = posted();
    std::lock_guard<std::mutex> lock(p.mutex);
    p.statuses[type] = fields_json;
    if (p.poster_pid != ::getpid()) {
        p.poster_pid = ::getpid();
        start_own_thread("status", [me = p.poster_pid] { post_forever(me); });
    }
    p.wake.notify_one();
}

}  // namespace dpdb::agent
