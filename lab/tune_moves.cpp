// The quick tune's moves (lab/tune_moves.h): the lists, and a move applied to a pick's name as
// tools/trials/selector_study/topk.py's apply_move does, so that the C++ times what the study scored.
#include "lab/tune_moves.h"

#include <algorithm>
#include <array>
#include <map>
#include <regex>
#include <sstream>

#include "kernels/family.h"
#include "skinnygemm/error.h"
#include "skinnygemm/select.h"

namespace skinnygemm::tune {
namespace {

// Learned on every H200 held-out set, nine to twenty-four (`python3 tools/trials/selector_study/topk.py --lists`, the
// first 12 of each list): greedy set cover, each move the one that put the most points not yet covered within 5% of
// their best measured config.
const std::map<std::string, std::vector<std::string>>& lists() {
  static const std::map<std::string, std::vector<std::string>> k = {
      {"x",
       {"S+1 x/2", "S-1", ">lead(c2,d6)", "S-1 x*2", ">sk(c1,u8)", "r/2 S+4", "LT:cublaslt_a0", "r/2 x/2", "r/2 S+2",
        ">sk(c2,u8)", "b*2 x/2", "b/2 S+1"}},
      {"lead",
       {"S+1", "r*2 S+1", "LT:cublaslt_a0", "r*2 b/2", "r*2>sk(c+0,u8)", "b/2 S+1", ">x(x1)", "r*4 b/2",
        "LT:cublaslt_a1", "S+1 d-3", ">sk(c+0,u8)", "S-1"}},
      {"sk",
       {"r/2>lead(c+0,d0)", ">lead(c+0,d6)", "c-1 U+2", "LT:cublaslt_a0", ">x(x1)", "b/2>lead(c+0,d6)", ">x(x8)",
        "LT:cublaslt_a1", "r*2 b/2", "U+1", "S+1>lead(c+0,d3)", "LT:cublaslt_a6"}},
      {"cublaslt",
       {"LT:cublaslt_a1", "LT:cublaslt_a2", "LT:cublaslt_a3", "CUT:tma", "LT:cublaslt_a4", "LT:cublaslt_a6",
        "LT:cublaslt_a5", "LT:cublaslt_a7", "LT:cublaslt_a0", "LT:cublaslt"}},
      {"bulk",
       {"w1x8>w1x4 u/2", "CUT:tma", "LT:cublaslt_a1", "sk/2", "u/2", "w1x8>w1x4 sk*2", "sk*2", "u/2 sk*2", "w1x8>w1x4",
        "LT:cublaslt_a2", "LT:cublaslt_a4", "LT:cublaslt_a5"}},
  };
  return k;
}

// A tma config's name fields: tma_m<t>_r<r>_b<b>_s<s>_{x<n> | c<c>_d<d> | c<c>_u<u>}.
struct TmaName {
  std::string kind;  // "x", "lead", "sk"
  int tile = 0, rows = 0, boxes = 0, stages = 0;
  int a = 0, b = 0;  // x: the cluster (a); lead: ctas (a), lead (b); sk: ctas (a), minimum units (b)
};

std::optional<TmaName> parse_tma(const std::string& name) {
  static const std::regex re(R"(tma_m(\d+)_r(\d+)_b(\d+)_s(\d+)_(?:x(\d+)|c(\d+)_d(\d+)|c(\d+)_u(\d+)))");
  std::smatch m;
  if (!std::regex_match(name, m, re)) return std::nullopt;
  TmaName t;
  t.tile = std::stoi(m[1]), t.rows = std::stoi(m[2]), t.boxes = std::stoi(m[3]), t.stages = std::stoi(m[4]);
  if (m[5].matched) t.kind = "x", t.a = std::stoi(m[5]);
  if (m[6].matched) t.kind = "lead", t.a = std::stoi(m[6]), t.b = std::stoi(m[7]);
  if (m[8].matched) t.kind = "sk", t.a = std::stoi(m[8]), t.b = std::stoi(m[9]);
  return t;
}

// "r*2" / "b/2" / "x/2" applied to v: nullopt where the division leaves a remainder.
std::optional<int> scale(int v, char op, int by) {
  if (op == '*') return v * by;
  if (by == 0 || v % by != 0) return std::nullopt;
  return v / by;
}

// N steps along a listed sequence from v: nullopt where v is not on it or the step leaves it.
template <std::size_t N>
std::optional<int> step_along(const int (&values)[N], int v, int steps) {
  const auto it = std::find(std::begin(values), std::end(values), v);
  if (it == std::end(values)) return std::nullopt;
  const long i = (it - std::begin(values)) + steps;
  if (i < 0 || i >= static_cast<long>(N)) return std::nullopt;
  return values[i];
}

std::vector<std::string> words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::optional<std::string> apply_tma(const std::string& body, TmaName t) {
  const std::size_t gt = body.find('>');
  for (const std::string& op : words(body.substr(0, gt))) {
    SKINNYGEMM_CHECK(op.size() >= 3, "move '" << body << "': expected ops such as S+1, r*2, x/2");
    // Another kind's field (a cluster size on a lead split, a lead on stream-K): the move is not for this pick.
    if ((op[0] == 'x' && t.kind != "x") || (op[0] == 'c' && t.kind == "x") || (op[0] == 'd' && t.kind != "lead") ||
        (op[0] == 'U' && t.kind != "sk"))
      return std::nullopt;
    const int n = std::stoi(op.substr(2));
    const int sign = op[1] == '-' ? -1 : 1;
    std::optional<int> v;
    switch (op[0]) {
      case 'r': v = scale(t.rows, op[1], n), t.rows = v.value_or(0); break;
      case 'b': v = scale(t.boxes, op[1], n), t.boxes = v.value_or(0); break;
      case 'x': v = scale(t.a, op[1], n), t.a = v.value_or(0); break;
      case 'S': v = step_along(kTmaStages, t.stages, sign * n), t.stages = v.value_or(0); break;
      case 'U': v = step_along(kTmaMinUnits, t.b, sign * n), t.b = v.value_or(0); break;
      case 'c': v = t.a += sign * n; break;
      case 'd': v = t.b += sign * n; break;
      default: SKINNYGEMM_CHECK(false, "move '" << body << "': unknown op '" << op << "'");
    }
    if (!v) return std::nullopt;
  }
  std::ostringstream name;
  name << "tma_m" << t.tile << "_r" << t.rows << "_b" << t.boxes << "_s" << t.stages << "_";
  if (gt == std::string::npos) {
    if (t.kind == "x") name << "x" << t.a;
    else name << "c" << t.a << (t.kind == "lead" ? "_d" : "_u") << t.b;
    return name.str();
  }
  // >x(xN), >lead(cC,dD), >sk(cC,uU) with C absolute or +N / -N from the pick's first field.
  static const std::regex target(R"((x|lead|sk)\((?:x(\d+)|c([+-]?)(\d+),([du])(\d+))\))");
  std::smatch m;
  const std::string tail = body.substr(gt + 1);
  SKINNYGEMM_CHECK(std::regex_match(tail, m, target), "move '" << body << "': unknown target '" << tail << "'");
  if (m[1] == "x") {
    name << "x" << m[2];
    return name.str();
  }
  const int c = std::stoi(m[4]);
  const int ctas = m[3] == "" ? c : t.a + (m[3] == "-" ? -c : c);
  name << "c" << ctas << "_" << m[5] << m[6];
  return name.str();
}

// bulk: "a>b" replaces token a (after the family and token tile) with b; "u/2", "sk*2" scale a token's number.
std::optional<std::string> apply_tokens(const std::string& body, const std::string& pick) {
  std::vector<std::string> tokens;
  std::istringstream in(pick);
  for (std::string tok; std::getline(in, tok, '_');) tokens.push_back(tok);
  static const std::regex scaled(R"(([a-z]+)([*/])(\d+))"), numbered(R"(([a-z]+)(\d+))");
  for (const std::string& op : words(body)) {
    const std::size_t gt = op.find('>');
    if (gt != std::string::npos) {
      const auto it = std::find(tokens.begin() + std::min<std::size_t>(2, tokens.size()), tokens.end(), op.substr(0, gt));
      if (it == tokens.end()) return std::nullopt;
      *it = op.substr(gt + 1);
      continue;
    }
    std::smatch m;
    if (!std::regex_match(op, m, scaled)) return std::nullopt;  // a tma move (S+1, x/2 ...): not for this pick
    bool done = false;
    for (std::size_t i = 2; i < tokens.size() && !done; ++i) {
      std::smatch t;
      if (!std::regex_match(tokens[i], t, numbered) || t[1] != m[1]) continue;
      const std::optional<int> v = scale(std::stoi(t[2]), m[2].str()[0], std::stoi(m[3]));
      if (!v) return std::nullopt;
      tokens[i] = t[1].str() + std::to_string(*v);
      done = true;
    }
    if (!done) return std::nullopt;
  }
  std::string out;
  for (const std::string& tok : tokens) out += (out.empty() ? "" : "_") + tok;
  return out;
}

}  // namespace

std::string move_kind(const Config& pick) {
  if (pick.family == Family::Cublaslt) return "cublaslt";
  if (pick.family == Family::Bulk) return "bulk";
  const std::optional<TmaName> t = parse_tma(pick.name());
  return t ? t->kind : "";
}

const std::vector<std::string>& moves_for(const std::string& kind) {
  static const std::vector<std::string> none;
  const auto it = lists().find(kind);
  return it == lists().end() ? none : it->second;
}

std::optional<std::string> apply_move(const std::string& move, const Config& pick, const Problem& problem,
                                      const DeviceInfo& device) {
  const std::string name = pick.name();
  if (move.rfind("LT:", 0) == 0) return move.substr(3);
  if (move == "CUT:tma") {
    if (pick.family == Family::Tma) return std::nullopt;
    const FamilyDescriptor& tma = family(Family::Tma);
    if (!tma.first_cut) return std::nullopt;
    return tma.first_cut(problem, device).name();
  }
  const std::string kind = move_kind(pick);
  if (kind == "x" || kind == "lead" || kind == "sk") return apply_tma(move, *parse_tma(name));
  if (kind == "bulk") return apply_tokens(move, name);
  return std::nullopt;
}

std::vector<Config> move_candidates(const Problem& problem, const DeviceInfo& device, const Config& pick,
                                    const std::vector<Config>& listed, int k, int alignment) {
  SKINNYGEMM_CHECK(k >= 1, "moves " << k << ": expected the number of configs to time per point, >= 1 (the pick)");
  std::vector<Config> out{pick};
  auto taken = [&](const std::string& name) {
    return std::any_of(out.begin(), out.end(), [&](const Config& c) { return c.name() == name; });
  };
  auto take = [&](const std::string& name) {
    if (taken(name)) return false;
    for (const Config& c : listed)
      if (c.name() == name && supports(c, problem, device, alignment)) return out.push_back(c), true;
    return false;
  };
  int used = 0;
  for (const std::string& move : moves_for(move_kind(pick))) {
    if (used >= k - 1) break;
    const std::optional<std::string> name = apply_move(move, pick, problem, device);
    if (!name) continue;
    if (move == "CUT:tma") {  // a first cut need not be a listed config (as tune --near-heuristic measures it)
      const Config cut = family(Family::Tma).first_cut(problem, device);
      if (!taken(*name) && supports(cut, problem, device, alignment)) out.push_back(cut), ++used;
      continue;
    }
    if (take(*name)) ++used;
  }
  take("cublaslt");
  return out;
}

}  // namespace skinnygemm::tune
