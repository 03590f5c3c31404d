// Shared by the schedule tests: what a stream yields, drained into a vector.
#pragma once

#include <vector>

#include "schedule/stream.hpp"

namespace punctual::test {

inline std::vector<schedule::entry> drain(schedule::worker_stream s) {
  std::vector<schedule::entry> out;
  schedule::entry e;
  while (s.next(e)) out.push_back(e);
  return out;
}

}  // namespace punctual::test
