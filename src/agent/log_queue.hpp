// The logpoint messages of this process that are not sent yet, as encoded lines, and the thread of
// the agent's own (`dpdb-logs`) that sends them to the hub in batches. It lives here, not in
// Python, so that what is queued can still go when the process dies of a fatal signal: no Python
// may run then, and the agent's crash path (faults.cpp) sends the queue without it.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace dpdb::agent {

// How many lines may wait (DPDB_LOG_QUEUE); beyond, messages are dropped before they are made.
void log_queue_capacity(std::size_t lines);
bool log_queue_has_room();

// One message made: `time` is time.time(), `text` valid UTF-8, `bp` the hub's number of the
// logpoint (none for one set at a prompt). Starts the sender on first use in this process.
void log_push(double time, const std::string& text, const std::string& thread, std::int64_t tid,
              std::optional<std::int64_t> bp);

// Messages were dropped: the sender says how many with its next batch.
void log_queue_wake();

// Past the end's `wait`, how long the sender's batch under way may take to finish.
inline constexpr auto kLastLogBatchWait = std::chrono::milliseconds(200);

// At the end of the process: what is queued (and the count of drops) goes now, in order, after
// what the sender is sending. Waits at most `wait` for a send under way (then kLastLogBatchWait
// for its batch) and `connect_wait` for a connection. Never calls Python, needs no GIL: the crash
// path calls it from the agent's own thread while the crashing thread waits.
void log_flush(std::chrono::milliseconds wait, std::chrono::milliseconds connect_wait);

// How many messages the end's flush left unsent (0 if none, or before the end): the `exiting`
// message carries it, so that the hub can say so in `dpdb logs`.
std::uint64_t log_unsent_at_end();

}  // namespace dpdb::agent
