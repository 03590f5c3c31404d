// `punctual k8s-manifest`: the YAML is written by hand, not by a library, because every value is
// either fixed here or a string the user typed; each of the latter is emitted as a double-quoted
// YAML scalar with escapes, so no argument can change the document's structure.
#include "cli/k8s_manifest_command.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "cli/command.hpp"
#include "cli/scenario_options.hpp"
#include "cli/shard_options.hpp"
#include "cli/units.hpp"
#include "http/text.hpp"
#include "http/url.hpp"

namespace punctual::cli {
namespace {
// A named namespace too: the cli library is unity-built, so file-local names meet other files'.
namespace k8s {

using std::chrono::nanoseconds;
using std::chrono::seconds;
using wall_time = std::chrono::time_point<std::chrono::system_clock, nanoseconds>;

constexpr std::string_view results_root = "/results";
// Job names are label values (at most 63 characters), and the merge Job is NAME-merge.
constexpr std::size_t max_name_length = 63 - std::string_view("-merge").size();
// Beyond the run itself: scheduling pods, pulling the image, writing the reports.
constexpr seconds settle_time{600};

// A shard whose SLO failed (3) or whose run is invalid (4) has written its report, and the merge
// judges the whole run. Failing the pod would fail the Job (backoffLimit 0), and Kubernetes then
// stops the shards still running, so there would be nothing to merge. The pod's SIGTERM is
// passed on, so that a stopped shard ends its window and still writes its report (exit 130).
constexpr std::string_view shard_script = R"sh(punctual "$@" &
pid=$!
trap 'kill -TERM "$pid" 2>/dev/null' TERM
wait "$pid"
code=$?
while kill -0 "$pid" 2>/dev/null; do
  wait "$pid"
  code=$?
done
if [ "$code" -eq 3 ] || [ "$code" -eq 4 ]; then
  echo "punctual-shard: exit $code: the report is written, the merge judges the whole run" >&2
  exit 0
fi
exit "$code"
)sh";

// $1 the run's directory, $2 the shard count, $3 how long to wait (s). A shard writes its JSON
// report last, after its .hlog, so N reports mean N finished shards.
constexpr std::string_view wait_script = R"sh(dir=$1; shards=$2; end=$(( $(date +%s) + $3 ))
while :; do
  missing=0; i=0
  while [ "$i" -lt "$shards" ]; do
    [ -e "$dir/shard-$i-of-$shards.json" ] || missing=$((missing + 1))
    i=$((i + 1))
  done
  [ "$missing" -eq 0 ] && exit 0
  if [ "$(date +%s)" -ge "$end" ]; then
    echo "wait-for-shards: $missing of $shards shard reports missing in $dir" >&2
    exit 1
  fi
  sleep 5
done
)sh";

struct manifest {
  k8s_manifest_options k;               // with the default name and -t's cores filled in
  std::vector<std::string> shard_args;  // after the program name: run ...
  std::vector<std::string> merge_args;  // after the program name: merge ...
  seconds deadline{};                   // from now to every shard's end, with settle_time
  std::string generated_at;
  std::string start_at;
};

bool names_option(std::string_view token, std::string_view option) {
  return token == option ||
         (token.size() > option.size() && token.starts_with(option) && token[option.size()] == '=');
}

// "2026-12-01T05:00:00.250Z" or, compact, "20261201-050000".
std::string utc_text(wall_time t, bool compact) {
  const auto whole = std::chrono::floor<seconds>(t);
  const std::time_t s = std::chrono::system_clock::to_time_t(whole);
  std::tm tm{};
  gmtime_r(&s, &tm);
  if (compact) return fmt::format("{:%Y%m%d-%H%M%S}", tm);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t - whole).count();
  return fmt::format("{:%Y-%m-%dT%H:%M:%S}.{:03}Z", tm, ms);
}

// The shards' arguments: the tokens after the subcommand, less k8s-manifest's own options.
std::vector<std::string> run_arguments(const std::vector<std::string>& line) {
  auto it = std::find(line.begin() + (line.empty() ? 0 : 1), line.end(), "k8s-manifest");
  std::vector<std::string> out;
  bool positional = false;  // after "--", CLI11 reads every token as a positional
  for (it = it == line.end() ? it : it + 1; it != line.end(); ++it) {
    positional = positional || *it == "--";
    const auto own = std::find_if(std::begin(k8s_option::all), std::end(k8s_option::all),
                                  [&](const char* o) { return names_option(*it, o); });
    if (positional || own == std::end(k8s_option::all)) {
      out.push_back(*it);
    } else if (it->size() <= std::string_view(*own).size() + 1 && it + 1 != line.end()) {
      ++it;  // its value: CLI11 takes the next token after "--name" and after "--name=" alike
    }
  }
  return out;
}

