#include "http/codec_factory.hpp"

#include "http/h2_codec.hpp"

namespace punctual::http {
namespace {

class protocol_codecs final : public codec_factory {
 public:
  protocol_codecs(bool http1, bool h2, bool tls) : http1_(http1), h2_(h2), tls_(tls) {}

  codec_set make(std::uint32_t streams, h2_memory& memory) const override {
    codec_set set;
    if (h2_) set.h2 = make_h2_codec({tls_, &memory}, streams);
    if (http1_) set.http1 = make_http1_codec();
    return set;
  }

 private:
  bool http1_;
  bool h2_;
  bool tls_;
};

}  // namespace

std::unique_ptr<codec_factory> make_codec_factory(bool http1, bool h2, bool tls) {
  return std::make_unique<protocol_codecs>(http1, h2, tls);
}

}  // namespace punctual::http
