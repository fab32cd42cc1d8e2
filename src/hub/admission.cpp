#include "hub/admission.hpp"

#include <algorithm>
#include <utility>

namespace dpdb::hub {

// One connection's place, shared between its Slot and the lists below so that either side can
// end it first: an eviction takes it out of the lists and closes the connection, whose Slot then
// finds it no longer held.
struct Admission::Holder {
    std::weak_ptr<Counts> counts;
    std::string address;
    Clock::time_point admitted;
    std::function<void()> evict;
    std::list<std::shared_ptr<Holder>>::iterator place;  // in counts->by_address[address]
    bool held = true;
};

// Shared between the Admission and its slots, so that a slot outliving the hub (a connection
// still referenced by a pending handler) gives its place back to nothing, harmlessly.
struct Admission::Counts {
    std::size_t total = 0;
    // Oldest first.
    std::map<std::string, std::list<std::shared_ptr<Holder>>> by_address;

    void remove(Holder& holder) {
        if (!holder.held) return;
        holder.held = false;
        --total;
        const auto it = by_address.find(holder.address);
        if (it == by_address.end()) return;
        it->second.erase(holder.place);
        if (it->second.empty()) by_address.erase(it);
    }
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

Admission::Slot& Admission::Slot::operator=(Slot&& other) noexcept {
    if (this != &other) {
        release();
        holder_ = std::move(other.holder_);
    }
    return *this;
}

Admission::Slot::~Slot() {
    release();
}

void Admission::Slot::release() {
    if (!holder_) return;
    if (auto counts = holder_->counts.lock()) counts->remove(*holder_);
    holder_->evict = nullptr;
    holder_.reset();
}

bool Admission::Slot::held() const {
    return holder_ && holder_->held && !holder_->counts.expired();
}

Admission::Clock::time_point Admission::Slot::admitted() const {
    return holder_ ? holder_->admitted : Clock::now();
}

void Admission::Slot::on_evict(std::function<void()> evict) {
    if (holder_) holder_->evict = std::move(evict);
}

Admission::Admission(Log log) : Admission(std::move(log), Limits{}) {}

Admission::Admission(Log log, Limits limits)
    : log_(std::move(log)),
      limits_(limits),
      counts_(std::make_shared<Counts>()),
      window_start_(Clock::now()) {}

std::optional<Admission::Slot> Admission::admit(const std::string& address, Clock::time_point now) {
    tick(now);
    bool room = true;
    if (unauthenticated(address) >= limits_.per_address) {
        room = evict_oldest(
            address,
            std::to_string(limits_.per_address) + " unauthenticated connections open from it", now);
    } else if (counts_->total >= limits_.total) {
        const std::string why =
            std::to_string(limits_.total) + " unauthenticated connections open in all";
        const auto most = std::max_element(
            counts_->by_address.begin(), counts_->by_address.end(),
            [](const auto& a, const auto& b) { return a.second.size() < b.second.size(); });
        room = evict_oldest(most->first, why, now) || evict_oldest("", why, now);
    }
    if (!room) {
        count(refused_, refused_elsewhere_, address,
              "refusing connections from " + address +
                  " for now: every place is taken by a "
                  "connection younger than " +
                  std::to_string(limits_.grace.count()) + " ms",
              now);
        return std::nullopt;
    }
    auto holder = std::make_shared<Holder>();
    holder->counts = counts_;
    holder->address = address;
    holder->admitted = now;
    auto& queue = counts_->by_address[address];
    holder->place = queue.insert(queue.end(), holder);
    ++counts_->total;
    return Slot(std::move(holder));
}

bool Admission::evict_oldest(const std::string& address, const std::string& why,
                             Clock::time_point now) {
    std::shared_ptr<Holder> oldest;
    for (const auto& [from, queue] : counts_->by_address) {
        if (!address.empty() && from != address) continue;
        if (!queue.empty() && (!oldest || queue.front()->admitted < oldest->admitted)) {
            oldest = queue.front();
        }
    }
    if (!oldest || now - oldest->admitted < limits_.grace) return false;
    const std::string from = oldest->address;
    counts_->remove(*oldest);
    count(evicted_, evicted_elsewhere_, from,
          "closing the oldest unauthenticated connections from " + from + " to make room: " + why,
          now);
    if (auto evict = std::exchange(oldest->evict, nullptr)) evict();
    return true;
}

// Counted for the window's summary; the first of an address is told at once (within budget).
void Admission::count(std::map<std::string, std::size_t>& by_address, std::size_t& elsewhere,
                      const std::string& address, const std::string& first_line,
                      Clock::time_point now) {
    if (by_address.size() >= limits_.summarised && by_address.count(address) == 0) {
        ++elsewhere;
    } else if (by_address[address]++ == 0) {
        note(first_line, now);
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

void Admission::tick(Clock::time_point now) {
    if (now - window_start_ < limits_.window) return;
    const std::string window = seconds(limits_.window);
    for (const auto& [address, count] : evicted_) {
        log_(thousands(count) + " unauthenticated connection" + (count == 1 ? "" : "s") + " from " +
             address + " closed to make room in the last " + window);
    }
    if (evicted_elsewhere_ > 0) {
        log_(thousands(evicted_elsewhere_) + " unauthenticated connection" +
             (evicted_elsewhere_ == 1 ? "" : "s") +
             " from other addresses closed to make room in the last " + window);
    }
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
    evicted_.clear();
    evicted_elsewhere_ = 0;
    refused_.clear();
    refused_elsewhere_ = 0;
    suppressed_ = 0;
    lines_ = 0;
    window_start_ = now;
}

std::size_t Admission::unauthenticated() const {
    return counts_->total;
}

std::size_t Admission::unauthenticated(const std::string& address) const {
    const auto it = counts_->by_address.find(address);
    return it == counts_->by_address.end() ? 0 : it->second.size();
}

}  // namespace dpdb::hub
