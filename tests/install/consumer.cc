// Appends the seed's three records to a log and prints the last sequence (2).
#include <alog/alog.h>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  auto log = alog::Log::open(argv[1]);
  if (!log.is_ok()) {
    std::fprintf(stderr, "%s\n", log.status().to_string().c_str());
    return 1;
  }
  auto last = (*log)->append({"alpha", "beta", "gamma"});
  if (!last.is_ok() || !(*log)->sync().is_ok()) return 1;
  std::printf("%llu\n", static_cast<unsigned long long>(*last));
  return 0;
}
