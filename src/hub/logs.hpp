// Logpoint messages at the hub: what an agent sends is checked line by line and stamped with who
// sent it (pid, host, tags, run: the hub's record of the process, not the sender's word), then kept
// in the store and passed to subscribers as `event {kind: "log"}`.
#pragma once

#include "wire/message.hpp"

namespace dpdb::hub {

// The lines of a `log_lines` message that are well formed ({time: number, text: string, thread?:
// string, tid?: int, bp?: int, dropped?: int, unsent?: int}), each cut to a bound and stamped with
// the process's identity from its description. Malformed lines are left out: one bad line costs
// only itself.
wire::Json stamp_log_lines(const wire::Json& lines, const wire::Json& process);

// The line that tells, among a process's messages, that it ended with `unsent` of them not sent
// (its `exiting` message said so), stamped as its messages are.
wire::Json unsent_at_end_line(std::int64_t unsent, double time, const wire::Json& process);

// A `logs` answer's pages (hub/pages.hpp): {"messages": [...]} sliced under the frame limit.
std::vector<wire::Json> log_pages(wire::Json messages);

}  // namespace dpdb::hub
