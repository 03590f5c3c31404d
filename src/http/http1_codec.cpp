// HTTP/1.1 as a codec: one response at a time per connection, framed by the response parser;
// the request goes out as the bytes it already is.
#include <algorithm>

#include "http/codec.hpp"

namespace punctual::http {
namespace {

class http1_codec final : public codec {
 public:
  void connected() override {
    expecting_ = false;
    out_ = {};
  }

  bool begin(std::uint32_t slot, const outgoing_request& request) override {
    slot_ = slot;
    parser_.reset(request.head, request.needle);
    keep_ = request.keep;
    if (keep_) keep_->clear();
    out_ = request.bytes;
    expecting_ = true;
    first_byte_seen_ = false;
    return true;
  }

  std::string_view output() override { return out_; }
  void wrote(std::size_t n) noexcept override { out_.remove_prefix(n); }
  bool counts_per_stream() const noexcept override { return false; }
  stream_bytes bytes_of(std::uint32_t) const noexcept override { return {}; }

  std::size_t feed(const char* data, std::size_t size, codec_sink& sink) override {
    if (!expecting_) return 0;
    if (!first_byte_seen_ && size > 0) {
      first_byte_seen_ = true;
      sink.on_first_byte(slot_);
    }
    const auto r = parser_.feed(data, size);
    if (keep_ && keep_->size() < max_kept_response) {
      keep_->append(data, std::min(r.consumed, max_kept_response - keep_->size()));
    }
    if (r.status == parse_status::error) {
      expecting_ = false;
      sink.on_protocol_error(parser_.error());
    } else if (r.status == parse_status::complete) {
      expecting_ = false;
      sink.on_response(slot_, end(), {});
    }
    return r.consumed;
  }

  void finish_on_eof(codec_sink& sink) override {
    if (!expecting_) return;
    expecting_ = false;
    if (parser_.finish_on_eof() == parse_status::complete) {
      sink.on_response(slot_, end(), {});
    } else {
      sink.on_protocol_error(parser_.error());
    }
  }

  bool cancel(std::uint32_t) noexcept override { return false; }
  std::uint32_t capacity() const noexcept override { return 1; }
  bool settled() const noexcept override { return true; }
  bool allows_deferred_reads() const noexcept override { return true; }
  std::string_view protocol() const noexcept override { return "http/1.1"; }

 private:
  response_end end() const noexcept {
    return {parser_.status_code(), parser_.keep_alive(), parser_.body_found()};
  }

  response_parser parser_;
  std::uint32_t slot_ = 0;
  std::string* keep_ = nullptr;
  std::string_view out_;
  bool expecting_ = false;
  bool first_byte_seen_ = false;
};

}  // namespace

std::unique_ptr<codec> make_http1_codec() {
  return std::make_unique<http1_codec>();
}

}  // namespace punctual::http
