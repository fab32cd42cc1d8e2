#include "attach/remote_objects.hpp"

#include "attach/python_layout.hpp"
#include "attach/remote_memory.hpp"

namespace dpdb::attach {
namespace {

constexpr std::int64_t kMaxText = 65536;
// A dict with more entries than this is not an instance's attributes.
constexpr std::int64_t kMaxEntries = 4096;
constexpr std::uint64_t kManagedDict = 1UL << 4;        // Py_TPFLAGS_MANAGED_DICT, 3.11 on
constexpr std::uint64_t kInlineValues = 1UL << 2;       // Py_TPFLAGS_INLINE_VALUES, 3.13
constexpr std::intptr_t kManagedDictOffset = -24;       // three pointers before the object
constexpr std::intptr_t kValuesPointerOffset311 = -32;  // four
constexpr std::uint64_t kInlineValuesValid = 3;         // PyDictValues.valid, 3.13

void append_utf8(std::uint32_t c, std::string* out) {
    if (c < 0x80) {
        *out += static_cast<char>(c);
    } else if (c < 0x800) {
        *out += static_cast<char>(0xc0 | (c >> 6));
        *out += static_cast<char>(0x80 | (c & 0x3f));
    } else if (c < 0x10000) {
        *out += static_cast<char>(0xe0 | (c >> 12));
        *out += static_cast<char>(0x80 | ((c >> 6) & 0x3f));
        *out += static_cast<char>(0x80 | (c & 0x3f));
    } else {
        *out += static_cast<char>(0xf0 | (c >> 18));
        *out += static_cast<char>(0x80 | ((c >> 12) & 0x3f));
        *out += static_cast<char>(0x80 | ((c >> 6) & 0x3f));
        *out += static_cast<char>(0x80 | (c & 0x3f));
    }
}

// Where a dict's keys and (split table) values are.
struct DictParts {
    std::uintptr_t keys = 0;
    std::uintptr_t values = 0;  // the values' array, 0 for a combined table
};

// The value for the str key `name` among the keys' entries, walked in order (no hashing: the
// key's text is compared), or 0.
std::uintptr_t lookup(const RemoteMemory& memory, const PythonLayout& layout, const DictParts& dict,
                      std::string_view name) {
    const auto entries_count = memory.read<std::int64_t>(dict.keys + layout.keys_nentries);
    if (entries_count < 0 || entries_count > kMaxEntries) return 0;
    std::uint64_t indices_bytes = 0;
    std::uint64_t entry_size = 24;  // hash, key, value
    std::uint64_t key_at = 8;
    if (layout.keys_size) {
        const auto size = memory.read<std::int64_t>(dict.keys + *layout.keys_size);
        if (size <= 0 || size > 4 * kMaxEntries) return 0;
        const std::uint64_t width = size <= 0xff ? 1 : size <= 0xffff ? 2 : 4;
        indices_bytes = static_cast<std::uint64_t>(size) * width;
    } else {
        const auto log2 = memory.read<std::uint8_t>(dict.keys + *layout.keys_log2_index_bytes);
        if (log2 > 20) return 0;
        indices_bytes = 1UL << log2;
        if (memory.read<std::uint8_t>(dict.keys + layout.keys_kind) != 0) {
            entry_size = 16;  // key, value: every key a str
            key_at = 0;
        }
    }
    const std::uintptr_t entries = dict.keys + layout.keys_indices + indices_bytes;
    for (std::int64_t i = 0; i < entries_count; ++i) {
        const std::uintptr_t entry = entries + static_cast<std::uint64_t>(i) * entry_size;
        const auto key = memory.read_pointer(entry + key_at);
        if (key == 0 || remote_text(memory, layout, key) != name) continue;
        return dict.values != 0
                   ? memory.read_pointer(dict.values + static_cast<std::uint64_t>(i) * 8)
                   : memory.read_pointer(entry + key_at + 8);
    }
    return 0;
}

DictParts dict_parts(const RemoteMemory& memory, const PythonLayout& layout, std::uintptr_t dict) {
    const auto values = memory.read_pointer(dict + layout.dict_values);
    return {memory.read_pointer(dict + layout.dict_keys),
            values == 0 ? 0 : values + layout.values_start};
}

// The instance's attributes: its own dict, or its class's shared keys with its values.
std::optional<DictParts> attributes_of(const RemoteMemory& memory, const PythonLayout& layout,
                                       std::uintptr_t object) {
    using Kind = PythonLayout::InstanceDict;
    const auto type = memory.read_pointer(object + layout.object_type);
    const auto flags = memory.read<std::uint64_t>(type + layout.type_flags);
    if (layout.instance_dict == Kind::at_dictoffset || (flags & kManagedDict) == 0) {
        const auto offset = memory.read<std::int64_t>(type + layout.type_dictoffset);
        if (offset <= 0) return std::nullopt;
        const auto dict = memory.read_pointer(object + static_cast<std::uint64_t>(offset));
        if (dict == 0) return std::nullopt;
        return dict_parts(memory, layout, dict);
    }
    const auto shared_keys = [&] {
        return memory.read_pointer(type + layout.heaptype_cached_keys);
    };
    const auto managed = memory.read_pointer(object + kManagedDictOffset);
    switch (layout.instance_dict) {
        case Kind::dict_or_values_311: {
            const auto values = memory.read_pointer(object + kValuesPointerOffset311);
            if (values != 0) return DictParts{shared_keys(), values};
            break;
        }
        case Kind::tagged_312:
            // The tag is the low bit of the values pointer less one.
            if ((managed & 1) != 0) return DictParts{shared_keys(), managed + 1};
            break;
        case Kind::inline_313:
            if (managed == 0 && (flags & kInlineValues) != 0) {
                const auto values =
                    object + memory.read<std::uint64_t>(type + layout.type_basicsize);
                if (memory.read<std::uint8_t>(values + kInlineValuesValid) == 0)
                    return std::nullopt;
                return DictParts{shared_keys(), values + layout.values_start};
            }
            break;
        case Kind::at_dictoffset:
            break;
    }
    if (managed == 0) return std::nullopt;
    return dict_parts(memory, layout, managed);
}

}  // namespace

std::optional<std::string> remote_text(const RemoteMemory& memory, const PythonLayout& layout,
                                       std::uintptr_t str) {
    if (str == 0) return std::nullopt;
    const auto state = memory.read<std::uint32_t>(str + layout.unicode_state);
    const unsigned kind = (state >> 2) & 7;
    const bool compact = ((state >> 5) & 1) != 0;
    const bool ascii = ((state >> 6) & 1) != 0;
    const auto length = memory.read<std::int64_t>(str + 16);  // PyASCIIObject.length
    if (!compact || length < 0 || length > kMaxText || (kind != 1 && kind != 2 && kind != 4))
        return std::nullopt;
    const auto data = str + (ascii ? layout.unicode_ascii_size : layout.unicode_compact_size);
    std::string raw = memory.read_bytes(data, static_cast<std::size_t>(length) * kind);
    if (ascii) return raw;
    std::string out;
    for (std::int64_t i = 0; i < length; ++i) {
        std::uint32_t c = 0;
        for (unsigned b = 0; b < kind; ++b) {
            c |= static_cast<std::uint32_t>(static_cast<unsigned char>(raw[i * kind + b]))
                 << (8 * b);
        }
        append_utf8(c, &out);
    }
    return out;
}

std::uintptr_t remote_attribute(const RemoteMemory& memory, const PythonLayout& layout,
                                std::uintptr_t object, std::string_view name) {
    if (object == 0) return 0;
    const auto dict = attributes_of(memory, layout, object);
    if (!dict || dict->keys == 0) return 0;
    return lookup(memory, layout, *dict, name);
}

}  // namespace dpdb::attach
