// Tables: save/load round trip, signature matching, messages for corrupt files, merge and atomic write, heuristic
// markers.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "skinnygemm/error.h"
#include "common/test_util.h"
#include "lab/device_presets.h"
#include "skinnygemm/skinnygemm.h"
#include "skinnygemm/table.h"

namespace skinnygemm {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

DeviceInfo h200() { return tune::device_preset("h200"); }

TableKey key(DType dtype, int64_t n, int64_t k, int64_t m) {
  TableKey t;
  t.dtype = dtype;
  t.n = n;
  t.k = k;
  t.m = m;
  return t;
}

TableEntry entry(const std::string& config, double us, double cublaslt_us = 0) {
  TableEntry e;
  e.config = Config::parse(config);
  e.us = us;
  e.cublaslt_us = cublaslt_us;
  return e;
}

std::string read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_all(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

// Each test gets a fresh folder, removed afterwards.
class TableFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("skinnygemm_table_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::vector<std::string> files() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_)) out.push_back(e.path().filename().string());
    return out;
  }

  // The error load(path) throws; fails the test if it loads.
  std::string load_error(const fs::path& path) {
    try {
      Table::load(path.string());
    } catch (const Error& e) {
      return e.what();
    }
    ADD_FAILURE() << path << " loaded";
    return "";
  }

  Table sample() const {
    Table t;
    t.meta = Table::meta_for(h200());
    t.put(key(DType::FP16, 1536, 7168, 4), entry("bulk_m8_w1x8_u4_sk2", 7.25, 11.5));
    t.put(key(DType::BF16, 7168, 2048, 1), entry("bulk_m8_w1x4_u2_sk1", 0.1 + 0.2));
    t.put(key(DType::BF16, 1536, 7168, 64), entry("cublaslt_id66_t18_s33_k1_r0_w0_o0_c1_i0", 12.0, 12.0));
    t.put(key(DType::BF16, 1536, 7168, 1), entry("cpu_r4", 5.4));
    return t;
  }

  fs::path dir_;
};

TEST_F(TableFiles, RoundTripsThroughSaveAndLoad) {
  const Table t = sample();
  const fs::path path = dir_ / "h200.json";
  t.save_merge(path.string());
  const Table back = Table::load(path.string());
  EXPECT_EQ(back.path, path.string());
  EXPECT_NE(back.id, 0u);
  EXPECT_NE(back.id, t.id);
  EXPECT_EQ(back.meta.gpu, "NVIDIA H200");
  EXPECT_EQ(back.meta.sms, 132);
  EXPECT_EQ(back.meta.cuda, "13.0");
  EXPECT_EQ(back.meta.cublaslt, "13.1.0");
  EXPECT_EQ(back.meta.library, t.meta.library);
  ASSERT_EQ(back.entries.size(), t.entries.size());
  for (const auto& [k, e] : t.entries) {
    const auto found = back.find(k.dtype, k.n, k.k, k.m);
    ASSERT_TRUE(found.has_value()) << dtype_name(k.dtype) << " n=" << k.n << " m=" << k.m;
    EXPECT_EQ(found->config.name(), e.config.name());
    EXPECT_EQ(found->us, e.us);  // doubles are written with round-trip precision
    EXPECT_EQ(found->cublaslt_us, e.cublaslt_us);
  }
  EXPECT_EQ(back.to_json(), t.to_json());
}

TEST_F(TableFiles, JsonHasOneEntryPerLineInKeyOrder) {
  const std::string text = sample().to_json();
  std::istringstream in(text);
  std::vector<std::string> entry_lines;
  for (std::string line; std::getline(in, line);)
    if (line.find("\"config\"") != std::string::npos) entry_lines.push_back(line);
  ASSERT_EQ(entry_lines.size(), 4u) << text;
  // bf16 before fp16; within bf16, n then k then m.
  EXPECT_THAT(entry_lines[0], HasSubstr("\"cpu_r4\""));
  EXPECT_THAT(entry_lines[1], HasSubstr("\"cublaslt_id66_t18_s33_k1_r0_w0_o0_c1_i0\""));
  EXPECT_THAT(entry_lines[2], HasSubstr("\"bulk_m8_w1x4_u2_sk1\""));
  EXPECT_THAT(entry_lines[3], HasSubstr("\"fp16\""));
  EXPECT_THAT(text, HasSubstr("\"gpu\":\"NVIDIA H200\""));
}

TEST(Table, MetaForAndMatches) {
  const TableMeta m = Table::meta_for(h200());
  EXPECT_EQ(m.gpu, "NVIDIA H200");
  EXPECT_EQ(m.sms, 132);
  EXPECT_EQ(m.cuda, "13.0");
  EXPECT_EQ(m.cublaslt, "13.1.0");
  EXPECT_EQ(m.library, std::string(version()));
  Table t;
  t.meta = m;
  EXPECT_TRUE(t.matches(h200()));
  DeviceInfo other = h200();
  other.sms = 114;  // same name, fewer SMs (a partitioned or different part)
  EXPECT_FALSE(t.matches(other));
  other = h200();
  other.name = "NVIDIA H100 80GB HBM3";
  EXPECT_FALSE(t.matches(other));
  DeviceInfo cpu;  // defaults describe the CPU
  EXPECT_FALSE(t.matches(cpu));
  other = h200();
  other.cuda_version = "12.8";  // versions are recorded, but do not decide a match
  EXPECT_TRUE(t.matches(other));
}

TEST(Table, FindAndPut) {
  Table t;
  t.meta = Table::meta_for(h200());
  const uint64_t id0 = t.id;
  t.put(key(DType::BF16, 1536, 7168, 1), entry("cpu_r4", 5.0));
  const uint64_t id1 = t.id;
  EXPECT_NE(id1, id0);
  ASSERT_TRUE(t.find(DType::BF16, 1536, 7168, 1).has_value());
  EXPECT_FALSE(t.find(DType::BF16, 1536, 7168, 2).has_value());
  EXPECT_FALSE(t.find(DType::FP16, 1536, 7168, 1).has_value());
  t.put(key(DType::BF16, 1536, 7168, 1), entry("cpu_r8", 4.0));  // replaces
  EXPECT_NE(t.id, id1);
  EXPECT_EQ(t.entries.size(), 1u);
  EXPECT_EQ(t.find(DType::BF16, 1536, 7168, 1)->config.name(), "cpu_r8");
  try {
    t.put(key(DType::BF16, 1536, 7168, 1), entry("cpu_r8", -1.0));
    FAIL() << "negative time accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("us=-1"));
  }
  EXPECT_THROW(t.put(key(DType::BF16, 0, 7168, 1), entry("cpu_r8", 1.0)), Error);
}

TEST_F(TableFiles, MissingFileIsNamed) {
  const fs::path path = dir_ / "nope.json";
  EXPECT_THAT(load_error(path), HasSubstr(path.string()));
}

TEST_F(TableFiles, SyntaxErrorNamesFileAndLine) {
  const fs::path path = dir_ / "broken.json";
  write_all(path, "{\n  \"meta\": {\"gpu\": \"NVIDIA H200\", \"sms\": 132},\n  \"entries\": [,]\n}\n");
  const std::string msg = load_error(path);
  EXPECT_THAT(msg, HasSubstr(path.string()));
  EXPECT_THAT(msg, HasSubstr("line 3"));
}

// A table of 0.1 with register-ring entries (tables/nvidia-h200.json held 100 until 8bfeb32): they are left out and
// counted (load() warns once), the other entries serve.
TEST_F(TableFiles, RetiredRegisterRingEntriesAreLeftOutAndTheRestServes) {
  const fs::path path = dir_ / "old.json";
  write_all(path, R"({"meta": {"gpu": "NVIDIA H200", "sms": 132}, "entries": [)"
                  R"({"dtype": "bf16", "n": 1536, "k": 7168, "m": 1, "config": "cpu_r4", "us": 5.0},)"
                  R"({"dtype": "bf16", "n": 144, "k": 7168, "m": 8, "config": "reg_m8_w1x8_u4_sk8", "us": 3.1},)"
                  R"({"dtype": "bf16", "n": 144, "k": 7168, "m": 16, "config": "reg_m16_w1x8_u4_sk8", "us": 4.1}]})");
  const Table t = Table::load(path.string());
  EXPECT_EQ(t.retired_skipped, 2u);
  EXPECT_EQ(t.entries.size(), 1u);
  EXPECT_TRUE(t.find(DType::BF16, 1536, 7168, 1).has_value());
  EXPECT_FALSE(t.find(DType::BF16, 144, 7168, 8).has_value());
}

TEST_F(TableFiles, BadFieldsNameFileEntryAndField) {
  const std::string meta = R"({"meta": {"gpu": "NVIDIA H200", "sms": 132}, "entries": [)";
  const std::string good = R"({"dtype": "bf16", "n": 1536, "k": 7168, "m": 1, "config": "cpu_r4", "us": 5.0})";
  struct Case {
    std::string entries;
    std::vector<std::string> fragments;
  };
  const std::vector<Case> cases = {
      {good + R"(, {"dtype": "bf16", "n": 1536, "k": 7168, "m": 2, "config": "foo_r1", "us": 5.0})",
       {"entries[1].config", "unknown family 'foo'"}},
      {R"({"dtype": "bf16", "n": "1536", "k": 7168, "m": 1, "config": "cpu_r4", "us": 5.0})",
       {"entries[0].n", "expected an integer"}},
      {R"({"dtype": "fp8", "n": 1536, "k": 7168, "m": 1, "config": "cpu_r4", "us": 5.0})",
       {"entries[0].dtype", "fp8"}},
      {R"({"dtype": "fp32", "n": 1536, "k": 7168, "m": 1, "config": "cpu_r4", "us": 5.0})",
       {"entries[0].dtype", "not supported"}},
      {R"({"dtype": "bf16", "n": 1536, "k": 7168, "m": 0, "config": "cpu_r4", "us": 5.0})",
       {"entries[0].m", ">= 1"}},
      {R"({"dtype": "bf16", "n": 1536, "k": 7168, "m": 1, "config": "cpu_r4"})", {"entries[0].us: missing"}},
      {R"({"dtype": "bf16", "n": 1536, "k": 7168, "m": 1, "config": "cpu_r4", "us": 1, "cublaslt_us": "x"})",
       {"entries[0].cublaslt_us"}},
      {good + ", " + good, {"entries[1]", "duplicates", "entries[0]"}},
      {"42", {"entries[0]", "expected an object"}},
      // A number no double holds: nlohmann throws out_of_range, not parse_error (before session 36 it escaped as
      // a non-Error and stopped every gemm() that looked for a shipped table).
      {R"({"dtype": "bf16", "n": 1536, "k": 7168, "m": 1, "config": "cpu_r4", "us": 1e400})",
       {"not a JSON document this library can read", "number overflow"}},
  };
  const fs::path path = dir_ / "bad.json";
  for (const Case& c : cases) {
    write_all(path, meta + c.entries + "]}");
    const std::string msg = load_error(path);
    EXPECT_THAT(msg, HasSubstr(path.string())) << c.entries;
    for (const std::string& f : c.fragments) EXPECT_THAT(msg, HasSubstr(f)) << c.entries;
  }
  write_all(path, R"({"entries": []})");
  EXPECT_THAT(load_error(path), HasSubstr(".meta: missing"));
  write_all(path, R"({"meta": {"gpu": "NVIDIA H200", "sms": "many"}, "entries": []})");
  EXPECT_THAT(load_error(path), HasSubstr(".meta.sms"));
  write_all(path, R"({"meta": {"gpu": "NVIDIA H200", "sms": 4294967298}, "entries": []})");  // was read as 2
  EXPECT_THAT(load_error(path), HasSubstr(".meta.sms: expected an integer from 0 to 2147483647"));
  write_all(path, R"({"meta": {"gpu": "NVIDIA H200", "sms": 132}, "entries": {}})");
  EXPECT_THAT(load_error(path), HasSubstr(".entries: expected an array"));
}

TEST_F(TableFiles, SaveMergeKeepsExistingEntriesAndOursWin) {
  const fs::path path = dir_ / "h200.json";
  Table existing;
  existing.meta = Table::meta_for(h200());
  existing.put(key(DType::BF16, 1536, 7168, 1), entry("cpu_r1", 9.0));  // only in the file
  existing.put(key(DType::BF16, 1536, 7168, 2), entry("cpu_r2", 9.0));  // in both
  existing.save_merge(path.string());

  Table ours;
  ours.meta = Table::meta_for(h200());
  ours.put(key(DType::BF16, 1536, 7168, 2), entry("cpu_r8", 3.0));
  ours.put(key(DType::FP16, 1536, 7168, 2), entry("cpu_r4", 4.0));  // only ours
  ours.save_merge(path.string());

  const Table merged = Table::load(path.string());
  ASSERT_EQ(merged.entries.size(), 3u);
  EXPECT_EQ(merged.find(DType::BF16, 1536, 7168, 1)->config.name(), "cpu_r1");
  EXPECT_EQ(merged.find(DType::BF16, 1536, 7168, 2)->config.name(), "cpu_r8");
  EXPECT_EQ(merged.find(DType::BF16, 1536, 7168, 2)->us, 3.0);
  EXPECT_EQ(merged.find(DType::FP16, 1536, 7168, 2)->config.name(), "cpu_r4");
  EXPECT_EQ(files(), std::vector<std::string>{"h200.json"});  // no temp file left behind
}

TEST_F(TableFiles, SaveMergeRefusesAnotherSignatureAndLeavesTheFile) {
  const fs::path path = dir_ / "h200.json";
  const std::string foreign = R"({"meta": {"gpu": "NVIDIA H100 80GB HBM3", "sms": 132}, "entries": []})";
  write_all(path, foreign);
  try {
    sample().save_merge(path.string());
    FAIL() << "merged into a table of another GPU";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr(path.string()));
    EXPECT_THAT(e.what(), HasSubstr("NVIDIA H100 80GB HBM3"));
  }
  EXPECT_EQ(read_all(path), foreign);
  EXPECT_EQ(files(), std::vector<std::string>{"h200.json"});

