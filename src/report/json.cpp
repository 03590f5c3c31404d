#include "report/json.hpp"

#include <string>

namespace punctual::report {

void json_assertion_failed(const char* condition) {
  throw nlohmann::json::out_of_range::create(
      403, std::string("a lookup of what is not there (") + condition + ")", nullptr);
}

}  // namespace punctual::report
