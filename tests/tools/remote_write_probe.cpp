// Pushes hand-built snapshots through the remote-write sink exactly as a run does (the sink, the
// pusher, the HTTP transport), for tests/integration/test_remote_write.py to check what a real
// Prometheus stored. It stands in for a run where only the remote-write half is under test.
//
//   remote_write_probe URL RUN_ID SHARD SNAPSHOTS
//
// Snapshot k (1..SNAPSHOTS, the last one through finish()) holds
// punctual_requests_total{outcome="ok"} = 10k and {outcome="http_error"} = 3k, and
// punctual_info{run_id=RUN_ID} = 1, one second apart ending now. Prints the push counts as JSON.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "http/url.hpp"
#include "metrics/http_push.hpp"
#include "metrics/remote_write.hpp"

namespace {

using namespace punctual;

metrics::snapshot numbered(int k, int of, const std::string& run_id) {
  metrics::snapshot s;
  s.taken = std::chrono::system_clock::now() - std::chrono::seconds(of - k);
  s.families = {{"punctual_requests_total", metrics::metric_type::counter, "requests"},
                {"punctual_info", metrics::metric_type::gauge, "the run"}};
  s.samples = {{"punctual_requests_total", {{"outcome", "ok"}, {"name", ""}}, 10.0 * k},
               {"punctual_requests_total", {{"outcome", "http_error"}, {"name", ""}}, 3.0 * k},
               {"punctual_info", {{"run_id", run_id}}, 1}};
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: remote_write_probe URL RUN_ID SHARD SNAPSHOTS\n");
    return 2;
  }
  const auto url = http::parse_url(argv[1]);
  if (!url) {
    std::fprintf(stderr, "remote_write_probe: %s\n", url.error.c_str());
    return 2;
  }
  const int count = std::atoi(argv[4]);
  metrics::remote_write_options o;
  o.url = argv[1];
  o.labels = {{"run_id", argv[2]}, {"shard", argv[3]}};
  metrics::remote_write sink(o, metrics::http_push_transport(*url.value, {}));
  for (int k = 1; k <= count; ++k) {
    const auto s = numbered(k, count, argv[2]);
    if (k < count) {
      sink.publish(s);
    } else {
      sink.finish(s);
    }
  }
  const metrics::push_stats st = sink.close();
  std::printf(
      "{\"snapshots\": %llu, \"pushes\": %llu, \"samples\": %llu, \"failed_attempts\": %llu, "
      "\"dropped\": %llu, \"final_pushed\": %s}\n",
      static_cast<unsigned long long>(st.snapshots), static_cast<unsigned long long>(st.requests),
      static_cast<unsigned long long>(st.samples),
      static_cast<unsigned long long>(st.failed_attempts),
      static_cast<unsigned long long>(st.dropped), st.final_pushed ? "true" : "false");
  return 0;
}
