#include "hub/admission.hpp"

#include <utility>

namespace dpdb::hub {

// Shared between the Admission and its slots, so that a slot outliving the hub (a connection
// still referenced by a pending handler) gives its place back to nothing, harmlessly.
struct Admission::Slot::Counts {
    std::size_t total = 0;
    std::map<std::string, std::size_t> by_address;
};

namespace {

// 1204 -> "1,204"
std::string thousands(std::size_t n) {
    std::string digits = std::to_string(n);
    for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(i, ",");
    return digits;
}

std::string seconds(std::chrono::seconds s) {
    return s.count() == 60 ? "minute" : std::to_string(s.count()) + " s";
}

}  // namespace

Admission::Slot::Slot(std::weak_ptr<Counts> counts, std::string address)
    : counts_(std::move(counts)), address_(std::move(address)) {}

Admission::Slot::Slot(Slot&& other) noexcept
    : counts_(std::move(other.counts_)), address_(std::exchange(other.address_, {})) {}

Admission::Slot& Admission::Slot::operator=(Slot&& other) noexcept {
    if (this != &other) {
        release();
        counts_ = std::move(other.counts_);
        address_ = std::exchange(other.address_, {});
    }
    return *this;
}

Admission::Slot::~Slot() {
    release();
}

void Admission::Slot::release() {
    if (address_.empty()) return;
    if (auto counts = counts_.lock()) {
        --counts->total;
        auto it = counts->by_address.find(address_);
        if (it != counts->by_address.end() && --it->second == 0) counts->by_address.erase(it);
    }
    address_.clear();
}

Admission::Admission(Log log) : Admission(std::move(log), Limits{}) {}

Admission::Admission(Log log, Limits limits)
    : log_(std::move(log)),
      limits_(limits),
      counts_(std::make_shared<Slot::Counts>()),
      window_start_(Clock::now()) {}

std::optional<Admission::Slot> Admission::admit(const std::string& address, Clock::time_point now) {
    tick(now);
    const std::size_t from_address = unauthenticated(address);
    if (counts_->total < limits_.total && from_address < limits_.per_address) {
        ++counts_->total;
        ++counts_->by_address[address];
        return Slot(counts_, address);
    }
    if (refused_.size() >= limits_.summarised && refused_.count(address) == 0) {
        ++refused_elsewhere_;
    } else if (refused_[address]++ == 0) {
        note(
            "refusing connections from " + address + ": " +
                (from_address >= limits_.per_address
                     ? std::to_string(from_address) + " unauthenticated connections open from it"
                     : std::to_string(counts_->total) + " unauthenticated connections open in all"),
            now);
    }
    return std::nullopt;
}

std::optional<std::string> Admission::blocked(const std::string& address, Clock::time_point now) {
    const auto it = failures_.find(address);
    if (it == failures_.end() || it->second.blocked_until <= now) return std::nullopt;
    const auto left =
        std::chrono::duration_cast<std::chrono::seconds>(it->second.blocked_until - now).count();
    return "too many failed authentications from " + address + "; try again in " +
           std::to_string(left + 1) + " s";
}

void Admission::failure(const std::string& address, const std::string& what,
                        Clock::time_point now) {
    note(what, now);
    if (address == "unix") return;  // only this user reaches the private socket
    auto& record = failures_[address];
    if (now - record.window_start > limits_.failure_window) record = Failures{now, 0, {}};
    if (++record.count == limits_.failures) {
        record.blocked_until = now + limits_.block;
        note_block("blocking " + address + " for " + std::to_string(limits_.block.count()) +
                       " s after " + std::to_string(record.count) + " failures",
                   now);
    }
}

void Admission::note(const std::string& line, Clock::time_point now) {
    tick(now);
    if (lines_ < limits_.lines_per_window) {
        ++lines_;
        log_(line);
    } else {
        ++suppressed_;
    }
}

void Admission::note_block(const std::string& line, Clock::time_point now) {
    tick(now);
    if (block_lines_ < limits_.lines_per_window) {
        ++block_lines_;
        log_(line);
    } else {
        ++suppressed_;
    }
}

void Admission::tick(Clock::time_point now) {
    if (now - window_start_ < limits_.window) return;
    const std::string window = seconds(limits_.window);
    for (const auto& [address, count] : refused_) {
        log_(thousands(count) + " refused connection" + (count == 1 ? "" : "s") + " from " +
             address + " in the last " + window);
    }
    if (refused_elsewhere_ > 0) {
        log_(thousands(refused_elsewhere_) + " refused connection" +
             (refused_elsewhere_ == 1 ? "" : "s") + " from other addresses in the last " + window);
    }
    if (suppressed_ > 0) {
        log_(thousands(suppressed_) + " more line" + (suppressed_ == 1 ? "" : "s") +
             " about unauthenticated peers left out of the log in the last " + window);
    }
    refused_.clear();
    refused_elsewhere_ = 0;
    suppressed_ = 0;
    lines_ = 0;
    block_lines_ = 0;
    window_start_ = now;
    // Expired blocks and failure windows are forgotten, so a scan from many addresses cannot
    // grow the table for good.
    for (auto it = failures_.begin(); it != failures_.end();) {
        const bool stale = it->second.blocked_until <= now &&
                           now - it->second.window_start > limits_.failure_window;
        it = stale ? failures_.erase(it) : std::next(it);
    }
}

std::size_t Admission::unauthenticated() const {
    return counts_->total;
}

std::size_t Admission::unauthenticated(const std::string& address) const {
    const auto it = counts_->by_address.find(address);
    return it == counts_->by_address.end() ? 0 : it->second;
}

}  // namespace dpdb::hub
