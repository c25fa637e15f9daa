// Config names: every listed config round-trips, and a malformed name is rejected with a message that
// names the part that is wrong (tables and the CLI refer to configs only by name).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "kernels/family.h"
#include "skinnygemm/config.h"
#include "skinnygemm/error.h"

namespace skinnygemm {
namespace {

using ::testing::HasSubstr;

TEST(ConfigNames, EveryListedConfigRoundTrips) {
  const std::vector<Config> all = all_listed_configs();
  ASSERT_FALSE(all.empty());
  std::set<std::string> names;
  for (const Config& c : all) {
    const std::string name = c.name();
    const Config back = Config::parse(name);
    EXPECT_EQ(back.name(), name);
    EXPECT_EQ(back.family, c.family) << name;
    EXPECT_EQ(back.tile_m, c.tile_m) << name;
    EXPECT_EQ(back.warps_n, c.warps_n) << name;
    EXPECT_EQ(back.warps_k, c.warps_k) << name;
    EXPECT_EQ(back.unroll, c.unroll) << name;
    EXPECT_EQ(back.split_k, c.split_k) << name;
    EXPECT_EQ(back.algo, c.algo) << name;
    EXPECT_EQ(back.rows, c.rows) << name;
    EXPECT_TRUE(names.insert(name).second) << "listed twice: " << name;
  }
}

TEST(ConfigNames, EveryFamilyIsListed) {
  for (std::size_t i = 0; i < families().size(); ++i) {
    const Family f = static_cast<Family>(i);
    const std::vector<Config> configs = listed_configs(f);
    EXPECT_FALSE(configs.empty()) << family_name(f);
    for (const Config& c : configs) EXPECT_EQ(c.family, f) << c.name();
  }
  EXPECT_EQ(listed_configs(Family::Cpu).size(), std::size(kCpuRows));
}

// The public enumerators name the registry's first families, in its order.
TEST(FamilyRegistry, EnumeratorsNameTheirFamilies) {
  const std::pair<Family, const char*> named[] = {{Family::Bulk, "bulk"},
                                                  {Family::Tma, "tma"},
                                                  {Family::Cublaslt, "cublaslt"},
                                                  {Family::Cpu, "cpu"}};
  for (const auto& [id, name] : named) {
    EXPECT_STREQ(family(id).name, name);
    Family found{};
    ASSERT_NE(find_family(name, &found), nullptr) << name;
    EXPECT_EQ(found, id) << name;
  }
  Family unused{};
  EXPECT_EQ(find_family("tma_not_registered", &unused), nullptr);
}

TEST(ConfigNames, KnownNamesParseToTheirFields) {
  const Config bulk = Config::parse("bulk_m16_w2x4_u4_sk2");  // a name parses whether or not the shape fits it
  EXPECT_EQ(bulk.family, Family::Bulk);
  EXPECT_EQ(bulk.tile_m, 16);
  EXPECT_EQ(bulk.warps_n, 2);
  EXPECT_EQ(bulk.warps_k, 4);
  EXPECT_EQ(bulk.unroll, 4);
  EXPECT_EQ(bulk.split_k, 2);
  EXPECT_EQ(bulk.threads(), 256);
  EXPECT_EQ(bulk.rows_per_cta(), 32);
  EXPECT_EQ(Config::parse("cublaslt").algo, -1);
  EXPECT_EQ(Config::parse("cublaslt_a3").algo, 3);
  EXPECT_EQ(Config::parse("cublaslt_unsplit").algo, kCublasltUnsplit);
  EXPECT_EQ(Config::parse("cublaslt_unsplit").name(), "cublaslt_unsplit");
  EXPECT_NE(Config::parse("cublaslt_unsplit"), Config::parse("cublaslt"));
  EXPECT_EQ(Config::parse("cpu_r8").rows, 8);
  EXPECT_EQ(Config::parse("bulk_m32_w1x4_u2_sk1").tile_m, 32);
  EXPECT_NE(Config::parse("cpu_r8"), Config::parse("cpu_r4"));
}

// The name must be rejected and the message must contain every fragment (the wrong part and its value).
void expect_rejected(const std::string& name, std::initializer_list<const char*> fragments) {
  try {
    const Config c = Config::parse(name);
    ADD_FAILURE() << "'" << name << "' parsed as " << c.name();
  } catch (const Error& e) {
    for (const char* f : fragments) EXPECT_THAT(e.what(), HasSubstr(f)) << "for '" << name << "'";
  }
}

TEST(ConfigNames, UnknownFamily) {
  expect_rejected("foo_m16_w1x8_u4_sk2", {"unknown family 'foo'"});
  expect_rejected("MMA_m16_w1x8_u4_sk2", {"unknown family 'MMA'"});
  expect_rejected("", {"empty config name"});
}

// The register ring (reg_*) was retired in 0.2.0: its names, from a script or a table of an older release, say so.
TEST(ConfigNames, RetiredRegisterRingNamesTheRetirement) {
  for (const char* name : {"reg_m8_w1x8_u4_sk1", "reg_m32_w2x4_u2_sk8", "reg"})
    expect_rejected(name, {"register-ring family (reg_*) was retired in 0.2.0", "bulk_*", "tma_*"});
  Family unused{};
  EXPECT_EQ(find_family("reg", &unused), nullptr);
}

TEST(ConfigNames, BadTile) {
  expect_rejected("bulk_m12_w1x8_u4_sk2", {"token tile m12", "not built"});
  expect_rejected("bulk_m1_w1x8_u4_sk2", {"token tile m1", "not built"});
  expect_rejected("bulk_x16_w1x8_u4_sk2", {"token tile", "'x16'"});
  expect_rejected("bulk_m_w1x8_u4_sk2", {"token tile", "'m'"});
}

TEST(ConfigNames, BadUnroll) {
  expect_rejected("bulk_m16_w1x8_u3_sk2", {"unroll u3", "not built"});
  expect_rejected("bulk_m16_w1x8_k4_sk2", {"unroll", "'k4'"});
}

TEST(ConfigNames, BadSplit) {
  expect_rejected("bulk_m16_w1x8_u4_sk16", {"split-K sk16"});
  expect_rejected("bulk_m16_w1x8_u4_sk0", {"split-K sk0"});
  expect_rejected("bulk_m16_w1x8_u4_s2", {"split-K", "'s2'"});
}

TEST(ConfigNames, BadWarpLayout) {
  expect_rejected("bulk_m16_w4x4_u4_sk2", {"warp layout 4x4", "1..8 warps"});
  expect_rejected("bulk_m16_w0x8_u4_sk2", {"warp layout 0x8"});
  expect_rejected("bulk_m16_w1y8_u4_sk2", {"warp layout 'w1y8'"});
  expect_rejected("bulk_m16_w1x8x2_u4_sk2", {"warp layout 'w1x8x2'"});
}

TEST(ConfigNames, TrailingJunk) {
  expect_rejected("bulk_m16_w1x8_u4_sk2_pdl", {"got 6 parts"});
  expect_rejected("bulk_m16_w1x8_u4_sk2x", {"split-K", "'sk2x'"});
  expect_rejected("cpu_r4x", {"rows per block", "'r4x'"});
  expect_rejected("cpu_r4_extra", {"expected cpu_r<rows>"});
  expect_rejected("cublaslt_a1_b2",
                  {"expected cublaslt, cublaslt_torch, cublaslt_unsplit, cublaslt_a<index> or cublaslt_id<algo>_t<tile>"});
}

TEST(ConfigNames, OtherFamiliesOutOfRange) {
  expect_rejected("cpu_r3", {"rows r3", "not built"});
  expect_rejected("cublaslt_a8", {"algorithm index 8"});
  expect_rejected("cublaslt_x", {"algorithm index", "'x'"});
}

// A cuBLASLt algorithm by identity (issue 17): every field of the name is a value of the algorithm.
TEST(CublasltIdentityNames, ParseToTheirFieldsAndRoundTrip) {
  const std::string name = "cublaslt_id66_t18_s33_k2_r2_w1_o3_c14_i5";
  const Config c = Config::parse(name);
  EXPECT_EQ(c.family, Family::Cublaslt);
  EXPECT_EQ(c.algo, -1);
  const CublasltIdentity& i = c.lt_identity;
  ASSERT_TRUE(i.named());
  EXPECT_EQ(i.id, 66);
  EXPECT_EQ(i.tile, 18);
  EXPECT_EQ(i.stages, 33);
  EXPECT_EQ(i.split_k, 2);
  EXPECT_EQ(i.reduction, 2);
  EXPECT_EQ(i.swizzle, 1);
  EXPECT_EQ(i.custom, 3);
  EXPECT_EQ(i.cluster, 14);
  EXPECT_EQ(i.inner, 5);
  EXPECT_EQ(c.name(), name);
  EXPECT_EQ(Config::parse(c.name()), c);
  EXPECT_EQ(Config::parse("cublaslt_id0_t0_s0_k1_r0_w0_o0_c0_i0").name(), "cublaslt_id0_t0_s0_k1_r0_w0_o0_c0_i0");
}

TEST(CublasltIdentityNames, EqualOnlyWithEveryFieldEqual) {
  const Config c = Config::parse("cublaslt_id66_t18_s33_k1_r0_w0_o0_c1_i0");
  EXPECT_EQ(c, Config::parse("cublaslt_id66_t18_s33_k1_r0_w0_o0_c1_i0"));
  for (const char* other : {"cublaslt_id67_t18_s33_k1_r0_w0_o0_c1_i0", "cublaslt_id66_t19_s33_k1_r0_w0_o0_c1_i0",
                            "cublaslt_id66_t18_s34_k1_r0_w0_o0_c1_i0", "cublaslt_id66_t18_s33_k2_r0_w0_o0_c1_i0",
                            "cublaslt_id66_t18_s33_k1_r1_w0_o0_c1_i0", "cublaslt_id66_t18_s33_k1_r0_w1_o0_c1_i0",
                            "cublaslt_id66_t18_s33_k1_r0_w0_o1_c1_i0", "cublaslt_id66_t18_s33_k1_r0_w0_o0_c2_i0",
                            "cublaslt_id66_t18_s33_k1_r0_w0_o0_c1_i1"})
    EXPECT_NE(c, Config::parse(other)) << other;
  EXPECT_NE(c, Config::parse("cublaslt"));
  EXPECT_NE(c, Config::parse("cublaslt_a0"));
}

TEST(CublasltIdentityNames, BadFieldIsNamedWithItsValue) {
  expect_rejected("cublaslt_idx_t18_s33_k1_r0_w0_o0_c1_i0", {"algorithm id", "'idx'"});
  expect_rejected("cublaslt_id66_x18_s33_k1_r0_w0_o0_c1_i0", {"tile id", "'t<number>'", "'x18'"});
  expect_rejected("cublaslt_id66_t18_t33_k1_r0_w0_o0_c1_i0", {"stages id", "'t33'"});
  expect_rejected("cublaslt_id66_t18_s33_k1x_r0_w0_o0_c1_i0", {"split-K", "'k1x'"});
  expect_rejected("cublaslt_id66_t18_s33_k1_r0_w0_o_c1_i0", {"custom option", "'o'"});
  expect_rejected("cublaslt_id66_t18_s33_k1_r0_w0_o0_i1_c0", {"cluster shape id", "'i1'"});
  expect_rejected("cublaslt_id66_t18_s33_k1_r0_w0_o0_c1_i-1", {"inner shape id", "'i-1'"});
  expect_rejected("cublaslt_id66_t18_s33_k0_r0_w0_o0_c1_i0", {"split-K k0 must be >= 1"});
  expect_rejected("cublaslt_id66_t18_s33_k1_r3_w0_o0_c1_i0",
                  {"reduction scheme r3", "expected r0 (none), r1 (in place), r2 (compute type) or r4 (output type)"});
  expect_rejected("cublaslt_id66_t18_s33_k1_r0_w2_o0_c1_i0", {"CTA swizzling w2 must be w0 or w1"});
}

TEST(CublasltIdentityNames, EveryFieldIsRequiredAndNoneMore) {
  const char* form = "cublaslt_id<algo>_t<tile>_s<stages>_k<split-k>_r<reduction>_w<swizzle>_o<custom>_c<cluster>_i<inner>";
  expect_rejected("cublaslt_id66", {form, "got 2 parts"});
  expect_rejected("cublaslt_id66_t18_s33_k1_r0_w0_o0_c1", {form, "got 9 parts"});
  expect_rejected("cublaslt_id66_t18_s33_k1_r0_w0_o0_c1_i0_x", {form, "got 11 parts"});
}

TEST(ConfigNames, ErrorsCarryFileAndLine) {
  try {
    Config::parse("bogus");
    FAIL() << "'bogus' parsed";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("config.cpp:"));
    EXPECT_THAT(e.what(), HasSubstr("'bogus'"));
  }
}

}  // namespace
}  // namespace skinnygemm
