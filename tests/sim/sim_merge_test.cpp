// `punctual merge` of a distributed run's shards, against the truth. N shards (1, 2, 3 and 7)
// of one plan run as pods would, `--shard I/N --start-at T`, against a server that stalls
// 500 ms inside the window; each is simulated, its JSON and .hlog written to a scratch
// directory, and the binary's own entry (cli::run_app, `punctual merge ...`) merges them in
// this process. Checked exactly: each shard's slice and start; the merged counts against the
// 1-process plan; the merged percentiles against every request's truth (its answer's last
// byte's arrival, from the network's log, less its intended instant, from the plan); merge
// --slo's exit codes, with N = 1 giving the shard's own verdict; the merged start_lag check as
// the worst shard's, one pod late by a descheduled vCPU; and the merge's refusals, each exit 2
// with one line. That merged shards add up to their sum and to the single run is
// sim_shards_test's; real processes and clocks are test_k8s_local's and test_shard_netns'.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "analysis/interval_series.hpp"
#include "checks.hpp"
#include "cli/app.hpp"
#include "cli/command.hpp"
#include "cli/run_command.hpp"
#include "cli_run.hpp"
#include "punctual/histogram/codec.hpp"
#include "punctual/histogram/interval_log.hpp"
#include "record/view_set.hpp"
#include "schedule/schedule.hpp"
#include "sim_seeds.hpp"

