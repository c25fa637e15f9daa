// tune::tune_problem / tune_into_table: measure candidates, reject wrong ones, store the winner by the margin
// rule (with refine: only where it beats the heuristic's pick too), merge into the table file after every point.
#include "lab/tuner.h"

#include "kernels/family.h"
#include "lab/result_row.h"
#include "lab/tune_moves.h"
#include "runtime/backends.h"

#include <fnmatch.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "lab/json_round.h"

namespace skinnygemm::tune {

namespace {

// The operand alignment the candidates are listed for and the heuristic picks at: the bench's operands are at
// least this aligned.
constexpr int kCandidateAlignment = 16;
constexpr double kEps = 1e-9;  // a margin compares ratios: 10.3 / 10 - 1 is not exactly 0.03 in binary

// "a,b,,c" split at sep, empty parts dropped (config-name globs at ',', a config name's tokens at '_').
std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string part; std::getline(ss, part, sep);)
    if (!part.empty()) out.push_back(part);
  return out;
}

bool matches_any(const std::vector<std::string>& globs, const std::string& name) {
  if (globs.empty()) return true;
  for (const std::string& g : globs)
    if (fnmatch(g.c_str(), name.c_str(), 0) == 0) return true;
  return false;
}

std::string percent(double fraction) {
  std::ostringstream os;
  os.precision(3);
  os << fraction * 100 << "%";
  return os.str();
}

std::string us_text(double us) {
  std::ostringstream os;
  os.precision(4);
  os << us << " us";
  return os.str();
}

// What selection runs at p without a table: the heuristic's pick, or the fallback where no kernel supports p.
Choice untuned_choice(const Problem& p, const DeviceInfo& dev) {
  return select(p, dev, nullptr, kCandidateAlignment);
}

// A candidate against a baseline (cuBLASLt in decide(), the heuristic's pick with refine): its gain, and whether
// the gain reaches the margin and repeats (its worst sample, >= the slowest: max - min <= spread * median, still
// at most the baseline's median).
struct Win {
  double gain, worst;
  bool reaches_margin, repeats;
};
Win win_over(const BenchRow& candidate, const BenchRow& baseline, double margin) {
  Win w;
  w.gain = baseline.us / candidate.us - 1;
  w.worst = candidate.us * (1 + candidate.spread);
  w.reaches_margin = w.gain + kEps >= margin;
  w.repeats = w.worst <= baseline.us * (1 + kEps);
  return w;
}

void check_time(const BenchRow& r) {
  SKINNYGEMM_CHECK(std::isfinite(r.us) && r.us > 0 && std::isfinite(r.spread) && r.spread >= 0,
                   r.config << ": time " << r.us << " us, spread " << r.spread
                            << "; expected a positive time and a spread >= 0");
}

bool is_cublaslt(const BenchRow& row) { return Config::parse(row.config).family == Family::Cublaslt; }
// cublaslt_a<i> and cublaslt_unsplit: measured as candidates, never stored under those names (each names a place in
// cuBLASLt's heuristic list, which moves with its version and the operands' alignment): stored by identity.
bool names_position(const Config& c) {
  return c.family == Family::Cublaslt && (c.algo >= 0 || c.algo == kCublasltUnsplit);
}
bool is_cublaslt_default(const BenchRow& row) { return row.config == "cublaslt"; }
bool any_row(const BenchRow&) { return true; }

// Index of the fastest row (median) among those where want(row) holds; ties keep the earlier row so that
// the pick does not depend on anything but the candidate order. npos when none.
template <typename Pred>
std::size_t fastest(const std::vector<BenchRow>& rows, Pred want) {
  std::size_t best = std::string::npos;
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (want(rows[i]) && (best == std::string::npos || rows[i].us < rows[best].us)) best = i;
  return best;
}

// Gives a GPU row the point's cuBLASLt default and best times (from the candidates' rows), so the JSON rows
// read as speedups.
void set_cublaslt_columns(const std::vector<BenchRow>& rows, BenchRow& r) {
  const std::size_t best = fastest(rows, is_cublaslt);
  const std::size_t dflt = fastest(rows, is_cublaslt_default);
  if (dflt != std::string::npos) {
    r.cublaslt_us = rows[dflt].us;
    r.speedup = r.cublaslt_us / r.us;
  }
  if (best != std::string::npos) {
    r.cublaslt_best_us = rows[best].us;
    r.cublaslt_best_config = rows[best].config;
    r.speedup_best = r.cublaslt_best_us / r.us;
  }
}

