// Pipelines: "gray | median k=5 | sobel dx=1 dy=0" (DESIGN §5) and the op registry that
// the CLI, the docs and later the bindings read.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "pixflow/image.hpp"
#include "pixflow/io.hpp"
#include "pixflow/ops.hpp"

namespace pixflow {

/// One KEY=VALUE list of a stage, with typed getters that validate and name the op.
class OpArgs {
 public:
  OpArgs(std::string op, std::map<std::string, std::string> kv, IoLimits limits = {})
      : op_(std::move(op)), kv_(std::move(kv)), limits_(limits) {}

  const std::string& op() const { return op_; }
  bool has(const std::string& key) const { return kv_.count(key) != 0; }
  /// Integer in [lo, hi]; throws invalid_argument "op: key must be an integer in [lo, hi] (got v)".
  int get_int(const std::string& key, int def, int lo, int hi) const;
  double get_double(const std::string& key, double def, double lo = -1e300,
                    double hi = 1e300) const;
  bool get_bool(const std::string& key, bool def) const;  // 0/1/true/false
  /// One of `allowed`; throws listing them.
  std::string get_choice(const std::string& key, const std::string& def,
                         const std::vector<std::string>& allowed) const;
  Depth get_depth(const std::string& key, Depth def) const;
  /// `border` (name) and `value` (for constant).
  Border get_border(Border def) const;
  /// Loads the image file named by `key` (required).
  Image get_image(const std::string& key) const;
  const std::string& get_string(const std::string& key) const;

 private:
  std::string op_;
  std::map<std::string, std::string> kv_;
  IoLimits limits_;
};

/// A bound stage: parameters parsed and checked, ready to run on any image.
using StageFn = std::function<Image(ConstImageView src, const Context& ctx)>;

struct ParamInfo {
  std::string name, default_value, doc;
};

/// Registry entry: name, doc line, parameters, and `bind` which parses and validates a
/// stage's KEY=VALUE list (throwing invalid_argument) and returns the stage.
struct OpInfo {
  std::string name, doc;
  std::vector<ParamInfo> params;
  std::function<StageFn(const OpArgs&)> bind;
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

 private:
  std::vector<StageFn> stages_;
  std::vector<std::string> names_;
};

}  // namespace pixflow
