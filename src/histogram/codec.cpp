// V2 encoding (spec 3): big-endian header, ZigZag + LEB128-64b9B payload, zlib wrapper.
#include "punctual/histogram/codec.hpp"

#include <zlib.h>

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace punctual::hdr {

namespace {

constexpr std::uint32_t encoding_cookie = 0x1c849313;
constexpr std::uint32_t compressed_cookie = 0x1c849314;
constexpr std::uint32_t cookie_base_mask = ~std::uint32_t{0xf0};  // drops the word-size nibble
constexpr std::size_t header_size = 40;
constexpr std::size_t wrapper_header_size = 8;
constexpr std::uint64_t ratio_one_bits = 0x3ff0000000000000;  // IEEE-754 1.0
constexpr std::int64_t max_run = std::numeric_limits<std::int32_t>::max();
constexpr std::int32_t max_decoded_counts_length = 1 << 24;  // bounds memory a header can demand
constexpr std::size_t max_leb128_bytes = 9;

void put_be(std::vector<std::uint8_t>& out, std::uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

std::uint64_t get_be(const std::uint8_t* p, int bytes) noexcept {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | p[i];
  return v;
}

void put_item(std::vector<std::uint8_t>& out, std::int64_t item) {
  std::uint64_t z =
      (static_cast<std::uint64_t>(item) << 1) ^ static_cast<std::uint64_t>(item >> 63);
  // LEB128-64b9B: eight 7-bit groups with continuation flags, then a whole 8-bit ninth byte.
  for (std::size_t i = 0; i + 1 < max_leb128_bytes; ++i) {
    if (z < 0x80) {
      out.push_back(static_cast<std::uint8_t>(z));
      return;
    }
    out.push_back(static_cast<std::uint8_t>((z & 0x7f) | 0x80));
    z >>= 7;
  }
  out.push_back(static_cast<std::uint8_t>(z));
}

// Returns false when the item is cut short by the end of the payload.
bool get_item(const std::uint8_t*& p, const std::uint8_t* end, std::int64_t& item) noexcept {
  std::uint64_t z = 0;
  for (std::size_t i = 0; i < max_leb128_bytes; ++i) {
    if (p == end) return false;
    const std::uint8_t b = *p++;
    if (i + 1 == max_leb128_bytes) {
      z |= std::uint64_t{b} << 56;
      break;
    }
    z |= std::uint64_t{b & 0x7fu} << (7 * i);
    if ((b & 0x80) == 0) break;
  }
  item = static_cast<std::int64_t>((z >> 1) ^ (~(z & 1) + 1));
  return true;
}

struct header {
  histogram_params params;
  std::int64_t payload_length = 0;
};

decode_error parse_header(const std::uint8_t* p, header& out) noexcept {
  const auto cookie = static_cast<std::uint32_t>(get_be(p, 4));
  if ((cookie & cookie_base_mask) != (encoding_cookie & cookie_base_mask))
    return decode_error::bad_cookie;
  out.payload_length = static_cast<std::int32_t>(get_be(p + 4, 4));
  if (out.payload_length < 0) return decode_error::length_mismatch;
  // Offset 8 (normalizingIndexOffset) and 32 (conversion ratio) are ignored on purpose (spec 3.6).
  out.params.significant_digits = static_cast<std::int32_t>(get_be(p + 12, 4));
  out.params.lowest_discernible_value = static_cast<std::int64_t>(get_be(p + 16, 8));
  out.params.highest_trackable_value = static_cast<std::int64_t>(get_be(p + 24, 8));
  if (!valid(out.params)) return decode_error::bad_parameters;
  return decode_error::none;
}

decode_result fail(decode_error e) {
  return decode_result{std::nullopt, e};
}

decode_error fill_counts(const std::uint8_t* p, const std::uint8_t* end, histogram& h) noexcept {
  std::int64_t index = 0;
  std::int64_t total = 0;
  while (p != end) {
    std::int64_t item = 0;
    if (!get_item(p, end, item)) return decode_error::bad_leb128;
    if (item < 0) {
      const std::uint64_t run = 0 - static_cast<std::uint64_t>(item);
      if (run > static_cast<std::uint64_t>(max_run)) return decode_error::bad_run;
      index += static_cast<std::int64_t>(run);
      if (index > h.counts_length()) return decode_error::slot_out_of_range;
      continue;
    }
    if (index >= h.counts_length()) return decode_error::slot_out_of_range;
    if (item > std::numeric_limits<std::int64_t>::max() - total)
      return decode_error::negative_count;
    total += item;
    if (item != 0) h.set_count_at_index(static_cast<std::int32_t>(index), item);
    ++index;
  }
  return decode_error::none;
}

}  // namespace

std::string_view to_string(decode_error error) noexcept {
  switch (error) {
    case decode_error::none:
      return "none";
    case decode_error::truncated:
      return "truncated";
    case decode_error::bad_cookie:
      return "bad cookie";
    case decode_error::bad_leb128:
      return "bad LEB128";
    case decode_error::bad_zlib:
      return "bad zlib stream";
    case decode_error::length_mismatch:
      return "length mismatch";
    case decode_error::slot_out_of_range:
      return "slot out of range";
    case decode_error::bad_run:
      return "bad run of empty slots";
    case decode_error::negative_count:
      return "negative or overflowing count";
    case decode_error::bad_parameters:
      return "bad parameters";
    case decode_error::bad_base64:
      return "bad base64";
  }
  return "unknown";
}

std::vector<std::uint8_t> encode_uncompressed(const histogram& h) {
  std::vector<std::uint8_t> out;
  out.reserve(header_size + 64);
  put_be(out, encoding_cookie, 4);
  put_be(out, 0, 4);  // payload length, patched below
  put_be(out, 0, 4);  // normalizingIndexOffset: always 0, as Java writes
  put_be(out, static_cast<std::uint32_t>(h.params().significant_digits), 4);
  put_be(out, static_cast<std::uint64_t>(h.params().lowest_discernible_value), 8);
  put_be(out, static_cast<std::uint64_t>(h.params().highest_trackable_value), 8);
  put_be(out, ratio_one_bits, 8);
  const bool empty = h.total_count() == 0;
  const std::int32_t last = empty ? 0 : h.index_of(h.max());
  // The slots below the lowest sample are one run of zeros, written without reading them.
  std::int32_t i = empty ? 0 : h.index_of(h.min());
  if (i > 0) put_item(out, i == 1 ? 0 : -std::int64_t{i});
  while (i <= last) {
    const std::int64_t c = h.count_at_index(i);
    if (c != 0 || i == last) {
      put_item(out, c);
      ++i;
      continue;
    }
    std::int32_t j = i;
    while (j < last && h.count_at_index(j) == 0) ++j;
    const std::int64_t run = j - i;
    put_item(out, run == 1 ? 0 : -run);  // Java style: a lone empty slot is a plain 0
    i = j;
  }
  const auto payload = static_cast<std::uint32_t>(out.size() - header_size);
  for (int k = 0; k < 4; ++k)
    out[4 + static_cast<std::size_t>(k)] = static_cast<std::uint8_t>(payload >> (8 * (3 - k)));
  return out;
}

std::vector<std::uint8_t> encode_compressed(const histogram& h, int zlib_level) {
  const std::vector<std::uint8_t> raw = encode_uncompressed(h);
  uLongf zlen = compressBound(static_cast<uLong>(raw.size()));
  std::vector<std::uint8_t> out(wrapper_header_size + zlen);
  const int rc = compress2(out.data() + wrapper_header_size, &zlen, raw.data(),
                           static_cast<uLong>(raw.size()), std::clamp(zlib_level, 0, 9));
  if (rc != Z_OK) throw std::runtime_error("zlib compress2 failed");
  out.resize(wrapper_header_size + zlen);
  std::vector<std::uint8_t> prefix;
  put_be(prefix, compressed_cookie, 4);
  put_be(prefix, zlen, 4);
  std::copy(prefix.begin(), prefix.end(), out.begin());
  return out;
}

std::string encode_compressed_base64(const histogram& h, int zlib_level) {
  return base64_encode(encode_compressed(h, zlib_level));
}

decode_result decode_uncompressed(std::span<const std::uint8_t> bytes) {
  if (bytes.size() < header_size) return fail(decode_error::truncated);
  header hdr;
  if (const decode_error e = parse_header(bytes.data(), hdr); e != decode_error::none)
    return fail(e);
  const std::size_t available = bytes.size() - header_size;
  if (available < static_cast<std::uint64_t>(hdr.payload_length))
    return fail(decode_error::truncated);
  if (available > static_cast<std::uint64_t>(hdr.payload_length))
    return fail(decode_error::length_mismatch);
  // Every item covers at least one slot, so a payload longer than this cannot be valid.
  const std::int64_t slots = counts_length_for(hdr.params);
  if (slots > max_decoded_counts_length) return fail(decode_error::bad_parameters);
  if (hdr.payload_length > slots * static_cast<std::int64_t>(max_leb128_bytes)) {
    return fail(decode_error::length_mismatch);
  }
  try {
    histogram h(hdr.params);
    const std::uint8_t* p = bytes.data() + header_size;
    if (const decode_error e = fill_counts(p, p + hdr.payload_length, h); e != decode_error::none)
      return fail(e);
    return decode_result{std::move(h), decode_error::none};
  } catch (const std::exception&) {  // allocation failure for a huge but valid layout
    return fail(decode_error::bad_parameters);
  }
}

namespace {

// Inflates into [out, out + size); returns the inflate() status of the last call.
int inflate_into(z_stream& zs, std::uint8_t* out, std::size_t size) noexcept {
  zs.next_out = out;
  zs.avail_out = static_cast<uInt>(size);
  int rc = Z_OK;
  while (zs.avail_out > 0) {
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc != Z_OK) break;
  }
  return rc;
}

// After the expected output is complete the stream must end with no further output and no
// trailing input (HdrHistogram_c requires exactly this).
decode_error finish_stream(z_stream& zs, int last_rc) noexcept {
  if (last_rc != Z_STREAM_END) {
    std::uint8_t extra = 0;
    zs.next_out = &extra;
    zs.avail_out = 1;
    last_rc = inflate(&zs, Z_FINISH);
    if (zs.avail_out == 0) return decode_error::length_mismatch;
    if (last_rc != Z_STREAM_END) return decode_error::bad_zlib;
  }
  return zs.avail_in == 0 ? decode_error::none : decode_error::bad_zlib;
}

struct inflater {
  z_stream zs{};
  bool ok = false;
  explicit inflater(std::span<const std::uint8_t> in) noexcept {
    zs.next_in = const_cast<Bytef*>(in.data());  // zlib's API is not const-correct
    zs.avail_in = static_cast<uInt>(in.size());
    ok = inflateInit(&zs) == Z_OK;
  }
  ~inflater() {
    if (ok) inflateEnd(&zs);
  }
  inflater(const inflater&) = delete;
  inflater& operator=(const inflater&) = delete;
};

// Maps a short inflate to its error: a stream that ended early disagrees with payloadLength;
// anything else (corrupt data, input exhausted mid-stream) is a bad zlib stream.
decode_error inflate_error(int rc) noexcept {
  return rc == Z_STREAM_END ? decode_error::length_mismatch : decode_error::bad_zlib;
}

}  // namespace

decode_result decode_compressed(std::span<const std::uint8_t> bytes) {
  if (bytes.size() < wrapper_header_size) return fail(decode_error::truncated);
  const auto cookie = static_cast<std::uint32_t>(get_be(bytes.data(), 4));
  if ((cookie & cookie_base_mask) != (compressed_cookie & cookie_base_mask))
    return fail(decode_error::bad_cookie);
  const auto zlen = static_cast<std::int32_t>(get_be(bytes.data() + 4, 4));
  if (zlen < 0) return fail(decode_error::length_mismatch);
  const std::size_t available = bytes.size() - wrapper_header_size;
  if (available < static_cast<std::size_t>(zlen)) return fail(decode_error::truncated);
  if (available > static_cast<std::size_t>(zlen)) return fail(decode_error::length_mismatch);

  inflater z(bytes.subspan(wrapper_header_size));
  if (!z.ok) return fail(decode_error::bad_zlib);
  std::vector<std::uint8_t> raw(header_size);
  int rc = inflate_into(z.zs, raw.data(), header_size);
  if (z.zs.avail_out != 0) return fail(inflate_error(rc));
  header hdr;
  if (const decode_error e = parse_header(raw.data(), hdr); e != decode_error::none) return fail(e);
  // The header alone decides how much we inflate, and it is bounded by the layout it describes.
  const std::int64_t slots = counts_length_for(hdr.params);
  if (slots > max_decoded_counts_length) return fail(decode_error::bad_parameters);
  if (hdr.payload_length > slots * static_cast<std::int64_t>(max_leb128_bytes)) {
    return fail(decode_error::length_mismatch);
  }
  raw.resize(header_size + static_cast<std::size_t>(hdr.payload_length));
  if (hdr.payload_length > 0) {
    rc = inflate_into(z.zs, raw.data() + header_size, static_cast<std::size_t>(hdr.payload_length));
    if (z.zs.avail_out != 0) return fail(inflate_error(rc));
  }
  if (const decode_error e = finish_stream(z.zs, rc); e != decode_error::none) return fail(e);
  return decode_uncompressed(raw);
}

decode_result decode_compressed_base64(std::string_view text) {
  std::vector<std::uint8_t> bytes;
  if (!base64_decode(text, bytes)) return fail(decode_error::bad_base64);
  return decode_compressed(bytes);
}

}  // namespace punctual::hdr
