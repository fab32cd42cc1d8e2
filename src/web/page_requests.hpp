// What a page asks of the job, passed to the hub on `dpdb web`'s one connection, and the hub's
// answers passed back to the page that asked: a console per paused session (attach, lines,
// completion, detach, as `dpdb attach` speaks them), global breakpoints and logpoints, stacks,
// the logpoint messages kept so far.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "web/job_view.hpp"
#include "wire/message.hpp"

namespace dpdb::web {

class PageSocket;

class PageRequests {
  public:
    // `to_hub` sends on the hub's connection; `to_all` tells every page (the hub's errors,
    // which name no request).
    PageRequests(const JobView& view, std::function<void(const wire::Message&)> to_hub,
                 std::function<void(const std::string&)> to_all)
        : view_(view), to_hub_(std::move(to_hub)), to_all_(std::move(to_all)) {}

    // One message from a page; what it may not ask is answered {"t": "error", "message"}.
    void from_page(const std::shared_ptr<PageSocket>& page, const std::string& text);
    // A page went away: the sessions its consoles held are left paused, for others to take.
    void page_closed(const PageSocket* page);
    // Passes on a hub's message meant for one page; false if it was none of theirs.
    bool from_hub(const wire::Message& message);

  private:
    void session_request(const std::shared_ptr<PageSocket>& page, const std::string& type,
                         wire::Json fields);
    void hub_request(const std::shared_ptr<PageSocket>& page, const std::string& type,
                     wire::Json fields);
    void to_holder(std::int64_t sid, const wire::Json& body);

    // A request the hub has not answered in full: who asked, and {"page_id": the page's own id,
    // "stacks": whether it is for stacks (grouped too), "data": the answer's pages so far, their
    // arrays joined}.
    using Pending = std::pair<std::weak_ptr<PageSocket>, wire::Json>;

    const JobView& view_;
    std::function<void(const wire::Message&)> to_hub_;
    std::function<void(const std::string&)> to_all_;
    std::map<std::int64_t, std::weak_ptr<PageSocket>> holders_;  // by sid: the page attached
    std::map<std::int64_t, Pending> pending_;                    // by the id the hub was asked
    std::int64_t next_id_ = 1000;                                // the listing's id is below
};

}  // namespace dpdb::web