// One forced, checked measurement; nullopt with *why set when its check failed or it could not run.
std::optional<BenchRow> measure_checked(const MeasureFn& measure, const Problem& p, BenchOptions bo,
                                        const std::string& config, std::string* why) {
  bo.config = config;
  try {
    BenchRow row = measure(p, bo);
    if (!row.checked) {
      *why = "the measurement did not check the output";
    } else if (row.config != config) {
      *why = "the measurement ran " + row.config + " instead";
    } else {
      return row;
    }
  } catch (const Error& e) {
    *why = e.what();
  }
  return std::nullopt;
}

// The fastest measured row of a point: the candidates and, when it was measured on its own, the heuristic's.
const BenchRow& best_row(const TuneResult& r) {
  SKINNYGEMM_CHECK(!r.rows.empty(), "no measured row for " << r.problem.str());
  const BenchRow* best = &r.rows[fastest(r.rows, any_row)];
  const HeuristicPick& h = r.heuristic;
  if (h.extra && h.error.empty() && h.row.us < best->us) best = &h.row;
  return *best;
}

std::string point_name(const TuneResult& r) {
  const Problem& p = r.problem;
  const std::string name = r.rows.empty() ? "" : r.rows[0].name;
  return (name.empty() ? "" : name + " ") + std::to_string(p.n) + "x" + std::to_string(p.k) + " m=" +
         std::to_string(p.m);
}

void check_candidate_choice(std::optional<int> distance, std::optional<int> moves) {
  SKINNYGEMM_CHECK(!distance || *distance >= 0,
                   "near-heuristic distance " << *distance << ": expected a number of name tokens >= 0");
  SKINNYGEMM_CHECK(!moves || *moves >= 1,
                   "moves " << *moves << ": expected the number of configs to time per point, >= 1 (the pick)");
  SKINNYGEMM_CHECK(!distance || !moves, "near-heuristic distance " << *distance << " and moves " << *moves
                                                                     << ": expected one way of choosing candidates");
}

void check_options(const TuneOptions& o) {
  SKINNYGEMM_CHECK(o.samples >= 1 && o.replays >= 1,
                   "samples " << o.samples << " and replays " << o.replays << " must both be >= 1");
  SKINNYGEMM_CHECK(o.margin >= 0 && o.margin < 1, "margin " << o.margin << " must be in [0, 1) (0.03 = 3%)");
  check_candidate_choice(o.near_heuristic, o.moves);
}

// TuneOptions::near_heuristic: the heuristic's pick, then those of `listed` (the kernels the globs name, and
// cuBLASLt) that are cuBLASLt or of the pick's family at its token tile within distance name tokens of it.
std::vector<Config> near_heuristic_candidates(const Problem& p, const DeviceInfo& dev,
                                              const std::vector<Config>& listed, int distance) {
  const Config pick = untuned_choice(p, dev).config;
  const std::string pick_name = pick.name();
  std::vector<Config> out{pick};
  for (const Config& c : listed) {
    const std::string name = c.name();
    const bool near = c.family == pick.family && (!family(c.family).tiled || c.tile_m == pick.tile_m) &&
                      name_distance(name, pick_name) <= distance;
    if ((near || c.family == Family::Cublaslt) && name != pick_name && supports(c, p, dev, kCandidateAlignment))
      out.push_back(c);
  }
  // The first cut of every other family that has one (the tma family), where it can run: without it a held-out run
  // never timed the family at a point the heuristic sends elsewhere (through session 33 no run had timed a tma
  // config at an aligned point with M > 16, docs/tuning.md "Session 34"), so a report could not say whether the
  // family should have been picked there. One candidate per family and point.
  for (const FamilyDescriptor* f : families()) {
    if (!f->first_cut || f->gpu == dev.is_cpu || &family(pick.family) == f) continue;
    const Config cut = f->first_cut(p, dev);
    const bool listed_already =
        std::any_of(out.begin(), out.end(), [&](const Config& c) { return c.name() == cut.name(); });
    if (!listed_already && supports(cut, p, dev, kCandidateAlignment)) out.push_back(cut);
  }
  return out;
}


}  // namespace

