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

}  // namespace dpdb