  // A corrupt existing file is reported, never overwritten.
  write_all(path, "{ not json");
  EXPECT_THROW(sample().save_merge(path.string()), Error);
  EXPECT_EQ(read_all(path), "{ not json");
}

// tune --refine writes "config": "heuristic" where the heuristic's pick was measured best: it loads as a marker,
// saves as it was read, is found like an entry (also as a bucket), and merges like one in both directions.
TEST_F(TableFiles, HeuristicMarkerRoundTripsAndMergesLikeAnEntry) {
  const fs::path path = dir_ / "h200.json";
  Table t;
  t.meta = Table::meta_for(h200());
  t.put(key(DType::BF16, 1536, 7168, 1), entry("cpu_r4", 5.0));
  t.put(key(DType::BF16, 1536, 7168, 8), TableEntry::heuristic_marker(9.5, 10.25));
  const std::string text = t.to_json();
  EXPECT_THAT(text, HasSubstr(R"({"dtype":"bf16","n":1536,"k":7168,"m":8,"config":"heuristic","us":9.5,)"
                              R"("cublaslt_us":10.25})"));
  t.save_merge(path.string());
  const Table back = Table::load(path.string());
  EXPECT_EQ(back.to_json(), text);
  const auto marker = back.find(DType::BF16, 1536, 7168, 8);
  ASSERT_TRUE(marker.has_value());
  EXPECT_TRUE(marker->heuristic_kept);
  EXPECT_EQ(marker->config_name(), "heuristic");
  EXPECT_EQ(marker->us, 9.5);
  EXPECT_EQ(marker->cublaslt_us, 10.25);
  EXPECT_FALSE(back.find(DType::BF16, 1536, 7168, 1)->heuristic_kept);
  int64_t bucket = 0;
  const auto served = back.find_bucket(DType::BF16, 1536, 7168, 5, &bucket);
  ASSERT_TRUE(served.has_value());
  EXPECT_TRUE(served->heuristic_kept);
  EXPECT_EQ(bucket, 8);

  // Another tuner's markers and entries: ours win at equal points, whichever kind either is.
  Table ours;
  ours.meta = Table::meta_for(h200());
  ours.put(key(DType::BF16, 1536, 7168, 1), TableEntry::heuristic_marker(5.5, 0));  // replaces the entry
  ours.put(key(DType::BF16, 1536, 7168, 8), entry("cpu_r8", 8.0));                   // replaces the marker
  ours.put(key(DType::BF16, 1536, 7168, 16), TableEntry::heuristic_marker(12.0, 0));  // only ours
  ours.save_merge(path.string());
  const Table merged = Table::load(path.string());
  ASSERT_EQ(merged.entries.size(), 3u);
  EXPECT_TRUE(merged.find(DType::BF16, 1536, 7168, 1)->heuristic_kept);
  EXPECT_EQ(merged.find(DType::BF16, 1536, 7168, 1)->us, 5.5);
  EXPECT_FALSE(merged.find(DType::BF16, 1536, 7168, 8)->heuristic_kept);
  EXPECT_EQ(merged.find(DType::BF16, 1536, 7168, 8)->config_name(), "cpu_r8");
  EXPECT_TRUE(merged.find(DType::BF16, 1536, 7168, 16)->heuristic_kept);

  // Written by hand: the marker's name exactly; anything else is a config name, with the message it always had.
  const std::string meta = R"({"meta": {"gpu": "NVIDIA H200", "sms": 132}, "entries": [)";
  write_all(path, meta + R"({"dtype": "bf16", "n": 64, "k": 256, "m": 2, "config": "heuristic", "us": 3})" + "]}");
  EXPECT_TRUE(Table::load(path.string()).find(DType::BF16, 64, 256, 2)->heuristic_kept);
  write_all(path, meta + R"({"dtype": "bf16", "n": 64, "k": 256, "m": 2, "config": "Heuristic", "us": 3})" + "]}");
  const std::string msg = load_error(path);
  EXPECT_THAT(msg, HasSubstr("entries[0].config: config 'Heuristic': unknown family 'Heuristic'"));
  write_all(path, meta + R"({"dtype": "bf16", "n": 64, "k": 256, "m": 2, "config": "heuristic"})" + "]}");
  EXPECT_THAT(load_error(path), HasSubstr("entries[0].us: missing"));
}

