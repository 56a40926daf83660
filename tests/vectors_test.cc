// Conformance vectors (testdata/vectors, copied from shared/vectors): the
// reader finds exactly what expect.json says, recovery leaves what it says,
// and the writer, driven as the vectors' README says, reproduces the bytes.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "alog/log.h"
#include "alog/scanner.h"
#include "alog/verify.h"
#include "support/util.h"

using namespace alog;
using namespace alog::test;
using nlohmann::json;

namespace {

const std::string kVectors = std::string(ALOG_TESTDATA_DIR) + "/vectors";

json expect(const std::string& name) {
  return json::parse(read_file(kVectors + "/" + name + "/expect.json"));
}

std::string be(uint64_t v, int n) {
  std::string s;
  for (int i = n - 1; i >= 0; i--) s.push_back(char(v >> (8 * i)));
  return s;
}

// A record read back, or a lost one.
struct ReadBack {
  uint64_t sequence;
  std::string payload;
  bool lost;
};

// SHA-256 over (seq as 8 bytes BE, length as 4 bytes BE, payload) of every
// record; a lost record adds its sequence and the length 0xFFFFFFFF.
std::string records_digest(const Log& log, std::vector<ReadBack>* out = nullptr) {
  std::string all;
  auto sc = log.scan(0);
  REQUIRE(sc.is_ok());
  while (true) {
    auto more = (*sc)->next();
    REQUIRE_MESSAGE(more.is_ok(), more.status().to_string());
    if (!*more) break;
    const bool lost = (*sc)->lost();
    if (lost) CHECK((*sc)->payload().empty());
    all += be((*sc)->sequence(), 8) + be(lost ? 0xFFFFFFFFu : (*sc)->payload().size(), 4) +
           std::string((*sc)->payload());
    if (out) out->push_back({(*sc)->sequence(), std::string((*sc)->payload()), lost});
  }
  return sha256_hex(all);
}

Options vector_options(const json& e) {
  Options o;
  o.start_sequence = e["options"]["start_sequence"];
  o.max_segment_size = e["options"]["max_segment_size"];
  o.checkpoint_stride = e["options"]["checkpoint_stride"];
  o.sync_on_append = true;
  o.max_disk_size = 0;
  auto t = std::make_shared<uint64_t>(1767225600000 - 1000);
  o.clock_ms = [t] { return *t += 1000; };
  return o;
}

void check_clean_vector(const std::string& name) {
  json e = expect(name);
  auto log = Log::open_read(kVectors + "/" + name + "/log");
  REQUIRE_MESSAGE(log.is_ok(), log.status().to_string());
  Log& l = **log;
  CHECK(l.damage().is_ok());
  CHECK(l.torn_tail().empty());
  // count() spans sequences; the vectors count lost records apart.
  const uint64_t lost = e.value("lost_count", uint64_t(0));
  CHECK(l.count() == e["count"].get<uint64_t>() + lost);
  CHECK(l.next_sequence() == e["next_sequence"].get<uint64_t>());
  if (e["first_sequence"].is_null()) {
    CHECK(l.empty());
  } else {
    CHECK(l.first_sequence() == e["first_sequence"].get<uint64_t>());
    CHECK(l.last_sequence() == e["last_sequence"].get<uint64_t>());
  }
  auto segs = l.segments();
  REQUIRE(segs.size() == e["segments"].size());
  for (size_t i = 0; i < segs.size(); i++) {
    const json& s = e["segments"][i];
    CAPTURE(s["file"].get<std::string>());
    CHECK(segs[i].file == s["file"].get<std::string>());
    CHECK(segs[i].start_sequence == s["start"].get<uint64_t>());
    CHECK(segs[i].first_sequence == s["first"].get<uint64_t>());
    CHECK(segs[i].next_sequence == s["next"].get<uint64_t>());
    CHECK(segs[i].generation == s["gen"].get<uint16_t>());
    CHECK(segs[i].read_offset == s["read_offset"].get<uint64_t>());
    CHECK(segs[i].size == s["size"].get<uint64_t>());
    CHECK(segs[i].active == s["active"].get<bool>());
  }
  std::vector<ReadBack> recs;
  CHECK(records_digest(l, &recs) == e["records_sha256"].get<std::string>());
  if (e.contains("records")) {
    REQUIRE(recs.size() == e["records"].size());
    for (size_t i = 0; i < recs.size(); i++) {
      const json& want = e["records"][i];
      CHECK(recs[i].sequence == want["seq"].get<uint64_t>());
      CHECK(recs[i].lost == want.value("lost", false));
      auto one = l.read(recs[i].sequence);
      if (recs[i].lost) {
        CHECK(one.status().code() == Errc::lost);
        continue;
      }
      CHECK(hex(recs[i].payload) == want["hex"].get<std::string>());
      REQUIRE(one.is_ok());
      CHECK(one->payload == recs[i].payload);
    }
  }
  // Verification: no damage; lost records counted apart, one warning per run.
  auto rep = verify(kVectors + "/" + name + "/log");
  REQUIRE(rep.is_ok());
  CHECK(rep->clean());
  CHECK(rep->records == e["count"].get<uint64_t>());
  CHECK(rep->lost_records == lost);
  std::vector<std::pair<uint64_t, uint64_t>> runs, want_runs;
  for (const Problem& p : rep->problems)
    if (p.kind == "lost_records") {
      CHECK(p.classification == Classification::warning);
      runs.push_back({*p.first_seq, *p.last_seq});
    }
  for (const json& r : e.value("lost_ranges", json::array()))
    want_runs.push_back({r["first_seq"].get<uint64_t>(), r["last_seq"].get<uint64_t>()});
  CHECK(runs == want_runs);
}

void check_same_bytes(const std::string& written, const std::string& name) {
  auto want = snapshot_tree(kVectors + "/" + name + "/log");
  auto got = snapshot_tree(written);
  got.erase("LOCK");
  std::vector<std::string> wn, gn;
  for (auto& [k, v] : want) wn.push_back(k);
  for (auto& [k, v] : got) gn.push_back(k);
  CHECK(gn == wn);
  // Not a structured binding: clang 14 cannot capture one (CAPTURE is a lambda).
  for (const auto& kv : want) {
    const std::string& k = kv.first;
    const std::string& v = kv.second;
    CAPTURE(k);
    REQUIRE(got.count(k));
    if (got[k] != v) {
      size_t i = 0;
      while (i < v.size() && i < got[k].size() && v[i] == got[k][i]) i++;
      FAIL_CHECK("bytes differ from offset " << i << " (sizes " << got[k].size() << " vs " << v.size() << ")");
    }
  }
}

// The multi-segment workload: batch sizes from the steps, payloads from records[].
void append_multi_segment(Log& log) {
  json e = expect("multi-segment");
  std::vector<int> sizes = {3, 1, 7, 2, 5, 1, 1, 9, 4, 6, 2, 8, 3, 1, 5, 3, 1, 7, 2, 5, 1, 1, 9,
                            4, 6, 2, 8, 3, 1, 5, 3, 1, 7, 2, 5, 1, 1, 9, 4, 6, 2, 8, 3, 1, 5};
  size_t k = 0;
  for (int n : sizes) {
    std::vector<std::string> p;
    for (int j = 0; j < n; j++) p.push_back(unhex(e["records"][k++]["hex"].get<std::string>()));
    std::vector<std::string_view> v(p.begin(), p.end());
    REQUIRE(log.append(v).is_ok());
  }
}

}  // namespace

