// `punctual demo`: coordinated omission shown against a stalling server; the truth comes from its
// stall log, and the demo fails when the open-model run misses it.
#pragma once

#include <string>

namespace punctual::cli {

// Writes the table as JSON to json_path, and its spectra as HTML to html_path (unless empty).
int demo_command(const std::string& json_path, const std::string& html_path);

}  // namespace punctual::cli
