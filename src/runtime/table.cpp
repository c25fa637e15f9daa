// Measured tables: JSON files under tables/, one per device signature.
//
// Errors name the file and the exact place (line/column of a syntax error, entries[i].field of a bad
// value) because tables are edited by hand and written by the tuner on another machine; "invalid table"
// alone would send someone bisecting a 2000-line file.
#include "skinnygemm/table.h"
#include "runtime/config_names.h"
#include "runtime/warn_once.h"

#include <algorithm>
#include <atomic>
#include <utility>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>

#include <nlohmann/json.hpp>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "skinnygemm/error.h"

#ifndef SKINNYGEMM_VERSION
#error "SKINNYGEMM_VERSION must be defined by the build (see CMakeLists.txt)"
#endif

namespace skinnygemm {

namespace {

using json = nlohmann::json;
using ordered_json = nlohmann::ordered_json;

// Every loaded or changed table gets a fresh id, so selection caches can key on (table, id).
std::atomic<uint64_t> g_next_table_id{1};
uint64_t next_table_id() { return g_next_table_id.fetch_add(1, std::memory_order_relaxed); }

// An Error's message without its "skinnygemm error (file:line): " prefix, for nesting into another message.
std::string bare_message(const std::exception& e) {
  const std::string s = e.what();
  const std::string head = "skinnygemm error (";
  const auto close = s.find("): ");
  if (s.compare(0, head.size(), head) == 0 && close != std::string::npos) return s.substr(close + 3);
  return s;
}

// "line 3, column 7" for a byte offset into text (nlohmann reports bytes; people count lines).
std::string line_column(const std::string& text, std::size_t byte) {
  byte = std::min(byte, text.size());
  std::size_t line = 1, col = 1;
  for (std::size_t i = 0; i < byte; ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  std::ostringstream os;
  os << "line " << line << ", column " << col;
  return os.str();
}

// Field access with messages of the form "<where>.<name>: expected ..., got <value>".
const json& need(const json& obj, const char* name, const std::string& where) {
  const auto it = obj.find(name);
  SKINNYGEMM_CHECK(it != obj.end(), where << "." << name << ": missing");
  return *it;
}

int64_t need_int(const json& obj, const char* name, const std::string& where, int64_t min,
                 int64_t max = std::numeric_limits<int64_t>::max()) {
  const json& v = need(obj, name, where);
  const bool bounded = max < std::numeric_limits<int64_t>::max();
  SKINNYGEMM_CHECK(v.is_number_integer() && v.get<int64_t>() >= min && v.get<int64_t>() <= max,
                   where << "." << name << ": expected an integer "
                         << (bounded ? "from " + std::to_string(min) + " to " + std::to_string(max)
                                     : ">= " + std::to_string(min))
                         << ", got " << v.dump());
  return v.get<int64_t>();
}

std::string need_string(const json& obj, const char* name, const std::string& where) {
  const json& v = need(obj, name, where);
  SKINNYGEMM_CHECK(v.is_string(), where << "." << name << ": expected a string, got " << v.dump());
  return v.get<std::string>();
}

std::string optional_string(const json& obj, const char* name, const std::string& where) {
  return obj.contains(name) ? need_string(obj, name, where) : std::string();
}

double time_value(const json& v, const char* name, const std::string& where) {
  SKINNYGEMM_CHECK(v.is_number() && std::isfinite(v.get<double>()) && v.get<double>() >= 0,
                   where << "." << name << ": expected a time in microseconds >= 0, got " << v.dump());
  return v.get<double>();
}

TableMeta parse_meta(const json& doc, const std::string& where) {
  const json& m = need(doc, "meta", where);
  const std::string at = where + ".meta";
  SKINNYGEMM_CHECK(m.is_object(), at << ": expected an object, got " << m.dump());
  TableMeta meta;
  meta.gpu = need_string(m, "gpu", at);
  SKINNYGEMM_CHECK(!meta.gpu.empty(), at << ".gpu: must not be empty");
  meta.sms = static_cast<int>(need_int(m, "sms", at, 0, std::numeric_limits<int>::max()));
  meta.cuda = optional_string(m, "cuda", at);
  meta.cublaslt = optional_string(m, "cublaslt", at);
  meta.library = optional_string(m, "library", at);
  if (m.contains("alignment")) meta.alignment = static_cast<int>(need_int(m, "alignment", at, 1, 16));
  return meta;
}

void parse_entry(const json& e, const std::string& at, TableKey* key, TableEntry* entry) {
  SKINNYGEMM_CHECK(e.is_object(), at << ": expected an object, got " << e.dump());
  const std::string dtype = need_string(e, "dtype", at);
  try {
    key->dtype = parse_dtype(dtype);
  } catch (const Error& err) {
    SKINNYGEMM_FAIL(at << ".dtype: " << bare_message(err));
  }
  SKINNYGEMM_CHECK(dtype_supported(key->dtype), at << ".dtype: '" << dtype << "' is not supported; expected bf16 or fp16");
  key->n = need_int(e, "n", at, 1);
  key->k = need_int(e, "k", at, 1);
  key->m = need_int(e, "m", at, 1);
  const std::string config = need_string(e, "config", at);
  if (config == kHeuristicEntryName) {
    entry->heuristic_kept = true;
  } else {
    try {
      entry->config = Config::parse(config);
    } catch (const Error& err) {
      SKINNYGEMM_FAIL(at << ".config: " << bare_message(err));
    }
  }
  entry->us = time_value(need(e, "us", at), "us", at);
  entry->cublaslt_us = e.contains("cublaslt_us") ? time_value(e["cublaslt_us"], "cublaslt_us", at) : 0.0;
}

// Parses a whole table document; `where` prefixes every message (the file path).
Table parse_table(const std::string& text, const std::string& where) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    SKINNYGEMM_FAIL(where << ": not valid JSON at byte " << e.byte << " (" << line_column(text, e.byte)
                          << "): " << e.what());
  } catch (const json::exception& e) {  // e.g. out_of_range.406: a number too large for a double (1e400)
    SKINNYGEMM_FAIL(where << ": not a JSON document this library can read: " << e.what());
  }
  SKINNYGEMM_CHECK(doc.is_object(), where << ": expected a JSON object with meta and entries, got a "
                                          << doc.type_name());
  Table table;
  table.meta = parse_meta(doc, where);
  const json& entries = need(doc, "entries", where);
  SKINNYGEMM_CHECK(entries.is_array(), where << ".entries: expected an array, got a " << entries.type_name());
  std::map<TableKey, std::size_t> first_index;
  std::string retired_why;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const std::string at = where + ": entries[" + std::to_string(i) + "]";
    // A retired family's entry (0.1's tables held the register ring's) is left out, counted and warned about once,
    // so that the rest of an older table still serves.
    if (entries[i].is_object() && entries[i].value("config", json()).is_string() &&
        retired_family_name(entries[i]["config"].get<std::string>(), &retired_why)) {
      ++table.retired_skipped;
      continue;
    }
    TableKey key;
    TableEntry entry;
    parse_entry(entries[i], at, &key, &entry);
    // Two measurements for one problem means a bad merge by hand; silently keeping one would hide it.
    const auto [it, fresh] = first_index.emplace(key, i);
    SKINNYGEMM_CHECK(fresh, at << ": duplicates the problem of entries[" << it->second << "] ("
                               << dtype_name(key.dtype) << " n=" << key.n << " k=" << key.k << " m=" << key.m
                               << ")");
    table.entries.emplace(key, entry);
  }
  if (table.retired_skipped > 0)
    warn_once(where + "|retired", where + ": left out " + std::to_string(table.retired_skipped) +
                                      " entries; their points take selection's next choice: " + retired_why);
  return table;
}

}  // namespace

