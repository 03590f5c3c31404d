#include "engine/load_model.hpp"

#include <variant>

#include "engine/closed_load.hpp"
#include "engine/hybrid_load.hpp"
#include "engine/open_load.hpp"

namespace punctual::engine {

std::unique_ptr<load_model> make_load_model(const run_config& config, std::uint32_t worker,
                                            std::uint32_t slots, const request_source& requests,
                                            claim_board* claims) {
  struct maker {
    const run_config& config;
    std::uint32_t worker;
    std::uint32_t slots;
    const request_source& requests;
    claim_board* claims;
    std::unique_ptr<load_model> operator()(const run::open_model& m) const {
      return std::make_unique<open_load>(m.plan, worker, requests, claims);
    }
    std::unique_ptr<load_model> operator()(const run::closed_model& m) const {
      return std::make_unique<closed_load>(m.think, slots, requests);
    }
    std::unique_ptr<load_model> operator()(const run::hybrid_model&) const {
      return std::make_unique<hybrid_load>(config, worker, slots, requests, claims);
    }
  };
  return std::visit(maker{config, worker, slots, requests, claims}, config.model);
}

}  // namespace punctual::engine