int name_distance(const std::string& a, const std::string& b) {
  const std::vector<std::string> ta = split(a, '_'), tb = split(b, '_');
  auto missing = [](const std::vector<std::string>& from, const std::vector<std::string>& in) {
    std::multiset<std::string> left(in.begin(), in.end());
    int n = 0;
    for (const std::string& t : from) {
      auto it = left.find(t);
      if (it == left.end()) ++n;
      else left.erase(it);
    }
    return n;
  };
  return std::max(missing(ta, tb), missing(tb, ta));
}

std::vector<Config> tune_candidates(const Problem& p, const DeviceInfo& dev, const std::string& globs,
                                    std::optional<int> near_heuristic, std::optional<int> moves) {
  check_candidate_choice(near_heuristic, moves);
  const std::vector<std::string> patterns = split(globs, ',');
  // Every kernel family of the device (GPU: all but cpu and cublaslt, so a new family is tuned once listed).
  std::vector<Config> listed;
  for (const Config& c : all_listed_configs()) {
    const FamilyDescriptor& f = family(c.family);
    const bool kernel = f.kernel && f.gpu != dev.is_cpu;
    if (kernel && matches_any(patterns, c.name())) listed.push_back(c);
  }
  bool named = !listed.empty();  // the globs name a listed kernel config, or cuBLASLt itself
  if (!dev.is_cpu)  // the baseline of the margin rule, whatever the glob says
    for (const Config& c : listed_configs(Family::Cublaslt)) {
      named = named || (!patterns.empty() && matches_any(patterns, c.name()));
      listed.push_back(c);
    }
  // Session 41: `--candidates tma_m8_r8_b16_s4_rs` (a lab instance, listed nowhere) matched no kernel and the H100's
  // tune measured cuBLASLt alone and stored it at 16 points, 4% slower than the heuristic's pick there and 850 us
  // slower in the step (docs/benchmarks/h100/session41, call 4). A glob that names nothing is an error, not a tuning.
  SKINNYGEMM_CHECK(named, "--candidates '" << globs << "' matches no listed config of " << dev.name
                                           << " (expected globs such as "
                                           << (dev.is_cpu ? "cpu_r*" : "tma_m8_*,bulk_m8_*,cublaslt*")
                                           << "; configs built only for the lab are not tuned)");
  if (near_heuristic) return near_heuristic_candidates(p, dev, listed, *near_heuristic);
  if (moves) return move_candidates(p, dev, untuned_choice(p, dev).config, listed, *moves, kCandidateAlignment);
  // Only the smallest token tile of each family that holds M (among the configs the globs name): a larger
  // tile does the same streaming with more MMAs and x traffic (every H200 sweep of 2026-11-29: best m16 /
  // best m8 = 1.5x at M <= 8), and it cuts the candidates per point ~4x (docs/kernels.md). A glob that names
  // one tile (bulk_m32_*) still gets that tile.
  auto smallest_tile = [&](Family f) {
    int best = 0;
    for (const Config& c : listed)
      if (c.family == f && c.tile_m >= p.m && (best == 0 || c.tile_m < best)) best = c.tile_m;
    return best;
  };
  std::vector<Config> out;
  for (const Config& c : listed) {
    if (family(c.family).tiled && c.tile_m != smallest_tile(c.family)) continue;
    if (supports(c, p, dev, kCandidateAlignment)) out.push_back(c);
  }
  return out;
}

