// Feeds arbitrary bytes to the three V2 decoders; whatever decodes must survive a re-encode
// with identical counts.
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string_view>

#include "punctual/histogram/codec.hpp"

namespace {

using punctual::hdr::decode_result;
using punctual::hdr::histogram;

bool same_counts(const histogram& a, const histogram& b) {
  if (!(a.params() == b.params()) || a.total_count() != b.total_count() || a.max() != b.max() ||
      a.min() != b.min()) {
    return false;
  }
  const std::int32_t last = a.index_of(a.max());
  for (std::int32_t i = 0; i <= last; ++i) {
    if (a.count_at_index(i) != b.count_at_index(i)) return false;
  }
  return true;
}

void check_round_trip(const decode_result& r) {
  if (!r) {
    if (r.value) std::abort();  // an error must not carry a histogram
    return;
  }
  const histogram& h = *r.value;
  const decode_result again =
      punctual::hdr::decode_compressed(punctual::hdr::encode_compressed(h, 1));
  if (!again || !same_counts(h, *again.value)) std::abort();
  const decode_result raw =
      punctual::hdr::decode_uncompressed(punctual::hdr::encode_uncompressed(h));
  if (!raw || !same_counts(h, *raw.value)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> bytes(data, size);
  check_round_trip(punctual::hdr::decode_compressed(bytes));
  check_round_trip(punctual::hdr::decode_uncompressed(bytes));
  check_round_trip(punctual::hdr::decode_compressed_base64(
      std::string_view(reinterpret_cast<const char*>(data), size)));
  return 0;
}
