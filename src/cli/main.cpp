#include "cli/app.hpp"

int main(int argc, char** argv) {
  return punctual::cli::run_app(argc, argv);
}
