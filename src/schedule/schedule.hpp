// The schedule unit in one include: intended times as a pure function of the options and the
// seed (docs/design.md, "Workload models", "Workers and connections").
#pragma once

#include "schedule/exp_gap.hpp"
#include "schedule/grid.hpp"
#include "schedule/plan.hpp"
#include "schedule/prng.hpp"
#include "schedule/profile.hpp"
#include "schedule/stages.hpp"
#include "schedule/stream.hpp"