void refuse_manifest_set_options(const std::vector<std::string>& run_args) {
  for (const auto& token : run_args) {
    if (token == "--") return;
    for (const std::string_view option : k8s_option::set_by_manifest) {
      if (names_option(token, option)) {
        throw usage_error(
            std::string(option) +
            ": k8s-manifest sets the shards' --shard, --start-at and outputs (--out-dir "
            "/results/NAME, merged into merged.json and merged.html); drop it");
      }
    }
  }
}

// Kubernetes' own patterns: an RFC 1123 label (names, namespaces), a subdomain (claims), and a
// quantity as memory is written (no milli-bytes or exponents).
constexpr const char* label_pattern = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
constexpr const char* subdomain_pattern =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
constexpr const char* memory_pattern = "[0-9]+(\\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?";

bool matches(const std::string& text, const char* pattern, std::size_t max_length) {
  return text.size() <= max_length && std::regex_match(text, std::regex(pattern));
}

void check_names(const k8s_manifest_options& k) {
  if (!matches(k.name, label_pattern, max_name_length)) {
    throw usage_error(
        "--name '" + k.name +
        "': expected lower-case letters, digits and '-' (not first or last), at most " +
        std::to_string(max_name_length) + " characters (the merge Job adds -merge)");
  }
  if (!k.name_space.empty() && !matches(k.name_space, label_pattern, 63)) {
    throw usage_error("--namespace '" + k.name_space +
                      "': expected lower-case letters, digits and '-', at most 63 characters");
  }
  if (!matches(k.claim, subdomain_pattern, 253)) {
    throw usage_error(
        "--claim '" + k.claim +
        "': expected a PersistentVolumeClaim name (lower-case letters, digits, '-' and '.')");
  }
  const bool blank = std::any_of(k.image.begin(), k.image.end(), [](char c) {
    return static_cast<unsigned char>(c) <= ' ' || c == '\x7f';
  });
  if (k.image.empty() || blank)
    throw usage_error("--image '" + k.image + "': expected an image reference without spaces");
  if (!matches(k.memory, memory_pattern, 64) ||
      k.memory.find_first_of("123456789") == std::string::npos) {
    throw usage_error("--memory '" + k.memory +
                      "': expected a quantity more than 0, e.g. 512Mi or 2Gi");
  }
}

// The shards resolve the target in the cluster. Here an in-cluster name (my-service.ns.svc)
// need not resolve, so the check maps the target's HOST:PORT to loopback, as a last --resolve
// (the last match wins; the user's own --resolve entries are still checked).
void resolve_nowhere(run_options& o) {
  const auto target = o.scenario_file.empty()
                          ? http::parse_url(o.url)
                          : http::url_result{scenario_target(load_scenario_options(o)), {}};
  // An error is build_run's to report; an address literal resolves anywhere (and an IPv6 one
  // would not parse as a --resolve HOST).
  if (!target || target.value->is_ipv6_literal) return;
  const http::url& t = *target.value;
  o.resolve.push_back(t.host + ":" + std::to_string(t.port) + ":127.0.0.1");
}

// The shards' `run` as `punctual run` checks it: shard 0 of N, starting at `start_at`. Returns
// how long after now every shard has ended (the window, its drain, and settle_time).
seconds check_run(const run_options& run, const manifest& m, nanoseconds lead) {
  if (!try_parse_shard("0/" + std::to_string(m.k.shards), nullptr)) {
    throw usage_error("--shards " + std::to_string(m.k.shards) +
                      ": more shards than a run can be split into");
  }
  run_options shard = run;
  shard.shard = "0/" + std::to_string(m.k.shards);
  shard.start_at = m.start_at;
  resolve_nowhere(shard);
  std::vector<std::string> line{"punctual"};
  line.insert(line.end(), m.shard_args.begin(), m.shard_args.end());
  const run::config c = build_run(shard, line).config;
  // --start-at is the measured window's start: the warm-up runs before it, so the pods must be
  // up by now + lead - warm-up.
  if (lead <= c.warmup) {
    throw usage_error("--lead-time " + m.k.lead_time + " must be longer than --warmup " +
                      run.warmup + ": the warm-up runs before --start-at");
  }
  const nanoseconds drain = c.timeout + (c.hybrid() ? c.hybrid()->graceful_stop : nanoseconds{});
  return std::chrono::ceil<seconds>(lead + c.duration + drain) + settle_time;
}

