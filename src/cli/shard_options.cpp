#include "cli/shard_options.hpp"

#include <charconv>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "analysis/text.hpp"
#include "cli/command.hpp"
#include "cli/run_options.hpp"
#include "http/text.hpp"
#include "run/describe.hpp"
#include "run/workload_identity.hpp"

namespace punctual::cli {
namespace {

using std::chrono::nanoseconds;

// Start times after this (2096) are refused: their nanoseconds would come near int64's end.
constexpr std::int64_t max_unix_seconds = 4'000'000'000;
// A start further off is more likely a mistyped date than a plan: a run would sit idle until it.
constexpr nanoseconds max_start_ahead = std::chrono::hours(24);

std::optional<std::uint32_t> whole(std::string_view text) noexcept {
  std::uint32_t v = 0;
  if (text.empty() || text.size() > 9) return std::nullopt;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (r.ec != std::errc() || r.ptr != text.data() + text.size()) return std::nullopt;
  return v;
}

// Exactly `digits` decimal digits at `at`.
std::optional<int> digits_at(std::string_view text, std::size_t at, std::size_t digits) noexcept {
  if (at + digits > text.size()) return std::nullopt;
  int v = 0;
  for (std::size_t i = at; i < at + digits; ++i) {
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
    v = v * 10 + (text[i] - '0');
  }
  return v;
}

// ".250" -> 250'000'000 ns; at most 9 digits. `at` moves past them.
std::optional<std::int64_t> fraction_at(std::string_view text, std::size_t& at) noexcept {
  if (at >= text.size() || text[at] != '.') return std::int64_t{0};
  ++at;
  std::int64_t ns = 0;
  std::int64_t scale = 100'000'000;
  const std::size_t first = at;
  while (at < text.size() && text[at] >= '0' && text[at] <= '9') {
    if (at - first >= 9) return std::nullopt;
    ns += (text[at] - '0') * scale;
    scale /= 10;
    ++at;
  }
  if (at == first) return std::nullopt;
  return ns;
}

std::optional<nanoseconds> parse_unix_seconds(std::string_view text) noexcept {
  std::size_t at = 0;
  std::int64_t seconds = 0;
  while (at < text.size() && text[at] >= '0' && text[at] <= '9') {
    seconds = seconds * 10 + (text[at] - '0');
    if (seconds > max_unix_seconds) return std::nullopt;
    ++at;
  }
  if (at == 0) return std::nullopt;
  const auto fraction = fraction_at(text, at);
  if (!fraction || at != text.size()) return std::nullopt;
  return nanoseconds{seconds * 1'000'000'000 + *fraction};
}

// "Z", "+01:00" or "-05:30" at `at`, as seconds east of UTC.
std::optional<int> zone_at(std::string_view text, std::size_t at) noexcept {
  if (at + 1 == text.size() && (text[at] == 'Z' || text[at] == 'z')) return 0;
  if (at + 6 != text.size() || (text[at] != '+' && text[at] != '-') || text[at + 3] != ':') {
    return std::nullopt;
  }
  const auto hours = digits_at(text, at + 1, 2);
  const auto minutes = digits_at(text, at + 4, 2);
  if (!hours || !minutes || *hours > 23 || *minutes > 59) return std::nullopt;
  const int east = *hours * 3600 + *minutes * 60;
  return text[at] == '-' ? -east : east;
}

std::optional<nanoseconds> parse_rfc3339(std::string_view t) noexcept {
  if (t.size() < 20 || t[4] != '-' || t[7] != '-' || t[13] != ':' || t[16] != ':')
    return std::nullopt;
  if (t[10] != 'T' && t[10] != 't' && t[10] != ' ') return std::nullopt;
  const auto year = digits_at(t, 0, 4);
  const auto month = digits_at(t, 5, 2);
  const auto day = digits_at(t, 8, 2);
  const auto hour = digits_at(t, 11, 2);
  const auto minute = digits_at(t, 14, 2);
  const auto second = digits_at(t, 17, 2);
  if (!year || !month || !day || !hour || !minute || !second) return std::nullopt;
  if (*year < 1970 || *year > 2095 || *month < 1 || *month > 12 || *day < 1 || *day > 31 ||
      *hour > 23 || *minute > 59 || *second > 60) {
    return std::nullopt;
  }
  std::size_t at = 19;
  const auto fraction = fraction_at(t, at);
  if (!fraction) return std::nullopt;
  const auto east = zone_at(t, at);
  if (!east) return std::nullopt;
  std::tm tm{};
  tm.tm_year = *year - 1900;
  tm.tm_mon = *month - 1;
  tm.tm_mday = *day;
  tm.tm_hour = *hour;
  tm.tm_min = *minute;
  tm.tm_sec = *second;
  const std::time_t utc = timegm(&tm);
  if (tm.tm_mday != *day) return std::nullopt;  // 2026-02-30 rolled over into March
  return nanoseconds{(static_cast<std::int64_t>(utc) - *east) * 1'000'000'000 + *fraction};
}

std::string read_whole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

std::optional<shard_spec> try_parse_shard(std::string_view text, const char* job_index) noexcept {
  const auto slash = text.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  const auto count = whole(text.substr(slash + 1));
  const std::string_view first = text.substr(0, slash);
  const auto index = first == "env" ? (job_index ? whole(job_index) : std::nullopt) : whole(first);
  if (!count || !index || *count < 1 || *count > schedule::max_shards || *index >= *count)
    return std::nullopt;
  return shard_spec{*index, *count};
}

shard_spec parse_shard(std::string_view text, const char* job_index) {
  if (auto s = try_parse_shard(text, job_index)) return *s;
  const std::string t(text);
  if (t.rfind("env/", 0) == 0 && !job_index) {
    throw usage_error("--shard " + t +
                      ": JOB_COMPLETION_INDEX is not set (as a Kubernetes Indexed Job sets it)");
  }
  if (t.rfind("env/", 0) == 0) {
    throw usage_error("--shard " + t + ": JOB_COMPLETION_INDEX '" + job_index +
                      "' is not a shard index below the shard count");
  }
  throw usage_error("--shard '" + t + "': expected I/N with 0 <= I < N <= " +
                    std::to_string(schedule::max_shards) + " (e.g. 0/4), or env/N");
}

std::optional<nanoseconds> try_parse_start_at(std::string_view text) noexcept {
  if (text.size() >= 20 && text[4] == '-') return parse_rfc3339(text);
  return parse_unix_seconds(text);
}

std::string plan_digest(const run_options& o, const run::config& c) {
  std::ostringstream p;
  p << std::setprecision(17);
  p << "model " << run::name(c.kind()) << '\n';
  if (c.plan()) {
    const schedule::plan& s = *c.plan();
    p << "arrival " << run::name(s.arrival) << "\nrate " << s.rate_per_s << "\nstart_rate "
      << s.start_rate_per_s << '\n';
    for (const auto& st : s.stages)
      p << "stage " << st.length.count() << ' ' << st.rate_per_s << '\n';
  }
  p << "seed " << c.seed << "\nduration " << c.duration.count() << "\nwarmup " << c.warmup.count()
    << "\ntimeout " << c.timeout.count() << '\n';
  const run::retry_policy& r = c.retry();
  p << "retry " << r.retries << ' ' << r.on << ' ' << r.backoff_base.count() << ' '
    << r.backoff_cap.count() << ' ' << r.attempt_timeout.count() << '\n';
  // The files by content: each pod mounts its own copy, wherever it is.
  for (const auto* path : {&o.requests_file, &o.scenario_file, &o.schedule_in}) {
    p << "file " << (path->empty() ? std::string("-") : run::sha256_hex(read_whole(*path))) << '\n';
  }
  return run::sha256_hex(p.str());
}

void apply_shard_options(const run_options& o, run::config& c, nanoseconds now_unix) {
  if (!o.shard.empty() || !o.out_dir.empty() || !o.start_at.empty()) {
    if (!c.plan())
      throw usage_error(
          "--shard, --start-at and --out-dir: the closed model has no schedule to share out");
  }
  if (!o.shard.empty()) {
    const shard_spec s = parse_shard(o.shard, std::getenv("JOB_COMPLETION_INDEX"));
    c.plan()->shards = s.count;
    c.plan()->shard_index = s.index;
  }
  if (!o.start_at.empty()) {
    const auto at = try_parse_start_at(o.start_at);
    if (!at) {
      throw usage_error(
          "--start-at '" + o.start_at +
          "': expected RFC 3339 (2026-12-01T05:00:00Z) or Unix seconds (1796101200.5)");
    }
    if (*at + c.duration <= now_unix) {
      throw usage_error(
          "--start-at " + o.start_at + " is " + analysis::duration_text(now_unix - *at) +
          " in the past, more than the whole -d " + analysis::duration_text(c.duration));
    }
    if (*at - now_unix > max_start_ahead) {
      throw usage_error("--start-at " + o.start_at + " is more than a day away (" +
                        analysis::duration_text(*at - now_unix) + "): a mistyped date?");
    }
    c.start_at = *at;
  }
  if (c.plan()) c.plan_sha256 = plan_digest(o, c);
}

std::string apply_run_identity(const run_options& o, run::config& c,
                               analysis::bound_mode slo_bound) {
  c.workload = run::identify_workload(c, slo_bound);
  if (!o.run_id.empty()) {
    if (const auto problem = run::run_id_problem(o.run_id))
      throw usage_error("--run-id " + http::quoted(o.run_id) + ": " + *problem);
    c.run_id = o.run_id;
    return {};
  }
  if (c.start_at) {
    c.run_id = run::derived_run_id(*c.start_at, c.workload.digest);
    return {};
  }
  c.run_id = run::random_run_id();
  if (c.shards() < 2) return {};
  return "--shard " + o.shard +
         " without --start-at or --run-id: this shard's run_id is random, and merge takes only "
         "shards of one run_id; give every shard the same --run-id";
}

run_options with_out_dir(const run_options& o) {
  if (o.out_dir.empty()) return o;
  if ((!o.json_out.empty() && o.json_out != "-") || !o.hlog_out.empty()) {
    throw usage_error(
        "--out-dir writes shard-I-of-N.json and .hlog itself: drop --json FILE and --hlog");
  }
  const shard_spec s =
      o.shard.empty() ? shard_spec{} : parse_shard(o.shard, std::getenv("JOB_COMPLETION_INDEX"));
  std::error_code error;
  std::filesystem::create_directories(o.out_dir, error);
  if (error) throw usage_error("--out-dir " + o.out_dir + ": " + error.message());
  run_options out = o;
  const std::string stem =
      o.out_dir + "/shard-" + std::to_string(s.index) + "-of-" + std::to_string(s.count);
  if (o.json_out.empty()) out.json_out = stem + ".json";
  out.hlog_out = stem + ".hlog";
  return out;
}

}  // namespace punctual::cli
