#include "engine/open_load.hpp"

namespace punctual::engine {

void open_load::dispatch(nanoseconds now) {
  while (arrivals_.due(now)) {
    record::request_times t;
    t.intended = arrivals_.at();
    t.index = arrivals_.next().index;
    t.name = requests_.name_of(t.index);
    // The next entry is read before this one is sent: when it is due too, its send lag's slot
    // is fetched now, and this send's system call hides the fetch.
    arrivals_.advance();
    if (arrivals_.due(now)) recorder_->prefetch_send_lag(arrivals_.at(), now);
    recorder_->on_planned(t.intended, t.name);
    host_->dispatched(t, now);
    host_->enqueue(t, now);
  }
}

}  // namespace punctual::engine