TableEntry TableEntry::heuristic_marker(double us, double cublaslt_us) {
  TableEntry e;
  e.us = us;
  e.cublaslt_us = cublaslt_us;
  e.heuristic_kept = true;
  return e;
}

std::string TableEntry::config_name() const { return heuristic_kept ? kHeuristicEntryName : config.name(); }

Table Table::load(const std::string& path) {
  // A folder opens as a stream on Linux and fails only in the read, with libstdc++'s "basic_filebuf::underflow"
  // and no path: say what it is first.
  std::error_code ec;
  SKINNYGEMM_CHECK(!std::filesystem::is_directory(path, ec),
                   "table file '" << path << "' is a directory; expected a JSON table file (e.g. tables/<device>.json)");
  std::ifstream in(path, std::ios::binary);
  SKINNYGEMM_CHECK(in.is_open(), "cannot open table file '" << path << "': " << std::strerror(errno));
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  SKINNYGEMM_CHECK(!in.bad(), "error reading table file '" << path << "'");
  Table table = parse_table(text, path);
  table.path = path;
  table.id = next_table_id();
  return table;
}

Table::Table() : id(next_table_id()) {}
Table::Table(const Table& other)
    : meta(other.meta), entries(other.entries), path(other.path), id(next_table_id()),
      retired_skipped(other.retired_skipped) {}
