// V2 encoding against the spec's worked examples and the golden files (spec 3, 8).
#include <gtest/gtest.h>
#include <zlib.h>

#include <cmath>
#include <cstdint>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "punctual/histogram/codec.hpp"
#include "report/json.hpp"
#include "test_files.hpp"

namespace punctual::hdr {
namespace {

using bytes = std::vector<std::uint8_t>;

using test::read_text;

nlohmann::json read_json(const std::string& name) {
  return nlohmann::json::parse(read_text(name));
}

std::string to_hex(const bytes& b) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (const std::uint8_t c : b) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

bytes from_hex(const std::string& hex) {
  bytes out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<std::uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return out;
}

histogram_params params_from(const nlohmann::json& j) {
  return {j.at("lowestDiscernibleValue").get<std::int64_t>(),
          j.at("highestTrackableValue").get<std::int64_t>(),
          j.at("numberOfSignificantValueDigits").get<int>()};
}

void replay(const nlohmann::json& ops, histogram& h) {
  for (const auto& op : ops) {
    const std::string kind = op.at("op");
    if (kind == "recordRange") {
      for (std::int64_t v = op.at("from"); v <= op.at("to").get<std::int64_t>(); ++v) h.record(v);
    } else if (kind == "record") {
      h.record_n(op.at("value"), op.at("count"));
    } else if (kind == "recordWithExpectedInterval") {
      h.record_corrected(op.at("value"), op.at("expectedInterval"));
    } else {
      ADD_FAILURE() << "unknown op " << kind;
    }
  }
}

void expect_counts_equal(const histogram& a, const histogram& b) {
  ASSERT_EQ(a.params(), b.params());
  EXPECT_EQ(a.total_count(), b.total_count());
  for (std::int32_t i = 0; i < a.counts_length(); ++i)
    ASSERT_EQ(a.count_at_index(i), b.count_at_index(i)) << i;
}

// Checks the figures hdrcheck wrote for one histogram (totalCount, min, max, mean, sd,
// percentiles).
void expect_figures(const histogram& h, const nlohmann::json& j) {
  EXPECT_EQ(h.total_count(), j.at("totalCount").get<std::int64_t>());
  EXPECT_EQ(h.min(), j.at("min").get<std::int64_t>());
  EXPECT_EQ(h.max(), j.at("max").get<std::int64_t>());
  const double mean = j.at("mean");
  const double sd = j.at("stdDeviation");
  EXPECT_NEAR(h.mean(), mean, std::abs(mean) * 1e-9);
  EXPECT_NEAR(h.stddev(), sd, std::abs(sd) * 1e-9);
  for (const auto& [key, value] : j.at("percentiles").items()) {
    EXPECT_EQ(h.value_at_percentile(std::stod(key)), value.get<std::int64_t>()) << "p" << key;
  }
}

// The histogram lines of an .hlog: the last comma-separated field of every non-comment line.
std::vector<std::string> hlog_histograms(const std::string& name) {
  std::vector<std::string> out;
  std::istringstream in(read_text(name));
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#' || line[0] == '"') continue;
    out.push_back(line.substr(line.rfind(',') + 1));
  }
  return out;
}

histogram must_decode_base64(const std::string& text) {
  decode_result r = decode_compressed_base64(text);
  EXPECT_TRUE(r) << to_string(r.error);
  return r ? *r.value : histogram();
}

// A 40-byte V2 header (ldv 1, htv 3.6e9, sig 3) followed by the given payload.
bytes with_header(const bytes& payload, std::uint32_t cookie = 0x1c849313) {
  bytes out = from_hex(
      "1c84931300000000000000000000000300000000000000010000000"
      "0d693a4003ff0000000000000");
  for (int k = 0; k < 4; ++k)
    out[static_cast<std::size_t>(k)] = static_cast<std::uint8_t>(cookie >> (24 - 8 * k));
  out[7] = static_cast<std::uint8_t>(payload.size());
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

TEST(histogram_codec, leb128_zigzag_table_3_3) {
  // Non-negative items are the count of slot 0.
  const std::pair<std::int64_t, std::string> counts[] = {
      {0, "00"}, {1, "02"}, {3, "06"}, {100, "c801"}, {1000, "d00f"}};
  for (const auto& [count, hex] : counts) {
    SCOPED_TRACE(count);
    histogram h({1, 3'600'000'000, 3});
    h.set_count_at_index(0, count);
    EXPECT_EQ(to_hex(encode_uncompressed(h)).substr(80), hex);
    const decode_result r = decode_uncompressed(with_header(from_hex(hex)));
    ASSERT_TRUE(r) << to_string(r.error);
    EXPECT_EQ(r.value->count_at_index(0), count);
  }
  // Negative items are runs of empty slots before the one count at slot n.
  const std::pair<std::int32_t, std::string> runs[] = {{98, "c301"}, {12480, "ffc201"}};
  for (const auto& [slot, hex] : runs) {
    SCOPED_TRACE(slot);
    histogram h({1, 3'600'000'000, 3});
    h.set_count_at_index(slot, 1);
    EXPECT_EQ(to_hex(encode_uncompressed(h)).substr(80), hex + "02");
    const decode_result r = decode_uncompressed(with_header(from_hex(hex + "02")));
    ASSERT_TRUE(r) << to_string(r.error);
    EXPECT_EQ(r.value->count_at_index(slot), 1);
    EXPECT_EQ(r.value->total_count(), 1);
  }
  // -1 (01) is never written by us (a lone gap is 00) but must be read as one empty slot.
  const decode_result r = decode_uncompressed(with_header(from_hex("0102")));
  ASSERT_TRUE(r);
  EXPECT_EQ(r.value->count_at_index(0), 0);
  EXPECT_EQ(r.value->count_at_index(1), 1);
  histogram lone({1, 3'600'000'000, 3});
  lone.record(1);
  EXPECT_EQ(to_hex(encode_uncompressed(lone)).substr(80), "0002");
}

TEST(histogram_codec, nine_byte_leb128_for_huge_counts) {
  histogram h({1, 3'600'000'000, 3});
  h.set_count_at_index(0, INT64_MAX);  // zigzag 2^64 - 2: eight 7-bit groups + a whole byte
  const bytes enc = encode_uncompressed(h);
  EXPECT_EQ(to_hex(enc).substr(80), "feffffffffffffffff");
  const decode_result r = decode_uncompressed(enc);
  ASSERT_TRUE(r);
  EXPECT_EQ(r.value->count_at_index(0), INT64_MAX);
}

TEST(histogram_codec, worked_example_a_payload) {
  histogram h({1, 3'600'000'000, 3});
  h.record(1);
  h.record(1);
  h.record(3);
  h.record(2'500'000);
  const bytes enc = encode_uncompressed(h);
  ASSERT_EQ(enc.size(), 48u);
  EXPECT_EQ(to_hex(enc).substr(0, 16), "1c84931300000008");
  EXPECT_EQ(to_hex(enc).substr(80), "00040002ffc20102");
}

TEST(histogram_codec, worked_example_b_header_payload_and_level_9_base64) {
  histogram h({1, 60'000'000, 2});
  h.record_n(0, 5);
  h.record_n(1, 3);
  h.record_n(100, 1000);
  h.record(255);
  h.record(256);
  h.record_n(257, 2);
  h.record(1'000'000);
  EXPECT_EQ(to_hex(encode_uncompressed(h)),
            "1c8493130000000d00000000000000020000000000000001000000000393870"
            "03ff0000000000000"
            "0a06c301d00fb3020206e51702");
  EXPECT_EQ(encode_compressed_base64(h, 9),
            "HISTFAAAAC142pNpmSzMwMDAywABTFCaEUQwT25nsP8AEeBiO8x4gX8zExPbU3EmAI+eBxE=");
}

TEST(histogram_codec, recorded_values_replay_matches_java_bytes) {
  const nlohmann::json j = read_json("recorded-values.json");
  const histogram_params log_params = params_from(j.at("log").at("histogramParameters"));
  for (const auto& interval : j.at("log").at("intervals")) {
    histogram h(log_params);
    replay(interval.at("ops"), h);
    EXPECT_EQ(to_hex(encode_uncompressed(h)),
              interval.at("canonicalUncompressedHex").get<std::string>());
  }
  histogram single(params_from(j.at("single").at("histogramParameters")));
  replay(j.at("single").at("ops"), single);
  EXPECT_EQ(to_hex(encode_uncompressed(single)),
            j.at("single").at("canonicalUncompressedHex").get<std::string>());
}

TEST(histogram_codec, golden_single_b64) {
  std::string text = read_text("single.b64");
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  const histogram h = must_decode_base64(text);
  const nlohmann::json j = read_json("single.expected.json");
  EXPECT_EQ(h.params(), params_from(j.at("histogram")));
  expect_figures(h, j);
  // JS wrote offset 1 and ratio bits 1; re-encoding gives Java's canonical bytes.
  const nlohmann::json rv = read_json("recorded-values.json");
  EXPECT_EQ(to_hex(encode_uncompressed(h)),
            rv.at("single").at("canonicalUncompressedHex").get<std::string>());
}

void check_three_intervals(const std::string& log_name) {
  SCOPED_TRACE(log_name);
  const nlohmann::json j = read_json("three-intervals.expected.json");
  const nlohmann::json rv = read_json("recorded-values.json");
  const std::vector<std::string> lines = hlog_histograms(log_name);
  ASSERT_EQ(lines.size(), 3u);
  histogram merged(params_from(j.at("histogram")));
  for (std::size_t i = 0; i < lines.size(); ++i) {
    SCOPED_TRACE(i);
    const histogram h = must_decode_base64(lines[i]);
    expect_figures(h, j.at("intervalDetails").at(i));
    EXPECT_EQ(to_hex(encode_uncompressed(h)),
              rv.at("log").at("intervals").at(i).at("canonicalUncompressedHex").get<std::string>());
    merged.add(h);
  }
  expect_figures(merged, j);
}

TEST(histogram_codec, golden_three_intervals_js_written) {
  check_three_intervals("three-intervals.hlog");
}
TEST(histogram_codec, golden_three_intervals_canonical) {
  check_three_intervals("three-intervals.canonical.hlog");
}

TEST(histogram_codec, canonical_log_lines_are_what_we_write_at_level_9) {
  const nlohmann::json rv = read_json("recorded-values.json");
  const std::vector<std::string> lines = hlog_histograms("three-intervals.canonical.hlog");
  ASSERT_EQ(lines.size(), 3u);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    histogram h(params_from(rv.at("log").at("histogramParameters")));
    replay(rv.at("log").at("intervals").at(i).at("ops"), h);
    EXPECT_EQ(encode_compressed_base64(h), lines[i]);
  }
}

TEST(histogram_codec, empty_histogram_is_a_single_zero) {
  const histogram h({1, 3'600'000'000, 3});
  const bytes enc = encode_uncompressed(h);
  EXPECT_EQ(to_hex(enc).substr(8, 8), "00000001");
  EXPECT_EQ(to_hex(enc).substr(80), "00");
  const decode_result r = decode_compressed_base64(encode_compressed_base64(h));
  ASSERT_TRUE(r);
  EXPECT_EQ(r.value->total_count(), 0);
  EXPECT_EQ(encode_compressed_base64(h).substr(0, 9), "HISTFAAAA");
}

TEST(histogram_codec, compressed_uses_zlib_wrapper_and_level) {
  histogram h({1, 3'600'000'000, 3});
  h.record(42);
  const bytes c9 = encode_compressed(h, 9);
  const bytes c6 = encode_compressed(h, 6);
  EXPECT_EQ(to_hex(c9).substr(0, 8), "1c849314");
  EXPECT_EQ(to_hex(c9).substr(16, 4), "78da");
  EXPECT_EQ(to_hex(c6).substr(16, 4), "789c");
  EXPECT_EQ(c9.size(), 8 + from_hex(to_hex(c9).substr(8, 8))[3]);
}

// HdrHistogram_c writes each lone empty slot as a run of one (-1, byte 01).
bytes c_style(const histogram& h) {
  bytes java = encode_uncompressed(h);
  bytes out(java.begin(), java.begin() + 40);
  for (std::size_t i = 40; i < java.size(); ++i) out.push_back(java[i] == 0x00 ? 0x01 : java[i]);
  return out;
}

TEST(histogram_codec_property, random_histograms_round_trip) {
  std::mt19937_64 rng(2024);
  std::uniform_real_distribution<double> exponent(0.0, 12.0);
  for (int round = 0; round < 40; ++round) {
    histogram h({1, 3'600'000'000'000, 1 + round % 5});
    const int n = 1 + static_cast<int>(rng() % 3000);
    for (int i = 0; i < n; ++i)
      h.record_n(static_cast<std::int64_t>(std::pow(10.0, exponent(rng))),
                 1 + static_cast<std::int64_t>(rng() % 3));
    const decode_result r = decode_compressed_base64(encode_compressed_base64(h, round % 10));
    ASSERT_TRUE(r) << to_string(r.error);
    expect_counts_equal(*r.value, h);
    EXPECT_EQ(r.value->max(), h.max());
    EXPECT_EQ(r.value->min(), h.min());
  }
}

TEST(histogram_codec_property, c_style_lone_runs_decode_identically) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 20; ++round) {
    histogram h({1, 3'600'000'000, 3});
    for (int i = 0; i < 200; ++i)
      h.record(static_cast<std::int64_t>(rng() % 3000));  // dense: lone gaps likely
    // Every 0x00 byte of this payload is a lone-zero item: counts here are < 64 so no
    // multi-byte item contains a 0x00 byte.
    const bytes java = encode_uncompressed(h);
    const bytes c = c_style(h);
    EXPECT_NE(java, c);
    const decode_result r = decode_uncompressed(c);
    ASSERT_TRUE(r) << to_string(r.error);
    expect_counts_equal(*r.value, h);
  }
}

// ---- malformed input ----------------------------------------------------------------------

// Wraps arbitrary inner bytes the way encode_compressed does (cookie, length, zlib).
bytes wrap(const bytes& inner, std::uint32_t cookie = 0x1c849314, const bytes& trailing = {}) {
  uLongf zlen = compressBound(static_cast<uLong>(inner.size()));
  bytes z(zlen);
  EXPECT_EQ(compress2(z.data(), &zlen, inner.data(), static_cast<uLong>(inner.size()), 9), Z_OK);
  z.resize(zlen);
  z.insert(z.end(), trailing.begin(), trailing.end());
  bytes out;
  for (int k = 0; k < 4; ++k) out.push_back(static_cast<std::uint8_t>(cookie >> (24 - 8 * k)));
  for (int k = 0; k < 4; ++k) out.push_back(static_cast<std::uint8_t>(z.size() >> (24 - 8 * k)));
  out.insert(out.end(), z.begin(), z.end());
  return out;
}

histogram sample() {
  histogram h({1, 3'600'000'000, 3});
  h.record(1);
  h.record_n(3, 2);
  h.record(2'500'000);
  return h;
}

TEST(histogram_codec_malformed, every_truncation_is_reported) {
  const bytes raw = encode_uncompressed(sample());
  for (std::size_t n = 0; n < raw.size(); ++n) {
    EXPECT_EQ(decode_uncompressed(std::span(raw.data(), n)).error, decode_error::truncated) << n;
  }
  const bytes packed = encode_compressed(sample());
  for (std::size_t n = 0; n < packed.size(); ++n) {
    EXPECT_EQ(decode_compressed(std::span(packed.data(), n)).error, decode_error::truncated) << n;
  }
  const std::string text = encode_compressed_base64(sample());
  for (std::size_t n = 0; n < text.size(); ++n) {
    const decode_error expected = n % 4 == 0 ? decode_error::truncated : decode_error::bad_base64;
    EXPECT_EQ(decode_compressed_base64(text.substr(0, n)).error, expected) << n;
  }
  EXPECT_TRUE(decode_uncompressed(raw));
  EXPECT_TRUE(decode_compressed(packed));
}

TEST(histogram_codec_malformed, cookies) {
  const bytes payload = from_hex("0402");
  EXPECT_TRUE(decode_uncompressed(with_header(payload, 0x1c849303)));  // word-size nibble ignored
  EXPECT_EQ(decode_uncompressed(with_header(payload, 0x1c849314)).error, decode_error::bad_cookie);
  EXPECT_EQ(decode_uncompressed(with_header(payload, 0x1c849312)).error, decode_error::bad_cookie);
  EXPECT_EQ(decode_uncompressed(with_header(payload, 0x0c72124e)).error, decode_error::bad_cookie);
  const bytes inner = with_header(payload);
  EXPECT_TRUE(decode_compressed(wrap(inner, 0x1c849304)));
  EXPECT_EQ(decode_compressed(wrap(inner, 0x1c849313)).error, decode_error::bad_cookie);
  EXPECT_EQ(decode_compressed(wrap(with_header(payload, 0x1c849314))).error,
            decode_error::bad_cookie);
}

TEST(histogram_codec_malformed, leb128) {
  // Standard 10-byte LEB128 is not the 9-byte variant: nine ff bytes already make an item
  // (-2^63, a run far beyond 2^31 - 1), and the tenth starts another one.
  EXPECT_EQ(decode_uncompressed(with_header(from_hex("ffffffffffffffffff01"))).error,
            decode_error::bad_run);
  EXPECT_EQ(decode_uncompressed(with_header(from_hex("80"))).error, decode_error::bad_leb128);
  EXPECT_EQ(decode_uncompressed(with_header(from_hex("02ffffffffffffffff"))).error,
            decode_error::bad_leb128);
}

TEST(histogram_codec_malformed, runs_and_slots) {
  // Run of 2^31 empty slots: zigzag(-2^31) = 2^32 - 1.
  EXPECT_EQ(decode_uncompressed(with_header(from_hex("ffffffff0f02"))).error,
            decode_error::bad_run);
  // 23552 slots: a run of 23551 then a count is fine, a run of 23552 then a count is not.
  const histogram h({1, 3'600'000'000, 3});
  histogram last(h.params());
  last.set_count_at_index(h.counts_length() - 1, 1);
  const bytes enc = encode_uncompressed(last);
  const bytes payload(enc.begin() + 40, enc.end());
  EXPECT_TRUE(decode_uncompressed(with_header(payload)));
  EXPECT_EQ(to_hex(payload), "fdef0202");  // -23551, 1
  EXPECT_EQ(decode_uncompressed(with_header(from_hex("ffef0202"))).error,
            decode_error::slot_out_of_range);
  EXPECT_EQ(decode_uncompressed(with_header(from_hex("ffef02"))).error,
            decode_error::none);  // run to the end
  EXPECT_EQ(decode_uncompressed(with_header(from_hex("81f00202"))).error,
            decode_error::slot_out_of_range);
  // Counts whose sum overflows int64.
  EXPECT_EQ(decode_uncompressed(with_header(from_hex("feffffffffffffffff02"))).error,
            decode_error::negative_count);
}

TEST(histogram_codec_malformed, payload_length_mismatch) {
  bytes extra = with_header(from_hex("0402"));
  extra.push_back(0x02);  // one byte more than payloadLength
  EXPECT_EQ(decode_uncompressed(extra).error, decode_error::length_mismatch);
  bytes negative = with_header(from_hex("0402"));
  negative[4] = 0x80;
  EXPECT_EQ(decode_uncompressed(negative).error, decode_error::length_mismatch);
  // Inside the zlib stream: header says 3 payload bytes, stream has 2, and the reverse.
  bytes short_stream = with_header(from_hex("0402"));
  short_stream[7] = 3;
  EXPECT_EQ(decode_compressed(wrap(short_stream)).error, decode_error::length_mismatch);
  bytes long_stream = with_header(from_hex("040200"));
  long_stream[7] = 2;
  EXPECT_EQ(decode_compressed(wrap(long_stream)).error, decode_error::length_mismatch);
  EXPECT_EQ(decode_compressed(wrap(from_hex("1c849313"))).error, decode_error::length_mismatch);
  // Wrapper length field larger / smaller than the bytes present.
  bytes packed = encode_compressed(sample());
  packed.push_back(0);
  EXPECT_EQ(decode_compressed(packed).error, decode_error::length_mismatch);
  // A header asking for more payload than its layout could ever need.
  bytes huge = with_header({});
  huge[4] = 0x7f;
  EXPECT_EQ(decode_compressed(wrap(huge)).error, decode_error::length_mismatch);
}

TEST(histogram_codec_malformed, zlib) {
  const bytes inner = with_header(from_hex("0402"));
  EXPECT_EQ(decode_compressed(wrap(inner, 0x1c849314, from_hex("00"))).error,
            decode_error::bad_zlib);
  bytes corrupt = wrap(inner);
  corrupt[corrupt.size() - 1] ^= 0xff;  // Adler-32
  EXPECT_EQ(decode_compressed(corrupt).error, decode_error::bad_zlib);
  bytes not_zlib = wrap(inner);
  not_zlib[8] = 0x12;
  EXPECT_EQ(decode_compressed(not_zlib).error, decode_error::bad_zlib);
}

TEST(histogram_codec_malformed, parameters) {
  bytes sig0 = with_header(from_hex("00"));
  sig0[15] = 0;
  EXPECT_EQ(decode_uncompressed(sig0).error, decode_error::bad_parameters);
  bytes ldv0 = with_header(from_hex("00"));
  ldv0[23] = 0;
  EXPECT_EQ(decode_uncompressed(ldv0).error, decode_error::bad_parameters);
  bytes htv1 = with_header(from_hex("00"));
  for (int k = 24; k < 31; ++k) htv1[static_cast<std::size_t>(k)] = 0;
  htv1[31] = 1;
  EXPECT_EQ(decode_uncompressed(htv1).error, decode_error::bad_parameters);
  // Offset and ratio fields are ignored.
  bytes odd = with_header(from_hex("0402"));
  odd[11] = 7;
  odd[32] = 0x12;
  EXPECT_TRUE(decode_uncompressed(odd));
}

TEST(histogram_codec_malformed, base64) {
  std::vector<std::uint8_t> out;
  EXPECT_TRUE(base64_decode("", out));
  EXPECT_TRUE(base64_decode("TWFu", out));
  EXPECT_EQ(out, (bytes{'M', 'a', 'n'}));
  EXPECT_TRUE(base64_decode("TWE=", out));
  EXPECT_EQ(out, (bytes{'M', 'a'}));
  EXPECT_TRUE(base64_decode("TQ==", out));
  EXPECT_EQ(out, (bytes{'M'}));
  EXPECT_FALSE(base64_decode("TQ", out));  // padding required
  EXPECT_FALSE(base64_decode("T===", out));
  EXPECT_FALSE(base64_decode("TQ==TWFu", out));  // padding only at the end
  EXPECT_FALSE(base64_decode("TW-u", out));
  EXPECT_FALSE(base64_decode("TWFu\n", out));
  EXPECT_EQ(base64_encode(bytes{'M'}), "TQ==");
  EXPECT_EQ(base64_encode(bytes{'M', 'a'}), "TWE=");
  EXPECT_EQ(base64_encode(bytes{'M', 'a', 'n'}), "TWFu");
  EXPECT_EQ(decode_compressed_base64("HIST!AAA").error, decode_error::bad_base64);
}

TEST(histogram_codec_malformed, error_names) {
  EXPECT_EQ(to_string(decode_error::none), "none");
  EXPECT_EQ(to_string(decode_error::bad_leb128), "bad LEB128");
}

}  // namespace
}  // namespace punctual::hdr
