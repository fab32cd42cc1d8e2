// What both halves of the adapter read from JSON that an IDE or the hub sent: fields of the
// expected type, or a fallback, never an exception.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "wire/message.hpp"

namespace dpdb::dap {

// A request the adapter cannot serve as asked: its text is the error response's message.
struct RequestError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

inline std::string text(const wire::Json& object, const char* key,
                        const std::string& fallback = "") {
    const auto it = object.find(key);
    return it != object.end() && it->is_string() ? it->get<std::string>() : fallback;
}

inline std::int64_t number(const wire::Json& object, const char* key, std::int64_t fallback = 0) {
    const auto it = object.find(key);
    return it != object.end() && it->is_number_integer() ? it->get<std::int64_t>() : fallback;
}

// A request's arguments (an empty object when it has none).
inline const wire::Json& arguments(const wire::Json& request) {
    static const wire::Json none = wire::Json::object();
    const auto it = request.find("arguments");
    return it != request.end() && it->is_object() ? *it : none;
}

// An integer argument the request cannot do without.
inline std::int64_t integer(const wire::Json& request, const char* key) {
    const auto& args = arguments(request);
    const auto it = args.find(key);
    if (it == args.end() || !it->is_number_integer()) {
        throw RequestError(std::string("arguments.") + key + " must be an integer");
    }
    return it->get<std::int64_t>();
}

inline std::string basename(const std::string& path) {
    const auto slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace dpdb::dap
