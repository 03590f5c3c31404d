// parse_scenario on arbitrary bytes: never crashes or hangs (aliases are refused before anything
// expands), every refusal is one line that starts with the file's name, and every file it accepts
// keeps the loader's promises: phases of positive duration with rates from 0 to 1e9, not all 0;
// 1 or more scenarios with valid unique names and weights >= 0 that add up to more than 0; steps
// with valid names unique in their scenario and a path or a URL; at most 200 names in all;
// status ranges within 100..599; think times that describe() writes back as themselves.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "http/json_pointer.hpp"
#include "scenario/request_mix.hpp"
#include "scenario/scenario.hpp"
#include "schedule/plan.hpp"

using punctual::fuzz::check;
using namespace punctual::scenario;

namespace {

void check_phases(const scenario_file& f) {
  check(!f.phases.empty());
  bool some_users = false;
  for (const auto& p : f.phases) {
    check(p.duration.count() > 0);
    check(p.arrival_rate >= 0 && p.arrival_rate <= punctual::schedule::max_rate_per_s);
    check(!p.ramp_to || (*p.ramp_to >= 0 && *p.ramp_to <= punctual::schedule::max_rate_per_s));
    some_users = some_users || p.arrival_rate > 0 || p.ramp_to.value_or(0) > 0;
  }
  check(some_users);
}

void check_think(const think_time& t) {
  check(t.a.count() >= 0);
  if (t.shape == think_time::kind::uniform) check(t.a <= t.b);
  if (t.shape == think_time::kind::exponential) check(t.a.count() > 0);
  const auto again = parse_think(describe(t));
  check(again && again->shape == t.shape && again->a == t.a && again->b == t.b);
}

void check_step(const step& s) {
  check(valid_name(s.name) && s.name != "session");
  check(!s.target.empty() && !s.method.empty());
  check(s.line >= 1);
  for (const auto& c : s.captures) {
    check(valid_name(c.name) && c.line >= 1);
    check(c.from_header ? !c.key.empty() : punctual::http::valid_json_pointer(c.key));
  }
  check(s.expect_status.size() % 2 == 0);
  for (std::size_t i = 0; i < s.expect_status.size(); i += 2) {
    check(s.expect_status[i] >= 100 && s.expect_status[i] <= s.expect_status[i + 1] &&
          s.expect_status[i + 1] <= 599);
  }
  check_think(s.think);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text{reinterpret_cast<const char*>(data), size};
  const auto loaded = punctual::fuzz::accepted<load_error>(
      [&] { return parse_scenario(text, "fuzz.yaml"); }, "fuzz.yaml");
  if (!loaded) return 0;
  const scenario_file& f = *loaded;
  check(!f.target.empty());
  check(f.graceful_stop.count() >= 0);
  check(f.connection == connection_policy::pool || f.connection == connection_policy::per_user);
  const auto variables = f.variables();
  check(std::set<std::string>(variables.begin(), variables.end()).size() == variables.size());
  check_phases(f);
  check(!f.scenarios.empty());
  check(f.step_count() + f.scenarios.size() <= max_names);
  std::set<std::string> names;
  double total_weight = 0;
  for (const auto& d : f.scenarios) {
    check(valid_name(d.name) && d.name != "session");
    check(names.insert(d.name).second);
    check(d.weight >= 0);
    check(d.line >= 1);
    total_weight += d.weight;
    check(!d.steps.empty());
    std::set<std::string> step_names;
    for (const auto& s : d.steps) {
      check_step(s);
      check(step_names.insert(s.name).second);
    }
  }
  check(total_weight > 0 && std::isfinite(total_weight));
  return 0;
}