namespace punctual::sim::merge_cases {
namespace {

using std::chrono::milliseconds;
using json = nlohmann::ordered_json;
namespace fs = std::filesystem;

// From the schedule's start (T): the stall lies well inside the 2 s window.
constexpr nanoseconds stall_from = milliseconds(700);
constexpr nanoseconds stall_until = milliseconds(1200);
constexpr const char* slo_pass = "p99<=2s";
constexpr const char* slo_fail = "p90<=50ms";
constexpr nanoseconds max_start_lag = milliseconds(100);
const std::vector<std::string> plan_args{"-R",     "1000", "--arrival", "poisson",
                                         "--seed", "7",    "-d",        "2s"};
const std::vector<std::string> pod_args{"-t1", "-c4", "--slo", slo_pass, "--slo", slo_fail};

// The --start-at every pod shares: 50 ms after the virtual clock's first instant, so a pod
// that opens its connections at once is on time.
nanoseconds start_at() {
  return world(1).clock().unix_now() + milliseconds(50);
}

surroundings stalling_server() {
  surroundings a;
  a.server.stalls = {{stall_from, stall_until}};
  return a;
}

// A pod: `punctual run ARGS` with --start-at `at`.
cli_result run_pod(const std::vector<std::string>& args, surroundings around, nanoseconds at) {
  around.start_at = at;
  return run_cli(args, around);
}

// Where the shards' reports go, removed with the program.
const fs::path& scratch() {
  static const struct dir {
    fs::path path = fs::temp_directory_path() / fmt::format("sim-merge-{}", getpid());
    dir() { fs::create_directories(path); }
    ~dir() { fs::remove_all(path); }
  } d;
  return d.path;
}

// The N pods of one run, and their files as --out-dir names them (each .hlog beside its JSON).
struct group {
  std::uint32_t n = 0;
  std::vector<cli_result> pods;
  std::vector<std::string> files;
};

// `tweak(i, around)` changes pod i's surroundings (a pause, say); `dir` names its folder.
template <typename Tweak>
group run_group(std::uint32_t n, const std::string& dir, const std::vector<std::string>& plan,
                nanoseconds at, Tweak tweak) {
  group g;
  g.n = n;
  fs::create_directories(scratch() / dir);
  for (std::uint32_t i = 0; i < n; ++i) {
    std::vector<std::string> args = plan;
    args.insert(args.end(), pod_args.begin(), pod_args.end());
    args.insert(args.end(), {"--shard", fmt::format("{}/{}", i, n), "http://127.0.0.1:8080/"});
    surroundings around = stalling_server();
    tweak(i, around);
    g.pods.push_back(run_pod(args, around, at));
    const fs::path json_path = scratch() / dir / fmt::format("shard-{}-of-{}.json", i, n);
    std::ofstream(json_path) << g.pods.back().json;
    std::ofstream(fs::path(json_path).replace_extension(".hlog")) << g.pods.back().hlog;
    g.files.push_back(json_path.string());
  }
  return g;
}

group run_group(std::uint32_t n, const std::string& dir) {
  return run_group(n, dir, plan_args, start_at(), [](std::uint32_t, surroundings&) {});
}

// The on-time groups, made once for the cases below.
const group& on_time(std::uint32_t n) {
  static std::map<std::uint32_t, group> groups;
  auto it = groups.find(n);
  if (it == groups.end()) it = groups.emplace(n, run_group(n, fmt::format("out-{}", n))).first;
  return it->second;
}

struct merged {
  int exit_code = 0;
  std::string out;
  std::string err;
  json doc;  // null when it wrote no report
};

// `punctual merge INPUTS -o OUT EXTRA...`, through the binary's own entry.
merged merge(const std::vector<std::string>& inputs, const std::string& out,
             const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args{"punctual", "merge"};
  args.insert(args.end(), inputs.begin(), inputs.end());
  args.insert(args.end(), {"-o", (scratch() / out).string()});
  args.insert(args.end(), extra.begin(), extra.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  merged m;
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  m.exit_code = cli::run_app(static_cast<int>(argv.size()), argv.data());
  m.out = testing::internal::GetCapturedStdout();
  m.err = testing::internal::GetCapturedStderr();
  if (fs::exists(scratch() / out)) m.doc = json::parse(std::ifstream(scratch() / out));
  return m;
}

// The 1-process plan: each request's offset from the schedule's start, by global index.
const std::map<std::uint64_t, nanoseconds>& whole_plan() {
  static const auto plan = [] {
    auto args = plan_args;
    args.push_back("http://127.0.0.1:8080/");
    const cli::run_setup s = cli::build_run(cli::parse_run_options(args), {});
    std::map<std::uint64_t, nanoseconds> out;
    auto stream = schedule::worker_stream::whole_shard(*s.config.plan());
    for (schedule::entry e; stream.next(e);) out[e.index] = e.offset;
    return out;
  }();
  return plan;
}

// What each measured request of a pod really waited: from its intended instant (the plan's)
// to its answer's last byte's arrival (the network's log). Also holds it to the stall: no
// request intended in it came out before its end.
std::vector<nanoseconds> truths_of(const simulation& sim, std::vector<std::string>& problems) {
  const auto& plan = whole_plan();
  std::vector<nanoseconds> out;
  const nanoseconds start = sim.result().start.mono;
  for (const auto& f : sim.finals()) {
    const served_request* s = sim.server().find(f.sim_id);
    const sent_attempt* a = sim.attempt(f.sim_id);
    const auto it = plan.find(f.t.index);
    if (!s || !a || !s->answered || it == plan.end()) {
      problems.push_back(fmt::format("request {}: no answer, or not in the plan", f.t.index));
      continue;
    }
    const connection& c = *sim.net().connections()[a->connection - 1];
    const nanoseconds truth = c.arrival_of(s->end_offset - 1) - (start + it->second);
    if (it->second >= stall_from && it->second < stall_until && truth < stall_until - it->second) {
      problems.push_back(
          fmt::format("request {} intended at {} ns: {} ns, less than the stall left", f.t.index,
                      it->second.count(), truth.count()));
    }
    out.push_back(truth);
  }
  return out;
}

hdr::histogram histogram_of(const std::vector<nanoseconds>& values) {
  hdr::histogram h(record::latency_params());
  for (const nanoseconds v : values) h.record(v.count());
  return h;
}

hdr::histogram decoded(const json& doc) {
  return *hdr::decode_compressed_base64(
              doc["histograms"]["views"]["response_time"].get<std::string>())
              .value;
}

bool same_counts(const hdr::histogram& a, const hdr::histogram& b) {
  if (a.total_count() != b.total_count()) return false;
  for (std::int32_t i = 0; i < a.counts_length(); ++i) {
    if (a.count_at_index(i) != b.count_at_index(i)) return false;
  }
  return true;
}

// The start lag a pod's own requests say: its first dispatch less that request's intended time.
std::int64_t start_lag_of(const simulation& sim) {
  const final_outcome* first = nullptr;
  for (const auto& f : sim.finals()) {
    if (!first || f.t.dispatched < first->t.dispatched) first = &f;
  }
  return first ? std::max<std::int64_t>(0, (first->t.dispatched - first->t.intended).count()) : -1;
}

// The SLO results a report should hold for --slo `slos`, by the truth's histogram.
json slo_results(const hdr::histogram& truth, const std::vector<std::string>& slos) {
  json out = json::array();
  for (const auto& slo : slos) {
    const double figure = static_cast<double>(truth.value_at_percentile(slo == slo_pass ? 99 : 90));
    const double threshold = static_cast<double>(
        (slo == slo_pass ? nanoseconds(milliseconds(2000)) : nanoseconds(milliseconds(50)))
            .count());
    out.push_back({{"expression", slo}, {"figure", figure}, {"pass", figure <= threshold}});
  }
  return out;
}

json slo_results_of(const json& doc) {
  json out = json::array();
  for (const auto& r : doc["slo"]["results"]) {
    out.push_back({{"expression", r["expression"]}, {"figure", r["figure"]}, {"pass", r["pass"]}});
  }
  return out;
}

// Each pod ran its slice of the plan (the requests i mod N = I) from T, on time, and was judged
// on its own truth.
void check_pods(const group& g, std::vector<std::string>& out) {
  const auto& plan = whole_plan();
  const json sha = g.pods[0].doc["schedule"]["plan_sha256"];
  for (std::uint32_t i = 0; i < g.n; ++i) {
    const simulation& sim = *g.pods[i].sim;
    for (auto& p : check_run(sim)) out.push_back(fmt::format("shard {}: {}", i, p));
    std::vector<std::uint64_t> slice;
    std::vector<std::uint64_t> ran;
    for (const auto& [index, offset] : plan) {
      if (index % g.n == i) slice.push_back(index);
    }
    for (const auto& f : sim.finals()) ran.push_back(f.t.index);
    std::sort(ran.begin(), ran.end());
    const json& s = g.pods[i].doc["schedule"];
    if (ran != slice || s["planned"] != slice.size()) {
      out.push_back(fmt::format("shard {}: ran {} requests, planned {}, its slice holds {}", i,
                                ran.size(), s["planned"].dump(), slice.size()));
    }
    const json shard{{"index", i}, {"count", g.n}};
    if (s["shard"] != shard || s["plan_sha256"] != sha)
      out.push_back(fmt::format("shard {}: {}", i, s.dump()));
    const std::int64_t t = start_at().count();
    if (s["start_at_unix_ns"] != t || s["start_unix_ns"] != t || s["start_lag_ns"] != 0 ||
        start_lag_of(sim) != 0) {
      out.push_back(
          fmt::format("shard {}: start_at {}, start {}, start lag {} (its requests say "
                      "{}), for T {} and no lag",
                      i, s["start_at_unix_ns"].dump(), s["start_unix_ns"].dump(),
                      s["start_lag_ns"].dump(), start_lag_of(sim), t));
    }
    // Its own verdict: a p99 gated by --slo needs 10 samples beyond it, which a slice of fewer
    // than 1000 requests lacks (exit 4); else the SLOs as its truth says.
    const bool valid = slice.size() >= 1000;
    const json want = slo_results(histogram_of(truths_of(sim, out)), {slo_pass, slo_fail});
    const bool slo_failed = !want[0]["pass"].get<bool>() || !want[1]["pass"].get<bool>();
    const int exit = !valid ? 4 : slo_failed ? 3 : 0;
    if (slo_results_of(g.pods[i].doc) != want || g.pods[i].exit_code != exit ||
        g.pods[i].doc["validity"]["valid"] != valid) {
      out.push_back(fmt::format("shard {}: exit {}, SLO results {}; its truth says exit {}, {}", i,
                                g.pods[i].exit_code, slo_results_of(g.pods[i].doc).dump(), exit,
                                want.dump()));
    }
  }
}

// The merged report: the 1-process plan, every request ok, the pods' sums and worst start lag,
// each pod listed as it ran, the HTML written.
void check_merged(const group& g, const merged& m, const std::string& html,
                  std::vector<std::string>& out) {
  const auto& plan = whole_plan();
  if (m.exit_code != 0 || m.doc.is_null() ||
      m.out.find(fmt::format("merged {} shards", g.n)) == std::string::npos) {
    out.push_back(fmt::format("merge exited {}: {}{}", m.exit_code, m.out.substr(0, 600), m.err));
    return;
  }
  const json& d = m.doc;
  const json& s = d["schedule"];
  if (s["planned"] != plan.size() || d["outcomes"]["ok"] != plan.size() ||
      d["latency"]["response_time"]["count"] != plan.size() ||
      !d["validity"]["valid"].get<bool>()) {
    out.push_back(
        fmt::format("the 1-process plan holds {}; merged planned {}, ok {}, response "
                    "times {}, valid {}",
                    plan.size(), s["planned"].dump(), d["outcomes"]["ok"].dump(),
                    d["latency"]["response_time"]["count"].dump(), d["validity"]["valid"].dump()));
  }
  json connections = {{"h2", 0}, {"http/1.1", 0}, {"opened", 0}, {"unsolicited_closes", 0}};
  std::int64_t worst_lag = 0;
  for (std::uint32_t i = 0; i < g.n; ++i) {
    const json& pod = g.pods[i].doc;
    for (auto& [k, v] : connections.items())
      v = v.get<std::uint64_t>() + pod["protocol"]["connections"][k].get<std::uint64_t>();
    worst_lag = std::max(worst_lag, pod["schedule"]["start_lag_ns"].get<std::int64_t>());
    const json listed{{"index", i},
                      {"file", g.files[i]},
                      {"planned", pod["schedule"]["planned"]},
                      {"valid", pod["validity"]["valid"]},
                      {"start_lag_ns", pod["schedule"]["start_lag_ns"]},
                      {"command_line", pod["command_line"]}};
    if (d["shards"][i] != listed)
      out.push_back(fmt::format("shards[{}]: {}, not {}", i, d["shards"][i].dump(), listed.dump()));
  }
  if (d["protocol"]["connections"] != connections)
    out.push_back("merged protocol.connections " + d["protocol"]["connections"].dump() +
                  ", the pods' sum " + connections.dump());
  const json shard{{"index", nullptr}, {"count", g.n}};
  if (s["shard"] != shard || s["plan_sha256"] != g.pods[0].doc["schedule"]["plan_sha256"] ||
      s["start_lag_ns"] != worst_lag || s["start_at_unix_ns"] != start_at().count()) {
    out.push_back(
        fmt::format("merged schedule {}, the worst pod's start lag {}", s.dump(), worst_lag));
  }
  std::ifstream page_in(html);
  const std::string page((std::istreambuf_iterator<char>(page_in)),
                         std::istreambuf_iterator<char>());
  if (page.rfind("<!DOCTYPE html", 0) != 0 && page.rfind("<!doctype html", 0) != 0)
    out.push_back("no HTML report at " + html);
  if (page.find("<svg") == std::string::npos) out.push_back("the merged HTML has no chart");
}

// The truth of every request of a group's pods.
hdr::histogram truth_of(const group& g, std::vector<std::string>& problems) {
  std::vector<nanoseconds> all;
  for (const auto& pod : g.pods) {
    for (const nanoseconds t : truths_of(*pod.sim, problems)) all.push_back(t);
  }
  return histogram_of(all);
}

// The merged response times are exactly every pod's truths.
void check_merged_truth(const group& g, const merged& m, std::vector<std::string>& out) {
  const hdr::histogram truth = truth_of(g, out);
  if (m.doc.is_null()) return;
  if (!same_counts(decoded(m.doc), truth)) {
    out.push_back("the merged response-time histogram is not the truths'");
  }
  const json& p = m.doc["latency"]["response_time"]["percentiles_ns"];
  for (const char* key : {"50", "90", "99", "99.9"}) {
    if (p[key] != truth.value_at_percentile(std::stod(key))) {
      out.push_back(fmt::format("merged p{} {}, the truth's {}", key, p[key].dump(),
                                truth.value_at_percentile(std::stod(key))));
    }
  }
  if (truth.value_at_percentile(99) < nanoseconds(stall_until - stall_from).count() / 2) {
    out.push_back("the stall does not show in the truth: the case is void");
  }
}

TEST(sim_merge, shards_merge_to_the_truth_of_a_stalling_server) {
  PUNCTUAL_SKIP_UNDER_SANITIZER("the truth's numbers; every other case merges shards");
  for (const std::uint32_t n : {1u, 2u, 3u, 7u}) {
    const group& g = on_time(n);
    std::vector<std::string> problems;
    check_pods(g, problems);
    const std::string html = (scratch() / fmt::format("merged-{}.html", n)).string();
    const merged m = merge(g.files, fmt::format("merged-{}.json", n), {"--html", html});
    check_merged(g, m, html, problems);
    check_merged_truth(g, m, problems);
    EXPECT_TRUE(problems.empty()) << "N=" << n << describe(problems);
  }
}

std::vector<std::string> slo_options(const std::vector<std::string>& slos) {
  std::vector<std::string> out;
  for (const auto& s : slos) out.insert(out.end(), {"--slo", s});
  return out;
}

std::string slo_text(const std::vector<std::string>& slos) {
  return fmt::format("merge --slo {}", fmt::join(slos, " --slo "));
}

const std::vector<std::vector<std::string>> slo_cases{{slo_pass}, {slo_fail}, {slo_pass, slo_fail}};

// merge --slo judges the merged run as run judges its own: 0 when every SLO passes, 3 when one
// fails; the SLOs' figures and results are the truth's.
TEST(sim_merge, merge_slo_exits_as_run_would) {
  const group& g = on_time(3);
  std::vector<std::string> problems;
  const hdr::histogram truth = truth_of(g, problems);
  // The thresholds are far from what the stall gives (p99 about 480 ms, p90 about 330 ms).
  ASSERT_TRUE(slo_results(truth, {slo_pass})[0]["pass"].get<bool>());
  ASSERT_FALSE(slo_results(truth, {slo_fail})[0]["pass"].get<bool>());
  for (std::size_t k = 0; k < slo_cases.size(); ++k) {
    const auto& slos = slo_cases[k];
    const merged m = merge(g.files, fmt::format("slo-{}.json", k), slo_options(slos));
    const json want = slo_results(truth, slos);
    const int exit = slos == std::vector<std::string>{slo_pass} ? 0 : 3;
    if (m.doc.is_null() || slo_results_of(m.doc) != want || m.exit_code != exit ||
        !m.doc["validity"]["valid"].get<bool>()) {
      problems.push_back(fmt::format(
          "{}: exit {}, SLO results {}; expected exit {}, {}", slo_text(slos), m.exit_code,
          m.doc.is_null() ? "none" : slo_results_of(m.doc).dump(), exit, want.dump()));
    }
  }
  EXPECT_TRUE(problems.empty()) << describe(problems);
}

// Pod 1's vCPU is descheduled 300 ms mid-window: its requests due then go out late, in a burst.
// The merged run is invalid (exit 4) when an SLO makes the send lag at p99 gating, not at p90.
TEST(sim_merge, a_merged_run_invalid_for_a_pods_send_lag_exits_4) {
  const group paused =
      run_group(3, "paused", plan_args, start_at(), [](std::uint32_t i, surroundings& a) {
        if (i == 1) a.pauses = {{0, milliseconds(300), milliseconds(300)}};
      });
  // Between 1% and 10% of the merged requests went out late: the p99 of the send lag is late,
  // the p90 is not.
  std::uint64_t late = 0;
  std::uint64_t all = 0;
  for (const auto& pod : paused.pods) {
    for (const auto& f : pod.sim->finals()) late += f.t.dispatched - f.t.intended > milliseconds(1);
    all += pod.sim->finals().size();
  }
  ASSERT_GT(late * 100, all);
  ASSERT_LT(late * 10, all);
  for (std::size_t k = 0; k < slo_cases.size(); ++k) {
    const auto& slos = slo_cases[k];
    const bool gates_p99 = std::find(slos.begin(), slos.end(), slo_pass) != slos.end();
    const auto want = gates_p99 ? std::set<std::string>{"send_lag_p99"} : std::set<std::string>{};
    const int exit = gates_p99 ? 4 : 3;  // without p99 it is valid, and p90<=50ms fails
    const merged m = merge(paused.files, fmt::format("slo-paused-{}.json", k), slo_options(slos));
    const auto failed = m.doc.is_null() ? std::set<std::string>{"no report"} : failed_gating(m.doc);
    EXPECT_TRUE(m.exit_code == exit && failed == want)
        << slo_text(slos) << ": exit " << m.exit_code << ", failed ["
        << fmt::format("{}", fmt::join(failed, ", ")) << "]; expected exit " << exit << ", failed ["
        << fmt::format("{}", fmt::join(want, ", ")) << "]";
  }
}

// N = 1: the one pod is the whole plan, and the merge's verdict and figures are its own run's.
TEST(sim_merge, one_shard_merges_to_its_own_verdict) {
  const group& one = on_time(1);
  const merged m = merge(one.files, "slo-one.json", slo_options({slo_pass, slo_fail}));
  const json& own = one.pods[0].doc;
  ASSERT_FALSE(m.doc.is_null()) << m.err;
  EXPECT_EQ(m.exit_code, one.pods[0].exit_code);
  EXPECT_EQ(slo_results_of(m.doc), slo_results_of(own));
  EXPECT_EQ(m.doc["validity"]["valid"], own["validity"]["valid"]);
  for (const char* view : {"response_time", "service_time"}) {
    EXPECT_EQ(m.doc["latency"][view]["percentiles_ns"], own["latency"][view]["percentiles_ns"])
        << view;
  }
}

// The merged start lag is the worst pod's, and so is the merged start_lag check: a pod whose
// vCPU the host held 150 ms from T fails it, named; one held 30 ms passes, as do on-time ones.
TEST(sim_merge, the_merged_start_lag_is_the_worst_pods) {
  const group g = run_group(3, "late", plan_args, start_at(), [](std::uint32_t i, surroundings& a) {
    if (i > 0) a.pauses = {{0, nanoseconds{0}, milliseconds(i == 1 ? 150 : 30)}};
  });
  std::vector<std::string> problems;
  std::vector<std::int64_t> lags;
  for (std::uint32_t i = 0; i < g.n; ++i) {
    lags.push_back(start_lag_of(*g.pods[i].sim));
    if (g.pods[i].doc["schedule"]["start_lag_ns"] != lags[i]) {
      problems.push_back(fmt::format("pod {}: start lag {}, its first request's {}", i,
                                     g.pods[i].doc["schedule"]["start_lag_ns"].dump(), lags[i]));
    }
  }
  // The lags are the holds, less the first request's offset (it was due after T).
  ASSERT_EQ(lags[0], 0);
  ASSERT_GT(lags[1], max_start_lag.count());
  ASSERT_GT(lags[2], 0);
  ASSERT_LT(lags[2], max_start_lag.count());
  const auto start_lag_check = [](const json& doc) {
    json found;
    for (const auto& c : doc["validity"]["checks"]) {
      if (c["name"] == "start_lag") found = found.is_null() ? c : json("twice");
    }
    return found;
  };
  const merged m = merge(g.files, "late.json");
  const json c = m.doc.is_null() ? json() : start_lag_check(m.doc);
  if (c.is_null() || !c.is_object() || c["figure"] != static_cast<double>(lags[1]) ||
      c["pass"] != false ||
      c["note"].get<std::string>().find("shard 1 of 3") == std::string::npos ||
      c["note"].get<std::string>().find("shard 2") != std::string::npos ||
      m.doc["schedule"]["start_lag_ns"] != lags[1] || m.exit_code != 4) {
    problems.push_back(
        fmt::format("merged start lag {}, exit {}, its check {}; the worst pod's is "
                    "{} (pod 1)",
                    m.doc.is_null() ? "none" : m.doc["schedule"]["start_lag_ns"].dump(),
                    m.exit_code, c.dump(), lags[1]));
  }
  for (std::uint32_t i = 0; i < g.n && !m.doc.is_null(); ++i) {
    const json own = start_lag_check(g.pods[i].doc);
    if (m.doc["shards"][i]["start_lag_ns"] != lags[i] || !own.is_object() ||
        own["pass"] != (lags[i] <= max_start_lag.count())) {
      problems.push_back(fmt::format("pod {}: its start_lag check {}, listed {}", i, own.dump(),
                                     m.doc["shards"][i].dump()));
    }
  }
  // On time, every pod's lag is 0 and the check passes.
  const merged ok = merge(on_time(3).files, "on-time.json");
  const json d = ok.doc.is_null() ? json() : start_lag_check(ok.doc);
  if (d.is_null() || d["figure"] != 0.0 || d["pass"] != true)
    problems.push_back("on time: " + d.dump());
  EXPECT_TRUE(problems.empty()) << describe(problems);
}

// What cannot be one run's shards is refused before anything is written: exit 2, one line.
TEST(sim_merge, refusals_exit_2_with_one_line) {
  const group& two = on_time(2);
  const group& three = on_time(3);
  auto seed_8 = plan_args;
  *(std::find(seed_8.begin(), seed_8.end(), "--seed") + 1) = "8";
  const group other_plan =
      run_group(2, "other-seed", seed_8, start_at(), [](std::uint32_t, surroundings&) {});
  const group other_start = run_group(2, "other-start", plan_args, start_at() + milliseconds(1000),
                                      [](std::uint32_t, surroundings&) {});
  // Judged by another rule: the same plan, but only a 200 counts as ok.
  auto strict = plan_args;
  strict.insert(strict.end(), {"--expect-status", "200"});
  const group other_rule =
      run_group(2, "other-rule", strict, start_at(), [](std::uint32_t, surroundings&) {});
  // Named as another run, though started together.
  auto named = plan_args;
  named.insert(named.end(), {"--run-id", "another-run"});
  const group other_run =
      run_group(2, "other-run", named, start_at(), [](std::uint32_t, surroundings&) {});
  fs::create_directories(scratch() / "dup");
  const fs::path dup = scratch() / "dup" / "shard-1-of-3.json";
  fs::copy_file(three.files[1], dup, fs::copy_options::overwrite_existing);
  fs::copy_file(fs::path(three.files[1]).replace_extension(".hlog"),
                fs::path(dup).replace_extension(".hlog"), fs::copy_options::overwrite_existing);
  const merged whole = merge(two.files, "refusal-merged.json");
  ASSERT_EQ(whole.exit_code, 0) << whole.err;
  const std::string merged_path = (scratch() / "refusal-merged.json").string();
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{two.files[0], other_plan.files[1]}, "ran another plan"},
      {{two.files[0], other_rule.files[1]},
       "(shard 1) differs from " + two.files[0] +
           " (shard 0) in workload: expect_status \"200\" vs \"200-399\""},
      {{two.files[0], other_run.files[1]}, "is of run 'another-run'"},
      {{three.files[0], three.files[1]}, "shard 2 of 3 is missing"},
      {{three.files[0], three.files[1], three.files[2], dup.string()}, "given twice"},
      {{two.files[0], three.files[1], three.files[2]}, "is a shard of 3"},
      {{two.files[0], other_start.files[1]}, "another --start-at"},
      // A merged report is no shard's, though its .hlog is beside it.
      {{merged_path, two.files[1]}, merged_path + ": already a merged report"},
  };
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const auto& [inputs, says] = cases[k];
    const merged m = merge(inputs, fmt::format("refused-{}.json", k));
    const bool one_line = !m.err.empty() && m.err.find('\n') == m.err.size() - 1;
    EXPECT_TRUE(m.exit_code == 2 && one_line && m.err.rfind("punctual: ", 0) == 0 &&
                m.err.find(says) != std::string::npos && m.doc.is_null())
        << "merge " << fmt::format("{}", fmt::join(inputs, " ")) << ": exit " << m.exit_code
        << ", stderr " << m.err << "expected exit 2 and one line saying '" << says << "'";
  }
}

}  // namespace
}  // namespace punctual::sim::merge_cases
