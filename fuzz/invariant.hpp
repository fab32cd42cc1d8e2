// What every fuzz target does when an invariant breaks: say which, and abort (a finding).
#pragma once

#include <cstdio>
#include <cstdlib>

namespace dpdb::fuzz {

[[noreturn]] inline void fail(const char* what) {
    std::fprintf(stderr, "invariant broken: %s\n", what);
    std::abort();
}

}  // namespace dpdb::fuzz
