// The one host timing loop of the lab: `samples` samples of `calls` back-to-back calls each, timed with a steady
// clock, summarized as the median per call and the spread (lab/stats.h). Every CPU-side harness (kernel bench,
// fused bench, step, MLA layer, host overhead) times through it.
#pragma once

#include <algorithm>
#include <chrono>
#include <vector>

#include "lab/stats.h"

namespace skinnygemm::tune {

template <class Call>
SampleSummary time_host_calls(int samples, int calls, Call&& call) {
  samples = std::max(1, samples);
  calls = std::max(1, calls);
  std::vector<double> us;
  us.reserve(static_cast<std::size_t>(samples));
  for (int s = 0; s < samples; ++s) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int c = 0; c < calls; ++c) call();
    const auto t1 = std::chrono::steady_clock::now();
    us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / calls);
  }
  return summarize_samples(std::move(us));
}

}  // namespace skinnygemm::tune
