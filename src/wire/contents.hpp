// What the objects inside a message must hold. A message's schema (message.hpp) checks its top
// level; these check, per message type, every field inside it that the hub or a client reads —
// type, range and size — so that a peer holding a credential still cannot send a value that
// something downstream reads as another type (nlohmann's type_error would end the reader) or one
// large enough to blow up what the hub keeps. Fields nobody reads pass through as they are.
#pragma once

#include <string>

#include "wire/message.hpp"

namespace dpdb::wire {

// Bounds on what the hub keeps of a process (docs/remote.md, "What a peer can make the hub
// keep"): its tags are copied into each of its stored logpoint messages.
inline constexpr std::size_t kMaxTags = 32;
inline constexpr std::size_t kMaxTagsBytes = 2048;

// A field that is null counts as absent (an agent says "started": null where /proc is not
// readable). The hub keeps such an object without_nulls(), so that a reader that takes a field's
// value with a default never meets a null where it expects text or a number.
Json without_nulls(Json object);

// Throws ProtocolError naming the message type and the field, for a message of any type.
void check_contents(const Message& message);

// A process as its agent describes itself (hello's and proc_update's "proc"), and what the hub
// keeps of one that ended (the same plus how it ended).
void check_process(const Json& process, const char* what = "proc");
void check_exit_record(const Json& record);
// A paused session as its agent describes it (session_open's and session_update's "info").
void check_session_info(const Json& info);
// One logpoint message, as an agent sends it ({time, text, thread?, tid?, bp?, dropped?}) and as
// the hub keeps it (stamped with pid, host, tags, run, process_name).
void check_log_line(const Json& line, const std::string& what = "lines");
void check_stamped_log_line(const Json& line);

}  // namespace dpdb::wire
