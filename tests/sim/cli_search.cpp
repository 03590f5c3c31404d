#include "cli_search.hpp"

#include <sstream>

#include "checks.hpp"
#include "cli/app.hpp"
#include "search/step_facts.hpp"

namespace punctual::sim {

namespace {

constexpr nanoseconds world_origin = std::chrono::seconds(1000);

class sim_runner final : public search::step_runner {
 public:
  sim_runner(const cli::search_setup& s, surroundings around, search_result& out)
      : s_(s), around_(std::move(around)), out_(out) {}

  search::step_facts run_step(const search::step_plan& plan) override {
    out_.backlog_before_step.push_back(around_.server.busy_at_start);
    cli_result r = simulate(cli::step_setup(s_, plan));
    if (r.exit_code == cli::exit_run_failed) throw cli::run_error("the step could not run");
    return cli::judge_step(r.setup, r.sim->result(), *r.series);
  }

  search::probe_result probe() override {
    ++out_.probes;
    cli_result r = simulate(cli::probe_setup(s_));
    return search::probe_of(r.sim->result());
  }

  nanoseconds elapsed() override { return elapsed_; }

 private:
  cli_result simulate(cli::run_setup setup) {
    setup.config.run_id = "sim-search";
    cli_result r = simulate_setup(std::move(setup), around_);
    world& w = r.sim->sim();
    elapsed_ += w.now() - world_origin;  // a world begins there (world.hpp)
    around_.server.busy_at_start =
        std::max(nanoseconds{0}, r.sim->server().cpu_free_at() - w.now());
    for (const auto& broken : check_run(*r.sim)) out_.broken.push_back(broken);
    return r;
  }

  const cli::search_setup& s_;
  surroundings around_;
  search_result& out_;
  nanoseconds elapsed_{};
};

}  // namespace

search_result search_cli(const std::vector<std::string>& args, const surroundings& around) {
  search_result out;
  std::vector<std::string> command_line{"punctual", "search"};
  command_line.insert(command_line.end(), args.begin(), args.end());
  out.setup = cli::build_search(cli::parse_search_options(args), command_line);
  sim_runner runner(out.setup, around, out);
  out.outcome = search::run_search(out.setup.settings, runner);
  out.exit_code = search::exit_code_of(out.outcome);
  std::ostringstream text;
  search::write_text(text, out.outcome, out.setup.context);
  out.text = text.str();
  out.doc = search::to_json(out.outcome, out.setup.context);
  return out;
}

}  // namespace punctual::sim
