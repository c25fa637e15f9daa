// `skinnygemm heuristic --json`, the dump scripts/heuristic_cv.py judges and refits the heuristic from: its schema,
// and that its picks, scored configs and constants are the library's for the same device facts -- so that the
// picks for fixed facts stay what the library picks, without a copy of them kept anywhere.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/test_util.h"
#include "kernels/family.h"
#include "lab/device_presets.h"
#include "runtime/backends.h"
#include "runtime/cost_model.h"
#include "skinnygemm/select.h"

namespace skinnygemm {
namespace {

using ::testing::HasSubstr;

struct Dump {
  int status = -1;
  std::string output;  // stdout and stderr
  nlohmann::ordered_json json;  // in file order: the constants keep their families' order
};

Dump run_dump(const std::string& args) {
  const auto path = test::fresh_test_dir("heuristic_dump") / "dump.json";
  Dump d;
  d.output = test::run_command(std::string("'") + SKINNYGEMM_CLI_PATH + "' heuristic " + args + " --json '" +
                                   path.string() + "'",
                               &d.status);
  if (d.status == 0) d.json = nlohmann::ordered_json::parse(std::ifstream(path));
  return d;
}

// What the dump's picks must equal: select()'s without a table (heuristic_choice, uncached, else the fallback)
// where this build holds the kernels; else the same heuristic over the shape arithmetic alone (with no instance
// to run, supports() admits none).
Choice library_choice(const Problem& p, const DeviceInfo& dev) {
  Choice c;
  const bool found = cuda::built()
                         ? heuristic_choice(p, dev, 16, &c)
                         : heuristic_choice_among(p, dev, [&](const Config& x) { return fits_shape(x, p, dev); }, &c);
  if (!found) {
    c.config = Config::parse("cublaslt");
    c.source = Source::Fallback;
  }
  return c;
}

std::function<bool(const Config&)> runnable(const Problem& p, const DeviceInfo& dev) {
  if (cuda::built()) return [&p, &dev](const Config& c) { return supports(c, p, dev, 16); };
  return [&p, &dev](const Config& c) { return fits_shape(c, p, dev); };
}

// Every point of the dump against the library on dev: pick, source, predictions, scored configs.
void expect_library_points(const nlohmann::ordered_json& points, const DeviceInfo& dev) {
  for (const auto& point : points) {
    const Problem p{point.at("m").get<int64_t>(), point.at("n").get<int64_t>(), point.at("k").get<int64_t>(),
                    DType::BF16};
    const Choice want = library_choice(p, dev);
    EXPECT_EQ(point.at("pick"), want.config.name()) << p.str();
    EXPECT_EQ(point.at("source"), source_name(want.source)) << p.str();
    EXPECT_DOUBLE_EQ(point.at("pick_us").get<double>(), predicted_us(want.config, p, dev)) << p.str();
    EXPECT_DOUBLE_EQ(point.at("best").at("cublaslt").at("us").get<double>(),
                     predicted_us(Config::parse("cublaslt"), p, dev))
        << p.str();
    const std::vector<ScoredConfig> scored = scored_configs(p, dev, runnable(p, dev));
    const auto& candidates = point.at("candidates");
    ASSERT_EQ(candidates.size(), scored.size()) << p.str();
    for (std::size_t i = 0; i < scored.size(); ++i) {
      EXPECT_EQ(candidates[i].at("config"), scored[i].config.name()) << p.str();
      EXPECT_DOUBLE_EQ(candidates[i].at("us").get<double>(), scored[i].cost.us) << p.str();
      EXPECT_EQ(candidates[i].at("ranked"), scored[i].ranked) << p.str();
      EXPECT_EQ(candidates[i].at("registers"), estimated_registers(scored[i].config)) << p.str();
      EXPECT_EQ(candidates[i].at("smem_bytes"), smem_bytes(scored[i].config, p)) << p.str();
    }
    Choice scored_pick;
    if (!scored_heuristic_choice_among(p, dev, runnable(p, dev), &scored_pick))
      scored_pick.config = Config::parse("cublaslt");
    EXPECT_EQ(point.at("scored_pick"), scored_pick.config.name()) << p.str();
    if (scored_pick.config.family != Family::Cublaslt) {
      EXPECT_EQ(point.at("best").at(family(scored_pick.config.family).name).at("config"), point.at("scored_pick"))
          << p.str() << ": the scored pick is its family's best";
    }
  }
}

TEST(HeuristicDump, PicksAndConstantsAreTheLibrarysForThePresetsFacts) {
  // The stage ring (M <= 4 and above), a cuBLASLt pick (7168x1536), N % 8 != 0 (9999) and a K no kernel
  // runs (7170: the fallback).
  const Dump d = run_dump("--device h200 --shapes 144x7168,7168x1536,9999x2048,1536x7170 --m 1,4,5,16,64");
  ASSERT_EQ(d.status, 0) << d.output;
  const nlohmann::ordered_json& j = d.json;
  EXPECT_EQ(j.at("schema"), "skinnygemm-heuristic-1");
  for (const char* key : {"library", "revision", "command", "date"}) EXPECT_TRUE(j.at("meta").contains(key)) << key;

  const DeviceInfo dev = tune::device_preset("h200");
  const auto& facts = j.at("device");
  EXPECT_EQ(facts.at("from"), "preset h200");
  EXPECT_EQ(facts.at("name"), dev.name);
  EXPECT_EQ(facts.at("cc"), "9.0");
  EXPECT_EQ(facts.at("sms"), dev.sms);
  EXPECT_EQ(facts.at("smem_per_sm"), dev.smem_per_sm);
  EXPECT_EQ(facts.at("smem_per_block_optin"), dev.smem_per_block_optin);
  EXPECT_EQ(facts.at("regs_per_sm"), dev.regs_per_sm);
  EXPECT_EQ(facts.at("max_threads_per_sm"), dev.max_threads_per_sm);
  EXPECT_EQ(facts.at("max_blocks_per_sm"), dev.max_blocks_per_sm);

  const auto& heuristic = j.at("heuristic");
  EXPECT_EQ(heuristic.at("kernel_margin"), kHeuristicKernelMargin);
  EXPECT_EQ(heuristic.at("pick_tie_tolerance"), kPickTieTolerance);
  EXPECT_EQ(heuristic.at("runnable"), cuda::built() ? "supports" : "fits_shape");
  std::vector<std::string> models;
  for (const ModelConstants& m : fitted_constants()) {
    models.push_back(m.model);
    const auto& values = heuristic.at("models").at(m.model);
    ASSERT_EQ(values.size(), m.values.size()) << m.model;
    auto it = values.begin();
    for (const auto& [name, value] : m.values) {  // in the order of the family's constants
      EXPECT_EQ(it.key(), name) << m.model;
      EXPECT_EQ(it.value().get<double>(), value) << m.model << " " << name;
      ++it;
    }
  }
  EXPECT_THAT(models, ::testing::ElementsAre("bulk", "cublaslt"));

  const auto& points = j.at("points");
  ASSERT_EQ(points.size(), 20u);
  expect_library_points(points, dev);
  std::vector<std::string> picks, scored_picks;
  for (const auto& point : points) {
    picks.push_back(point.at("pick").get<std::string>() + "/" + point.at("source").get<std::string>());
    scored_picks.push_back(point.at("scored_pick").get<std::string>());
  }
  // Not a vacuous comparison: the TMA family's structural pick (M <= 16), the stage ring at M <= 4 and above it (its
  // 16-token tile, 144x7168 M = 16), cuBLASLt by the margin, and the fallback are among the picks.
  EXPECT_THAT(picks, ::testing::Contains(::testing::StartsWith("tma_")));
  EXPECT_THAT(scored_picks, ::testing::Contains(::testing::StartsWith("bulk_m8_")));
  EXPECT_THAT(scored_picks, ::testing::Contains(::testing::StartsWith("bulk_m16_")));
  EXPECT_THAT(picks, ::testing::Contains("cublaslt_unsplit/heuristic"));  // the margin's cuBLASLt pick at M <= 64
  EXPECT_THAT(picks, ::testing::Contains("cublaslt/fallback"));
}

TEST(HeuristicDump, FlagsAmendThePresetsFacts) {
  const Dump d = run_dump("--device h200 --sms 66 --smem-per-sm 116736 --shapes 7168x1536,144x7168 --m 1,8");
  ASSERT_EQ(d.status, 0) << d.output;
  EXPECT_EQ(d.json.at("device").at("from"), "preset h200, --sms 66, --smem-per-sm 116736");
  EXPECT_EQ(d.json.at("device").at("sms"), 66);
  DeviceInfo dev = tune::device_preset("h200");
  dev.sms = 66;
  dev.smem_per_sm = 116736;
  expect_library_points(d.json.at("points"), dev);
}

TEST(HeuristicDump, BadInputNamesTheValue) {
  Dump d = run_dump("--device a100 --shapes 144x7168 --m 1");
  EXPECT_EQ(d.status, 2);
  EXPECT_THAT(d.output, HasSubstr("device preset 'a100' is unknown; expected one of: h200, h100"));
  d = run_dump("--device h200 --sms 0 --shapes 144x7168 --m 1");
  EXPECT_EQ(d.status, 2);
  EXPECT_THAT(d.output, HasSubstr("--sms"));
  if (!cuda::available()) {
    d = run_dump("--shapes 144x7168 --m 1");
    EXPECT_EQ(d.status, 2);
    EXPECT_THAT(d.output, HasSubstr("name them: --device <preset> (one of h200, h100)"));
    d = run_dump("--device gpu --shapes 144x7168 --m 1");
    EXPECT_EQ(d.status, 2);
    EXPECT_THAT(d.output, HasSubstr("--device gpu: "));
  }
}

}  // namespace
}  // namespace skinnygemm
