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

namespace {

#ifdef DPDB_PYTHON_VERSION
constexpr const char* kBuiltFor = DPDB_PYTHON_VERSION;
#else
constexpr const char* kBuiltFor = "";  // a build without the Python parts
#endif

bool executable(const std::string& path) {
    return ::access(path.c_str(), X_OK) == 0;
}

}  // namespace

std::string on_path(const std::string& name) {
    const char* path = std::getenv("PATH");
    std::string folders = path != nullptr ? path : "";
    std::size_t begin = 0;
    while (begin <= folders.size()) {
        std::size_t end = folders.find(':', begin);
        if (end == std::string::npos) end = folders.size();
        const std::string folder = end > begin ? folders.substr(begin, end - begin) : ".";
        if (executable(folder + "/" + name)) return folder + "/" + name;
        begin = end + 1;
    }
    return "";
}

namespace {

// The site-packages folder of an installation whose scripts went to PREFIX/bin (pip's --user
// scheme, a --prefix, a system prefix): PREFIX/lib/pythonX.Y/{site,dist}-packages/dpdb.
std::string package_under(const std::string& prefix, const std::string& python_name) {
    for (const char* folder : {"site-packages", "dist-packages"}) {
        const std::string site = prefix + "/lib/" + python_name + "/" + folder;
        if (::access((site + "/dpdb/__init__.py").c_str(), R_OK) == 0) return site;
    }
    return "";
}

}  // namespace

Interpreter program_interpreter(const std::string& requested) {
    if (!requested.empty()) return {requested, "named by --python"};
    if (const char* env = std::getenv("DPDB_PYTHON"); env != nullptr && *env != '\0') {
        return {env, "named by DPDB_PYTHON (which `python -m dpdb` sets to itself)"};
    }
    const std::string self = this_executable();
    const std::string dir = self.substr(0, self.rfind('/'));
    if (*kBuiltFor == '\0') {
        for (const char* name : {"python3", "python"}) {
            if (executable(dir + "/" + name)) return {dir + "/" + name, "beside dpdb"};
        }
        return {"python3", "python3 on PATH: this dpdb was built without Python"};
    }
    // Only the version dpdb was built for imports its agent: an unversioned python3 beside it or
    // on PATH may be another (a system's python3 beside a `pip install --user` of a newer one).
    const std::string name = std::string("python") + kBuiltFor;
    if (executable(dir + "/" + name)) {
        return {dir + "/" + name, "the " + name + " beside dpdb (its venv or Python prefix)"};
    }
    const std::string prefix = dir.substr(0, dir.rfind('/'));
    const std::string site = package_under(prefix, name);
    const std::string where = site.empty() ? "" : ", whose site-packages (" + site + ") holds dpdb";
    if (const std::string found = on_path(name); !found.empty()) {
        return {found,
                "the " + name + " on PATH" + where + "; dpdb is built for Python " + kBuiltFor};
    }
    throw std::runtime_error("dpdb is built for Python " + std::string(kBuiltFor) +
                             " and finds no " + name + " beside it (" + dir + ") or on PATH" +
                             where + ": name one with --python or DPDB_PYTHON");
}

std::string program_python(const std::string& requested) {
    return program_interpreter(requested).path;
}

std::string version_text() {
    std::string text = "dpdb " DPDB_VERSION;
    if (*kBuiltFor != '\0') text += std::string(" (built for Python ") + kBuiltFor + ")";
    text += "\n";
    try {
        const auto python = program_interpreter("");
        const std::string why = "\nprograms run with it: " + python.why;
        const auto answer = run_bounded({python.path, "-c", kEngineQuery}, kQuerySeconds);
        const auto line = last_line(answer.printed);
        if (answer.status != 0) {
            return text + python.path + " could not say its engine: " + line + why;
        }
        return text + line + why;
    } catch (const std::runtime_error& error) {
        return text + error.what();
    }
}

}  // namespace dpdb::cli
