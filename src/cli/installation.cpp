#include "cli/installation.hpp"

#include <unistd.h>

#include <cstdlib>
#include <stdexcept>

#include "common/bounded_run.hpp"

namespace dpdb::cli {
namespace {

// Asked of the interpreter, so that the answer is what a program under `dpdb run` gets
// (DPDB_ENGINE included), not what this executable was built for.
constexpr const char* kEngineQuery =
    "import sys\n"
    "version = 'Python %s (%s)' % (sys.version.split()[0], sys.executable)\n"
    "try:\n"
    "    from dpdb import _engine\n"
    "    strategy = _engine.engine_strategy()\n"
    "    if strategy != 'bdb':\n"
    "        strategy += ' on ' + _engine.engine_backend()\n"
    "except ImportError as error:\n"
    "    strategy = 'none: dpdb is not installed for it (%s)' % error\n"
    "except Exception as error:\n"
    "    strategy = 'unusable: %s' % error\n"
    "print('%s, engine %s' % (version, strategy))\n";

constexpr int kQuerySeconds = 10;

}  // namespace

std::string this_executable() {
    char path[4096];
    const ssize_t n = ::readlink("/proc/self/exe", path, sizeof(path) - 1);
    if (n <= 0) throw std::runtime_error("cannot find the dpdb executable (/proc/self/exe)");
    return std::string(path, static_cast<std::size_t>(n));
}

std::string program_python(const std::string& requested) {
    if (!requested.empty()) return requested;
    if (const char* env = std::getenv("DPDB_PYTHON"); env != nullptr && *env != '\0') return env;
    const std::string self = this_executable();
    const std::string dir = self.substr(0, self.rfind('/'));
    for (const char* name : {"python3", "python"}) {
        std::string candidate = dir + "/" + name;
        if (!dir.empty() && ::access(candidate.c_str(), X_OK) == 0) return candidate;
    }
    return "python3";
}

std::string version_text() {
    std::string text = "dpdb " DPDB_VERSION "\n";
    const std::string python = program_python("");
    try {
        const auto answer = run_bounded({python, "-c", kEngineQuery}, kQuerySeconds);
        const auto line = last_line(answer.printed);
        if (answer.status != 0) return text + python + " could not say its engine: " + line;
        return text + line;
    } catch (const std::runtime_error& error) {
        return text + error.what();
    }
}

}  // namespace dpdb::cli
