// `punctual demo`: coordinated omission shown against a stalling server; the truth comes from its
// stall log, and the demo fails when the open-model run misses it.
#pragma once

#include <string>

namespace punctual::cli {

int demo_command(const std::string& json_path);

}  // namespace punctual::cli
