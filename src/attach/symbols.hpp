// Where a function of a shared object lives in another process: its mappings (/proc/PID/maps)
// and the dynamic symbol table (.dynsym) of the file on disk. Needs no debug symbols: only what a
// library or an executable exports.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dpdb::attach {

struct MappedFile {
    std::string path;         // as the process sees it
    std::uintptr_t base = 0;  // where its first byte (offset 0) is mapped
    std::vector<std::pair<std::uintptr_t, std::uintptr_t>> ranges;  // every mapping of it

    bool contains(std::uintptr_t address) const;
};

// The files mapped into the process, in the order of their first mapping.
std::vector<MappedFile> mapped_files(pid_t pid);

// The first mapped file whose name (last path component) starts with `prefix`.
const MappedFile* find_mapped(const std::vector<MappedFile>& files, const std::string& prefix);

// The address of an exported symbol of a mapped file in the process, or nothing. The file is
// read through /proc/PID/root, so a process in a container is read from its own file system;
// a file deleted since it was mapped, through the process's own handle on it.
std::optional<std::uintptr_t> symbol_address(pid_t pid, const MappedFile& file,
                                             const std::string& symbol);

}  // namespace dpdb::attach