TEST_CASE("the reader finds exactly the records and segments of every clean vector") {
  for (const char* name : {"seed-append", "multi-segment", "start-sequence", "empty",
                           "checkpoint-first", "truncated", "salvaged"}) {
    CAPTURE(name);
    check_clean_vector(name);
  }
}

TEST_CASE("the writer reproduces the seed-append vector byte for byte") {
  TempDir t;
  auto log = Log::open(t / "log", vector_options(expect("seed-append")));
  REQUIRE(log.is_ok());
  auto last = (*log)->append({"alpha", "beta", "gamma"});
  REQUIRE(last.is_ok());
  CHECK(*last == 2);
  check_same_bytes(t / "log", "seed-append");
}

TEST_CASE("the writer reproduces the empty vector byte for byte") {
  TempDir t;
  auto log = Log::open(t / "log", vector_options(expect("empty")));
  REQUIRE(log.is_ok());
  check_same_bytes(t / "log", "empty");
}

TEST_CASE("the writer reproduces the start-sequence vector byte for byte") {
  json e = expect("start-sequence");
  TempDir t;
  auto log = Log::open(t / "log", vector_options(e));
  REQUIRE(log.is_ok());
  int i = 0;
  for (int n : {10, 40, 1}) {
    std::vector<std::string> p;
    for (int j = 0; j < n; j++, i++) p.push_back("rec-" + std::to_string(i));
    std::vector<std::string_view> v(p.begin(), p.end());
    REQUIRE((*log)->append(v).is_ok());
  }
  check_same_bytes(t / "log", "start-sequence");
}

