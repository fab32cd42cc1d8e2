// Pages: what the hub assembles from many peers (a listing of every process, the stacks of a whole
// job) can outgrow one frame although every message it came from fitted. Such an answer goes out
// as several messages of the same type and id, each holding the next slice of its arrays and each
// but the last marked `more`, so that no message ever exceeds the frame limit.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "wire/message.hpp"

namespace dpdb::hub {

// An encoded page stays under this (unless one item alone is larger: then it has a page of its
// own). Well under the frame limit, so that a page and its envelope always fit.
inline constexpr std::size_t kPageBytes = std::size_t{256} * 1024;
// An item larger than this is shrunk (see Shrink): with the envelope it must fit in a frame.
inline constexpr std::size_t kMaxItemBytes = wire::kMaxFrameBytes - 16 * 1024;

// Makes an oversized item smaller; paginate() replaces what is still too large by
// {"truncated": true}.
using Shrink = std::function<wire::Json(const wire::Json&)>;

struct Pages {
    std::size_t page_bytes = kPageBytes;
    std::size_t item_bytes = kMaxItemBytes;
};

// Splits the named arrays, in order, into page bodies: every body has every name (an empty array
// where nothing is left of it), and concatenating each name's arrays across the bodies gives the
// original array back (oversized items shrunk). Always at least one body.
std::vector<wire::Json> paginate(std::vector<std::pair<std::string, wire::Json>> arrays,
                                 const Shrink& shrink, Pages limits = {});

// The same split for a message whose arrays are top-level fields, with every item already
// encoded (at most item_bytes: see encode_item), so that nothing is encoded twice: each page is the
// message's whole JSON text, "{" + head (`"t":"listing","id":7`) + each `"name":[items]` +
// `"more":true` on all but the last + "}". The hub sends them as they are (Connection::
// send_encoded); tests decode them like any message.
using EncodedArrays = std::vector<std::pair<std::string, std::vector<std::string>>>;
std::vector<std::string> encode_pages(const std::string& head, const EncodedArrays& arrays,
                                      Pages limits = {});
// An item's JSON text, shrunk as paginate() does when it is larger than item_bytes.
std::string encode_item(const wire::Json& item, const Shrink& shrink, Pages limits = {});

// The shrink for processes and sessions: what identifies it and where it stands, each string cut
// to 1 KiB, marked "truncated". A program's argv or tags can be as large as a frame, and a session
// carries its process's.
wire::Json shrink_description(const wire::Json& item);

// The shrink for a process's stacks (a stacks answer): the process shrunk as above, with the start
// of its stacks' text.
wire::Json shrink_stacks(const wire::Json& item);

// The encoded size of a JSON value, as a message would carry it.
std::size_t encoded_size(const wire::Json& value);

}  // namespace dpdb::hub
