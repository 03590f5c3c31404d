#include "cli_run.hpp"

#include <sstream>

#include "analysis/interval_series.hpp"
#include "cli/app.hpp"
#include "cli/command.hpp"
#include "cli/run_command.hpp"
#include "cli/shard_options.hpp"
#include "punctual/histogram/interval_log.hpp"

namespace punctual::sim {

cli_result run_cli(const std::vector<std::string>& args, const surroundings& around) {
  std::vector<std::string> command_line{"punctual", "run"};
  command_line.insert(command_line.end(), args.begin(), args.end());
  const cli::run_options options = cli::parse_run_options(args);
  cli::run_setup built = cli::build_run(options, command_line);
  if (around.start_at) {
    built.config.start_at = around.start_at;
    // The run's id follows --start-at, as it would had the option named this instant.
    cli::apply_run_identity(options, built.config, built.slo_bound);
  } else if (options.run_id.empty()) {
    // A random id would make one seed's report differ from run to run: name it by the seed.
    built.config.run_id = "sim-" + std::to_string(around.seed);
  }
  return simulate_setup(std::move(built), around, cli::text_options_of(options));
}

cli_result simulate_setup(cli::run_setup built, const surroundings& around,
                          const report::text_options& text_options) {
  cli_result out;
  out.setup = std::move(built);
  setup s;
  s.config = out.setup.config;
  s.server = around.server;
  s.up = around.up;
  s.down = around.down;
  s.pauses = around.pauses;
  s.interrupt_at = around.interrupt_at;
  s.seed = around.seed;
  s.max_events = around.max_events;
  out.sim = std::make_unique<simulation>(std::move(s));
  simulation& sim = *out.sim;
  out.series =
      std::make_unique<analysis::interval_series>(analysis::slo_percentiles(out.setup.slos));
  analysis::interval_series& series = *out.series;
  std::ostringstream hlog;
  std::unique_ptr<hdr::interval_log_writer> log;
  const run::config& c = sim.settings().config;
  sim.set_sink([&](std::int64_t index, const record::view_set& v) {
    series.add(v);
    if (!log) {
      const auto start = sim.result().start.unix + c.warmup;
      log = std::make_unique<hdr::interval_log_writer>(hlog,
                                                       static_cast<double>(start.count()) / 1e9);
      log->write_header("[Logged with punctual 0.1.0]");
    }
    cli::write_interval(*log, index, v, c);
    if (around.on_interval) around.on_interval(v);
  });
  if (around.before_run) around.before_run(sim);
  if (!sim.run()) {
    out.exit_code = cli::exit_run_failed;
    return out;
  }
  out.hlog = hlog.str();
  out.verdicts = cli::judge(out.setup, sim.result(), series);
  out.exit_code = cli::exit_code_for(sim.result(), out.verdicts);
  std::ostringstream text;
  report::write_text(text, c, sim.result(), out.verdicts, text_options);
  out.text = text.str();
  std::ostringstream json;
  report::write_json(json, c, sim.result(), out.verdicts, out.text);
  out.json = json.str();
  out.doc = nlohmann::ordered_json::parse(out.json);
  return out;
}

std::set<std::string> failed_gating(const nlohmann::ordered_json& doc) {
  std::set<std::string> out;
  for (const auto& c : doc["validity"]["checks"]) {
    if (c["level"] == "gating" && !c["pass"].get<bool>()) out.insert(c["name"].get<std::string>());
  }
  return out;
}

}  // namespace punctual::sim