TEST_CASE("the writer reproduces the checkpoint-first vector byte for byte") {
  TempDir t;
  auto log = Log::open(t / "log", vector_options(expect("checkpoint-first")));
  REQUIRE(log.is_ok());
  std::vector<std::string_view> v(40000, std::string_view());
  REQUIRE((*log)->append(v).is_ok());
  REQUIRE((*log)->append(v).is_ok());
  check_same_bytes(t / "log", "checkpoint-first");
}

TEST_CASE("the writer reproduces the multi-segment vector byte for byte") {
  TempDir t;
  auto log = Log::open(t / "log", vector_options(expect("multi-segment")));
  REQUIRE(log.is_ok());
  append_multi_segment(**log);
  check_same_bytes(t / "log", "multi-segment");
}

TEST_CASE("the writer reproduces the truncated vector byte for byte") {
  TempDir t;
  auto log = Log::open(t / "log", vector_options(expect("truncated")));
  REQUIRE(log.is_ok());
  append_multi_segment(**log);
  REQUIRE((*log)->truncate_before(17).is_ok());
  REQUIRE((*log)->truncate_after(165).is_ok());
  check_same_bytes(t / "log", "truncated");
}

TEST_CASE("a torn-tail vector reads up to its batch boundary and recovers to after_recover") {
  for (const char* name : {"torn-tail", "unsynced-damage"}) {
    CAPTURE(name);
    json e = expect(name);
    std::string src = kVectors + "/" + name + "/log";
    auto before = snapshot_tree(src);
    {
      auto log = Log::open_read(src);
      REQUIRE(log.is_ok());
      CHECK((*log)->count() == e["after_recover"]["count"].get<uint64_t>());
      CHECK((*log)->torn_tail().find(e["damage"]["file"].get<std::string>() + ":" +
                                     std::to_string(e["damage"]["offset"].get<uint64_t>())) !=
            std::string::npos);
    }
    CHECK(snapshot_tree(src) == before);
    TempDir t;
    copy_tree(src, t / "log");
    {
      auto log = Log::open(t / "log");
      REQUIRE_MESSAGE(log.is_ok(), log.status().to_string());
      CHECK((*log)->count() == e["after_recover"]["count"].get<uint64_t>());
      CHECK((*log)->last_sequence() == e["after_recover"]["last_sequence"].get<uint64_t>());
      std::string f = t / ("log/" + e["damage"]["file"].get<std::string>());
      CHECK(file_size(f) == e["after_recover"]["file_size"].get<uint64_t>());
      CHECK(list_dir(t / "log/lost+found").size() == 2);
    }
  }
}

TEST_CASE("midlog corruption is reported by a scan and never cut by opening for writing") {
  json e = expect("midlog-corruption");
  TempDir t;
  copy_tree(kVectors + "/midlog-corruption/log", t / "log");
  auto before = snapshot_tree(t / "log");
  {
    auto log = Log::open(t / "log");
    REQUIRE_MESSAGE(log.is_ok(), log.status().to_string());
    auto sc = (*log)->scan(0);
    REQUIRE(sc.is_ok());
    Status st;
    uint64_t n = 0;
    while (true) {
      auto m = (*sc)->next();
      if (!m.is_ok()) {
        st = m.status();
        break;
      }
      if (!*m) break;
      n++;
    }
    CHECK(st.code() == Errc::corrupt);
    CHECK(st.path().find(e["damage"]["file"].get<std::string>()) != std::string::npos);
    CHECK(st.offset() == e["damage"]["offset"].get<uint64_t>());
    CHECK(n == 165);
    (*log)->close().is_ok();
  }
  auto after = snapshot_tree(t / "log");
  after.erase("LOCK");
  CHECK(after == before);
}

TEST_CASE("a flipped length field in a sealed segment is a corrupt read at its frame") {
  auto log = Log::open_read(kVectors + "/sealed-length-flip/log");
  REQUIRE(log.is_ok());
  auto r = (*log)->read(0);
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.status().code() == Errc::corrupt);
  CHECK(r.status().offset() == 192);
}
