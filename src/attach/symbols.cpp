#include "attach/symbols.hpp"

#include <elf.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include "common/read_file.hpp"

namespace dpdb::attach {
namespace {

// The bytes of the file as the process mapped it. One deleted since (an interpreter or a libc
// that an upgrade replaced: "PATH (deleted)" in the maps) is read through the process: its
// executable through /proc/PID/exe, a library through /proc/PID/map_files (which needs root).
std::string image_of(pid_t pid, const MappedFile& file) {
    const std::string proc = "/proc/" + std::to_string(pid);
    const std::string deleted = " (deleted)";
    const bool gone =
        file.path.size() > deleted.size() &&
        file.path.compare(file.path.size() - deleted.size(), deleted.size(), deleted) == 0;
    if (!gone) return read_whole_file(proc + "/root" + file.path);
    char executable[4096];
    const ssize_t n = ::readlink((proc + "/exe").c_str(), executable, sizeof(executable) - 1);
    if (n > 0 && file.path == std::string(executable, static_cast<std::size_t>(n))) {
        return read_whole_file(proc + "/exe");
    }
    if (file.ranges.empty()) return "";
    char range[64];
    std::snprintf(range, sizeof range, "%lx-%lx",
                  static_cast<unsigned long>(file.ranges.front().first),
                  static_cast<unsigned long>(file.ranges.front().second));
    return read_whole_file(proc + "/map_files/" + range);
}

template <typename T>
bool read_at(const std::string& image, std::uint64_t offset, T* out) {
    if (offset > image.size() || image.size() - offset < sizeof(T)) return false;
    std::memcpy(out, image.data() + offset, sizeof(T));
    return true;
}

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
    const std::string image = image_of(pid, file);
    Elf64_Ehdr header{};
    if (!read_at(image, 0, &header) || std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 ||
        header.e_ident[EI_CLASS] != ELFCLASS64) {
        return std::nullopt;
    }
    // The lowest loaded address the file asks for: 0 for shared objects and PIE executables.
    std::uint64_t first_load = UINT64_MAX;
    for (unsigned i = 0; i < header.e_phnum; ++i) {
        Elf64_Phdr segment{};
        if (!read_at(image, header.e_phoff + std::uint64_t{i} * header.e_phentsize, &segment))
            return std::nullopt;
        if (segment.p_type == PT_LOAD)
            first_load = std::min<std::uint64_t>(first_load, segment.p_vaddr & ~0xfffULL);
    }
    if (first_load == UINT64_MAX) return std::nullopt;
    for (unsigned i = 0; i < header.e_shnum; ++i) {
        Elf64_Shdr section{};
        if (!read_at(image, header.e_shoff + std::uint64_t{i} * header.e_shentsize, &section))
            return std::nullopt;
        if (section.sh_type != SHT_DYNSYM || section.sh_entsize != sizeof(Elf64_Sym)) continue;
        Elf64_Shdr names{};
        if (!read_at(image, header.e_shoff + std::uint64_t{section.sh_link} * header.e_shentsize,
                     &names)) {
            return std::nullopt;
        }
        for (std::uint64_t offset = 0; offset + sizeof(Elf64_Sym) <= section.sh_size;
             offset += sizeof(Elf64_Sym)) {
            Elf64_Sym entry{};
            if (!read_at(image, section.sh_offset + offset, &entry)) break;
            if (entry.st_value == 0 || entry.st_shndx == SHN_UNDEF) continue;
            const std::uint64_t name_at = names.sh_offset + entry.st_name;
            if (name_at >= image.size()) continue;
            const char* name = image.data() + name_at;
            const auto room = image.size() - name_at;
            if (strnlen(name, room) == room || symbol != name) continue;
            // Where the file was put, less where it asked to be (0 but for fixed executables).
            return file.base - first_load + entry.st_value;
        }
    }
    return std::nullopt;
}

}  // namespace dpdb::attach
