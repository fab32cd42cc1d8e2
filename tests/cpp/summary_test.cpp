// The job summary (hub/summary.hpp) and the registry indexes it reads through.
#include "hub/summary.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "hub/pages.hpp"

namespace {

using dpdb::hub::Registry;
using dpdb::hub::span;
using dpdb::hub::summarize;
using dpdb::hub::SummaryLimits;
using dpdb::wire::Json;

// A training job: `per_host` ranks per host, a loader every 100 ranks.
void add_job(Registry& registry, int processes, int per_host = 8, std::uint64_t first = 1) {
    for (int i = 0; i < processes; ++i) {
        char host[32];
        std::snprintf(host, sizeof(host), "node%02d", i / per_host);
        registry.add_process(first + i, {{"pid", 1000 + i},
                                         {"host", host},
                                         {"argv", {"python", "train.py"}},
                                         {"tags",
                                          {{"RANK", std::to_string(i)},
                                           {"LOCAL_RANK", std::to_string(i % per_host)},
                                           {"WORLD_SIZE", std::to_string(processes)},
                                           {"role", i % 100 == 0 ? "loader" : "trainer"}}}});
    }
}

const Json* find_group(const Json& summary, const std::string& host, const std::string& state,
                       const std::string& role) {
    for (const auto& g : summary["groups"]) {
        if (g["host"] == host && g["state"] == state && g["tags"].value("role", "") == role) {
            return &g;
        }
    }
    return nullptr;
}

TEST(Span, IntegersBecomeRanges) {
    EXPECT_EQ(span({"3", "1", "2", "7", "5", "6", "10"}, 80), "1-3,5-7,10");
    EXPECT_EQ(span({"0"}, 80), "0");
    EXPECT_EQ(span({"9", "10", "11"}, 80), "9-11");
    EXPECT_EQ(span({"4", "4", "4"}, 80), "4");
}

TEST(Span, NamesWithANumberRangeUnderTheirPrefix) {
    EXPECT_EQ(span({"node03", "node01", "node02", "node07"}, 80), "node[01-03,07]");
    EXPECT_EQ(span({"gpu-a7"}, 80), "gpu-a7");
    EXPECT_EQ(span({"worker", "loader", "node1", "node2"}, 80), "loader,node[1-2],worker");
    // Zero-padded names and natural numbers of the same width are one series.
    EXPECT_EQ(span({"node0998", "node0999", "node1000", "node1001"}, 80), "node[0998-1001]");
}

TEST(Span, ALongSpanIsCutAfterAWholeValueAndCountsThem) {
    std::vector<std::string> evens;
    for (int i = 0; i < 1000; i += 2) evens.push_back(std::to_string(i));
    const auto text = span(evens, 30);
    EXPECT_LE(text.size(), 30u + 20u);
    EXPECT_EQ(text.rfind("0,2,4,6,", 0), 0u) << text;
    EXPECT_NE(text.find("… (500 values)"), std::string::npos) << text;
}

TEST(Summary, AnEmptyHub) {
    Registry registry;
    const Json summary = summarize(registry);
    EXPECT_EQ(summary["processes"], 0);
    EXPECT_EQ(summary["sessions"], 0);
    EXPECT_EQ(summary["hosts"], 0);
    EXPECT_TRUE(summary["groups"].empty());
    EXPECT_TRUE(summary["places"].empty());
    EXPECT_TRUE(summary["paused"].empty());
}

TEST(Summary, GroupsByHostSharedTagsAndStateWithRanksAsSpans) {
    Registry registry;
    add_job(registry, 16);  // node00 and node01, a loader at rank 0
    registry.open_session(2, 1, {{"file", "/job/train.py"}, {"line", 42}, {"function", "step"}});
    registry.open_session(3, 1, {{"file", "/job/train.py"}, {"line", 42}, {"function", "step"}});
    const Json summary = summarize(registry);
    EXPECT_EQ(summary["processes"], 16);
    EXPECT_EQ(summary["sessions"], 2);
    EXPECT_EQ(summary["hosts"], 2);
    // node00: the loader, two paused trainers, five running; node01: eight running trainers.
    EXPECT_EQ(summary["group_count"], 4);
    const Json* running = find_group(summary, "node00", "running", "trainer");
    ASSERT_NE(running, nullptr) << summary.dump(1);
    EXPECT_EQ((*running)["processes"], 5);
    EXPECT_EQ((*running)["spans"]["RANK"], "3-7");
    EXPECT_EQ((*running)["spans"]["LOCAL_RANK"], "3-7");
    // WORLD_SIZE has one value: it groups, as the role does; ranks never do.
    EXPECT_EQ((*running)["tags"], Json({{"WORLD_SIZE", "16"}, {"role", "trainer"}}));
    const Json* paused = find_group(summary, "node00", "paused", "trainer");
    ASSERT_NE(paused, nullptr);
    EXPECT_EQ((*paused)["processes"], 2);
    EXPECT_EQ((*paused)["sessions"], 2);
    EXPECT_EQ((*paused)["spans"]["RANK"], "1-2");
    const Json* loader = find_group(summary, "node00", "running", "loader");
    ASSERT_NE(loader, nullptr);
    EXPECT_EQ((*loader)["processes"], 1);
    const Json* other = find_group(summary, "node01", "running", "trainer");
    ASSERT_NE(other, nullptr);
    EXPECT_EQ((*other)["spans"]["RANK"], "8-15");
    EXPECT_EQ((*other)["hosts"], 1);
    // Every process is in exactly one group.
    int total = 0;
    for (const auto& g : summary["groups"]) total += g["processes"].get<int>();
    EXPECT_EQ(total, 16);
}

TEST(Summary, ATagWithManyValuesDoesNotGroup) {
    Registry registry;
    for (int i = 0; i < 20; ++i) {
        registry.add_process(i + 1, {{"pid", i}, {"host", "h"}, {"tags", {{"shard", i}}}});
    }
    const Json summary = summarize(registry);
    ASSERT_EQ(summary["groups"].size(), 1u);
    EXPECT_EQ(summary["groups"][0]["spans"]["shard"], "0-19");
    EXPECT_TRUE(summary["groups"][0]["tags"].empty());
}

TEST(Summary, ManyHostsAreSpannedWithinEachGroup) {
    Registry registry;
    add_job(registry, 1000);  // 125 hosts
    const Json summary = summarize(registry);
    EXPECT_EQ(summary["hosts"], 125);
    // One row per role and state, not per host.
    EXPECT_EQ(summary["group_count"], 2);
    const Json* trainers = find_group(summary, "node[00-99],node[100-124]", "running", "trainer");
    ASSERT_NE(trainers, nullptr) << summary.dump(1);
    EXPECT_EQ((*trainers)["hosts"], 125);
    EXPECT_EQ((*trainers)["processes"], 990);
}

TEST(Summary, BeyondTheLimitTheLargestGroupsAreKept) {
    Registry registry;
    // Distinct roles on one host: one group each, and one big group.
    for (int i = 0; i < 30; ++i) {
        registry.add_process(i + 1, {{"pid", i}, {"host", "h"}, {"tags", {{"role", i % 6}}}});
    }
    for (int i = 30; i < 40; ++i) registry.add_process(i + 1, {{"pid", i}, {"host", "h"}});
    SummaryLimits limits;
    limits.groups = 3;
    limits.grouping_values = 10;
    const Json summary = summarize(registry, limits);
    EXPECT_EQ(summary["group_count"], 7);
    ASSERT_EQ(summary["groups"].size(), 3u);
    // The untagged ten come first in key order (no tags).
    EXPECT_EQ(summary["groups"][0]["processes"], 10);
}

TEST(Summary, PlacesAreCountedAndTheOldestSessionsShownUpToTheLimit) {
    Registry registry;
    add_job(registry, 40, 40);
    for (int i = 0; i < 30; ++i) {
        const int line = i < 20 ? 10 : 20;
        registry.open_session(i + 1, 1,
                              {{"file", "/job/train.py"}, {"line", line}, {"function", "f"}});
    }
    registry.session(3)->client = 99;  // attached
    SummaryLimits limits;
    limits.paused = 5;
    const Json summary = summarize(registry, limits);
    EXPECT_EQ(summary["sessions"], 30);
    EXPECT_EQ(summary["attached"], 1);
    ASSERT_EQ(summary["places"].size(), 2u);
    EXPECT_EQ(summary["places"][0], Json({{"file", "/job/train.py"},
                                          {"line", 10},
                                          {"function", "f"},
                                          {"sessions", 20},
                                          {"attached", 1}}));
    EXPECT_EQ(summary["places"][1]["sessions"], 10);
    ASSERT_EQ(summary["paused"].size(), 5u);
    EXPECT_EQ(summary["paused"][0]["sid"], 1);
    EXPECT_EQ(summary["paused"][4]["sid"], 5);
    EXPECT_EQ(summary["paused"][0]["pid"], 1000);  // with its process's details
}

TEST(Summary, StaysSmallWhateverTheProcessesCarry) {
    Registry registry;
    const std::string big(200 * 1024, 'x');
    for (int i = 0; i < 100; ++i) {
        registry.add_process(i + 1, {{"pid", i},
                                     {"host", big + std::to_string(i)},
                                     {"argv", {big}},
                                     {"tags", {{big, big}, {"RANK", i}}}});
        registry.open_session(i + 1, 1, {{"file", big}, {"line", 1}, {"function", big}});
    }
    const Json summary = summarize(registry);
    EXPECT_LT(dpdb::hub::encoded_size(summary), std::size_t{200} * 1024);
    EXPECT_EQ(summary["processes"], 100);
}

TEST(Registry, IndexesFollowSessionsAndPids) {
    Registry registry;
    registry.add_process(1, {{"pid", 10}});
    registry.add_process(2, {{"pid", 20}});
    EXPECT_EQ(registry.connection_of_pid(10), 1u);
    EXPECT_EQ(registry.connection_of_pid(30), 0u);
    // A process that says it is another pid now (an update) is found under the new one only.
    registry.add_process(2, {{"pid", 30}});
    EXPECT_EQ(registry.connection_of_pid(20), 0u);
    EXPECT_EQ(registry.connection_of_pid(30), 2u);
    // Two hosts may share a pid: the first to connect is found, then the other once it leaves.
    registry.add_process(3, {{"pid", 10}});
    EXPECT_EQ(registry.connection_of_pid(10), 1u);
    registry.remove_process(1);
    EXPECT_EQ(registry.connection_of_pid(10), 3u);

    const auto& a = registry.open_session(2, 7, Json::object());
    const auto& b = registry.open_session(2, 8, Json::object());
    const auto a_id = a.id, b_id = b.id;
    EXPECT_EQ(registry.session_of_agent(2, 7)->id, a_id);
    EXPECT_EQ(registry.session_of_agent(2, 9), nullptr);
    EXPECT_EQ(registry.sessions_of(2), (std::vector<std::int64_t>{a_id, b_id}));
    EXPECT_EQ(registry.session_count(2), 2u);
    EXPECT_EQ(registry.describe(*registry.process(2))["sessions"], Json::array({a_id, b_id}));
    registry.close_session(a_id);
    EXPECT_EQ(registry.session_of_agent(2, 7), nullptr);
    EXPECT_EQ(registry.sessions_of(2), (std::vector<std::int64_t>{b_id}));
    registry.close_session(b_id);
    EXPECT_EQ(registry.session_count(2), 0u);
    EXPECT_TRUE(registry.sessions_of(3).empty());
}

TEST(Registry, AnEncodedProcessIsItsDescription) {
    Registry registry;
    registry.add_process(1, {{"pid", 10}, {"argv", {"python", "a.py"}}, {"tags", {{"RANK", "0"}}}});
    registry.add_process(2, Json::object());
    // An agent that sends a "sessions" field of its own gets the hub's in its place.
    registry.add_process(3, {{"pid", 30}, {"sessions", "mine"}});
    registry.open_session(1, 1, Json::object());
    registry.open_session(1, 2, Json::object());
    registry.open_session(3, 1, Json::object());
    for (std::uint64_t connection : {1, 2, 3}) {
        const auto& process = *registry.process(connection);
        EXPECT_EQ(Json::parse(registry.encoded(process)), registry.describe(process))
            << registry.encoded(process);
    }
    EXPECT_EQ(Json::parse(registry.encoded(*registry.process(1)))["sessions"], Json({1, 2}));
    EXPECT_EQ(Json::parse(registry.encoded(*registry.process(3)))["sessions"], Json({3}));
    EXPECT_EQ(registry.process(1)->host, "");
    EXPECT_EQ(registry.process(1)->tags,
              (std::vector<std::pair<std::string, std::string>>{{"RANK", "0"}}));
}

}  // namespace
