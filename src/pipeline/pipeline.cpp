// The op registry, stage arguments and pipeline parsing.
#include "pixflow/pipeline.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <map>

#include "src/base/error.hpp"
#include "src/core/check.hpp"
#include "src/schema/schema.hpp"

namespace pixflow {

using detail::cat;

namespace {

[[noreturn]] void bad(const std::string& op, const std::string& msg) {
  throw Error(Status::invalid_argument, op + ": " + msg);
}

}  // namespace

const std::vector<OpInfo>& op_registry() {
  static const std::vector<OpInfo> reg = [] {
    std::vector<OpInfo> r;
    for (const schema::Op* op : schema::catalogue()) {
      OpInfo info{op->name(), op->doc(), {}};
      for (const auto& p : op->params()) {
        std::string def = p.required ? "(required)" : p.default_text;
        for (const auto& q : op->params())  // set by a shorthand: "kw=k"
          if (std::find(q.sets.begin(), q.sets.end(), p.name) != q.sets.end()) def = q.name;
        info.params.push_back({p.name, def, p.doc});
      }
      r.push_back(std::move(info));
    }
    return r;
  }();
  return reg;
}

const OpInfo* find_op(std::string_view name) {
  for (const auto& op : op_registry())
    if (op.name == name) return &op;
  return nullptr;
}

class Pipeline::Stage {
 public:
  Stage(const schema::Op& op, std::unique_ptr<schema::Bound> b) : op_(op), bound_(std::move(b)) {}
  Image run(ConstImageView src, const Context& ctx) const {
    const schema::Shape s = bound_->output(src);
    Image dst(s.width, s.height, s.format, src.location());
    run(src, dst, ctx);
    return dst;
  }
  void run(ConstImageView src, const ImageView& dst, const Context& ctx) const {
    bound_->run(src, dst, ctx);
  }
  /// The source checks of detail::check_op that need no pixels, then the output rule (which
  /// reads only the view's size and format: a view without data stands for the source).
  ImageShape plan(const ImageShape& in) const {
    const ConstImageView v(nullptr, in.width, in.height, in.width * in.format.pixel_bytes(),
                           in.format);
    detail::check_depth(op_.name(), "src", v, op_.depths());
    detail::check_channels(op_.name(), "src", v, op_.channels());
    const schema::Shape s = bound_->output(v);
    return {s.width, s.height, s.format};
  }
  std::size_t workspace_bytes(const ConstImageView& src, const Context& ctx) const {
    return bound_->workspace_bytes(src, ctx);
  }

 private:
  const schema::Op& op_;
  std::unique_ptr<schema::Bound> bound_;
};

namespace {

std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

std::vector<std::string> split_ws(const std::string& s) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    std::size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != '\t') ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

}  // namespace

Pipeline Pipeline::parse(std::string_view text, const IoLimits& limits) {
  Pipeline p;
  // Operands by file identity (the canonical path when it exists), decoded once: a thousand
  // `add with=F` stages hold one image, not a thousand.
  std::map<std::string, std::shared_ptr<const Image>> decoded;
  std::size_t start = 0;
  int index = 0;
  for (;;) {
    const std::size_t bar = text.find('|', start);
    const std::string stage = trim(
        text.substr(start, bar == std::string_view::npos ? std::string_view::npos : bar - start));
    ++index;
    if (stage.empty())
      throw Error(Status::invalid_argument,
                  cat("pipeline: stage ", index, " is empty (expected OP KEY=VALUE ...)"));
    const auto words = split_ws(stage);
    const schema::Op* info = schema::find(words[0]);
    if (!info) {
      std::string names;
      for (const auto& op : op_registry()) names += (names.empty() ? "" : ", ") + op.name;
      throw Error(Status::invalid_argument,
                  cat("pipeline: unknown op '", words[0], "' (known: ", names, ")"));
    }
    std::map<std::string, std::string> kv;
    for (std::size_t i = 1; i < words.size(); ++i) {
      const auto eq = words[i].find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == words[i].size())
        bad(info->name(), cat("expected KEY=VALUE, got '", words[i], "'"));
      std::string key = words[i].substr(0, eq), value = words[i].substr(eq + 1);
      schema::check_known_key(info->name(), info->params(), key);
      if (kv.count(key)) bad(info->name(), cat("parameter '", key, "' given twice"));
      kv[key] = value;
    }
    // Image parameters are files, read once at bind time so that a missing or corrupt file
    // fails before any input is read.
    const schema::ImageSource files = [&](const schema::Param&, const std::string& path) {
      std::error_code ec;
      std::string key = std::filesystem::canonical(path, ec).string();
      if (ec) key = path;
      auto& img = decoded[key];
      if (!img) {
        img = std::make_shared<const Image>(read_image(path, limits));
        p.files_.push_back(path);
      }
      return img;
    };
    p.stages_.push_back(std::make_shared<const Stage>(*info, info->bind(kv, files)));
    p.names_.push_back(info->name());
    if (bar == std::string_view::npos) break;
    start = bar + 1;
  }
  return p;
}

ImageShape Pipeline::plan(const ImageShape& src) const {
  ImageShape s = src;
  for (const auto& stage : stages_) s = stage->plan(s);
  return s;
}

std::size_t Pipeline::workspace_bytes(ConstImageView src, const Context& ctx) const {
  // Each stage's source is described by the previous stage's output shape (no pixels), at
  // src's location.
  std::size_t most = 0;
  ImageShape s{src.width(), src.height(), src.format()};
  for (const auto& stage : stages_) {
    const ConstImageView v(nullptr, s.width, s.height, s.width * s.format.pixel_bytes(), s.format,
                           src.location());
    most = std::max(most, stage->workspace_bytes(v, ctx));
    s = stage->plan(s);
  }
  return most;
}

Image Pipeline::run(ConstImageView src, const Context& ctx) const {
  const ImageShape s = plan({src.width(), src.height(), src.format()});
  Image dst(s.width, s.height, s.format, src.location());
  run(src, dst, ctx);
  return dst;
}

void Pipeline::run(ConstImageView src, ImageView dst, const Context& ctx) const {
  const ImageShape want = plan({src.width(), src.height(), src.format()});
  if (dst.width() != want.width || dst.height() != want.height || dst.format() != want.format)
    throw Error(
        Status::invalid_argument,
        cat("pipeline: dst must be ", want.width, "x", want.height, " ", to_string(want.format),
            " for a ", src.width(), "x", src.height(), " ", to_string(src.format()),
            " source (got ", dst.width(), "x", dst.height(), " ", to_string(dst.format()), ")"));
  if (dst.location() != src.location())
    throw Error(Status::invalid_argument,
                cat("pipeline: dst must live where src lives (", to_string(src.location()),
                    "; got ", to_string(dst.location()), ")"));
  if (stages_.empty()) {
    copy_async(src, dst, ctx.queue);
    return;
  }
  Image cur;
  ConstImageView in = src;
  for (std::size_t i = 0; i + 1 < stages_.size(); ++i) {
    Image next = stages_[i]->run(in, ctx);
    cur = std::move(next);
    in = cur.view();
  }
  stages_.back()->run(in, dst, ctx);
}

}  // namespace pixflow
