// The one host timing loop of the lab: `samples` samples of `calls` back-to-back calls each, timed with a steady
// clock, summarized as the median per call and the spread (lab/stats.h). Every CPU-side harness (kernel bench,
// fused bench, step, MLA layer, host overhead) times through it.
#pragma once

#include <algorithm>
#include <chrono>
#include <utility>
#include <vector>

#include "lab/stats.h"

namespace skinnygemm::tune {

// before_sample runs untimed before each sample (a GPU harness drains its queue there, so that launches are
// never throttled by a full queue).
template <class Call, class Before>
SampleSummary time_host_calls(int samples, int calls, Call&& call, Before&& before_sample) {
  samples = std::max(1, samples);
  calls = std::max(1, calls);
  std::vector<double> us;
  us.reserve(static_cast<std::size_t>(samples));
  for (int s = 0; s < samples; ++s) {
    before_sample();
    const auto t0 = std::chrono::steady_clock::now();
    for (int c = 0; c < calls; ++c) call();
    const auto t1 = std::chrono::steady_clock::now();
    us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / calls);
  }
  return summarize_samples(std::move(us));
}

template <class Call>
SampleSummary time_host_calls(int samples, int calls, Call&& call) {
  return time_host_calls(samples, calls, std::forward<Call>(call), [] {});
}

}  // namespace skinnygemm::tune
