// The quick tune (`skinnygemm tune --moves K`, issue 18): per point the heuristic's pick and the first K - 1 configs of
// a fixed list of "moves" ranked for its kind of pick, instead of every config near it.
//
// Why (docs/tuning.md "Session 43"): the rules pick the right family at 98.5% of the H200's held-out points, but the
// ring, split and lead that win change from shape to shape; timing the pick and 7 moves put 96.2% of 5028 points of the
// H200's sets ten to twenty-four within 5% of the best of about 35 measured candidates when the lists were learned only
// on earlier sets (tools/trials/selector_study/topk.py), and the lists learned on the H200 put 97.3% of the H100's 768
// held-out points there (topk_transfer.py). The lists below were learned on every H200 set, nine to twenty-four
// (`python3 tools/trials/selector_study/topk.py --lists`).
//
// A move is a config written relative to the pick, in the study's notation (its kind prefix, "x:", dropped):
//   tma picks, by kind: "x" (clusters, _x<n>), "lead" (the lead split, _c<c>_d<d>), "sk" (stream-K, _c<c>_u<u>).
//     r*N r/N   weight rows times / over N          b*N b/N   64-wide K boxes per stage
//     S+N S-N   N steps along the listed stage counts (kTmaStages)
//     x*N x/N   the cluster's CTAs                  c+N c-N   CTAs per SM
//     d+N d-N   the lead split's lead                U+N       N steps along the listed minimum units (kTmaMinUnits)
//     >x(xN) >lead(cC,dD) >sk(cC,uU)   the same rows, boxes and stages in another mode; C may be +N / -N (relative)
//   bulk picks ("bulk"): "a>b" replaces the name's token a with b; "u*N" / "u/N", "sk*N" / "sk/N" scale a token's number.
//   any pick: "LT:<name>" a cuBLASLt config (cublaslt, cublaslt_a<i>), "CUT:tma" the tma family's first cut.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "skinnygemm/config.h"
#include "skinnygemm/device.h"
#include "skinnygemm/problem.h"

namespace skinnygemm::tune {

// The kind of pick a move list is for: "x", "lead", "sk", "bulk", "cublaslt"; "" for kinds without a list (cpu, the
// row stream).
std::string move_kind(const Config& pick);

// The ranked moves for a kind (empty where none).
const std::vector<std::string>& moves_for(const std::string& kind);

// The name of the config that move names for pick on problem (CUT:tma needs the problem and the device), or nullopt
// where the move does not apply to this pick (a field its kind does not have, a stage count off the list, a number that
// does not divide; CUT:tma on a tma pick). The name is not checked to be a listed or supported config. Throws Error for a
// malformed tma move (an unknown op letter or target).
//
// Against the study it reproduces: the study counted a move whose config was not measured at a point as a slot spent
// for nothing; move_candidates passes over a move whose config is not listed or does not run and fills the slot with the
// next one, so it times the same set or a better one (never fewer configs where more moves apply).
std::optional<std::string> apply_move(const std::string& move, const Config& pick, const Problem& problem,
                                      const DeviceInfo& device);

// TuneOptions::moves: the pick, then the first k - 1 moves of its kind's list that name a config in `listed` (by name;
// the tma family's first cut need not be listed) which supports the problem and is not yet taken, then cuBLASLt's default where it is in `listed` and not yet taken
// (the margin rule's baseline on a GPU). k >= 1.
std::vector<Config> move_candidates(const Problem& problem, const DeviceInfo& device, const Config& pick,
                                    const std::vector<Config>& listed, int k, int alignment);

}  // namespace skinnygemm::tune
