// The user's own standing hub (`dpdb hub` on the runtime folder's hub.sock), started on demand:
// what `dpdb attach -p` connects a process to when no hub is named.
#pragma once

#include "cli/hub_locator.hpp"

namespace dpdb::cli {

// The hub named by --hub or DPDB_HUB, else the local hub, started in the background (its log in
// the runtime folder's hub.log) if it does not run. Throws with a one-line reason.
HubTarget hub_for_attach(const std::string& explicit_address);

}  // namespace dpdb::cli
