#include "agent/audit_events.hpp"

#include <array>
#include <bitset>
#include <cstring>

namespace dpdb::agent {
namespace {

struct Watched {
    const char* event;
    AuditHandler handler;
};

// Written with the GIL held only (watch_audit_event), read by the hook, which runs with it.
constexpr std::size_t kMostWatched = 12;
std::array<Watched, kMostWatched> g_watched{};
std::size_t g_count = 0;
std::bitset<256> g_first_letters;
bool g_installed = false;

int on_audit_event(const char* event, PyObject* args, void*) {
    if (!g_first_letters.test(static_cast<unsigned char>(event[0]))) return 0;
    for (std::size_t i = 0; i < g_count; ++i) {
        if (std::strcmp(event, g_watched[i].event) == 0) g_watched[i].handler(event, args);
    }
    return 0;
}

}  // namespace

bool watch_audit_event(const char* event, AuditHandler handler) {
    if (!g_installed) {
        if (PySys_AddAuditHook(on_audit_event, nullptr) != 0) {
            PyErr_Clear();
            return false;
        }
        g_installed = true;
    }
    for (std::size_t i = 0; i < g_count; ++i) {
        if (g_watched[i].handler == handler && std::strcmp(g_watched[i].event, event) == 0) {
            return true;
        }
    }
    if (g_count == kMostWatched) return false;
    g_watched[g_count++] = {event, handler};
    g_first_letters.set(static_cast<unsigned char>(event[0]));
    return true;
}

}  // namespace dpdb::agent