manifest plan_manifest(const k8s_manifest_options& k, const run_options& run,
                       std::vector<std::string> run_args, wall_time now) {
  const nanoseconds lead = parse_duration("--lead-time", k.lead_time);
  if (lead.count() <= 0) throw usage_error("--lead-time: must be more than 0");
  manifest m;
  m.k = k;
  if (m.k.name.empty()) m.k.name = "punctual-" + utc_text(now, true);
  if (m.k.cpu == 0) m.k.cpu = run.threads;
  check_names(m.k);
  m.generated_at = utc_text(now, false);
  m.start_at = utc_text(std::chrono::floor<std::chrono::milliseconds>(now + lead), false);
  const std::string dir = std::string(results_root) + "/" + m.k.name;
  const std::string n = std::to_string(m.k.shards);
  // Before any "--": after it, CLI11 would read them as positionals.
  const auto end = std::find(run_args.begin(), run_args.end(), "--");
  run_args.insert(end, {"--shard", "env/" + n, "--start-at", m.start_at, "--out-dir", dir});
  m.shard_args = {"run"};
  m.shard_args.insert(m.shard_args.end(), run_args.begin(), run_args.end());
  m.deadline = check_run(run, m, lead);
  m.merge_args = {"merge"};
  for (std::uint32_t i = 0; i < m.k.shards; ++i) {
    m.merge_args.push_back(dir + "/shard-" + std::to_string(i) + "-of-" + n + ".json");
  }
  m.merge_args.insert(m.merge_args.end(),
                      {"-o", dir + "/merged.json", "--html", dir + "/merged.html"});
  for (const auto& slo : run.slos) m.merge_args.insert(m.merge_args.end(), {"--slo", slo});
  if (run.slo_bound != "point")
    m.merge_args.insert(m.merge_args.end(), {"--slo-bound", run.slo_bound});
  return m;
}

// One UTF-8 code point at `i` (moved past it), or none if the bytes there are not UTF-8.
std::optional<char32_t> next_code_point(std::string_view s, std::size_t& i) {
  const auto b = static_cast<unsigned char>(s[i++]);
  const int extra = b < 0x80 ? 0 : (b >> 5) == 6 ? 1 : (b >> 4) == 14 ? 2 : (b >> 3) == 30 ? 3 : -1;
  if (extra < 0) return std::nullopt;
  char32_t c = extra == 0 ? b : b & (0x3f >> extra);
  for (int k = 0; k < extra; ++k, ++i) {
    if (i >= s.size() || (static_cast<unsigned char>(s[i]) >> 6) != 2) return std::nullopt;
    c = (c << 6) | (static_cast<unsigned char>(s[i]) & 0x3f);
  }
  constexpr char32_t least[] = {0, 0x80, 0x800, 0x10000};
  if (c < least[extra] || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) return std::nullopt;
  return c;
}

// A double-quoted YAML scalar. Controls, and what YAML 1.1 readers take for line breaks
// (U+0085, U+2028, U+2029), are escaped; a string that is not UTF-8 cannot be carried at all.
std::string yaml_quoted(std::string_view s) {
  std::string out = "\"";
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t start = i;
    const auto c = next_code_point(s, i);
    if (!c)
      throw usage_error(http::quoted(s) + " is not UTF-8 text, which a manifest cannot carry");
    if (*c == '"' || *c == '\\') {
      out += '\\';
      out += static_cast<char>(*c);
    } else if (*c == '\n' || *c == '\t') {
      out += *c == '\n' ? "\\n" : "\\t";
    } else if (*c < 0x20 || (*c >= 0x7f && *c <= 0x9f) || *c == 0x2028 || *c == 0x2029 ||
               *c == 0xfeff || (*c >= 0xfffe && *c <= 0xffff)) {
      out += fmt::format("\\u{:04X}", static_cast<unsigned>(*c));
    } else {
      out.append(s.substr(start, i - start));
    }
  }
  return out + "\"";
}

void emit(std::string& y, int depth, std::string_view text) {
  y.append(static_cast<std::size_t>(depth) * 2, ' ').append(text).append("\n");
}

void emit_list(std::string& y, int depth, std::string_view key,
               const std::vector<std::string>& items) {
  emit(y, depth, std::string(key) + ":");
  for (const auto& item : items) emit(y, depth + 1, "- " + yaml_quoted(item));
}

void emit_metadata(std::string& y, int depth, const manifest& m, std::string_view component,
                   bool with_name) {
  emit(y, depth, "metadata:");
  if (with_name) {
    emit(y, depth + 1,
         "name: " + yaml_quoted(component == "merge" ? m.k.name + "-merge" : m.k.name));
    if (!m.k.name_space.empty()) emit(y, depth + 1, "namespace: " + yaml_quoted(m.k.name_space));
  }
  emit(y, depth + 1, "labels:");
  emit(y, depth + 2, "app.kubernetes.io/name: \"punctual\"");
  emit(y, depth + 2, "app.kubernetes.io/instance: " + yaml_quoted(m.k.name));
  emit(y, depth + 2, "app.kubernetes.io/component: " + yaml_quoted(component));
}

