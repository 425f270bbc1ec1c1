// Writes the seeds that come from the op schema into a corpus folder (fuzz/README.md):
//   pixflow_fuzz_seeds fuzz/corpus
// writes <dir>/pipeline/op-<op>-<n> (a one-stage pipeline text per catalogue example, image
// operands naming the pipeline target's fixture files) and <dir>/differential/op-<op>-<n>
// (the same text, then bytes for the image). Seeds of ops or examples that no longer exist
// are removed; other files are left alone.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>

#include "fuzz/targets.hpp"

namespace fs = std::filesystem;

namespace {
int write_all(const fs::path& dir, const std::vector<pixflow::fuzz::Seed>& seeds) {
  fs::create_directories(dir);
  std::set<std::string> names;
  for (const auto& s : seeds) {
    names.insert("op-" + s.name);
    std::ofstream out(dir / ("op-" + s.name), std::ios::binary | std::ios::trunc);
    out << s.text;
    if (!out) {
      std::cerr << "pixflow_fuzz_seeds: cannot write " << (dir / ("op-" + s.name)) << "\n";
      return 1;
    }
  }
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string n = e.path().filename().string();
    if (n.rfind("op-", 0) == 0 && !names.count(n)) fs::remove(e.path());
  }
  std::cout << dir.string() << ": " << seeds.size() << " seeds\n";
  return 0;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: pixflow_fuzz_seeds CORPUS_DIR\n";
    return 2;
  }
  const fs::path root = argv[1];
  return write_all(root / "pipeline", pixflow::fuzz::pipeline_seeds()) ||
         write_all(root / "differential", pixflow::fuzz::differential_seeds());
}
