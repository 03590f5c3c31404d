// The rules every simulated run must keep, checked exactly against what really happened (the
// server's log, the network's byte logs, the tap's records). Each broken rule is one line naming
// the request and the instants, so a failing seed says what went wrong.
#pragma once

#include <string>
#include <vector>

#include "simulation.hpp"

namespace punctual::sim {

// planned == sum(outcomes) for the run, every worker, every name and every scenario's sessions;
// every planned request of the window ended exactly once (the tap agrees with the counts).
std::vector<std::string> check_accounting(const simulation& sim);

// Each request against the truth: a response's completion is the receive stamp of the read that
// took its last byte (over HTTP/1.1, that byte's arrival); its outcome is the deadline rule's; a
// timeout is recorded at exactly its deadline; no ok at or after it; a one-attempt request's
// response time is the sum of its parts; a retry is due its backoff after the failure before it.
std::vector<std::string> check_requests(const simulation& sim);

// The report's response-time histogram holds exactly the tap's response times of the window.
std::vector<std::string> check_histograms(const simulation& sim);

// All of the above.
std::vector<std::string> check_run(const simulation& sim);

// The lines joined, for a test's failure message (at most `most` of them).
std::string describe(const std::vector<std::string>& problems, std::size_t most = 12);

}  // namespace punctual::sim
