#include "attach/symbols.hpp"

#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

namespace dpdb::attach {
namespace {

// The file as the process mapped it, open for reading (or -1). One deleted since (an interpreter
// or a libc that an upgrade replaced: "PATH (deleted)" in the maps) is opened through the
// process: its executable through /proc/PID/exe, a library through /proc/PID/map_files (which
// needs root).
int open_image(pid_t pid, const MappedFile& file) {
    const std::string proc = "/proc/" + std::to_string(pid);
    const std::string deleted = " (deleted)";
    const bool gone =
        file.path.size() > deleted.size() &&
        file.path.compare(file.path.size() - deleted.size(), deleted.size(), deleted) == 0;
    if (!gone) return ::open((proc + "/root" + file.path).c_str(), O_RDONLY | O_CLOEXEC);
    char executable[4096];
    const ssize_t n = ::readlink((proc + "/exe").c_str(), executable, sizeof(executable) - 1);
    if (n > 0 && file.path == std::string(executable, static_cast<std::size_t>(n))) {
        return ::open((proc + "/exe").c_str(), O_RDONLY | O_CLOEXEC);
    }
    if (file.ranges.empty()) return -1;
    char range[64];
    std::snprintf(range, sizeof range, "%lx-%lx",
                  static_cast<unsigned long>(file.ranges.front().first),
                  static_cast<unsigned long>(file.ranges.front().second));
    return ::open((proc + "/map_files/" + range).c_str(), O_RDONLY | O_CLOEXEC);
}

// More than any real library's dynamic symbols or their names (libpython's: under 1 MB).
constexpr std::uint64_t kMaxDynamicSymbols = 64 << 20;

// Only the parts of the image the lookup needs are read (headers, .dynsym, its names): a
// libpython is 16 MB, its dynamic symbols a few hundred KB.
class Image {
  public:
    Image(pid_t pid, const MappedFile& file) : fd_(open_image(pid, file)) {}
    ~Image() {
        if (fd_ >= 0) ::close(fd_);
    }
    Image(const Image&) = delete;
    Image& operator=(const Image&) = delete;

    template <typename T>
    bool read_at(std::uint64_t offset, T* out) const {
        return fd_ >= 0 && ::pread(fd_, out, sizeof(T), static_cast<off_t>(offset)) ==
                               static_cast<ssize_t>(sizeof(T));
    }

    std::string bytes(std::uint64_t offset, std::uint64_t size) const {
        std::string out(size, '\0');
        std::uint64_t done = 0;
        while (fd_ >= 0 && done < size) {
            const ssize_t got =
                ::pread(fd_, out.data() + done, size - done, static_cast<off_t>(offset + done));
            if (got <= 0) break;
            done += static_cast<std::uint64_t>(got);
        }
        out.resize(done);
        return out;
    }

  private:
    int fd_;
};

}  // namespace

bool MappedFile::contains(std::uintptr_t address) const {
    return std::any_of(ranges.begin(), ranges.end(), [address](const auto& range) {
        return address >= range.first && address < range.second;
    });
}

std::vector<MappedFile> mapped_files(pid_t pid) {
    std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
    std::vector<MappedFile> files;
    std::string line;
    while (std::getline(maps, line)) {
        // start-end perms offset dev inode path
        std::istringstream fields(line);
        std::string range, perms, offset, device, inode, path;
        fields >> range >> perms >> offset >> device >> inode;
        std::getline(fields >> std::ws, path);
        if (path.empty() || path[0] != '/') continue;
        const auto dash = range.find('-');
        const auto start = std::stoull(range.substr(0, dash), nullptr, 16);
        const auto end = std::stoull(range.substr(dash + 1), nullptr, 16);
        const auto at = std::stoull(offset, nullptr, 16);
        auto it = std::find_if(files.begin(), files.end(),
                               [&](const MappedFile& f) { return f.path == path; });
        if (it == files.end()) {
            files.push_back(MappedFile{path, 0, {}});
            it = std::prev(files.end());
        }
        it->ranges.emplace_back(start, end);
        if (at == 0 && (it->base == 0 || start < it->base)) it->base = start;
    }
    return files;
}

const MappedFile* find_mapped(const std::vector<MappedFile>& files, const std::string& prefix) {
    for (const auto& file : files) {
        const auto name = file.path.substr(file.path.rfind('/') + 1);
        if (name.rfind(prefix, 0) == 0) return &file;
    }
    return nullptr;
}

std::optional<std::uintptr_t> symbol_address(pid_t pid, const MappedFile& file,
                                             const std::string& symbol) {
    const Image image(pid, file);
    Elf64_Ehdr header{};
    if (!image.read_at(0, &header) || std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 ||
        header.e_ident[EI_CLASS] != ELFCLASS64) {
        return std::nullopt;
    }
    // The lowest loaded address the file asks for: 0 for shared objects and PIE executables.
    std::uint64_t first_load = UINT64_MAX;
    for (unsigned i = 0; i < header.e_phnum; ++i) {
        Elf64_Phdr segment{};
        if (!image.read_at(header.e_phoff + std::uint64_t{i} * header.e_phentsize, &segment))
            return std::nullopt;
        if (segment.p_type == PT_LOAD)
            first_load = std::min<std::uint64_t>(first_load, segment.p_vaddr & ~0xfffULL);
    }
    if (first_load == UINT64_MAX) return std::nullopt;
    for (unsigned i = 0; i < header.e_shnum; ++i) {
        Elf64_Shdr section{};
        if (!image.read_at(header.e_shoff + std::uint64_t{i} * header.e_shentsize, &section))
            return std::nullopt;
        if (section.sh_type != SHT_DYNSYM || section.sh_entsize != sizeof(Elf64_Sym) ||
            section.sh_size > kMaxDynamicSymbols) {
            continue;
        }
        Elf64_Shdr names_section{};
        if (!image.read_at(header.e_shoff + std::uint64_t{section.sh_link} * header.e_shentsize,
                           &names_section)) {
            return std::nullopt;
        }
        const std::string entries = image.bytes(section.sh_offset, section.sh_size);
        if (names_section.sh_size > kMaxDynamicSymbols) return std::nullopt;
        const std::string names = image.bytes(names_section.sh_offset, names_section.sh_size);
        for (std::uint64_t offset = 0; offset + sizeof(Elf64_Sym) <= entries.size();
             offset += sizeof(Elf64_Sym)) {
            Elf64_Sym entry{};
            std::memcpy(&entry, entries.data() + offset, sizeof entry);
            if (entry.st_value == 0 || entry.st_shndx == SHN_UNDEF) continue;
            if (entry.st_name >= names.size()) continue;
            const char* name = names.data() + entry.st_name;
            const auto room = names.size() - entry.st_name;
            if (strnlen(name, room) == room || symbol != name) continue;
            // Where the file was put, less where it asked to be (0 but for fixed executables).
            return file.base - first_load + entry.st_value;
        }
    }
    return std::nullopt;
}

}  // namespace dpdb::attach
