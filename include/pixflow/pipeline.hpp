// Pipelines: "gray | median k=5 | sobel dx=1 dy=0" (docs/cli.md) and the op registry that
// the CLI, the docs and the bindings read (generated from the op schema).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "pixflow/image.hpp"
#include "pixflow/io.hpp"
#include "pixflow/ops.hpp"

namespace pixflow {

struct ParamInfo {
  std::string name, default_value, doc;
};

/// One op as `pixflow info` and the docs show it, from the op's schema (src/schema).
struct OpInfo {
  std::string name, doc;
  std::vector<ParamInfo> params;
};

/// All ops reachable from a pipeline string, in catalogue order.
const std::vector<OpInfo>& op_registry();
const OpInfo* find_op(std::string_view name);

/// A parsed, bound pipeline. parse() throws invalid_argument for any syntax error,
/// unknown op or key, or out-of-range parameter: nothing runs with a bad pipeline.
class Pipeline {
 public:
  static Pipeline parse(std::string_view text, const IoLimits& limits = {});
  /// Runs every stage; the result lives where `src` lives.
  Image run(ConstImageView src, const Context& ctx = {}) const;
  std::size_t size() const { return stages_.size(); }
  const std::vector<std::string>& names() const { return names_; }

  class Stage;  // a bound stage (src/pipeline/pipeline.cpp)

 private:
  std::vector<std::shared_ptr<const Stage>> stages_;
  std::vector<std::string> names_;
};

}  // namespace pixflow