Decision decide(const std::vector<BenchRow>& rows, bool gpu, double margin) {
  SKINNYGEMM_CHECK(!rows.empty(), "no measured candidate to decide from");
  for (const BenchRow& r : rows) check_time(r);
  const std::size_t kernel = fastest(rows, [](const BenchRow& r) { return !is_cublaslt(r); });
  const std::size_t lt = fastest(rows, is_cublaslt);
  Decision d;
  auto store = [&](std::size_t i, std::string why) {
    d.stored = i;
    d.entry.config = Config::parse(rows[i].config);
    d.entry.us = rows[i].us;
    d.entry.cublaslt_us = gpu ? rows[lt].us : 0;
    d.reason = std::move(why);
  };
  if (!gpu) {
    SKINNYGEMM_CHECK(kernel != std::string::npos, "no kernel row among " << rows.size() << " measured rows");
    store(kernel, "fastest median of " + std::to_string(rows.size()) + " configs");
    return d;
  }
  SKINNYGEMM_CHECK(lt != std::string::npos, "no cuBLASLt algorithm passed for " << rows[0].problem.str()
                                                                               << "; the margin rule needs one");
  // The cuBLASLt entry to store: its default unless another of its algorithms beats it by the margin, in
  // every sample. NOTE: on the H200 the fastest algorithm of one run was up to 3% slower than the default in
  // the next (kernels.json at ba7d7db: 21 of the 94 rows that picked cuBLASLt, by up to 2.9%), so small "wins" were noise.
  std::size_t lt_pick = lt;
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (rows[i].config == "cublaslt") {
      const BenchRow& best = rows[lt];
      const bool repeats = best.us * (1 + best.spread) <= rows[i].us;
      if (rows[i].us / best.us - 1 < margin || !repeats) lt_pick = i;
    }
  if (kernel == std::string::npos) {
    store(lt_pick, "no kernel candidate passed");
    return d;
  }
  const BenchRow& k = rows[kernel];
  const BenchRow& l = rows[lt];
  const Win w = win_over(k, l, margin);
  const std::string versus = k.config + " " + us_text(k.us) + " vs " + l.config + " " + us_text(l.us);
  if (!w.reaches_margin) {
    store(lt_pick, versus + ": gain " + percent(w.gain) + " below the margin " + percent(margin));
  } else if (!w.repeats) {
    store(lt_pick, versus + ": gain " + percent(w.gain) + " does not repeat (worst sample " + us_text(w.worst) +
                  " is slower than cuBLASLt's median)");
  } else {
    store(kernel, versus + ": gain " + percent(w.gain) + " >= margin " + percent(margin) + ", worst sample " +
                      us_text(w.worst));
  }
  return d;
}

std::optional<std::string> why_keep_heuristic(const BenchRow& winner, const BenchRow& heuristic, double margin) {
  check_time(winner);
  check_time(heuristic);
  if (winner.config == heuristic.config) return "heuristic kept: its pick " + heuristic.config + " is the winner";
  // The rule of decide() against cuBLASLt, now against the pick: a table entry must be a repeatable win over it.
  const Win w = win_over(winner, heuristic, margin);
  const std::string versus = winner.config + " " + us_text(winner.us) + " vs the heuristic's " + heuristic.config +
                             " " + us_text(heuristic.us);
  if (!w.reaches_margin)
    return "heuristic kept: " + versus + ": gain " + percent(w.gain) + " below the margin " + percent(margin);
  if (!w.repeats)
    return "heuristic kept: " + versus + ": gain " + percent(w.gain) + " does not repeat (worst sample " +
           us_text(w.worst) + " is slower than the heuristic's median)";
  return std::nullopt;
}

