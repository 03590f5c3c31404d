// A step's facts (procedure.hpp) from its run: the validity report, the SLOs on their bound and
// on their point estimate, the rates, and the full run report.
#pragma once

#include <vector>

#include "analysis/interval_series.hpp"
#include "analysis/slo.hpp"
#include "report/run_report.hpp"
#include "search/procedure.hpp"

namespace punctual::search {

// `judged`: the verdicts on the bound the search judges on (upper by default); `point`: the same
// SLOs on their point estimates, which tell an undecided step from a failed one.
step_facts facts_of(const run::config& c, const run::result& r, const report::verdicts& judged,
                    const analysis::slo_evaluation& point,
                    const std::vector<analysis::slo_expression>& slos,
                    const analysis::interval_series& series);

// The probe's median and whether most of it was answered ok.
probe_result probe_of(const run::result& r);

}  // namespace punctual::search
