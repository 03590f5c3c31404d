// The workload identity (run/workload_identity.hpp) in a JSON report: written by every run, read
// back by whatever asks whether two reports ran the same workload (the merge of shards).
#pragma once

#include <string>

#include "report/json.hpp"
#include "run/config.hpp"

namespace punctual::report {

// `workload`: its digest and fields, then what varies between runs of one workload (the seed,
// the duration, the warm-up, threads and connections), which the digest leaves out.
nlohmann::ordered_json workload_json(const run::config& c);

// The identity a report carries. Throws nlohmann::json::exception when it has none (a report
// older than schema_version 2) or when its fields are not texts.
run::workload_identity workload_of(const nlohmann::ordered_json& report);

}  // namespace punctual::report
