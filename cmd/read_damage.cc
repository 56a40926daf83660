// Reading into damage (see read_damage.h).
#include "read_damage.h"

#include <fmt/core.h>

#include "alog/verify.h"
#include "report.h"

namespace alog::cli {

std::optional<int> report_read_damage(const Global& g, const Log& log, const std::string& dir, uint64_t seq) {
  if (log.damage().is_ok() || seq < log.next_sequence()) return std::nullopt;
  VerifyOptions vo;
  vo.headers_only = true;  // the damage that ends a read-only open is in headers and slots
  auto rep = verify(dir, vo);
  if (!rep || seq >= rep->next_sequence) return std::nullopt;
  for (const Problem& p : rep->problems) {
    if (p.classification != Classification::corruption) continue;
    if (g.json()) out_json(problem_json(p, "problem"));
    out_flush();
    err_corruption(path_join(dir, p.file), p);
    return kExitDamaged;
  }
  return std::nullopt;
}

}  // namespace alog::cli