TuneResult tune_problem(const Problem& p, const TuneOptions& o) {
  validate(p);
  check_options(o);
  const Backend backend = resolve_backend(o.backend);
  const DeviceInfo dev = device_info(backend);
  const std::vector<Config> candidates = tune_candidates(p, dev, o.candidates, o.near_heuristic, o.moves);
  SKINNYGEMM_CHECK(!candidates.empty(), "no candidate matching '" << o.candidates << "' supports " << p.str()
                                                                  << " on " << dev.signature());
  const MeasureFn& measure = o.measure ? o.measure : MeasureFn(bench_problem);
  BenchOptions bo;
  bo.backend = backend;
  bo.samples = o.samples;
  bo.replays = o.replays;
  bo.baselines = false;  // cuBLASLt is a candidate here, measured like every other
  bo.check = true;       // a wrong kernel has no speed
  TuneResult result;
  result.problem = p;
  for (const Config& c : candidates) {
    std::string why;
    if (auto row = measure_checked(measure, p, bo, c.name(), &why))
      result.rows.push_back(std::move(*row));
    else
      result.rejected.push_back({c.name(), why});
  }
  if (result.rows.empty()) {
    std::ostringstream os;
    os << "all " << candidates.size() << " candidates for " << p.str() << " were rejected";
    if (!result.rejected.empty()) os << " (" << result.rejected[0].config << ": " << result.rejected[0].reason << ")";
    SKINNYGEMM_FAIL(os.str());
  }
  if (!dev.is_cpu) {
    for (BenchRow& r : result.rows) set_cublaslt_columns(result.rows, r);
    // Session 15's eighth held-out set lost 19 of its 55 misses to a cuBLASLt algorithm other than the default,
    // known to its report only as a position: the identities let a rule (or a later session) say which one won.
    for (const BenchRow& r : result.rows) {
      const Config c = Config::parse(r.config);
      TuneResult::Identity identity;
      const bool by_position = c.family == Family::Cublaslt && !c.lt_identity.named() && c.algo != kCublasltTorch;
      if (by_position) try {  // the default (algo -1) is cuBLASLt's first algorithm
          identity.name = measured_cublaslt_identity(p, c.algo).name();
        } catch (const Error& e) {  // reported beside the row, not lost: the time stands, only the name is missing
          identity.error = e.what();
        }
      result.identities.push_back(std::move(identity));
    }
  }

  // What an untuned shape would run: without a table, select() is heuristic_choice, else the fallback. It is
  // judged on the same protocol as the candidates; one they did not include is measured now.
  HeuristicPick& h = result.heuristic;
  h.choice = untuned_choice(p, dev);
  const std::string pick = h.choice.config.name();
  const auto same = [&pick](const auto& x) { return x.config == pick; };
  const auto row = std::find_if(result.rows.begin(), result.rows.end(), same);
  const auto bad = std::find_if(result.rejected.begin(), result.rejected.end(), same);
  if (row != result.rows.end()) {
    h.row = *row;
  } else if (bad != result.rejected.end()) {
    h.error = bad->reason;
  } else if (auto extra = measure_checked(measure, p, bo, pick, &h.error)) {
    h.row = std::move(*extra);
    h.extra = true;
    if (!dev.is_cpu) set_cublaslt_columns(result.rows, h.row);
    // A kernel pick the globs left out competes with the candidates under the same margin rule: session 41's call 4
    // stored cuBLASLt over a 4% faster pick (a glob that named a lab-only instance), +850 us in the H100's step. Not
    // where the globs name cuBLASLt alone (`cublaslt*`): that tunes cuBLASLt and only reports the pick.
    const bool kernels_named = std::any_of(candidates.begin(), candidates.end(),
                                           [](const Config& c) { return c.family != Family::Cublaslt; });
    if (kernels_named && !is_cublaslt(h.row)) {
      result.rows.push_back(h.row);
      if (!dev.is_cpu) result.identities.emplace_back();
    }
  }
  h.row.source = source_name(h.choice.source);
  if (o.torch_baseline && !dev.is_cpu && h.error.empty()) {
    std::string why;  // a torch configuration that fails the check has no time: the column stays empty
    if (auto torch = measure_checked(measure, p, bo, "cublaslt_torch", &why)) h.row.cublaslt_torch_us = torch->us;
  }

  const Decision d = decide(result.rows, !dev.is_cpu, o.margin);
  result.entry = d.entry;
  if (names_position(d.entry.config)) {  // stored by the identity named above, not looked up twice
    const TuneResult::Identity& identity = result.identities.at(d.stored);
    SKINNYGEMM_CHECK(identity.error.empty(), identity.error);
    result.entry.config = Config::parse(identity.name);
  }
  result.stored = d.stored;
  result.reason = d.reason;
  if (o.refine && h.error.empty()) {
    if (std::optional<std::string> kept = why_keep_heuristic(result.rows[d.stored], h.row, o.margin)) {
      result.heuristic_kept = true;
      result.reason = std::move(*kept);
    } else {
      result.reason += "; beats the heuristic's " + pick + " " + us_text(h.row.us);
    }
  }
  return result;
}

