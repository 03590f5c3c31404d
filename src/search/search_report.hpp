// The reports of a search: the text table of steps with its answer, the JSON report
// (docs/search.schema.json) and the HTML knee chart.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "report/json.hpp"
#include "search/procedure.hpp"

namespace punctual::search {

// What the reports say beside the outcome.
struct context {
  std::vector<std::string> command_line;
  std::string target;
  std::vector<std::string> slos;  // every SLO judged, the added one included
  std::string added_slo;          // the one search added ("errors<=1%"), empty if none
  std::string bound = "upper";    // "upper" or "point"
  bool hybrid = false;            // rates are the scenario's scale factor
  double hybrid_peak_per_s = 0;   // hybrid: users per second at factor 1 (the busiest phase)
};

// "sustains 4,200 req/s under p99<=50ms, errors<=1% (bracket 4,100..4,300; 4,300 failed p99 at
// 63ms [58ms..71ms])", or what ended the search instead.
std::string answer_line(const outcome& o, const context& ctx);
void write_text(std::ostream& out, const outcome& o, const context& ctx);
nlohmann::ordered_json to_json(const outcome& o, const context& ctx);
// The knee: the SLO percentiles with their intervals and the completed rate, against the
// offered rate, from the JSON report.
std::string html_page(const nlohmann::ordered_json& doc);

}  // namespace punctual::search
