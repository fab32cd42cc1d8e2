// libFuzzer target: what the hub does with a message a peer sent, once decode() and
// check_contents() accepted it — register the process, open and describe its sessions, sum the
// job up, stamp, store and read back logpoint messages, record and read back how it ended.
// ProtocolError from the checks is the only acceptable failure: any other exception (nlohmann's
// type_error above all), a sanitizer report or a broken invariant is a crash.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "hub/local_process.hpp"
#include "hub/logs.hpp"
#include "hub/pages.hpp"
#include "hub/registry.hpp"
#include "hub/store.hpp"
#include "hub/summary.hpp"
#include "invariant.hpp"
#include "wire/contents.hpp"
#include "wire/message.hpp"

namespace {

using dpdb::wire::Json;
using dpdb::wire::without_nulls;

constexpr std::uint64_t kAgent = 1;

using dpdb::fuzz::fail;

// As hub.cpp routes an agent's message, for the parts that keep or read its contents.
void route(const dpdb::wire::Message& message, dpdb::hub::Registry& registry,
           dpdb::hub::Store& store, Json& ending) {
    auto* process = registry.process(kAgent);
    const auto& type = message.type;
    if (type == "hello" || type == "proc_update") {
        // The hub keeps what it is told without nulls (wire/contents.hpp), as it reads it.
        if (message.has("proc")) registry.add_process(kAgent, without_nulls(message["proc"]));
    } else if (type == "session_open") {
        registry.open_session(kAgent, message.num("sid"), without_nulls(message["info"]));
    } else if (type == "break_status") {
        process->resolved_breakpoints = message["resolved"];
        if (message.has("notes")) process->breakpoint_notes = message["notes"];
        dpdb::hub::summarize_breakpoints(registry, store.breakpoints());
    } else if (type == "stacks_reply") {
        Json entry = registry.describe(*process);
        entry["stacks"] = without_nulls(message["stacks"]);
        dpdb::hub::encode_item(entry, dpdb::hub::shrink_stacks);
    } else if (type == "log_lines") {
        auto lines = dpdb::hub::stamp_log_lines(message["lines"], process->info);
        store.add_logs(lines);
        dpdb::hub::log_pages(store.logs({}, 10));
    } else if (type == "exiting") {
        ending = {{"status", message.num("status")}};
    } else if (type == "exec") {
        ending = {{"exec", message.str("path")}, {"argv", message["argv"]}};
    } else if (type == "crash") {
        ending = {{"signal", message.str("signal")}, {"stacks", message.str("stacks")}};
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view payload(reinterpret_cast<const char*>(data), size);
    dpdb::wire::Message message;
    try {
        message = dpdb::wire::decode(payload);
        dpdb::wire::check_contents(message);
    } catch (const dpdb::wire::ProtocolError&) {
        return 0;
    }
    static dpdb::hub::Store store(":memory:");
    dpdb::hub::Registry registry;
    registry.add_process(kAgent, {{"pid", 4242}, {"host", "h"}, {"tags", {{"RANK", "1"}}}});
    Json ending;
    route(message, registry, store, ending);
    for (const auto& [id, session] : registry.sessions()) {
        dpdb::hub::encode_item(registry.describe(session), dpdb::hub::shrink_description);
    }
    dpdb::hub::summarize(registry);
    const auto gone = registry.remove_process(kAgent);
    if (!gone) fail("the process vanished from the registry");
    auto record = dpdb::hub::exit_record(gone->info, ending, "disconnected");
    try {
        dpdb::wire::check_exit_record(record);
    } catch (const dpdb::wire::ProtocolError& error) {
        std::fprintf(stderr, "%s\n", error.what());
        fail("the hub made an exit record it would refuse to read back");
    }
    store.record_exit(record);
    dpdb::hub::refresh_outlived(record);
    if (store.exits(3).empty()) fail("the exit record was not read back");
    return 0;
}
