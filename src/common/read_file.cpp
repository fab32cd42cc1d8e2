#include "common/read_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace dpdb {

std::string read_whole_file(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return "";
    std::string text;
    char buffer[8192];
    for (;;) {
        const ssize_t got = ::read(fd, buffer, sizeof buffer);
        if (got > 0) {
            text.append(buffer, static_cast<std::size_t>(got));
        } else if (got == 0) {
            break;
        } else if (errno != EINTR) {
            text.clear();
            break;
        }
    }
    ::close(fd);
    return text;
}

std::vector<std::string> command_line_of(long pid) {
    const std::string all = read_whole_file("/proc/" + std::to_string(pid) + "/cmdline");
    std::vector<std::string> argv;
    std::size_t start = 0;
    while (start < all.size()) {
        auto end = all.find('\0', start);
        if (end == std::string::npos) end = all.size();
        argv.push_back(all.substr(start, end - start));
        start = end + 1;
    }
    return argv;
}

}  // namespace dpdb
