// What a run's memory is made of, by owner, in bytes (docs/design.md, "Memory"): a debug
// account, which `punctual run` writes when PUNCTUAL_MEMORY_REPORT names a file. Histograms count
// their resident pages (a histogram's layout spans ~270 KB, of which only the pages its values
// touched cost memory); vectors count their capacity.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "engine/config.hpp"

namespace punctual::engine {

struct memory_row {
  std::string owner;
  std::size_t bytes = 0;
};
using memory_account = std::vector<memory_row>;

// The most the run's histograms can hold resident, whatever the run's length: every histogram
// with all its pages written (docs/design.md, "Memory"). `pending_intervals`: interval sets the
// collector holds at once (pending and spare); 2 while the workers hand intervals over within a
// second of each other, one more per second a worker lags behind the others. `pending_seconds`:
// intended seconds waiting for the slowest worker, likewise.
struct histogram_bound {
  std::size_t histogram_bytes = 0;  // one histogram, all slots
  std::size_t ring_slots = 0;       // intended seconds per worker
  std::size_t per_worker = 0;       // interval sets, the ring, warm-up views, send gaps, steps
  std::size_t collector = 0;        // pending interval sets, pending seconds and the worst one
  std::size_t run_totals = 0;       // the run's measured and warm-up views, steps, worst second
  std::size_t total = 0;            // threads x per_worker + collector + run_totals
};
histogram_bound bound_histograms(const run_config& config, std::size_t pending_intervals = 2,
                                 std::size_t pending_seconds = 2);

// What grows with the run's length, in bytes per second of it (at one interval per second):
// the per-second load series (sized for the whole run at its start), the interval series and
// the interval summaries, counted at their vectors' doubling (twice the bytes they fill).
// `extra_percentiles`: the SLOs' percentiles the interval series tracks beside the usual ones.
std::size_t series_bytes_per_second(const run_config& config, std::size_t extra_percentiles = 0);

// The process as a whole: its resident set, and what malloc holds in use (connections'
// buffers, TLS and nghttp2 state, the report's text at the end, and every vector above).
void add_process_rows(memory_account& rows);

// The account as text, one "when owner bytes" line per row.
std::string format_account(const std::string& when, const memory_account& rows);

}  // namespace punctual::engine
