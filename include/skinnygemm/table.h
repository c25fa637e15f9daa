// Measured choices for one device signature, stored as JSON under tables/.
//
// {"meta": {"gpu": "NVIDIA H200", "sms": 132, "cuda": "13.0", "cublaslt": "13.1.0", "library": "0.1.0",
//           "alignment": 16},
//  "entries": [{"dtype": "bf16", "n": 1536, "k": 7168, "m": 1, "config": "tma_m8_r64_b2_s4_x8",
//               "us": 5.4, "cublaslt_us": 10.0},
//              {"dtype": "bf16", "n": 1536, "k": 7168, "m": 32, "config": "heuristic", "us": 9.1, "cublaslt_us": 9.5},
//              ...]}
//
// An entry whose config is "heuristic" is a marker (TableEntry::heuristic_kept): `tune --refine` measured the
// heuristic's pick best at that point, so selection runs the heuristic there and at the Ms its bucket serves,
// rather than letting the next entry at a larger M stand for them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>

#include "skinnygemm/config.h"
#include "skinnygemm/device.h"
#include "skinnygemm/dtype.h"

namespace skinnygemm {

struct TableMeta {
  std::string gpu;
  int sms = 0;
  std::string cuda;
  std::string cublaslt;  // the cuBLASLt version its cuBLASLt entries were measured with ("" = not recorded)
  std::string library;
  int alignment = 0;     // operand alignment in bytes the entries were measured with (0 = not recorded)
};

struct TableKey {
  DType dtype = DType::BF16;
  int64_t n = 0, k = 0, m = 0;
  bool operator<(const TableKey& o) const {
    return std::tie(dtype, n, k, m) < std::tie(o.dtype, o.n, o.k, o.m);
  }
};

// The config name of a marker entry in a table file: no family is called "heuristic".
inline constexpr const char* kHeuristicEntryName = "heuristic";

struct TableEntry {
  Config config;           // unused where heuristic_kept
  double us = 0;           // measured time of config (of the heuristic's pick where heuristic_kept)
  double cublaslt_us = 0;  // best cuBLASLt time in the same run (0 if not measured)
  bool heuristic_kept = false;  // a marker: the heuristic's pick was measured best here (see the top of this file)

  static TableEntry heuristic_marker(double us, double cublaslt_us);
  std::string config_name() const;  // kHeuristicEntryName for a marker, else config.name()
};

class Table {
 public:
  // Every table, every copy and every moved-from table has an id of its own: selection caches key on it, so a table
  // built by hand (entries set directly) is never mistaken for no table or for the table it was copied or moved from
  // (session 43: one returned the cached heuristic pick instead of its entry). A move keeps the id with the entries.
  Table();
  Table(const Table& other);
  Table& operator=(const Table& other);
  Table(Table&& other) noexcept;
  Table& operator=(Table&& other) noexcept;

  TableMeta meta;
  std::map<TableKey, TableEntry> entries;
  std::string path;  // where it was loaded from (for messages)
  // Fresh on construction, copy, load() and put(). Editing `entries` in place after a selection used the table leaves
  // the id as it was: add entries with put(), or call clear_selection_cache() after editing.
  uint64_t id = 0;
  // Entries of a retired family (the register ring, reg_*, retired in 0.2.0) that load() left out, with a warning:
  // a table of an older release keeps its other entries.
  std::size_t retired_skipped = 0;

  // Throws Error naming the file and what is wrong (JSON line/column, or the field of the bad entry).
  static Table load(const std::string& path);
  // The meta block for the given device and this library build.
  static TableMeta meta_for(const DeviceInfo& device);

  bool matches(const DeviceInfo& device) const;  // same signature (GPU name and SM count)
  // Why selection must not use this table for operands of this alignment on device, naming the field
  // ("gpu: ...", "cublaslt: ...", "alignment: ..."), or "" when it may. A field the table does not record is not
  // held against it.
  std::string mismatch(const DeviceInfo& device, int alignment) const;
  std::optional<TableEntry> find(DType dtype, int64_t n, int64_t k, int64_t m) const;
  // The entry of the smallest tuned M' >= m for the same (dtype, N, K), with M' in bucket_m: tables may be
  // tuned at M buckets (1, 2, 4, 8, ...) and serve the Ms between them. A marker is found like any entry.
  std::optional<TableEntry> find_bucket(DType dtype, int64_t n, int64_t k, int64_t m, int64_t* bucket_m) const;
  void put(const TableKey& key, const TableEntry& entry);

  std::string to_json() const;
  // Merge this table's entries into the file at path (ours win on equal keys, markers as entries: a marker replaces
  // the file's entry at its point and an entry replaces a marker) and write it atomically
  // (temp file in the same folder + rename), under an exclusive flock() on path + ".lock" so that concurrent
  // writers (processes or threads) never lose each other's entries. An existing file for another signature is an
  // error.
  void save_merge(const std::string& path) const;
};

}  // namespace skinnygemm
