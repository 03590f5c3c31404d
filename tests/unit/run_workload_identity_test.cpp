#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "analysis/slo.hpp"
#include "cli/command.hpp"
#include "cli/run_options.hpp"
#include "run/workload_identity.hpp"
#include "test_files.hpp"

namespace {

using punctual::cli::run_options;
using punctual::run::workload_field;
using punctual::run::workload_identity;

run_options open_options() {
  run_options o;
  o.url = "http://127.0.0.1:1/path";
  o.rate = "1000";
  o.duration = "2s";
  return o;
}

punctual::cli::run_setup setup_of(const run_options& o) {
  return punctual::cli::build_run(o, {"punctual", "run"});
}

workload_identity identity_of(const run_options& o) {
  return setup_of(o).config.workload;
}

// The names of the fields in which two identities differ.
std::vector<std::string> differing(const workload_identity& a, const workload_identity& b) {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < a.fields.size() && i < b.fields.size(); ++i) {
    if (a.fields[i] != b.fields[i]) names.push_back(a.fields[i].name);
  }
  return names;
}

struct field_change {
  const char* field;  // the field the change must show in
  std::function<void(run_options&)> change;
};

// Each change moves the digest, shows in its field, and is what first_difference names.
void expect_each_change_shows(const run_options& base, const std::vector<field_change>& changes) {
  const workload_identity reference = identity_of(base);
  ASSERT_EQ(reference.digest.size(), 64U);
  for (const auto& c : changes) {
    run_options other = base;
    c.change(other);
    const workload_identity changed = identity_of(other);
    const auto names = differing(changed, reference);
    EXPECT_NE(changed.digest, reference.digest) << c.field;
    EXPECT_NE(std::find(names.begin(), names.end(), c.field), names.end())
        << c.field << ": differs in " << testing::PrintToString(names);
    const auto first = punctual::run::workload_difference(changed, reference);
    ASSERT_TRUE(first) << c.field;
    EXPECT_EQ(first->rfind(names.front() + " ", 0), 0U) << *first;
  }
}

TEST(workload_identity, each_field_of_the_open_model_moves_the_digest) {
  expect_each_change_shows(
      open_options(), {{"arrival", [](run_options& o) { o.arrival = "poisson"; }},
                       {"rate", [](run_options& o) { o.rate = "1001"; }},
                       {"stages", [](run_options& o) { o.stages = "1s:10,1s:20"; }},
                       {"target", [](run_options& o) { o.url = "http://127.0.0.1:2/path"; }},
                       {"target", [](run_options& o) { o.url = "http://127.0.0.2:1/path"; }},
                       {"http", [](run_options& o) { o.http = "2"; }},
                       {"method", [](run_options& o) { o.method = "POST"; }},
                       {"path", [](run_options& o) { o.url = "http://127.0.0.1:1/other?q=1"; }},
                       {"headers", [](run_options& o) { o.headers = {"X-Tenant: a"}; }},
                       {"headers", [](run_options& o) { o.no_keepalive = true; }},
                       {"body", [](run_options& o) { o.body = "{\"item\": 1}"; }},
                       {"body", [](run_options& o) { o.body = std::string(100, 'x'); }},
                       {"timeout", [](run_options& o) { o.timeout = "2s"; }},
                       {"expect_status", [](run_options& o) { o.expect_status = "200"; }},
                       {"retry", [](run_options& o) { o.retry.retries = 2; }},
                       {"slo_bound", [](run_options& o) { o.slo_bound = "upper"; }}});
}

TEST(workload_identity, the_retry_policy_and_its_budget_move_the_digest) {
  run_options o = open_options();
  o.retry.retries = 2;
  o.retry.budget = "10%";
  expect_each_change_shows(o, {{"retry", [](run_options& x) { x.retry.retries = 3; }},
                               {"retry", [](run_options& x) { x.retry.on = "5xx"; }},
                               {"retry", [](run_options& x) { x.retry.backoff = "exp:10ms..1s"; }},
                               {"retry", [](run_options& x) { x.retry.attempt_timeout = "1s"; }},
                               {"retry_budget", [](run_options& x) { x.retry.budget = "20%"; }}});
}

TEST(workload_identity, long_bodies_differing_anywhere_differ) {
  run_options a = open_options();
  a.body = std::string(100, 'x');
  run_options b = a;
  b.body.back() = 'y';
  EXPECT_NE(identity_of(a).digest, identity_of(b).digest);
}

