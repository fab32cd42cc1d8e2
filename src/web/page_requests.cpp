#include "web/page_requests.hpp"

#include <stdexcept>

#include "cli/stack_groups.hpp"
#include "web/page_socket.hpp"

namespace dpdb::web {
namespace {

using wire::Json;

void tell(const std::shared_ptr<PageSocket>& page, const Json& body) {
    if (page) page->send(std::make_shared<const std::string>(body.dump()));
}

// `sid`: the session a console asked about, for the page to end that console.
void refuse(const std::shared_ptr<PageSocket>& page, const std::string& why, std::int64_t sid = 0) {
    Json body = {{"t", "error"}, {"message", why}};
    if (sid != 0) body["sid"] = sid;
    tell(page, body);
}

// A result that came in pages: each page's arrays are the next slices of the whole's.
void join(Json& data, const Json& more) {
    if (data.is_null()) {
        data = more;
        return;
    }
    for (const auto& [key, value] : more.items()) {
        if (value.is_array() && data.contains(key) && data[key].is_array()) {
            data[key].insert(data[key].end(), value.begin(), value.end());
        } else {
            data[key] = value;
        }
    }
}

}  // namespace

void PageRequests::from_page(const std::shared_ptr<PageSocket>& page, const std::string& text) {
    Json fields = Json::parse(text, nullptr, false);
    if (!fields.is_object() || !fields.contains("t") || !fields["t"].is_string()) {
        return refuse(page, "dpdb web: a message from the page is not {\"t\": TYPE, ...}");
    }
    const auto type = fields["t"].get<std::string>();
    fields.erase("t");
    if (type == "attach" || type == "input" || type == "complete" || type == "detach") {
        return session_request(page, type, std::move(fields));
    }
    if (type == "break_add" || type == "break_clear" || type == "break_list") {
        return hub_request(page, type, std::move(fields));
    }
    if (type == "stacks" || type == "logs") {
        // The whole job's: every process's stacks, or the logpoint messages the hub kept.
        return hub_request(page, type,
                           {{"id", fields.value("id", Json())}, {"pids", Json::array()}});
    }
    refuse(page, "dpdb web: the page may not ask for " + Json(type).dump());
}

void PageRequests::session_request(const std::shared_ptr<PageSocket>& page, const std::string& type,
                                   Json fields) {
    const auto sid_field = fields.find("sid");
    const auto sid = sid_field != fields.end() && sid_field->is_number_integer()
                         ? sid_field->get<std::int64_t>()
                         : 0;
    const auto holder = holders_.find(sid);
    const bool mine = holder != holders_.end() && holder->second.lock() == page;
    if (type == "attach" && !mine) {
        const Json* session = view_.session(sid);
        if (session == nullptr) {
            return refuse(page, "no paused session " + std::to_string(sid), sid);
        }
        // Who holds a session keeps it: a terminal's `dpdb attach` is not taken over from here
        // (the hub would hand it to whoever attaches last). It is theirs to detach.
        if (holder != holders_.end() || session->value("attached", false)) {
            return refuse(page,
                          "session " + std::to_string(sid) +
                              " is held by another client: detach it there first",
                          sid);
        }
    } else if (type != "attach" && !mine) {
        return refuse(page, "not attached to session " + std::to_string(sid), sid);
    }
    wire::Message message;
    try {
        message = wire::make(type, std::move(fields));
    } catch (const std::exception& error) {
        return refuse(page, std::string("dpdb web: ") + error.what(), sid);
    }
    if (type == "attach") holders_[sid] = page;
    to_hub_(message);
}

void PageRequests::hub_request(const std::shared_ptr<PageSocket>& page, const std::string& type,
                               Json fields) {
    Json page_id = fields.value("id", Json());
    const auto id = next_id_++;
    fields["id"] = id;
    wire::Message message;
    try {
        message = wire::make(type, std::move(fields));
    } catch (const std::exception& error) {
        return tell(page, {{"t", "error"},
                           {"message", std::string("dpdb web: ") + error.what()},
                           {"id", page_id}});
    }
    pending_[id] = {page, {{"page_id", std::move(page_id)}, {"stacks", type == "stacks"}}};
    to_hub_(message);
}

void PageRequests::page_closed(const PageSocket* page) {
    for (auto it = holders_.begin(); it != holders_.end();) {
        const auto holder = it->second.lock();
        if (holder && holder.get() != page) {
            ++it;
            continue;
        }
        to_hub_(wire::make("detach", {{"sid", it->first}}));
        it = holders_.erase(it);
    }
}

void PageRequests::to_holder(std::int64_t sid, const Json& body) {
    const auto it = holders_.find(sid);
    if (it != holders_.end()) tell(it->second.lock(), body);
}

bool PageRequests::from_hub(const wire::Message& message) {
    const auto& type = message.type;
    if (type == "attached" || type == "output" || type == "prompt" || type == "completions") {
        to_holder(message.num("sid"), message.body);
        return true;
    }
    if (type == "detached") {
        const auto sid = message.num("sid");
        to_holder(sid, message.body);
        holders_.erase(sid);
        return true;
    }
    if (type == "error") {
        to_all_(message.body.dump());
        return true;
    }
    if (type != "result") return false;
    const auto it = pending_.find(message.num("id"));
    if (it == pending_.end()) return true;
    auto& [asker, answer] = it->second;
    if (message.has("data")) join(answer["data"], message["data"]);
    if (message.has("more")) return true;
    Json body = message.body;
    body["id"] = answer["page_id"];
    body["data"] = std::move(answer["data"]);
    if (answer["stacks"].get<bool>() && body["data"].contains("processes")) {
        // The same places once, with how many processes stand there (as `dpdb stacks` shows a
        // large job).
        body["data"]["grouped"] = cli::grouped_stacks(body["data"]["processes"]);
    }
    tell(asker.lock(), body);
    pending_.erase(it);
    return true;
}

}  // namespace dpdb::web