Table& Table::operator=(const Table& other) {
  if (this != &other) {
    meta = other.meta, entries = other.entries, path = other.path, retired_skipped = other.retired_skipped;
    id = next_table_id();
  }
  return *this;
}
Table::Table(Table&& other) noexcept
    : meta(std::move(other.meta)), entries(std::move(other.entries)), path(std::move(other.path)), id(other.id),
      retired_skipped(other.retired_skipped) {
  other.id = next_table_id();
}
Table& Table::operator=(Table&& other) noexcept {
  if (this != &other) {
    meta = std::move(other.meta), entries = std::move(other.entries), path = std::move(other.path);
    retired_skipped = other.retired_skipped, id = other.id;
    other.id = next_table_id();
  }
  return *this;
}

TableMeta Table::meta_for(const DeviceInfo& device) {
  TableMeta meta;
  meta.gpu = device.name;
  meta.sms = device.sms;
  meta.cuda = device.cuda_version;
  meta.cublaslt = device.cublaslt_version;
  meta.library = SKINNYGEMM_VERSION;
  meta.alignment = 16;  // the tuner measures 16-byte aligned operands (tune::tune_candidates)
  return meta;
}

bool Table::matches(const DeviceInfo& device) const { return meta.gpu == device.name && meta.sms == device.sms; }

std::string Table::mismatch(const DeviceInfo& device, int alignment) const {
  if (!matches(device))
    return "gpu: the table is for " + meta.gpu + "/" + std::to_string(meta.sms) + "sm, not this device (" +
           device.signature() + ")";
  // cuBLASLt entries name algorithms that another version may number, tile or split differently.
  if (!meta.cublaslt.empty() && !device.cublaslt_version.empty() && meta.cublaslt != device.cublaslt_version)
    return "cublaslt: the table was tuned with cuBLASLt " + meta.cublaslt + ", this process runs " +
           device.cublaslt_version;
  // Less aligned operands take other algorithms and rule out the 16-byte-load kernels.
  if (meta.alignment > 0 && alignment < meta.alignment)
    return "alignment: the table was tuned for " + std::to_string(meta.alignment) + "-byte aligned operands, these are " +
           std::to_string(alignment) + "-byte aligned";
  return "";
}

std::optional<TableEntry> Table::find_bucket(DType dtype, int64_t n, int64_t k, int64_t m, int64_t* bucket_m) const {
  TableKey key;
  key.dtype = dtype;
  key.n = n;
  key.k = k;
  key.m = m;
  const auto it = entries.lower_bound(key);  // keys order by (dtype, n, k, m): the next M of this shape
  if (it == entries.end() || it->first.dtype != dtype || it->first.n != n || it->first.k != k) return std::nullopt;
  if (bucket_m) *bucket_m = it->first.m;
  return it->second;
}

std::optional<TableEntry> Table::find(DType dtype, int64_t n, int64_t k, int64_t m) const {
  TableKey key;
  key.dtype = dtype;
  key.n = n;
  key.k = k;
  key.m = m;
  const auto it = entries.find(key);
  if (it == entries.end()) return std::nullopt;
  return it->second;
}

void Table::put(const TableKey& key, const TableEntry& entry) {
  // Checked here so that a bad value fails where it is produced, not when the saved file is read back.
  SKINNYGEMM_CHECK(dtype_supported(key.dtype) && key.n >= 1 && key.k >= 1 && key.m >= 1,
                   "table entry key " << dtype_name(key.dtype) << " n=" << key.n << " k=" << key.k
                                      << " m=" << key.m << " needs a bf16/fp16 dtype and n, k, m >= 1");
  SKINNYGEMM_CHECK(std::isfinite(entry.us) && entry.us >= 0 && std::isfinite(entry.cublaslt_us) &&
                       entry.cublaslt_us >= 0,
                   "table entry for " << dtype_name(key.dtype) << " n=" << key.n << " k=" << key.k << " m="
                                      << key.m << ": times must be finite and >= 0, got us=" << entry.us
                                      << " cublaslt_us=" << entry.cublaslt_us);
  entries[key] = entry;
  id = next_table_id();
}

