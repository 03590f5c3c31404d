#include <CLI/CLI.hpp>
#include <sys/resource.h>

#include <cstdio>
#include <exception>
#include <string>

#include "cli/command.hpp"

namespace {

int fail(int code, const char* what) {
  std::fprintf(stderr, "punctual: %s\n", what);
  return code;
}

bool is_subcommand(const CLI::App& app, const std::string& name) {
  for (const auto* sub : app.get_subcommands({})) {
    if (sub->get_name() == name) return true;
  }
  return false;
}

// Every connection is a descriptor: take the whole hard limit up front (as wrk users would with
// ulimit -n), so -c is bounded only by what the system allows.
void raise_descriptor_limit() noexcept {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max) {
    lim.rlim_cur = lim.rlim_max;
    setrlimit(RLIMIT_NOFILE, &lim);
  }
}

}  // namespace

int main(int argc, char** argv) {
  using namespace punctual::cli;
  CLI::App app{"punctual: an open-loop HTTP load generator whose latency numbers can be trusted"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "punctual 0.1.0");
  set_command_line(argc, argv);
  raise_descriptor_limit();
  command_runner chosen;
  add_run_command(app, chosen);
  add_serve_command(app, chosen);
  add_demo_command(app, chosen);
  add_report_command(app, chosen);
  add_merge_command(app, chosen);
  if (argc > 1 && argv[1][0] != '-' && !is_subcommand(app, argv[1])) {
    const std::string message = std::string("unknown command '") + argv[1] +
                                "' (expected run, serve, demo, report or merge)";
    return fail(exit_usage, message.c_str());
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return fail(exit_usage, e.what());
  }
  try {
    return chosen ? chosen() : fail(exit_usage, "no command given");
  } catch (const usage_error& e) {
    return fail(exit_usage, e.what());
  } catch (const run_error& e) {
    return fail(exit_run_failed, e.what());
  } catch (const std::exception& e) {
    return fail(exit_run_failed, e.what());
  }
}
