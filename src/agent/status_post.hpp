// Statuses that the program's own threads report to the hub (which breakpoints this process armed,
// as code appears), sent by a thread of the agent's own. A program thread never writes to the hub
// itself for them: a hub that stopped reading (hung, SIGSTOPped, a link gone quiet) with the
// socket full, or the logpoint sender blocked mid-batch on it, would hold that thread, and with it
// the program, for as long as the hub is away.
#pragma once

#include <string>

namespace dpdb::agent {

// Hands `fields_json` to the poster and returns at once. A status replaces the one of the same
// type not sent yet: only the latest matters, and what waits stays bounded. Sent like
// Link::send_process: dropped while no hub is connected (a hub that connects asks again).
void post_status(const std::string& type, const std::string& fields_json);

}  // namespace dpdb::agent
