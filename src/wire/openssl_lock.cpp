#include "wire/openssl_lock.hpp"

namespace dpdb::wire {

std::mutex& openssl_mutex() {
    // Never destroyed: threads may still use it while the process exits.
    static auto* mutex = new std::mutex;
    return *mutex;
}

}  // namespace dpdb::wire
