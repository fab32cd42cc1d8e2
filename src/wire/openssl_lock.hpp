// OpenSSL keeps process-wide locks (its random generator, its algorithm cache). A fork() while
// another thread holds one leaves it locked forever in the child, whose next handshake then hangs.
// The wire code makes its OpenSSL calls under this mutex, so that a process that forks can wait
// for them to finish: the agent takes it in its pthread_atfork handler.
#pragma once

#include <mutex>

namespace dpdb::wire {

std::mutex& openssl_mutex();

}  // namespace dpdb::wire
