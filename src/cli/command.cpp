#include "cli/command.hpp"

namespace punctual::cli {
namespace {

std::vector<std::string>& stored_command_line() {
  static std::vector<std::string> line;
  return line;
}

}  // namespace

void set_command_line(int argc, char** argv) {
  stored_command_line().assign(argv, argv + argc);
}

const std::vector<std::string>& command_line() {
  return stored_command_line();
}

}  // namespace punctual::cli
