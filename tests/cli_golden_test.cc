// Golden outputs: verify, stats, dump-frames and cat, text and JSON, on the
// conformance vectors and the damaged fixtures of testdata/golden, compared
// byte for byte (with the exit status) against testdata/golden/out/.
// testdata/golden/README.md says how they were made; generate.sh remakes them.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "cli_util.h"

using namespace alog::test;

namespace {

struct Case {
  std::string name, dir, args;
};

std::vector<Case> load_cases() {
  std::vector<Case> v;
  std::ifstream in(std::string(ALOG_TESTDATA_DIR) + "/golden/cases.tsv");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ss(line);
    Case c;
    std::getline(ss, c.name, '\t');
    std::getline(ss, c.dir, '\t');
    std::getline(ss, c.args);
    v.push_back(c);
  }
  return v;
}

std::string parent(const std::string& p) { return p.substr(0, p.find_last_of('/')); }
std::string leaf(const std::string& p) { return p.substr(p.find_last_of('/') + 1); }

}  // namespace

TEST_CASE("golden outputs of verify, stats, dump-frames and cat match byte for byte") {
  const std::string golden = std::string(ALOG_TESTDATA_DIR) + "/golden";
  auto cases = load_cases();
  REQUIRE(cases.size() >= 100);
  for (const auto& c : cases) {
    std::string dir = golden + "/" + c.dir;
    auto before = snapshot_tree(dir);
    RunResult r = run("cd " + shq(parent(dir)) + " && " + alog_cli() + " " + c.args + " " + shq(leaf(dir)));
    INFO(c.name << ": alog " << c.args << " " << c.dir);
    CHECK(r.out == read_file(golden + "/out/" + c.name));
    CHECK(std::to_string(r.exit_code) + "\n" == read_file(golden + "/out/" + c.name + ".status"));
    CHECK(snapshot_tree(dir) == before);
  }
}
