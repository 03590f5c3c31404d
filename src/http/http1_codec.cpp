// HTTP/1.1 as a codec: one response at a time per connection, framed by the response parser.
#include <algorithm>

#include "http/codec.hpp"

namespace punctual::http {
namespace {

class http1_codec final : public codec {
 public:
  void begin(std::uint32_t slot, bool head_request, const body_needle* needle,
             std::string* keep) noexcept override {
    slot_ = slot;
    parser_.reset(head_request, needle);
    keep_ = keep;
    if (keep_) keep_->clear();
  }

  std::size_t feed(const char* data, std::size_t size, codec_sink& sink) override {
    const auto r = parser_.feed(data, size);
    if (keep_ && keep_->size() < max_kept_response) {
      keep_->append(data, std::min(r.consumed, max_kept_response - keep_->size()));
    }
    if (r.status == parse_status::error) {
      sink.on_protocol_error(parser_.error());
    } else if (r.status == parse_status::complete) {
      sink.on_response(slot_, end());
    }
    return r.consumed;
  }

  void finish_on_eof(codec_sink& sink) override {
    if (parser_.finish_on_eof() == parse_status::complete) {
      sink.on_response(slot_, end());
    } else {
      sink.on_protocol_error(parser_.error());
    }
  }

  bool started() const noexcept override { return parser_.started(); }
  std::uint32_t max_slots() const noexcept override { return 1; }
  bool allows_deferred_reads() const noexcept override { return true; }

 private:
  response_end end() const noexcept {
    return {parser_.status_code(), parser_.keep_alive(), parser_.body_found()};
  }

  response_parser parser_;
  std::uint32_t slot_ = 0;
  std::string* keep_ = nullptr;
};

}  // namespace

std::unique_ptr<codec> make_http1_codec() { return std::make_unique<http1_codec>(); }

}  // namespace punctual::http
