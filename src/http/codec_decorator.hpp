// A codec around another one, forwarding every call: a decorator overrides what it changes
// (begin, to rewrite a request on its way out) and leaves the protocol to the codec inside.
#pragma once

#include <memory>
#include <utility>

#include "http/codec.hpp"

namespace punctual::http {

class codec_decorator : public codec {
 public:
  explicit codec_decorator(std::unique_ptr<codec> inner) : inner_(std::move(inner)) {}

  void connected() override { inner_->connected(); }
  bool begin(std::uint32_t slot, const outgoing_request& request) override {
    return inner_->begin(slot, request);
  }
  std::string_view output() override { return inner_->output(); }
  void wrote(std::size_t n) noexcept override { inner_->wrote(n); }
  bool counts_per_stream() const noexcept override { return inner_->counts_per_stream(); }
  stream_bytes bytes_of(std::uint32_t slot) const noexcept override {
    return inner_->bytes_of(slot);
  }
  std::size_t feed(const char* data, std::size_t size, codec_sink& sink) override {
    return inner_->feed(data, size, sink);
  }
  void finish_on_eof(codec_sink& sink) override { inner_->finish_on_eof(sink); }
  bool cancel(std::uint32_t slot) noexcept override { return inner_->cancel(slot); }
  std::uint32_t capacity() const noexcept override { return inner_->capacity(); }
  bool settled() const noexcept override { return inner_->settled(); }
  bool allows_deferred_reads() const noexcept override { return inner_->allows_deferred_reads(); }
  std::string_view protocol() const noexcept override { return inner_->protocol(); }

 protected:
  codec& inner() noexcept { return *inner_; }

 private:
  std::unique_ptr<codec> inner_;
};

}  // namespace punctual::http
