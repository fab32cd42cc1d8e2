// How `dpdb ls` shows a large job: the hubs' summaries (hub/summary.hpp) merged and written for a
// person, in place of a line per process.
#pragma once

#include <string>
#include <vector>

#include "wire/message.hpp"

namespace dpdb::cli {

struct HubSummary {
    std::string hub;  // its address, shown when there are several
    wire::Json body;  // the "summary" message
};

// The text: totals, the groups by host, tags and state, where the sessions are paused, and the
// oldest paused sessions (those are what one attaches to), each part saying what it left out.
std::string job_summary(const std::vector<HubSummary>& summaries);

}  // namespace dpdb::cli
