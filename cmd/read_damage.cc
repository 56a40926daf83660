// Reading into damage (see read_damage.h).
#include "read_damage.h"

#include <fmt/core.h>

#include <algorithm>

#include "alog/verify.h"
#include "report.h"

namespace alog::cli {

namespace {

// With --json the problem object on standard output; always the
// "corruption:" line on standard error.
void print_problem(const Global& g, const std::string& dir, const Problem& p) {
  if (g.json()) out_json(problem_json(p, "problem"));
  out_flush();
  err_corruption(path_join(dir, p.file), p);
}

}  // namespace

std::optional<int> report_read_damage(const Global& g, const Log& log, const std::string& dir, uint64_t seq) {
  if (log.damage().is_ok() || seq < log.next_sequence()) return std::nullopt;
  VerifyOptions vo;
  vo.headers_only = true;  // the damage that ends a read-only open is in headers and slots
  auto rep = verify(dir, vo);
  if (!rep) return std::nullopt;
  auto covers = [seq](const Problem& p) {
    return p.classification == Classification::corruption && p.first_seq && *p.first_seq <= seq &&
           (!p.last_seq || seq <= *p.last_seq);
  };
  const auto& ps = rep->problems;
  // The damage whose sequences hold `seq`; else (seq lies between the
  // readable records and verify's next sequence) the first, which ended them.
  auto hit = std::find_if(ps.begin(), ps.end(), covers);
  if (hit == ps.end() && seq < rep->next_sequence)
    hit = std::find_if(ps.begin(), ps.end(),
                       [](const Problem& p) { return p.classification == Classification::corruption; });
  if (hit == ps.end()) return std::nullopt;
  print_problem(g, dir, *hit);
  return kExitDamaged;
}

std::optional<Problem> problem_met(const std::string& dir, const std::string& path,
                                   std::optional<uint64_t> offset, Classification cls) {
  std::vector<Problem> found;
  if (dir.empty()) {  // a segment file on its own, as `alog verify FILE` walks it
    auto rep = verify(path);
    if (!rep) return std::nullopt;
    found = std::move(rep->problems);
  } else {
    auto in_dir = verify_segment(dir, base_name(path));
    if (!in_dir) return std::nullopt;
    found = std::move(*in_dir);
  }
  const Problem* first = nullptr;
  for (const Problem& p : found) {
    if (p.classification != cls) continue;
    if (offset && p.offset == offset) return p;
    if (!first) first = &p;
  }
  if (!first) return std::nullopt;
  return *first;
}

std::optional<int> report_open_damage(const Global& g, const Log& log, const std::string& dir) {
  const Status& d = log.damage();
  if (d.is_ok() || d.path().empty()) return std::nullopt;
  auto p = problem_met(dir, d.path(), d.offset(), Classification::corruption);
  if (!p) return std::nullopt;
  print_problem(g, dir, *p);
  return kExitDamaged;
}

}  // namespace alog::cli
