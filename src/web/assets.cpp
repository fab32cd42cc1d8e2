#include "web/assets.hpp"

#include <map>
#include <string>

namespace dpdb::web {
namespace {

std::string_view content_type(std::string_view path) {
    const auto dot = path.rfind('.');
    const auto extension = dot == std::string_view::npos ? std::string_view() : path.substr(dot);
    if (extension == ".html") return "text/html; charset=utf-8";
    if (extension == ".js" || extension == ".mjs") return "text/javascript; charset=utf-8";
    if (extension == ".css") return "text/css; charset=utf-8";
    if (extension == ".png") return "image/png";
    if (extension == ".txt") return "text/plain; charset=utf-8";
    return "application/octet-stream";
}

}  // namespace

const Asset* find_asset(std::string_view path) {
    static const auto assets = [] {
        std::map<std::string, Asset, std::less<>> by_path;
        for (const auto& file : embedded_files()) {
            by_path[std::string(file.path)] = {file.body, content_type(file.path)};
        }
        if (const auto index = by_path.find("/index.html"); index != by_path.end()) {
            by_path["/"] = index->second;
        }
        return by_path;
    }();
    const auto it = assets.find(path);
    return it == assets.end() ? nullptr : &it->second;
}

}  // namespace dpdb::web
