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

/// Size and format of an image, without its pixels.
struct ImageShape {
  std::int64_t width = 0, height = 0;
  Format format;
};

/// A parsed, bound pipeline. parse() throws invalid_argument for any syntax error,
/// unknown op or key, or out-of-range parameter: nothing runs with a bad pipeline.
class Pipeline {
 public:
  static Pipeline parse(std::string_view text, const IoLimits& limits = {});
  /// Runs every stage; the result lives where `src` lives.
  Image run(ConstImageView src, const Context& ctx = {}) const;
  /// Runs every stage, the last one writing into `dst` (the bindings' `out=`): dst must have
  /// the size and format plan() gives for src and live where src lives (invalid_argument,
  /// naming "pipeline" and dst, otherwise). The intermediates between stages are allocated as
  /// in run(). An empty pipeline copies src into dst.
  void run(ConstImageView src, ImageView dst, const Context& ctx = {}) const;
  /// The result's size and format for a source of `src`'s size and format, without running
  /// anything or reading pixels: every stage's output rule and its depth and channel checks,
  /// so a source a stage cannot take throws here as run() would (unsupported). Checks that
  /// need the pixels or the operands' sizes still happen in run().
  ImageShape plan(const ImageShape& src) const;
  /// Bytes of Context::workspace that run(src, ctx) takes: the largest of its stages' queries
  /// (the stages run one after another on ctx's queue and each reuses the buffer from its
  /// start); 0 when no stage needs scratch. Reads no pixels (src may be a view without data).
  /// With a workspace of this size, run() allocates nothing but the stages' outputs (the
  /// images it returns and passes along, allocated as Image).
  std::size_t workspace_bytes(ConstImageView src, const Context& ctx = {}) const;
  std::size_t size() const { return stages_.size(); }
  const std::vector<std::string>& names() const { return names_; }
  /// The files read for image parameters (with=, map_x=, ...), as written in the pipeline,
  /// each once. A file named by several stages is decoded once and shared.
  const std::vector<std::string>& operand_files() const { return files_; }

  class Stage;  // a bound stage (src/pipeline/pipeline.cpp)

 private:
  std::vector<std::shared_ptr<const Stage>> stages_;
  std::vector<std::string> names_;
  std::vector<std::string> files_;
};

}  // namespace pixflow
