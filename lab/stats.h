// The one summary every timing loop reports: the median of its samples and their spread.
#pragma once

#include <algorithm>
#include <vector>

namespace skinnygemm {

struct SampleSummary {
  double median = 0;
  double spread = 0;  // (max - min) / median
  double min = 0;     // the fastest sample: what a fixed cost takes when nothing else competes for the core
};

inline SampleSummary summarize_samples(std::vector<double> samples) {
  SampleSummary s;
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  s.median = samples[samples.size() / 2];
  s.min = samples.front();
  s.spread = s.median > 0 ? (samples.back() - samples.front()) / s.median : 0;
  return s;
}

}  // namespace skinnygemm
