// Text from elsewhere (a peer, a program) made safe to write where a person reads it: a log that
// may be read in a terminal, a one-line error.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace dpdb {

// `text` with every control character (C0, C1, DEL), every bidirectional override or isolate,
// and every byte that is not part of valid UTF-8 written as an escape (\n, \t, \x1b), cut to at
// most `bound` bytes of input, saying how many were left out; a terminal that shows the result runs
// no escape sequence. A backslash stays as it is, so that applying it twice (to a piece, then to
// the line holding it) changes nothing more.
std::string printable(std::string_view text, std::size_t bound = 200);

// What a peer sent (a process's argv, host, tags, thread's name, a logpoint's message), as a
// client shows it on a terminal: printable() without a bound.
inline std::string shown(std::string_view text) {
    return printable(text, std::string_view::npos);
}

// The same for text of many lines (stacks): each line shown, the line breaks kept.
std::string shown_lines(std::string_view text);

// `text` cut to at most `bound` bytes, never inside a UTF-8 sequence, with "…" added when it was
// cut: for text already valid (a JSON string) that a record or a summary keeps bounded.
std::string cut_text(std::string text, std::size_t bound);

}  // namespace dpdb
