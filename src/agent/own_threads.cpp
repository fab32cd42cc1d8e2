#include "agent/own_threads.hpp"

#include <cstdio>

namespace dpdb::agent {

void name_own_thread(pthread_t thread, const char* role) {
    char name[16];
    std::snprintf(name, sizeof(name), "dpdb-%s", role);
    pthread_setname_np(thread, name);
}

}  // namespace dpdb::agent
