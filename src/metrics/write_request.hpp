// Snapshots as the body of one remote-write 1.0 request: a protobuf WriteRequest (the messages
// of proto/remote.proto, encoded by the protobuf library), compressed with snappy's block
// format. Each series is one TimeSeries whose samples are the snapshots' values, oldest first;
// its labels are the sample's own, `__name__` and the added ones (run_id, shard), sorted by name
// as the protocol asks.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "metrics/series.hpp"

namespace punctual::metrics {

// Milliseconds since the Unix epoch: a remote-write timestamp.
std::int64_t timestamp_ms(std::chrono::system_clock::time_point t) noexcept;

// The serialized WriteRequest (uncompressed). `added` labels go on every series that does not
// already have a label of that name (punctual_info carries run_id itself). The families'
// metadata goes with every request: a receiver that keeps it needs it only once, and it is small.
std::string encode_write_request(const std::vector<snapshot>& batch,
                                 const std::vector<label>& added);

// Snappy's block format, as remote write requires (not the framed stream format).
std::string snappy_compress(std::string_view raw);
// Empty optional-like result: false when `compressed` is not valid snappy.
bool snappy_uncompress(std::string_view compressed, std::string& raw);

}  // namespace punctual::metrics