TEST_F(TableFiles, SaveIntoMissingFolderIsNamed) {
  const fs::path path = dir_ / "no_such_dir" / "t.json";
  try {
    sample().save_merge(path.string());
    FAIL() << "saved into a missing folder";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr(path.string()));
  }
  EXPECT_TRUE(files().empty());
}

}  // namespace
}  // namespace skinnygemm

namespace skinnygemm {
namespace {

// A table tuned under another cuBLASLt version, or for better aligned operands than a call has, is skipped like a
// foreign GPU's: selection falls through to the heuristic, with one warning that names the field.
TEST(TableMismatch, OtherCublasltVersionOrAlignmentIsSkippedWithOneWarningNamingTheField) {
  const DeviceInfo h200 = tune::device_preset("h200");
  const Problem p{2, 4096, 7168, DType::BF16};
  auto table_with = [&](const std::string& cublaslt, int alignment, const std::string& path) {
    Table t;
    t.meta = Table::meta_for(h200);
    t.meta.cublaslt = cublaslt;
    t.meta.alignment = alignment;
    t.path = path;
    t.put(TableKey{DType::BF16, 4096, 7168, 2},
          TableEntry{Config::parse("cublaslt_id66_t18_s33_k1_r0_w0_o0_c1_i0"), 9.0, 10.0});
    return t;
  };
  clear_selection_cache();
  const Table same = table_with(h200.cublaslt_version, 16, "same.json");
  EXPECT_EQ(select(p, h200, &same, 16).source, Source::Table);
  EXPECT_EQ(same.mismatch(h200, 16), "");

  const Table other_version = table_with("12.9.0", 16, "other-version.json");
  ::testing::internal::CaptureStderr();
  const Choice c = select(p, h200, &other_version, 16);
  select(Problem{3, 4096, 7168, DType::BF16}, h200, &other_version, 16);  // another problem: no second warning
  const std::string warned = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(c.source, Source::Table) << c.reason;
  EXPECT_THAT(warned, HasSubstr("other-version.json: cublaslt: the table was tuned with cuBLASLt 12.9.0"));
  EXPECT_EQ(warned.find("skipping table"), warned.rfind("skipping table")) << warned;

  const Table aligned = table_with(h200.cublaslt_version, 16, "aligned.json");
  ::testing::internal::CaptureStderr();
  const Choice misaligned = select(p, h200, &aligned, 8);
  const std::string why = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(misaligned.source, Source::Table) << misaligned.reason;
  EXPECT_THAT(why, HasSubstr("aligned.json: alignment: the table was tuned for 16-byte aligned operands, these are "
                             "8-byte aligned"));

  // An older table records neither field: nothing is held against it.
  const Table old = table_with("", 0, "old.json");
  EXPECT_EQ(old.mismatch(h200, 8), "");
  clear_selection_cache();
}

// Issue 17: a cuBLASLt entry named by position (cublaslt_a3) may name another algorithm in this process, so
// selection skips it for the fallback (cuBLASLt's default) with one warning per table that names the entry and why.
TEST(TablePositionalCublaslt, IsSkippedForTheDefaultWithOneWarningNamingIt) {
  const DeviceInfo h200 = tune::device_preset("h200");
  Table t;
  t.meta = Table::meta_for(h200);
  t.path = "positional.json";
  t.put(TableKey{DType::BF16, 4096, 7168, 2}, TableEntry{Config::parse("cublaslt_a3"), 9.0, 10.0});
  t.put(TableKey{DType::BF16, 4096, 7168, 4}, TableEntry{Config::parse("cublaslt_a5"), 9.5, 10.0});
  clear_selection_cache();
  ::testing::internal::CaptureStderr();
  const Choice c = select(Problem{2, 4096, 7168, DType::BF16}, h200, &t, 16);
  const Choice other = select(Problem{4, 4096, 7168, DType::BF16}, h200, &t, 16);  // no second warning
  const std::string warned = ::testing::internal::GetCapturedStderr();
  for (const Choice& ch : {c, other}) {
    EXPECT_EQ(ch.source, Source::Fallback) << ch.reason;
    EXPECT_EQ(ch.config, Config::parse("cublaslt")) << ch.config.name();
    EXPECT_THAT(ch.reason.str(), HasSubstr("skipped"));
  }
  EXPECT_THAT(c.reason.str(), HasSubstr("cublaslt_a3"));
  EXPECT_THAT(warned, HasSubstr("warning: skipping table entry cublaslt_a3 (bf16 n=4096 k=7168 m=2) of table "
                                "positional.json"));
  EXPECT_THAT(warned, HasSubstr("names a position in cuBLASLt's heuristic list"));
  EXPECT_THAT(warned, HasSubstr("--migrate-cublaslt-names"));
  EXPECT_EQ(warned.find("warning"), warned.rfind("warning")) << warned;
  clear_selection_cache();
}

TEST_F(TableFiles, IdentityEntryLoadsAndIsSelected) {
  const DeviceInfo h200 = tune::device_preset("h200");
  const std::string name = "cublaslt_id66_t18_s33_k1_r0_w0_o0_c1_i0";
  Table t;
  t.meta = Table::meta_for(h200);
  t.put(key(DType::BF16, 4096, 7168, 2), entry(name, 9.0, 10.0));
  const fs::path path = dir_ / "identity.json";
  t.save_merge(path.string());
  EXPECT_THAT(read_all(path), HasSubstr("\"config\":\"" + name + "\""));
  const Table back = Table::load(path.string());
  const auto found = back.find(DType::BF16, 4096, 7168, 2);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->config, Config::parse(name));
  clear_selection_cache();
  ::testing::internal::CaptureStderr();
  const Choice c = select(Problem{2, 4096, 7168, DType::BF16}, h200, &back, 16);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  EXPECT_EQ(c.source, Source::Table) << c.reason;
  EXPECT_EQ(c.config.name(), name);
  clear_selection_cache();
}

TEST(TableMismatch, AlignmentRoundTripsThroughTheFile) {
  Table t;
  t.meta = Table::meta_for(tune::device_preset("h200"));
  EXPECT_EQ(t.meta.alignment, 16);
  EXPECT_THAT(t.to_json(), HasSubstr("\"alignment\":16"));
}

}  // namespace
}  // namespace skinnygemm
