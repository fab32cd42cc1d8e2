#include "cli/state_dir.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <stdexcept>

#include "wire/tls.hpp"

namespace dpdb::cli {

std::string default_state_dir() {
    if (const char* state = std::getenv("XDG_STATE_HOME"); state != nullptr && *state == '/') {
        return std::string(state) + "/dpdb/hub";
    }
    const char* home = std::getenv("HOME");
    if (home == nullptr || *home != '/') throw std::runtime_error("set HOME or --state-dir");
    return std::string(home) + "/.local/state/dpdb/hub";
}

void make_private_dir(const std::string& dir) {
    for (std::size_t i = 1; i <= dir.size(); ++i) {
        if (i == dir.size() || dir[i] == '/') ::mkdir(dir.substr(0, i).c_str(), 0700);
    }
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::getuid()) {
        throw std::runtime_error("cannot use " + dir + " as the hub's state directory");
    }
    ::chmod(dir.c_str(), 0700);
}

wire::CertificateFiles own_certificate(const std::string& state_dir, const std::string& name,
                                       const std::string& common_name) {
    wire::CertificateFiles files{state_dir + "/" + name + "-cert.pem",
                                 state_dir + "/" + name + "-key.pem"};
    if (::access(files.cert.c_str(), R_OK) != 0) {
        wire::generate_self_signed(files.cert, files.key, common_name);
    }
    return files;
}

}  // namespace dpdb::cli
