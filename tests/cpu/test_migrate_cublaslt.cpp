// Issue 17: tune::migrate_cublaslt_names rewrites a table's positional cuBLASLt entries (cublaslt_a<i>) as
// identities and leaves the rest alone; with a fake cuBLASLt here (the real one: tests/gpu/test_cublaslt_identity.cpp).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "common/test_util.h"
#include "lab/device_presets.h"
#include "lab/tuner.h"
#include "skinnygemm/skinnygemm.h"

namespace skinnygemm {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// What the fake cuBLASLt lists at position i: an identity whose algorithm id is 60 + i, for any problem.
Config fake_identity(int position) {
  return Config::parse("cublaslt_id" + std::to_string(60 + position) + "_t18_s33_k1_r0_w0_o0_c1_i0");
}

class MigrateCublaslt : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::fresh_test_dir("migrate");
    path_ = (dir_ / "h200.json").string();
    Table t;
    t.meta = Table::meta_for(h200_);
    t.put(TableKey{DType::BF16, 4096, 7168, 2}, TableEntry{Config::parse("cublaslt_a3"), 9.0, 10.0});
    t.put(TableKey{DType::FP16, 1536, 7168, 8}, TableEntry{Config::parse("cublaslt_a0"), 7.0, 7.5});
    t.put(TableKey{DType::BF16, 4096, 7168, 1}, TableEntry{Config::parse("cublaslt"), 8.0, 8.0});
    t.put(TableKey{DType::BF16, 144, 7168, 1}, TableEntry{Config::parse("bulk_m8_w1x8_u4_sk4"), 2.4, 6.3});
    t.put(TableKey{DType::BF16, 2112, 7168, 4}, TableEntry{fake_identity(9), 6.0, 6.5});
    t.save_merge(path_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  const DeviceInfo h200_ = tune::device_preset("h200");
  fs::path dir_;
  std::string path_;
};

TEST_F(MigrateCublaslt, RewritesPositionsAsIdentitiesAndNothingElse) {
  std::vector<std::pair<std::string, int>> asked;
  const tune::MigrationSummary s = tune::migrate_cublaslt_names(path_, h200_, [&](const Problem& p, int position) {
    asked.emplace_back(p.str(), position);
    return fake_identity(position);
  });
  EXPECT_EQ(s.entries, 5u);
  EXPECT_EQ(s.positional, 2u);
  EXPECT_EQ(s.migrated, 2u);
  EXPECT_TRUE(s.failures.empty()) << s.failures[0];
  // The entry's own problem (packed strides, as tuned) and position, in the table's key order.
  const std::vector<std::pair<std::string, int>> expected{{Problem{2, 4096, 7168, DType::BF16}.str(), 3},
                                                          {Problem{8, 1536, 7168, DType::FP16}.str(), 0}};
  EXPECT_EQ(asked, expected);
  const Table back = Table::load(path_);
  EXPECT_EQ(back.meta.cublaslt, h200_.cublaslt_version);
  EXPECT_EQ(back.meta.alignment, 16);
  ASSERT_EQ(back.entries.size(), 5u);
  const auto migrated = back.find(DType::BF16, 4096, 7168, 2);
  EXPECT_EQ(migrated->config, fake_identity(3));
  EXPECT_EQ(migrated->us, 9.0);  // the measurement is the algorithm's: only its name changes
  EXPECT_EQ(migrated->cublaslt_us, 10.0);
  EXPECT_EQ(back.find(DType::FP16, 1536, 7168, 8)->config, fake_identity(0));
  EXPECT_EQ(back.find(DType::BF16, 4096, 7168, 1)->config.name(), "cublaslt");
  EXPECT_EQ(back.find(DType::BF16, 144, 7168, 1)->config.name(), "bulk_m8_w1x8_u4_sk4");
  EXPECT_EQ(back.find(DType::BF16, 2112, 7168, 4)->config, fake_identity(9));

  // Nothing positional is left: a second run asks nothing and writes nothing.
  asked.clear();
  const tune::MigrationSummary again = tune::migrate_cublaslt_names(path_, h200_, [&](const Problem& p, int i) {
    asked.emplace_back(p.str(), i);
    return fake_identity(i);
  });
  EXPECT_EQ(again.positional, 0u);
  EXPECT_TRUE(asked.empty());
}

TEST_F(MigrateCublaslt, AnEntryCublasltCannotNameStaysAndIsReported) {
  const tune::MigrationSummary s = tune::migrate_cublaslt_names(path_, h200_, [](const Problem& p, int position) {
    SKINNYGEMM_CHECK(position != 3, "cublaslt_a3: cuBLASLt offers only 2 algorithms for " << p.str());
    return fake_identity(position);
  });
  EXPECT_EQ(s.positional, 2u);
  EXPECT_EQ(s.migrated, 1u);
  ASSERT_EQ(s.failures.size(), 1u);
  EXPECT_THAT(s.failures[0], HasSubstr("m=2 n=4096 k=7168"));
  EXPECT_THAT(s.failures[0], HasSubstr("cublaslt_a3: cuBLASLt offers only 2 algorithms"));
  const Table back = Table::load(path_);
  EXPECT_EQ(back.find(DType::BF16, 4096, 7168, 2)->config.name(), "cublaslt_a3");
  EXPECT_EQ(back.find(DType::FP16, 1536, 7168, 8)->config, fake_identity(0));
}

TEST_F(MigrateCublaslt, AnotherCublasltVersionOrDeviceIsRefusedUntouched) {
  const auto never = [](const Problem&, int) -> Config {
    ADD_FAILURE() << "asked cuBLASLt for a position it does not order";
    return Config::parse("cublaslt");
  };
  const std::string before = Table::load(path_).to_json();
  DeviceInfo newer = h200_;
  newer.cublaslt_version = "13.2.0";
  test::expect_error([&] { tune::migrate_cublaslt_names(path_, newer, never); },
                     {path_ + " was tuned with cuBLASLt '13.1.0' and this process runs 13.2.0"});
  DeviceInfo h100 = h200_;
  h100.name = "NVIDIA H100";
  test::expect_error([&] { tune::migrate_cublaslt_names(path_, h100, never); },
                     {"is a table for 'NVIDIA H200' with 132 SMs, not for this device"});
  EXPECT_EQ(Table::load(path_).to_json(), before);
}

}  // namespace
}  // namespace skinnygemm
