// --requests FILE.yaml: the weighted request mix of the open model, encoded into the run's
// configuration once, before anything is sent.
#pragma once

#include <string>
#include <vector>

#include "cli/run_options.hpp"
#include "http/request.hpp"
#include "http/url.hpp"
#include "run/config.hpp"
#include "schedule/trace.hpp"

namespace punctual::cli {

// Loads o.requests_file (if given) into c.mix. Every entry goes to the run's target: a path, or
// a full URL on the same origin. -H headers apply to every entry, unless the entry sets the same
// header itself. A replayed trace (`replay`, may be null) whose lines name requests selects
// them from the mix, which must define every name it uses. Throws usage_error with one line naming
// the file, line and key. What a file says of one request (a mix entry, a scenario step).
struct entry_text {
  const std::string& method;
  const std::string& target;  // a path, or a full URL on the run's origin
  const std::vector<std::string>& headers;
  const std::string& body;
};

// Encodes one request of a file for the run's target, -H headers included (an entry's own header
// of the same name wins). `where` ("--requests mix.yaml:7") starts its errors.
run::named_request encode_entry(const run_options& o, const http::url& target,
                                const std::string& where, const entry_text& e);
// The same request before encoding, checked.
http::request_spec spec_of_entry(const run_options& o, const http::url& target,
                                 const std::string& where, const entry_text& e);

void apply_request_mix(const run_options& o, const http::url& target, const schedule::trace* replay,
                       run::config& c);

}  // namespace punctual::cli
