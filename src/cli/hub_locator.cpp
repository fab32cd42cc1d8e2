#include "cli/hub_locator.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <optional>
#include <stdexcept>

#include "common/runtime_dir.hpp"

namespace dpdb::cli {
namespace {

std::string how_to_start() {
    return "start one with `dpdb hub` (found here by itself, no DPDB_HUB needed), or run the "
           "program under `dpdb run`";
}

}  // namespace

bool hub_answers(const HubAddress& address) {
    const int fd = connect_to(address);
    if (fd < 0) return false;
    ::close(fd);
    return true;
}

std::string hub_secret_file(const HubAddress& address) {
    if (const char* file = std::getenv("DPDB_TOKEN_FILE"); file != nullptr && *file != '\0') {
        return file;
    }
    if (address.kind == HubAddress::Kind::Unix) return token_path_for_socket(address.path);
    return "";
}

std::string secret_for(const HubAddress& address) {
    if (const char* token = std::getenv("DPDB_TOKEN"); token != nullptr && *token != '\0') {
        return token;
    }
    if (const std::string file = hub_secret_file(address); !file.empty()) {
        return read_private_file(file);
    }
    throw std::runtime_error("no secret for hub " + address.to_string() +
                             ": set DPDB_TOKEN or DPDB_TOKEN_FILE");
}

std::vector<HubTarget> locate_hubs(const std::string& explicit_address) {
    std::string chosen = explicit_address;
    if (chosen.empty()) {
        if (const char* env = std::getenv("DPDB_HUB"); env != nullptr) chosen = env;
    }
    if (!chosen.empty()) {
        const auto address = HubAddress::parse(chosen);
        return {HubTarget{address, secret_for(address)}};
    }
    remove_leftovers_of_dead_runs();
    std::vector<HubTarget> live;
    const std::string dir = runtime_dir();
    for (const auto& path : discovered_hub_sockets()) {
        HubAddress address;
        address.path = path;
        const int fd = connect_to(address);
        if (fd < 0) {
            if (errno == ECONNREFUSED) {
                // Left behind by a hub that died without cleaning up.
                ::unlink(path.c_str());
                ::unlink(token_path_for_socket(path).c_str());
            }
            continue;
        }
        ::close(fd);
        try {
            live.push_back(HubTarget{address, secret_for(address)});
        } catch (const std::exception&) {
            continue;  // a hub still starting, or not ours to read
        }
    }
    if (live.empty()) {
        throw std::runtime_error("no hub found: --hub and DPDB_HUB are not set and " + dir +
                                 " holds no live hub; " + how_to_start());
    }
    return live;
}

void connect_client(wire::Channel& channel, const HubTarget& target,
                    const wire::Channel::FirstRequests& first) {
    wire::Channel::connect(channel, target.address, target.secret, "client", first);
}

bool gather_page(wire::Json& whole, wire::Json page) {
    const auto more = page.find("more");
    const bool last = more == page.end() || !more->is_boolean() || !more->get<bool>();
    for (auto& item : page.items()) {
        if (item.key() == "more") continue;
        auto it = whole.find(item.key());
        if (it == whole.end()) {
            whole[item.key()] = std::move(item.value());
        } else if (it->is_array() && item.value().is_array()) {
            for (auto& element : item.value()) it->push_back(std::move(element));
        } else if (it->is_object() && item.value().is_object()) {
            gather_page(*it, std::move(item.value()));
        }
    }
    whole.erase("more");
    return last;
}

wire::Message ask_on(wire::Channel& channel, const HubTarget& target, std::string_view type,
                     wire::Json fields, std::string_view answer, int timeout_ms, std::int64_t id) {
    fields["id"] = id;
    channel.send(wire::make(type, std::move(fields)));
    return await_answer(channel, target, answer, timeout_ms, id);
}

wire::Message await_answer(wire::Channel& channel, const HubTarget& target, std::string_view answer,
                           int timeout_ms, std::int64_t id) {
    std::optional<wire::Message> whole;
    for (;;) {
        auto reply = channel.receive(timeout_ms);
        if (!reply) {
            throw std::runtime_error("hub at " + target.address.to_string() + " did not answer");
        }
        if (reply->type == "error") return *reply;
        if (reply->type != answer || !reply->has("id") || reply->num("id") != id) continue;
        if (!whole) {
            whole = wire::Message{reply->type, wire::Json::object()};
        }
        if (gather_page(whole->body, std::move(reply->body))) return std::move(*whole);
    }
}

namespace {

// Connects `channel` with the question sent along with the hello where the hub allows it (one
// round trip fewer), and waits for its answer.
wire::Message connect_and_ask(wire::Channel& channel, const HubTarget& target,
                              std::string_view type, wire::Json fields, std::string_view answer,
                              int timeout_ms) {
    fields["id"] = 1;
    connect_client(channel, target, [&](bool) {
        return std::vector<wire::Message>{wire::make(type, std::move(fields))};
    });
    return await_answer(channel, target, answer, timeout_ms, 1);
}

wire::Json list_fields(bool sessions_only) {
    wire::Json fields = wire::Json::object();
    if (sessions_only) fields["sessions_only"] = true;
    return fields;
}

// A listing's body; the hub's error as an exception.
wire::Json listing_of(wire::Message answer) {
    if (answer.type == "error") throw std::runtime_error(answer.str("message"));
    return std::move(answer.body);
}

}  // namespace

wire::Message ask_hub(const HubTarget& target, std::string_view type, wire::Json fields,
                      std::string_view answer, int timeout_ms) {
    wire::Channel channel;
    return connect_and_ask(channel, target, type, std::move(fields), answer, timeout_ms);
}

wire::Json list_hub(wire::Channel& channel, const HubTarget& target, int timeout_ms,
                    std::int64_t id, bool sessions_only) {
    return listing_of(
        ask_on(channel, target, "list", list_fields(sessions_only), "listing", timeout_ms, id));
}

wire::Json connect_and_list(wire::Channel& channel, const HubTarget& target, int timeout_ms,
                            bool sessions_only) {
    return listing_of(connect_and_ask(channel, target, "list", list_fields(sessions_only),
                                      "listing", timeout_ms));
}

wire::Json list_hub(const HubTarget& target, int timeout_ms, bool sessions_only) {
    wire::Channel channel;
    return connect_and_list(channel, target, timeout_ms, sessions_only);
}

}  // namespace dpdb::cli
