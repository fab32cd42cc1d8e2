// Text from elsewhere (a peer, a program) made safe to write where a person reads it: a log that
// may be read in a terminal, a one-line error.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace dpdb {

// `text` with every control character and every byte that is not part of valid UTF-8 written as
// an escape (\n, \t, \x1b), cut to at most `bound` bytes of input, saying how many were left
// out; a terminal that shows the result runs no escape sequence. A backslash stays as it is, so
// that applying it twice (to a piece, then to the line holding it) changes nothing more.
std::string printable(std::string_view text, std::size_t bound = 200);

// `text` cut to at most `bound` bytes, never inside a UTF-8 sequence, with "…" added when it was
// cut: for text already valid (a JSON string) that a record or a summary keeps bounded.
std::string cut_text(std::string text, std::size_t bound);

}  // namespace dpdb
