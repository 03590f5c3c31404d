// `punctual run --request-id-header NAME`: every attempt carries a header naming the planned
// request it belongs to, so that a server's own logs can be joined with punctual's schedule
// (--schedule-out's INDEX column) request by request, whatever order the requests arrived in.
// A decorator of the codecs (codec_decorator.hpp): the engine gives each request its id, and
// the HTTP/1.1 and HTTP/2 codecs send the named bytes as any other.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "http/codec.hpp"
#include "http/codec_factory.hpp"

namespace punctual::http {

// The id's text: the schedule index zero-padded to 12 digits, so that the header does not make
// one request of a run longer than another, then ".STEP" for a step of a session:
// "000000000042", "000000000042.1". A retry or a resend carries its request's id unchanged.
inline constexpr std::size_t max_request_id_text = 26;  // 20 digits, '.', 5 digits
std::string_view request_id_text(const request_id& id,
                                 std::array<char, max_request_id_text>& out) noexcept;

// `request` (HTTP/1.1 bytes) with the line "NAME: VALUE" after its request line, written into
// `room`, which keeps its capacity from one call to the next. `request` itself when it has no
// request line.
std::string_view add_header(std::string_view request, std::string_view name, std::string_view value,
                            std::string& room);

// The codecs `inner` makes, each request named by the header `name` (request_id_text). Each of
// a connection's slots keeps room for its named request, `room` bytes reserved when the codec
// is made, so that naming a request allocates nothing once the room is big enough.
std::unique_ptr<codec_factory> make_request_id_codecs(std::unique_ptr<codec_factory> inner,
                                                      std::string name, std::size_t room);

}  // namespace punctual::http
