#include "backends/cuda/cublaslt_unsplit.h"

namespace skinnygemm::cuda {

namespace {

struct TileShape {
  int id, rows, tokens;
};
// Every CUBLASLT_MATMUL_TILE_<rows>x<cols> = <id> of the toolkit's cublasLt.h (CMakeLists.txt writes the list at
// configure time; empty without the toolkit), then an end marker.
constexpr TileShape kTiles[] = {
#include "cublaslt_tiles.inc"
    {-1, 0, 0}};

}  // namespace

int unsplit_answer(const std::vector<LtAnswer>& answers, int m) {
  // SPLITK_NUM is -1 on some algorithms (ids 41 and 42 on cuBLASLt 13.1: a split chosen at run time), so only 1 is
  // "unsplit" (25013 x 10240 at M = 24: such a 64 x 64 answer ran 752.5 us against the default's 488.6).
  if (answers.empty() || answers[0].split_k == 1) return 0;
  for (std::size_t i = 1; i < answers.size(); ++i) {
    const LtAnswer& a = answers[i];
    if (a.split_k == 1 && a.tile_rows >= 48 && 2 * a.tile_tokens >= m) return static_cast<int>(i);
  }
  return 0;
}

bool cublaslt_tile_shape(int tile_id, int* rows, int* tokens) {
  *rows = *tokens = 0;
  for (const TileShape& t : kTiles)
    if (t.id == tile_id && t.id >= 0) {
      *rows = t.rows, *tokens = t.tokens;
      return true;
    }
  return false;
}

}  // namespace skinnygemm::cuda