TEST(workload_identity, resolve_moves_the_digest) {
  run_options o = open_options();
  o.url = "http://example.invalid:1/";
  o.resolve = {"example.invalid:1:127.0.0.1"};
  expect_each_change_shows(
      o, {{"resolve", [](run_options& x) { x.resolve = {"example.invalid:1:127.0.0.2"}; }}});
  // An entry for another host and port is not where this run connects.
  run_options unrelated = o;
  unrelated.resolve.push_back("other.invalid:1:127.0.0.3");
  EXPECT_EQ(identity_of(unrelated).digest, identity_of(o).digest);
}

TEST(workload_identity, the_closed_model_has_one_too) {
  run_options o = open_options();
  o.model = "closed";
  o.rate.clear();
  EXPECT_EQ(identity_of(o).fields.front(), (workload_field{"model", "closed"}));
  expect_each_change_shows(
      o, {{"think", [](run_options& x) { x.think = "5ms"; }},
          {"expected_interval", [](run_options& x) { x.expected_interval = "10ms"; }},
          {"model", [](run_options& x) {
             x.model = "open";
             x.rate = "10";
           }}});
}

TEST(workload_identity, files_count_by_their_contents) {
  const punctual::test::temp_dir dir;
  run_options trace = open_options();
  trace.rate.clear();
  trace.schedule_in = dir.write("a.trace", "0\n1000000\n");
  run_options mix = open_options();
  mix.requests_file = dir.write("a.yaml", "requests:\n  - {name: a, path: /a}\n");
  expect_each_change_shows(
      trace, {{"trace", [&](run_options& o) { o.schedule_in = dir.write("b.trace", "0\n2000\n"); }},
              {"trace", [&](run_options& o) {
                 o.schedule_in = dir.write("named.trace", "0 a\n1000000\n");
               }}});
  expect_each_change_shows(
      mix, {{"requests", [&](run_options& o) {
               o.requests_file =
                   dir.write("b.yaml", "requests:\n  - {name: a, path: /a, weight: 2}\n");
             }}});
  // The same contents elsewhere, written another way, are the same workload.
  run_options copy = mix;
  copy.requests_file = dir.write("copy.yaml", "# a copy\nrequests:\n- name: a\n  path: /a\n");
  EXPECT_EQ(identity_of(copy).digest, identity_of(mix).digest);
}

TEST(workload_identity, a_scenario_and_its_feeder_count_by_their_contents) {
  const punctual::test::temp_dir dir;
  const punctual::test::temp_dir other;  // the same file beside another csv
  const std::string head =
      "target: http://127.0.0.1:1\nphases:\n  - {duration: 2s, arrival_rate: 10}\n"
      "connection: pool\ncsv: {file: users.csv}\nscenarios:\n  - name: a\n    steps:\n";
  dir.write("users.csv", "user\nann\nbob\n");
  run_options o;
  o.scenario_file =
      dir.write("s.yaml", head + "      - {name: s, path: '/u/{{user}}', think: 1s}\n");
  expect_each_change_shows(
      o, {{"scenario",
           [&](run_options& x) {
             x.scenario_file =
                 dir.write("t.yaml", head + "      - {name: s, path: '/u/{{user}}', think: 2s}\n");
           }},
          {"feeder", [&](run_options& x) {
             other.write("users.csv", "user\nann\ncat\n");
             x.scenario_file = other.write(
                 "s.yaml", head + "      - {name: s, path: '/u/{{user}}', think: 1s}\n");
           }}});
}

TEST(workload_identity, what_varies_between_runs_of_one_workload_is_left_out) {
  const punctual::test::temp_dir dir;
  const run_options base = open_options();
  const std::string digest = identity_of(base).digest;
  const std::vector<std::function<void(run_options&)>> same{
      [](run_options& o) { o.seed = 2; },
      [](run_options& o) { o.duration = "3s"; },
      [](run_options& o) { o.warmup = "1s"; },
      [](run_options& o) { o.threads = 1; },
      [](run_options& o) { o.connections = 40; },
      [](run_options& o) { o.max_queue = 9; },
      [](run_options& o) { o.precision = "coarse"; },
      [](run_options& o) { o.shard = "1/4"; },
      [](run_options& o) { o.run_id = "named"; },
      [](run_options& o) { o.quiet = true; },
      [&](run_options& o) {
        o.json_out = dir.write("out.json", "");
        o.hlog_out = dir.write("out.hlog", "");
        o.html_out = dir.write("out.html", "");
        o.timeline_out = dir.write("out.csv", "");
      }};
  for (std::size_t i = 0; i < same.size(); ++i) {
    run_options o = base;
    same[i](o);
    EXPECT_EQ(identity_of(o).digest, digest) << "change " << i;
  }
}

