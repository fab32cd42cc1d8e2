// Finds the hub(s) a command talks to: --hub, else DPDB_HUB, else every live hub in the per-user
// runtime directory; and the secret for each.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/address.hpp"
#include "wire/channel.hpp"

namespace dpdb::cli {

struct HubTarget {
    HubAddress address;
    std::string secret;
};

// Throws std::runtime_error whose text says where it looked and how to start a hub.
std::vector<HubTarget> locate_hubs(const std::string& explicit_address);

// DPDB_TOKEN if set, else the 0600 file beside a Unix socket.
std::string secret_for(const HubAddress& address);

// Connects as a client; throws std::runtime_error with a one-line reason.
void connect_client(wire::Channel& channel, const HubTarget& target);

// One question on a fresh connection: sends `type` with `fields` (and an id) and returns the
// hub's first answer of type `answer`, or its "error"; throws if neither comes in timeout_ms.
wire::Message ask_hub(const HubTarget& target, std::string_view type, wire::Json fields,
                      std::string_view answer, int timeout_ms);

// The hub's listing (processes, sessions, exited); throws on an error or no answer.
wire::Json list_hub(const HubTarget& target, int timeout_ms);

}  // namespace dpdb::cli
