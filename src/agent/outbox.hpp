// What the program's own threads tell the hub as they run (which breakpoints this process armed,
// as code appears; what the program writes, while an IDE watches it), sent by a thread of the
// agent's own, `dpdb-outbox`. A program thread never writes to the hub itself for them: a hub that
// stopped reading (hung, SIGSTOPped, a link gone quiet) with the socket full, or the logpoint
// sender blocked mid-batch on it, would hold that thread, and with it the program, for as long as
// the hub is away.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>

namespace dpdb::agent {

// Hands a status to the outbox and returns at once. It replaces the one of the same type not sent
// yet: only the latest matters, and what waits stays bounded. Sent like Link::send_process:
// dropped while no hub is connected (a hub that connects asks again). Refuses (throws) fields the
// wire would refuse, so that the caller hears of it.
void post_status(const std::string& type, const std::string& fields_json);

// Hands a piece of the program's output (`stream`: "stdout" or "stderr"; `text`: valid UTF-8) to
// the outbox, in order. Beyond kOutboxOutputBytes waiting, pieces are dropped and counted, and a
// line on stderr says, after those kept, how much was not copied.
inline constexpr std::size_t kOutboxOutputBytes = 1 << 20;
void post_output(const std::string& stream, const std::string& text);

// Waits until what was posted before the call has been handed to the link (sent, or dropped with
// no hub connected): a thread about to open a session calls it, so that the hub hears of the
// breakpoints armed before the stop at one of them (an IDE shows it verified, then stopped). As
// long as the hub takes it: the session itself waits for the hub then. At exit, within `limit`
// (what the program printed last reaches the IDE); false if that passed first.
bool outbox_drain(std::optional<std::chrono::milliseconds> limit = std::nullopt);

}  // namespace dpdb::agent
