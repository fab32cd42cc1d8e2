// The page's files (src/web/page), built into the executable (cmake/EmbedFiles.cmake).
#pragma once

#include <string_view>
#include <vector>

namespace dpdb::web {

struct EmbeddedFile {
    std::string_view path;  // "/app.js"
    std::string_view body;
};

const std::vector<EmbeddedFile>& embedded_files();  // generated

struct Asset {
    std::string_view body;
    std::string_view content_type;
};

// The file served at `path` ("/" is index.html); nullptr if none.
const Asset* find_asset(std::string_view path);

}  // namespace dpdb::web