std::string Table::to_json() const {
  // One entry per line (in key order, as the map iterates) so that a re-tune shows up as a readable diff.
  ordered_json m;
  m["gpu"] = meta.gpu;
  m["sms"] = meta.sms;
  m["cuda"] = meta.cuda;
  m["cublaslt"] = meta.cublaslt;
  m["library"] = meta.library;
  if (meta.alignment > 0) m["alignment"] = meta.alignment;
  std::ostringstream os;
  os << "{\n  \"meta\": " << m.dump() << ",\n  \"entries\": [";
  bool first = true;
  for (const auto& [key, entry] : entries) {
    ordered_json e;
    e["dtype"] = dtype_name(key.dtype);
    e["n"] = key.n;
    e["k"] = key.k;
    e["m"] = key.m;
    e["config"] = entry.config_name();
    e["us"] = entry.us;
    e["cublaslt_us"] = entry.cublaslt_us;
    os << (first ? "\n    " : ",\n    ") << e.dump();
    first = false;
  }
  os << (entries.empty() ? "]" : "\n  ]") << "\n}\n";
  return os.str();
}

namespace {

// An exclusive flock() on <table>.lock, held for the read-merge-write of save_merge: two tuners writing one
// table (two GPUs of a host share the default per-device file) would otherwise both read the old file and the
// second rename would drop the first one's entries. A sibling file, not the table itself, because the table is
// replaced by rename() and a lock on the old inode would not exclude a writer that opened the new one.
// The holder removes the lock file before releasing it (no litter in tables/); a waiter that then gets the lock
// of the removed file sees that the path no longer names its inode and locks again.
class FileLock {
 public:
  explicit FileLock(const std::string& table) : path_(table + ".lock") {
    for (;;) {
      fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
      SKINNYGEMM_CHECK(fd_ >= 0, "cannot open lock file '" << path_ << "' for table '" << table
                                                           << "': " << std::strerror(errno));
      int rc;
      while ((rc = ::flock(fd_, LOCK_EX)) != 0 && errno == EINTR) {
      }
      if (rc != 0) {
        const int err = errno;
        ::close(fd_);
        SKINNYGEMM_FAIL("cannot lock '" << path_ << "' for table '" << table << "': " << std::strerror(err));
      }
      struct stat held {}, named {};
      if (::fstat(fd_, &held) == 0 && ::stat(path_.c_str(), &named) == 0 && held.st_ino == named.st_ino &&
          held.st_dev == named.st_dev)
        return;
      ::close(fd_);  // the previous holder removed this file: lock the one the path names now
    }
  }
  ~FileLock() {
    ::unlink(path_.c_str());  // while still held, so that no one can have locked the file the path names
    ::close(fd_);             // releases the lock
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace

void Table::save_merge(const std::string& out) const {
  std::error_code ec;
  SKINNYGEMM_CHECK(!std::filesystem::is_directory(out, ec),
                   "table file '" << out << "' is a directory; expected a JSON table file to merge into");
  const FileLock lock(out);  // the file on disk is read below, under the lock: merged with what is there now
  Table merged;
  merged.meta = meta;
  std::ifstream probe(out, std::ios::binary);
  if (probe.is_open()) {
    probe.close();
    const Table existing = load(out);  // a corrupt existing file is an error, never silently overwritten
    SKINNYGEMM_CHECK(existing.meta.gpu == meta.gpu && existing.meta.sms == meta.sms,
                     out << ": the existing table is for '" << existing.meta.gpu << "' with " << existing.meta.sms
                         << " SMs; refusing to merge entries measured on '" << meta.gpu << "' with " << meta.sms
                         << " SMs (write them to another file)");
    merged.entries = existing.entries;
  }
  for (const auto& [key, entry] : entries) merged.entries[key] = entry;
  const std::string text = merged.to_json();

  // Same folder as the target so that rename() is atomic: readers see the old file or the new one.
  static std::atomic<uint64_t> counter{0};
  const std::string tmp = out + ".tmp." + std::to_string(static_cast<long>(::getpid())) + "." +
                          std::to_string(counter.fetch_add(1));
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    SKINNYGEMM_CHECK(f.is_open(), "cannot create '" << tmp << "' to write table '" << out
                                                   << "': " << std::strerror(errno));
    f << text;
    f.flush();
    if (!f) {
      std::remove(tmp.c_str());
      SKINNYGEMM_FAIL("error writing '" << tmp << "' (for table '" << out << "')");
    }
  }
  if (std::rename(tmp.c_str(), out.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    SKINNYGEMM_FAIL("cannot rename '" << tmp << "' to '" << out << "': " << std::strerror(err));
  }
}

}  // namespace skinnygemm
