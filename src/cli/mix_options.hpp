// --requests FILE.yaml: the weighted request mix of the open model, encoded into the run's
// configuration once, before anything is sent.
#pragma once

#include "cli/run_options.hpp"
#include "http/url.hpp"
#include "run/config.hpp"
#include "schedule/trace.hpp"

namespace punctual::cli {

// Loads o.requests_file (if given) into c.mix. Every entry goes to the run's target: a path, or
// a full URL on the same origin. -H headers apply to every entry, unless the entry sets the same
// header itself. A replayed trace (`replay`, may be null) whose lines name requests selects
// them from the mix, which must define every name it uses. Throws usage_error with one line naming the file, line and key.
void apply_request_mix(const run_options& o, const http::url& target,
                       const schedule::trace* replay, run::config& c);

}  // namespace punctual::cli
