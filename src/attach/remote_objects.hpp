// Python objects of another process, read from its memory: a str's text and an instance's
// attribute, as far as a stack reader names what it shows. Every read is bounded; what does not
// look like the object it should be reads as nothing, never as a guess.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace dpdb::attach {

class RemoteMemory;
struct PythonLayout;

// A compact str's text as UTF-8; nothing for anything else (or a str over 64 KiB).
std::optional<std::string> remote_text(const RemoteMemory& memory, const PythonLayout& layout,
                                       std::uintptr_t str);

// The object an instance's attribute `name` holds (in its __dict__ or its shared-key values),
// or 0. RemoteReadError where a read leaves the process's memory.
std::uintptr_t remote_attribute(const RemoteMemory& memory, const PythonLayout& layout,
                                std::uintptr_t object, std::string_view name);

}  // namespace dpdb::attach
