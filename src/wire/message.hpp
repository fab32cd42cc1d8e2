// Messages: one JSON object per frame, {"t": TYPE, ...fields}. Every type has a fixed schema, and
// decode() rejects anything that does not match it exactly: an unknown type, a missing field, a
// field of the wrong kind, an unexpected field, a string beyond its bound.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "wire/frame.hpp"

namespace dpdb::wire {

inline constexpr int kProtocolVersion = 1;

using Json = nlohmann::json;

struct Message {
    std::string type;
    Json body;  // the whole object, "t" included

    const Json& operator[](const char* field) const { return body.at(field); }
    std::string str(const char* field) const { return body.at(field).get<std::string>(); }
    std::int64_t num(const char* field) const { return body.at(field).get<std::int64_t>(); }
    bool has(const char* field) const { return body.contains(field); }
};

// Builds a message of a known type; the fields are checked the same way decode() checks them.
Message make(std::string_view type, Json fields = Json::object());

Message decode(std::string_view payload);
std::string encode(const Message& message);

// The frame for a message, ready to write.
inline std::string frame(const Message& message) {
    return encode_frame(encode(message));
}

}  // namespace dpdb::wire
