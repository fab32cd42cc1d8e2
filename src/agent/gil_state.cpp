#include "agent/gil_state.hpp"

#include <dirent.h>
#include <sys/syscall.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>

#include "agent/gil_view.h"

namespace dpdb::agent {
namespace {

constexpr int kMaxThreads = 4096;

// The futex word a thread is blocked on, or 0 when it is not blocked in futex().
std::uintptr_t futex_of(long tid) {
    char path[64];
    std::snprintf(path, sizeof(path), "/proc/self/task/%ld/syscall", tid);
    FILE* file = std::fopen(path, "re");
    if (!file) return 0;
    long number = -1;
    std::uintptr_t address = 0;
    const int read = std::fscanf(file, "%ld %" SCNxPTR, &number, &address);
    std::fclose(file);
    return read == 2 && number == SYS_futex ? address : 0;
}

std::vector<long> task_ids() {
    std::vector<long> ids;
    DIR* dir = ::opendir("/proc/self/task");
    if (!dir) return ids;
    while (const dirent* entry = ::readdir(dir)) {
        char* end = nullptr;
        const long id = std::strtol(entry->d_name, &end, 10);
        if (end != entry->d_name && *end == '\0') ids.push_back(id);
    }
    ::closedir(dir);
    return ids;
}

}  // namespace

GilSnapshot take_gil_snapshot() {
    GilSnapshot snapshot;
    dpdb_gil_view view{};
    if (dpdb_read_gil_view(&view) < 0) return snapshot;
    snapshot.known = true;
    snapshot.holder_state = view.holder;
    for (const long tid : task_ids()) {
        const std::uintptr_t word = futex_of(tid);
        if (word >= view.wait_begin && word < view.wait_end) {
            snapshot.waiting_native_ids.push_back(tid);
        }
    }
    std::sort(snapshot.waiting_native_ids.begin(), snapshot.waiting_native_ids.end());
    return snapshot;
}

void GilSnapshot::resolve() {
    if (!known) return;
    std::vector<dpdb_gil_thread> threads(kMaxThreads);
    const int count = dpdb_list_threads(holder_state, threads.data(), kMaxThreads, &holder);
    for (int i = 0; i < count; ++i) {
        if (threads[i].native_id != 0) {
            ident_of_native[static_cast<long>(threads[i].native_id)] = threads[i].ident;
        }
    }
}

unsigned long ident_of_thread_state(std::uintptr_t state) {
    unsigned long ident = 0;
    dpdb_list_threads(state, nullptr, 0, &ident);
    return ident;
}

wire::Json GilSnapshot::unresolved_json() const {
    if (!known) return nullptr;
    return {{"holder_state", holder_state != 0 ? wire::Json(holder_state) : wire::Json(nullptr)},
            {"waiting", waiting_native_ids}};
}

wire::Json GilSnapshot::to_json() const {
    if (!known) return nullptr;
    return {{"holder", holder != 0 ? wire::Json(holder) : wire::Json(nullptr)},
            {"waiting", waiting_native_ids}};
}

std::string GilSnapshot::role_of(unsigned long ident) const {
    if (known && holder != 0 && ident == holder) return "holds the GIL";
    for (const long tid : waiting_native_ids) {
        const auto it = ident_of_native.find(tid);
        if (it != ident_of_native.end() && it->second == ident) return "waits for the GIL";
    }
    return "";
}

std::string GilSnapshot::unattributed_waiters() const {
    std::string ids;
    for (const long tid : waiting_native_ids) {
        if (ident_of_native.count(tid) != 0) continue;
        ids += (ids.empty() ? "" : ", ") + std::to_string(tid);
    }
    return ids.empty() ? "" : "waiting for the GIL: threads with native id " + ids;
}

}  // namespace dpdb::agent
