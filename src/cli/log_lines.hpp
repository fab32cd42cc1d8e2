// Logpoint messages as a person and a trace viewer read them.
#pragma once

#include <string>

#include "wire/message.hpp"

namespace dpdb::cli {

// "14:02:03.120 node1 pid 4242 [rank=0] MainThread: upload a81f: 12 rows" (local time).
std::string log_line_text(const wire::Json& entry);

// Chrome trace-event JSON (Perfetto, chrome://tracing): one track per process (its pid, or another
// number where two hosts share a pid), one per thread within it, each message an instant event
// named by its text, at its time relative to the first message.
wire::Json trace_events(const wire::Json& messages);

}  // namespace dpdb::cli
