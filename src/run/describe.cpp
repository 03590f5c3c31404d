#include "run/describe.hpp"

#include <cstdio>

#include "analysis/text.hpp"

namespace punctual::run {

std::string shard_name(const config& c) {
  return "shard " + std::to_string(c.shard_index()) + " of " + std::to_string(c.shards());
}

std::string retry_causes(std::uint32_t mask) {
  std::string out;
  for (std::size_t i = 0; i < record::retry_cause_count; ++i) {
    if (!((mask >> i) & 1U)) continue;
    if (!out.empty()) out += ',';
    out += record::retry_cause_names[i];
  }
  return out;
}

const char* name(http_version h) noexcept {
  switch (h) {
    case http_version::http1:
      return "1.1";
    case http_version::http2:
      return "2";
    case http_version::automatic:
      return "auto";
  }
  return "?";
}

const char* name(threads_source t) noexcept {
  switch (t) {
    case threads_source::flag:
      return "flag";
    case threads_source::cpus_allowed:
      return "cpus_allowed";
  }
  return "?";
}

const char* name(model_kind m) noexcept {
  switch (m) {
    case model_kind::open:
      return "open";
    case model_kind::closed:
      return "closed";
    case model_kind::hybrid:
      return "hybrid";
  }
  return "?";
}

std::string describe(const schedule::think_time& t) {
  switch (t.shape) {
    case schedule::think_time::kind::fixed:
      return t.a.count() == 0 ? "0s" : analysis::duration_text(t.a);
    case schedule::think_time::kind::uniform:
      return "uniform:" + analysis::duration_text(t.a) + ".." + analysis::duration_text(t.b);
    case schedule::think_time::kind::exponential:
      return "exp:" + analysis::duration_text(t.a);
  }
  return "?";
}

const char* name(precision_mode p) noexcept {
  switch (p) {
    case precision_mode::fine:
      return "fine";
    case precision_mode::spin:
      return "spin";
    case precision_mode::coarse:
      return "coarse";
  }
  return "?";
}

const char* name(schedule::arrival_kind a) noexcept {
  switch (a) {
    case schedule::arrival_kind::constant:
      return "constant";
    case schedule::arrival_kind::poisson:
      return "poisson";
    case schedule::arrival_kind::trace:
      return "trace";
  }
  return "?";
}

std::string describe(const retry_policy& p) {
  if (!p.enabled()) return "none";
  std::string text = "up to " + std::to_string(p.retries) +
                     (p.retries == 1 ? " retry" : " retries") + " on " + retry_causes(p.on) +
                     ", backoff exp " + analysis::duration_text(p.backoff_base) + ".." +
                     analysis::duration_text(p.backoff_cap) + " with full jitter";
  if (p.attempt_timeout.count() > 0) {
    text += ", " + analysis::duration_text(p.attempt_timeout) + " per attempt";
  }
  if (p.budget >= 0) {
    char share[32];
    std::snprintf(share, sizeof share, "%g%%", p.budget * 100);
    text += std::string(", budget ") + share + " of first attempts";
  }
  return text;
}

}  // namespace punctual::run
