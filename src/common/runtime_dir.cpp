#include "common/runtime_dir.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <utility>

namespace dpdb {
namespace {

std::runtime_error os_error(const std::string& what) {
    return std::runtime_error(what + ": " + std::strerror(errno));
}

}  // namespace

std::string runtime_dir() {
    const char* base = std::getenv("XDG_RUNTIME_DIR");
    std::string dir = (base != nullptr && *base == '/') ? base : "/tmp";
    dir += "/dpdb-" + std::to_string(::getuid());
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
        throw os_error("cannot create " + dir);
    }
    struct stat st {};
    if (::lstat(dir.c_str(), &st) != 0) throw os_error("cannot inspect " + dir);
    if (st.st_uid != ::getuid()) {
        // Another user made it first (in a shared /tmp anyone can): say who, and the way out.
        const passwd* owner = ::getpwuid(st.st_uid);
        throw std::runtime_error(
            dir + " belongs to " +
            (owner != nullptr ? std::string(owner->pw_name) + " (uid " : std::string("uid ")) +
            std::to_string(st.st_uid) + (owner != nullptr ? ")" : "") +
            ", not to you: dpdb keeps no secret there. Point XDG_RUNTIME_DIR at a folder of "
            "your own (`mkdir -m 700 -p ~/.dpdb-run && export XDG_RUNTIME_DIR=~/.dpdb-run`), "
            "or have its owner or root remove it");
    }
    if (!S_ISDIR(st.st_mode) || (st.st_mode & 077) != 0) {
        throw std::runtime_error(dir + " is not a private directory (mode 0700): `chmod 700 " +
                                 dir + "` if it is yours");
    }
    return dir;
}

void write_private_file(const std::string& path, const std::string& content) {
    // A fresh name, created exclusively (mkstemp: O_EXCL, mode 0600): a name another user made
    // in advance in a shared folder is never opened, so the secret goes into no file of theirs.
    std::string temp = path + ".XXXXXX";
    const int fd = ::mkostemp(temp.data(), O_CLOEXEC);
    if (fd < 0) throw os_error("cannot write " + temp);
    const bool written =
        ::write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size());
    ::close(fd);
    if (!written || ::rename(temp.c_str(), path.c_str()) != 0) {
        ::unlink(temp.c_str());
        throw os_error("cannot write " + path);
    }
}

std::string read_private_file(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) throw os_error("cannot read " + path);
    struct stat st {};
    if (::fstat(fd, &st) != 0 || (st.st_mode & 077) != 0 || st.st_uid != ::getuid()) {
        ::close(fd);
        throw std::runtime_error(path + " must be owned by this user and readable by nobody else");
    }
    std::string content;
    char buffer[4096];
    ssize_t n = 0;
    while ((n = ::read(fd, buffer, sizeof(buffer))) > 0) content.append(buffer, n);
    ::close(fd);
    while (!content.empty() && (content.back() == '\n' || content.back() == '\r')) {
        content.pop_back();
    }
    return content;
}

std::string token_path_for_socket(const std::string& socket_path) {
    return socket_path + ".token";
}

std::vector<std::string> discovered_hub_sockets() {
    const std::string dir = runtime_dir();
    std::vector<std::pair<long, std::string>> found;
    if (DIR* d = ::opendir(dir.c_str())) {
        while (const dirent* entry = ::readdir(d)) {
            const std::string name = entry->d_name;
            if (name.size() < 6 || name.compare(name.size() - 5, 5, ".sock") != 0) continue;
            const std::string path = dir + "/" + name;
            struct stat st {};
            if (::lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) {
                found.emplace_back(st.st_mtime, path);
            }
        }
        ::closedir(d);
    }
    std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a > b; });
    std::vector<std::string> paths;
    paths.reserve(found.size());
    for (auto& entry : found) paths.push_back(std::move(entry.second));
    return paths;
}

void remove_run_folder(const std::string& path) {
    const std::string cache = path + "/__pycache__";
    if (DIR* d = ::opendir(cache.c_str())) {
        std::vector<std::string> names;
        while (const dirent* entry = ::readdir(d)) names.emplace_back(entry->d_name);
        ::closedir(d);
        for (const auto& name : names) {
            if (name.rfind("sitecustomize.", 0) == 0) ::unlink((cache + "/" + name).c_str());
        }
        ::rmdir(cache.c_str());
    }
    ::unlink((path + "/sitecustomize.py").c_str());
    ::rmdir(path.c_str());
}

void remove_leftovers_of_dead_runs() {
    const std::string dir = runtime_dir();
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return;
    std::vector<std::string> names;
    while (const dirent* entry = ::readdir(d)) names.emplace_back(entry->d_name);
    ::closedir(d);
    for (const auto& name : names) {
        if (name.rfind("run-", 0) != 0) continue;
        const auto digits = name.find_first_not_of("0123456789", 4);
        if (digits == 4 || digits == std::string::npos) continue;
        const std::string suffix = name.substr(digits);
        if (suffix != ".d" && suffix != ".log") continue;
        const pid_t pid = static_cast<pid_t>(std::atol(name.substr(4, digits - 4).c_str()));
        if (::kill(pid, 0) == 0 || errno == EPERM) continue;  // that run still goes on
        const std::string path = dir + "/" + name;
        if (suffix == ".d") {
            remove_run_folder(path);
        } else {
            ::unlink(path.c_str());
        }
    }
}

}  // namespace dpdb
