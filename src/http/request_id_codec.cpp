#include "http/request_id_codec.hpp"

#include <charconv>
#include <utility>
#include <vector>

#include "http/codec_decorator.hpp"

namespace punctual::http {
namespace {

constexpr std::size_t id_digits = 12;

class request_id_codec final : public codec_decorator {
 public:
  request_id_codec(std::unique_ptr<codec> inner, const std::string& name, std::uint32_t slots,
                   std::size_t room)
      : codec_decorator(std::move(inner)), name_(name), rooms_(slots) {
    for (std::string& r : rooms_) r.reserve(room);
  }

  // The named bytes live in the slot's room until its next request, after the slot ended, as
  // outgoing_request's bytes must.
  bool begin(std::uint32_t slot, const outgoing_request& request) override {
    std::array<char, max_request_id_text> text;
    outgoing_request named = request;
    named.bytes = add_header(request.bytes, name_, request_id_text(request.id, text), rooms_[slot]);
    return inner().begin(slot, named);
  }

 private:
  std::string name_;
  std::vector<std::string> rooms_;  // by slot
};

class request_id_codecs final : public codec_factory {
 public:
  request_id_codecs(std::unique_ptr<codec_factory> inner, std::string name, std::size_t room)
      : inner_(std::move(inner)), name_(std::move(name)), room_(room) {}

  codec_set make(std::uint32_t streams, h2_memory& memory) const override {
    codec_set set = inner_->make(streams, memory);
    if (set.http1)
      set.http1 = std::make_unique<request_id_codec>(std::move(set.http1), name_, 1, room_);
    if (set.h2)
      set.h2 = std::make_unique<request_id_codec>(std::move(set.h2), name_, streams, room_);
    return set;
  }

 private:
  std::unique_ptr<codec_factory> inner_;
  std::string name_;
  std::size_t room_;
};

}  // namespace

std::string_view request_id_text(const request_id& id,
                                 std::array<char, max_request_id_text>& out) noexcept {
  char* const end = out.data() + out.size();
  std::array<char, 20> digits;
  const auto written = std::to_chars(digits.data(), digits.data() + digits.size(), id.index).ptr;
  const auto n = static_cast<std::size_t>(written - digits.data());
  char* p = out.data();
  for (std::size_t i = n; i < id_digits; ++i) *p++ = '0';
  for (std::size_t i = 0; i < n; ++i) *p++ = digits[i];
  if (id.step >= 0) {
    *p++ = '.';
    p = std::to_chars(p, end, id.step).ptr;
  }
  return {out.data(), static_cast<std::size_t>(p - out.data())};
}

std::string_view add_header(std::string_view request, std::string_view name, std::string_view value,
                            std::string& room) {
  const std::size_t line_end = request.find("\r\n");
  if (line_end == std::string_view::npos) return request;
  room.clear();
  room.append(request.substr(0, line_end + 2));
  room.append(name).append(": ").append(value).append("\r\n");
  room.append(request.substr(line_end + 2));
  return room;
}

std::unique_ptr<codec_factory> make_request_id_codecs(std::unique_ptr<codec_factory> inner,
                                                      std::string name, std::size_t room) {
  return std::make_unique<request_id_codecs>(std::move(inner), std::move(name), room);
}

}  // namespace punctual::http
