// nlohmann::json as every punctual file sees it. Reports are read back (`punctual merge`,
// `punctual report`) from files anyone may have edited, and the library's const lookups only
// assert that a key exists; here a failed assertion throws json::out_of_range instead, which
// the readers turn into a one-line refusal. Include this header, never <nlohmann/json.hpp>
// directly, so that every translation unit sees the same definition of the library.
#pragma once

namespace punctual::report {
[[noreturn]] void json_assertion_failed(const char* condition);
}

#define JSON_ASSERT(x) ((x) ? static_cast<void>(0) : ::punctual::report::json_assertion_failed(#x))
#include <nlohmann/json.hpp>