// A container's first lines: its name (the list item), image and command.
void emit_container(std::string& y, int depth, const manifest& m, std::string_view name,
                    const std::vector<std::string>& command) {
  emit(y, depth, "- name: " + yaml_quoted(name));
  emit(y, depth + 1, "image: " + yaml_quoted(m.k.image));
  emit_list(y, depth + 1, "command", command);
}

void emit_results_mount(std::string& y, int depth) {
  emit(y, depth, "volumeMounts:");
  emit(y, depth + 1, "- name: \"results\"");
  emit(y, depth + 2, "mountPath: " + yaml_quoted(results_root));
}

// Requests equal to limits, in whole cores: the Guaranteed class, so a shard's threads are
// neither squeezed by its neighbours nor throttled below what it asked for.
void emit_resources(std::string& y, int depth, std::uint32_t cpu, const std::string& memory) {
  emit(y, depth, "resources:");
  for (const char* kind : {"requests:", "limits:"}) {
    emit(y, depth + 1, kind);
    emit(y, depth + 2, "cpu: " + yaml_quoted(std::to_string(cpu)));
    emit(y, depth + 2, "memory: " + yaml_quoted(memory));
  }
}

void emit_results_volume(std::string& y, int depth, const manifest& m) {
  emit(y, depth, "volumes:");
  emit(y, depth + 1, "- name: \"results\"");
  emit(y, depth + 2, "persistentVolumeClaim:");
  emit(y, depth + 3, "claimName: " + yaml_quoted(m.k.claim));
}

// A Job's lines down to its pod's restartPolicy, with `spec` (one line each) in the Job's spec.
std::string job_start(const manifest& m, std::string_view component,
                      const std::vector<std::string>& spec) {
  std::string y = "---\napiVersion: batch/v1\nkind: Job\n";
  emit_metadata(y, 0, m, component, true);
  emit(y, 0, "spec:");
  for (const auto& line : spec) emit(y, 1, line);
  emit(y, 1, "template:");
  emit_metadata(y, 2, m, component, false);
  emit(y, 2, "spec:");
  emit(y, 3, "restartPolicy: Never");
  return y;
}

std::string shard_job(const manifest& m) {
  const std::string n = std::to_string(m.k.shards);
  std::string y = job_start(
      m, "shard",
      {"completionMode: Indexed", "completions: " + n, "parallelism: " + n, "backoffLimit: 0",
       "activeDeadlineSeconds: " + std::to_string(m.deadline.count())});
  emit(y, 3, "containers:");
  emit_container(y, 4, m, "shard", {"/bin/sh", "-c", std::string(shard_script), "punctual-shard"});
  emit_list(y, 5, "args", m.shard_args);
  emit_resources(y, 5, m.k.cpu, m.k.memory);
  emit_results_mount(y, 5);
  emit_results_volume(y, 3, m);
  return y;
}

std::string merge_job(const manifest& m) {
  std::string y = job_start(m, "merge", {"backoffLimit: 0"});
  emit(y, 3, "initContainers:");
  emit_container(y, 4, m, "wait-for-shards",
                 {"/bin/sh", "-c", std::string(wait_script), "wait-for-shards",
                  std::string(results_root) + "/" + m.k.name, std::to_string(m.k.shards),
                  std::to_string(m.deadline.count())});
  emit_resources(y, 5, 1, m.k.memory);
  emit_results_mount(y, 5);
  emit(y, 3, "containers:");
  emit_container(y, 4, m, "merge", {"punctual"});
  emit_list(y, 5, "args", m.merge_args);
  emit_resources(y, 5, 1, m.k.memory);
  emit_results_mount(y, 5);
  emit_results_volume(y, 3, m);
  return y;
}

std::string render(const manifest& m) {
  std::string y = "# punctual k8s-manifest, generated " + m.generated_at + ": " +
                  std::to_string(m.k.shards) + " shards of one run, then their merge.\n";
  y += "# The measured window starts at " + m.start_at +
       ": kubectl apply it now (pods up, warm-up done by then).\n";
  y += "# Results: " + std::string(results_root) + "/" + m.k.name + "/ on the claim " + m.k.claim +
       ".\n";
  return y + shard_job(m) + merge_job(m);
}

}  // namespace k8s
}  // namespace

int k8s_manifest_command(const k8s_manifest_options& k, const run_options& run,
                         const std::vector<std::string>& command_line) {
  const k8s::wall_time now = std::chrono::system_clock::now();
  auto run_args = k8s::run_arguments(command_line);
  k8s::refuse_manifest_set_options(run_args);
  const auto m = k8s::plan_manifest(k, run, std::move(run_args), now);
  const std::string yaml = k8s::render(m);  // whole, so a refusal prints nothing on stdout
  if (std::fwrite(yaml.data(), 1, yaml.size(), stdout) != yaml.size() || std::fflush(stdout) != 0) {
    throw run_error("cannot write the manifest to stdout");
  }
  return exit_ok;
}

}  // namespace punctual::cli