// The digest is a pure function of the options: the same on every build and machine, so it
// is pinned here, and its encoding is the documented one (docs/report.schema.json).
TEST(workload_identity, the_encoding_is_canonical_and_stable) {
  const workload_identity a = identity_of(open_options());
  const workload_identity b = identity_of(open_options());
  EXPECT_EQ(a.fields, b.fields);
  EXPECT_EQ(a.digest, b.digest);
  EXPECT_EQ(a.digest, punctual::run::workload_digest(a.fields));
  EXPECT_EQ(a.digest, "74c5f08a5da669636501d6e69127967848d5b32807d80429134bdf9609c15862");
  EXPECT_EQ(punctual::run::workload_digest({{"model", "open"}, {"rate", "10"}}),
            punctual::run::sha256_hex("5:model4:open4:rate2:10"));
  // Lengths keep the pieces apart: moving a byte from a name to its value changes the digest.
  EXPECT_NE(punctual::run::workload_digest({{"ab", "c"}}),
            punctual::run::workload_digest({{"a", "bc"}}));
}

TEST(workload_identity, the_first_difference_is_named_on_one_line) {
  const std::vector<workload_field> reference{{"model", "open"}, {"expect_status", "200-399"}};
  using punctual::run::first_difference;
  EXPECT_FALSE(first_difference(reference, reference));
  EXPECT_EQ(first_difference({{"model", "open"}, {"expect_status", "200"}}, reference),
            "expect_status \"200\" vs \"200-399\"");
  EXPECT_EQ(first_difference({{"model", "open"}}, reference), "expect_status none vs \"200-399\"");
  EXPECT_EQ(
      first_difference({{"model", "open"}, {"expect_status", "200-399"}, {"x", "1"}}, reference),
      "x \"1\" vs none");
  EXPECT_EQ(first_difference({{"model", "a\"b\nc\x01"}}, {{"model", "open"}}),
            "model \"a\\\"b\\nc\\x01\" vs \"open\"");
}

TEST(run_identity, given_derived_from_the_start_or_random) {
  run_options o = open_options();
  o.run_id = "checkout-2026-12-01";
  EXPECT_EQ(setup_of(o).config.run_id, "checkout-2026-12-01");

  const auto soon = std::chrono::duration_cast<std::chrono::seconds>(
                        std::chrono::system_clock::now().time_since_epoch()) +
                    std::chrono::seconds(60);
  run_options shard_0 = open_options();
  shard_0.start_at = std::to_string(soon.count());
  shard_0.shard = "0/2";
  run_options shard_1 = shard_0;
  shard_1.shard = "1/2";
  shard_1.connections = 20;
  const std::string id = setup_of(shard_0).config.run_id;
  EXPECT_EQ(id.size(), 32U);
  EXPECT_EQ(setup_of(shard_1).config.run_id, id);
  run_options later = shard_0;
  later.start_at = std::to_string(soon.count() + 1);
  EXPECT_NE(setup_of(later).config.run_id, id);
  run_options stricter = shard_0;
  stricter.expect_status = "200";
  EXPECT_NE(setup_of(stricter).config.run_id, id);

  const auto alone = setup_of(open_options());
  EXPECT_EQ(alone.config.run_id.size(), 32U);
  EXPECT_NE(setup_of(open_options()).config.run_id, alone.config.run_id);
  EXPECT_TRUE(alone.notes.empty());
  run_options unnamed_shard = open_options();
  unnamed_shard.shard = "1/2";
  const auto notes = setup_of(unnamed_shard).notes;
  ASSERT_EQ(notes.size(), 1U);
  EXPECT_NE(notes[0].find("run_id is random"), std::string::npos) << notes[0];
}

TEST(run_identity, refuses_what_cannot_name_a_run) {
  for (const std::string& bad :
       std::vector<std::string>{"a b", "a/b", "a\nb", std::string(65, 'a')}) {
    run_options o = open_options();
    o.run_id = bad;
    EXPECT_THROW(setup_of(o), punctual::cli::usage_error) << bad;
  }
  run_options longest = open_options();
  longest.run_id = std::string(64, 'a');
  EXPECT_EQ(setup_of(longest).config.run_id, longest.run_id);
}

}  // namespace