TuneSummary tune_into_table(const std::vector<models::Projection>& shapes, const std::vector<int64_t>& ms,
                            DType dtype, const TuneOptions& o, const std::string& path) {
  namespace fs = std::filesystem;
  check_options(o);  // here too: inside tune_problem a bad option would fail every point one by one
  const DeviceInfo dev = device_info(o.backend);
  const fs::path parent = fs::path(path).parent_path();
  SKINNYGEMM_CHECK(!o.store || parent.empty() || fs::is_directory(parent),
                   "table folder '" << parent.string() << "' for '" << path << "' does not exist; create it first");
  // Checked before measuring anything: finding out after an hour of tuning wastes the hour.
  Table known;  // the file's entries (none without store)
  known.meta = Table::meta_for(dev);
  if (o.store && fs::exists(path)) {
    known = Table::load(path);
    SKINNYGEMM_CHECK(known.matches(dev), "table file '" << path << "' is for '" << known.meta.gpu << "' with "
                                                        << known.meta.sms << " SMs/threads, but this run measures on "
                                                        << dev.signature() << "; tune into another --table file");
  }
  tune_candidates(Problem{1, 1, 8, dtype}, dev, o.candidates);  // a glob that names nothing fails here, once

  TuneSummary s;
  if (o.store) s.table_path = path;
  s.points = shapes.size() * ms.size();
  // Tuned in this run, with what it decided: a repeated M is not measured twice, even with force (`known` is the
  // file as it was before the run).
  std::map<TableKey, std::string> done;
  std::size_t index = 0;
  for (const models::Projection& shape : shapes) {
    for (const int64_t m : ms) {
      TuneEvent ev;
      ev.index = ++index;
      ev.total = s.points;
      ev.name = shape.name;
      ev.problem.m = m;
      ev.problem.n = shape.n;
      ev.problem.k = shape.k;
      ev.problem.dtype = dtype;
      const TableKey key{dtype, shape.n, shape.k, m};
      const auto existing = known.find(dtype, shape.n, shape.k, m);
      const auto repeated = done.find(key);
      if (repeated != done.end() || (existing && !o.force)) {
        ev.kind = TuneEvent::Kind::Skipped;
        ev.message = repeated != done.end()
                         ? "tuned earlier in this run (" + repeated->second + ")"
                         : "in the table (" + existing->config_name() + " " + us_text(existing->us) + ")";
        ++s.skipped;
        if (o.progress) o.progress(ev);
        continue;
      }
      ev.candidates = tune_candidates(ev.problem, dev, o.candidates, o.near_heuristic, o.moves).size();
      if (o.progress) o.progress(ev);
      TuneResult r;
      try {
        r = tune_problem(ev.problem, o);
      } catch (const Error& e) {  // one bad point must not end a run of thousands
        ev.kind = TuneEvent::Kind::Failed;
        ev.message = e.what();
        ++s.failed;
        s.failures.push_back(ev.problem.str() + ": " + ev.message);
        if (o.progress) o.progress(ev);
        continue;
      }
      for (BenchRow& row : r.rows) row.name = shape.name;
      r.heuristic.row.name = shape.name;
      // Where refine kept the heuristic, a marker with the pick's time: resume then skips the point, selection runs
      // the heuristic there instead of a larger M's entry (its bucket), and with force it replaces the file's entry.
      const TableEntry stored =
          r.heuristic_kept ? TableEntry::heuristic_marker(r.heuristic.row.us, r.entry.cublaslt_us) : r.entry;
      if (o.store) {
        Table one;
        one.meta = Table::meta_for(dev);
        one.put(key, stored);
        one.save_merge(path);  // atomic; errors here (disk, a foreign file written meanwhile) end the run
      }
      done[key] = stored.config_name() + " " + us_text(stored.us);
      if (r.heuristic_kept && existing)
        ev.message = "replaces the table's entry " + existing->config_name() + " " + us_text(existing->us);
      ++s.tuned;
      s.results.push_back(std::move(r));
      ev.kind = s.results.back().heuristic_kept ? TuneEvent::Kind::Kept
                : o.store                       ? TuneEvent::Kind::Stored
                                                : TuneEvent::Kind::Measured;
      ev.result = &s.results.back();
      if (o.progress) o.progress(ev);
    }
  }
  return s;
}

