#include "attach/remote_exec.hpp"

#include <cstdlib>
#include <stdexcept>
#include <string>

#include "attach/tracee.hpp"
#include "common/bounded_run.hpp"

namespace dpdb::attach {
namespace {

// sys.remote_exec returns once the script's path is written into the target; it waits for
// nothing the target does, so a few seconds is ample.
constexpr int kHelperSeconds = 10;

constexpr const char* kHelperCode =
    "import sys\n"
    "try:\n"
    "    sys.remote_exec(int(sys.argv[1]), sys.argv[2])\n"
    "except Exception as error:\n"
    "    sys.exit('%s: %s' % (type(error).__name__, error))\n";

bool at_least_3_14(const std::string& version) {
    const auto dot = version.find('.');
    if (dot == std::string::npos) return false;
    const int major = std::atoi(version.substr(0, dot).c_str());
    const int minor = std::atoi(version.substr(dot + 1).c_str());
    return major > 3 || (major == 3 && minor >= 14);
}

}  // namespace

Route route_for(const PythonProcess& target) {
    const char* asked = std::getenv("DPDB_ATTACH");
    const std::string name = asked ? asked : "";
    if (name.empty()) return at_least_3_14(target.version) ? Route::remote_exec : Route::inject;
    if (name == "inject") return Route::inject;
    if (name != "remote_exec") {
        throw AttachError("DPDB_ATTACH=" + name + " is not a route: inject or remote_exec");
    }
    if (!at_least_3_14(target.version)) {
        throw AttachError("DPDB_ATTACH=remote_exec needs CPython 3.14 or later (PEP 768); pid " +
                          std::to_string(target.pid) + " runs " + target.version +
                          ": unset DPDB_ATTACH to use dpdb's injector");
    }
    return Route::remote_exec;
}

void remote_exec(const PythonProcess& target, const std::string& script) {
    // The target's own interpreter, through /proc: the same build, whatever its path is in the
    // target's mount namespace.
    const std::string interpreter = "/proc/" + std::to_string(target.pid) + "/exe";
    BoundedRun helper;
    try {
        helper =
            run_bounded({interpreter, "-I", "-c", kHelperCode, std::to_string(target.pid), script},
                        kHelperSeconds);
    } catch (const std::runtime_error& error) {
        throw AttachError(std::string("sys.remote_exec: ") + error.what());
    }
    if (helper.status != 0) {
        const auto why = last_line(helper.printed);
        throw AttachError("sys.remote_exec into pid " + std::to_string(target.pid) + " failed: " +
                          (why.empty() ? "exit status " + std::to_string(helper.status) : why));
    }
}

}  // namespace dpdb::attach
