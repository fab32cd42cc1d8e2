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

// Whether something accepts connections on the address (a hub, or one starting).
bool hub_answers(const HubAddress& address);

// DPDB_TOKEN if set, else the 0600 file beside a Unix socket.
std::string secret_for(const HubAddress& address);
// The file secret_for() reads the secret from when DPDB_TOKEN does not give it ("" if none).
std::string hub_secret_file(const HubAddress& address);

// Connects as a client; throws std::runtime_error with a one-line reason. `first`: the first
// requests, sent with the hello where the hub allows it (wire::Channel::FirstRequests).
void connect_client(wire::Channel& channel, const HubTarget& target,
                    const wire::Channel::FirstRequests& first = nullptr);

// An answer in pages (several messages of one type and id, every one but the last marked "more";
// see hub/pages.hpp): adds `page` to `whole` (arrays appended, objects merged, anything else
// taken from the first page) and returns true once `page` was the last.
bool gather_page(wire::Json& whole, wire::Json page);

// One question on a connection: sends `type` with `fields` and `id`, and returns the hub's answer
// of type `answer` for that id, all its pages gathered, or its "error"; throws if neither comes
// in timeout_ms (between two messages).
wire::Message ask_on(wire::Channel& channel, const HubTarget& target, std::string_view type,
                     wire::Json fields, std::string_view answer, int timeout_ms,
                     std::int64_t id = 1);

// The answer to a question already sent (ask_on without its send).
wire::Message await_answer(wire::Channel& channel, const HubTarget& target, std::string_view answer,
                           int timeout_ms, std::int64_t id);

// The same question on a fresh connection.
wire::Message ask_hub(const HubTarget& target, std::string_view type, wire::Json fields,
                      std::string_view answer, int timeout_ms);

// The hub's whole listing (processes, sessions, exited), or only its sessions; throws on an
// error or no answer.
wire::Json list_hub(const HubTarget& target, int timeout_ms, bool sessions_only = false);
// The same on `channel`, connected here with the question sent along with the hello, and left
// open for what comes next (`dpdb attach` attaches on it).
wire::Json connect_and_list(wire::Channel& channel, const HubTarget& target, int timeout_ms,
                            bool sessions_only);
wire::Json list_hub(wire::Channel& channel, const HubTarget& target, int timeout_ms,
                    std::int64_t id = 1, bool sessions_only = false);

}  // namespace dpdb::cli