HeuristicSummary summarize_heuristic(const std::vector<TuneResult>& results) {
  HeuristicSummary s;
  std::vector<double> losses;
  for (const TuneResult& r : results) {
    const HeuristicPick& h = r.heuristic;
    if (!h.error.empty()) {
      ++s.failed;
      continue;
    }
    const double loss = h.row.us / best_row(r).us - 1;
    if (losses.empty() || loss > s.worst_loss) {
      s.worst_loss = loss;
      s.worst_point = point_name(r);
    }
    losses.push_back(loss);
    const std::size_t lt = fastest(r.rows, is_cublaslt_default);
    if (lt != std::string::npos) {
      ++s.cublaslt_points;
      s.slower_than_cublaslt += h.row.us > r.rows[lt].us;  // strict: issue 4 says never slower
      const double torch = h.row.cublaslt_torch_us;
      const double faster = torch > 0 ? std::min(torch, r.rows[lt].us) : r.rows[lt].us;
      const double ratio = h.row.us / faster;
      s.over_faster_cublaslt += ratio > 1 + HeuristicSummary::kCublasltTolerance;
      if (ratio > s.worst_vs_faster_cublaslt) {
        s.worst_vs_faster_cublaslt = ratio;
        s.worst_vs_faster_cublaslt_point = point_name(r);
      }
    }
  }
  s.points = losses.size();
  if (!losses.empty()) {
    std::sort(losses.begin(), losses.end());
    const std::size_t mid = losses.size() / 2;
    s.median_loss = losses.size() % 2 ? losses[mid] : (losses[mid - 1] + losses[mid]) / 2;
  }
  return s;
}

EntrySummary summarize_entries(const std::vector<TuneResult>& results) {
  EntrySummary s;
  double log_gains = 0;
  for (const TuneResult& r : results) {
    if (r.heuristic_kept) {
      ++s.heuristic_kept;
      continue;
    }
    ++s.entries;
    if (!r.heuristic.error.empty()) continue;
    const double gain = r.heuristic.row.us / r.entry.us;
    if (s.gain_points == 0 || gain > s.gain_max) {
      s.gain_max = gain;
      s.gain_max_point = point_name(r);
    }
    log_gains += std::log(gain);
    ++s.gain_points;
  }
  if (s.gain_points) s.gain_geomean = std::exp(log_gains / static_cast<double>(s.gain_points));
  return s;
}

std::string heuristic_report_json(const BenchMeta& meta, const std::vector<TuneResult>& results) {
  using nlohmann::ordered_json;
  // Times exactly as results_json rounds "us" (json_round), so that equal times compare equal across the two
  // columns.
  std::vector<BenchRow> rows;
  for (const TuneResult& r : results) {
    BenchRow row = r.heuristic.row;
    if (!r.heuristic.error.empty()) {  // no time: only what was picked, for which problem
      row = BenchRow{};
      row.name = r.rows.empty() ? "" : r.rows[0].name;
      row.problem = r.problem;
      row.config = r.heuristic.choice.config.name();
      row.source = source_name(r.heuristic.choice.source);
    }
    row.kind = "heuristic";
    rows.push_back(std::move(row));
  }
  ordered_json j = ordered_json::parse(results_json(meta, rows));
  for (std::size_t i = 0; i < results.size(); ++i) {
    const TuneResult& r = results[i];
    const HeuristicPick& h = r.heuristic;
    const BenchRow& best = best_row(r);
    ordered_json& o = j["rows"][i];
    o["heuristic_config"] = h.choice.config.name();
    o["heuristic_us"] = h.error.empty() ? ordered_json(json_round(h.row.us)) : ordered_json();
    o["best_config"] = best.config;
    o["best_us"] = json_round(best.us);
    // Every measured candidate, so that another pick can be scored offline (scripts/heuristic_rescore.py) without
    // measuring the point again.
    ordered_json candidates = ordered_json::array();
    for (std::size_t c = 0; c < r.rows.size(); ++c) {
      ordered_json x = {{"config", r.rows[c].config}, {"us", json_round(r.rows[c].us)}};
      if (c < r.identities.size() && !r.identities[c].name.empty()) x["identity"] = r.identities[c].name;
      if (c < r.identities.size() && !r.identities[c].error.empty()) x["identity_error"] = r.identities[c].error;
      candidates.push_back(std::move(x));
    }
    if (h.extra && h.error.empty()) {  // the pick, measured after the candidates that left it out
      if (!r.rows.empty() && r.rows.back().config == h.row.config)  // a kernel pick joins the rows last (tune_problem)
        candidates.back()["extra"] = true;
      else
        candidates.push_back({{"config", h.row.config}, {"us", json_round(h.row.us)}, {"extra", true}});
    }
    o["candidates"] = std::move(candidates);
    o["loss"] = h.error.empty() ? ordered_json(json_round(h.row.us / best.us - 1)) : ordered_json();
    if (h.extra) o["heuristic_extra"] = true;  // measured after the candidates, which left it out
    if (!h.error.empty()) o["heuristic_error"] = h.error;
  }
  const HeuristicSummary s = summarize_heuristic(results);
  j["summary"] = {{"points", s.points},
                  {"heuristic_failed", s.failed},
                  {"median_loss", json_round(s.median_loss)},
                  {"worst_loss", json_round(s.worst_loss)},
                  {"worst_point", s.worst_point},
                  {"slower_than_cublaslt", s.slower_than_cublaslt},
                  {"cublaslt_points", s.cublaslt_points},
                  {"over_faster_cublaslt_3pct", s.over_faster_cublaslt},
                  {"worst_vs_faster_cublaslt", json_round(s.worst_vs_faster_cublaslt)},
                  {"worst_vs_faster_cublaslt_point", s.worst_vs_faster_cublaslt_point}};
  const EntrySummary e = summarize_entries(results);
  const auto gain = [&e](double value) { return e.gain_points ? ordered_json(json_round(value)) : ordered_json(); };
  ordered_json& summary = j["summary"];
  summary["entries"] = e.entries;
  summary["heuristic_kept"] = e.heuristic_kept;
  summary["entry_gain_points"] = e.gain_points;
  summary["entry_gain_geomean"] = gain(e.gain_geomean);
  summary["entry_gain_max"] = gain(e.gain_max);
  summary["entry_gain_max_point"] = e.gain_max_point;
  return j.dump(1) + "\n";
}

