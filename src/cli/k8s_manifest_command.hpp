// `punctual k8s-manifest`: the Kubernetes objects of one sharded run, printed as one YAML stream
// for `kubectl apply -f`: an Indexed Job whose pod I runs `punctual run ... --shard env/N`, and a
// Job that waits for the N shard reports and merges them (deploy/kubernetes/README.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cli/run_options.hpp"

namespace punctual::cli {

// k8s-manifest's own options, as typed. Every other option is a `run` option, passed to the
// shards as typed.
struct k8s_manifest_options {
  std::uint32_t shards = 0;      // required, >= 1: one pod each
  std::string lead_time = "2m";  // from now to the start of the measured window
  std::string image = "punctual:0.1.0";
  std::string claim = "punctual-results";  // a ReadWriteMany PersistentVolumeClaim
  std::string memory = "512Mi";            // request and limit of every pod
  std::uint32_t cpu = 0;                   // whole cores per shard; 0: the run's -t
  std::string name;                        // empty: punctual-<UTC yyyymmdd-hhmmss>
  std::string name_space;                  // empty: whatever namespace kubectl applies to
};

// The names of k8s-manifest's own options (each takes one value), which are not passed to the
// shards. app.cpp registers them under these names.
namespace k8s_option {
inline constexpr const char* shards = "--shards";
inline constexpr const char* lead_time = "--lead-time";
inline constexpr const char* image = "--image";
inline constexpr const char* claim = "--claim";
inline constexpr const char* memory = "--memory";
inline constexpr const char* cpu = "--cpu";
inline constexpr const char* name = "--name";
inline constexpr const char* name_space = "--namespace";
inline constexpr const char* all[] = {shards, lead_time, image, claim,
                                      memory, cpu,       name,  name_space};
// The run options the manifest sets on every shard itself, refused when typed.
inline constexpr const char* set_by_manifest[] = {"--shard", "--start-at", "--out-dir",
                                                  "--json",  "--hlog",     "--html"};
}  // namespace k8s_option

// Prints the manifest on stdout. `command_line` is the whole argv: the shards get the tokens after
// the subcommand, less k8s-manifest's own options, verbatim and in order. `run` holds the same
// run options parsed, and is checked as `punctual run` checks it (usage_error: exit 2).
int k8s_manifest_command(const k8s_manifest_options& k, const run_options& run,
                         const std::vector<std::string>& command_line);

}  // namespace punctual::cli
