// The tma family's device half: its instances behind tma::launch (tma_launch.cu), which builds the tensor maps
// and finds the split reduction's workspace per call.
#include "kernels/family.h"
#include "kernels/tma/tma_family.h"

namespace skinnygemm::cuda {

namespace {

class TmaLaunch final : public PreparedLaunch {
 public:
  TmaLaunch(const Problem& p, const Config& c, const OutputSegment* segments, int count)
      : problem_(p), config_(c), segments_(segments, segments + count) {}
  void run(const void* x, const void* w, void* y, void* stream) const override {
    tma::launch(problem_, config_, x, w, y, stream, segments_.empty() ? nullptr : segments_.data(),
                static_cast<int>(segments_.size()));
  }

 private:
  Problem problem_;
  Config config_;
  std::vector<OutputSegment> segments_;
};

bool tma_built(const Config& c) { return tma::is_built(c); }

std::unique_ptr<PreparedLaunch> prepare_tma(const Problem& p, const Config& c, const DeviceInfo&,
                                            const OutputSegment* segments, int count) {
  return std::make_unique<TmaLaunch>(p, c, segments, count);
}

}  // namespace

extern const FamilyDevice tma_device{&tma_built, &prepare_tma, /*writes_segments=*/true};

}  // namespace skinnygemm::cuda