std::string table_file_name(const DeviceInfo& dev) {
  std::string out;
  for (const char ch : dev.name) {
    if (std::isalnum(static_cast<unsigned char>(ch)))
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    else if (!out.empty() && out.back() != '-')
      out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  SKINNYGEMM_CHECK(!out.empty(), "device name '" << dev.name << "' has no letters or digits to name a table file");
  if (dev.is_cpu) out += "-" + std::to_string(dev.sms) + "t";
  return out + ".json";
}

Config measured_cublaslt_identity(const Problem& problem, int position) {
  return cuda::cublaslt_identity(problem, position, kBenchOperandAlignment);
}

MigrationSummary migrate_cublaslt_names(const std::string& path, const DeviceInfo& dev, const IdentifyFn& identify) {
  const Table table = Table::load(path);
  SKINNYGEMM_CHECK(table.matches(dev), path << " is a table for '" << table.meta.gpu << "' with " << table.meta.sms
                                            << " SMs, not for this device (" << dev.signature()
                                            << "); its positions are cuBLASLt's order on that GPU: migrate it there");
  SKINNYGEMM_CHECK(!table.meta.cublaslt.empty() && table.meta.cublaslt == dev.cublaslt_version,
                   path << " was tuned with cuBLASLt '" << table.meta.cublaslt << "' and this process runs "
                        << dev.cublaslt_version << "; its positions are that version's heuristic order, so only "
                        << "that version can migrate them (or tune the table again)");
  const IdentifyFn& find = identify ? identify : IdentifyFn(measured_cublaslt_identity);
  MigrationSummary s;
  s.entries = table.entries.size();
  Table migrated;
  migrated.meta = table.meta;  // save_merge writes this meta: the table keeps its own
  for (const auto& [key, entry] : table.entries) {
    if (entry.heuristic_kept || !names_position(entry.config)) continue;  // a marker names no algorithm
    ++s.positional;
    const Problem p{key.m, key.n, key.k, key.dtype};
    try {
      TableEntry named = entry;
      named.config = find(p, entry.config.algo);
      migrated.put(key, named);
    } catch (const Error& e) {  // one entry cuBLASLt no longer lists must not keep the others positional
      s.failures.push_back(p.str() + " " + entry.config.name() + ": " + e.what());
    }
  }
  s.migrated = migrated.entries.size();
  if (s.migrated > 0) migrated.save_merge(path);
  return s;
}

}  // namespace skinnygemm::tune
