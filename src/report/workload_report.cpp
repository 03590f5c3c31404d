#include "report/workload_report.hpp"

namespace punctual::report {
namespace {
using json = nlohmann::ordered_json;
}  // namespace

json workload_json(const run::config& c) {
  json fields = json::object();
  for (const auto& f : c.workload.fields) fields[f.name] = f.value;
  return json{{"digest", c.workload.digest},
              {"fields", fields},
              {"seed", c.seed},
              {"duration_ns", c.duration.count()},
              {"warmup_ns", c.warmup.count()},
              {"threads", c.threads},
              {"connections", c.connections}};
}

run::workload_identity workload_of(const json& report) {
  const json& w = report.at("workload");
  run::workload_identity id;
  id.digest = w.at("digest").get<std::string>();
  for (const auto& [name, value] : w.at("fields").items())
    id.fields.push_back({name, value.get<std::string>()});
  return id;
}

}  // namespace punctual::report
