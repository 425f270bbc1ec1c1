// The op registry, stage arguments and pipeline parsing.
#include "pixflow/pipeline.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "src/core/check.hpp"
#include "src/core/registry.hpp"

namespace pixflow {

using detail::cat;

namespace {

[[noreturn]] void bad(const std::string& op, const std::string& msg) {
  throw Error(Status::invalid_argument, op + ": " + msg);
}

bool parse_double(const std::string& s, double& out) {
  if (s.empty()) return false;
  const char* b = s.data();
  const char* e = b + s.size();
  if (*b == '+') ++b;
  auto [p, ec] = std::from_chars(b, e, out);
  return ec == std::errc() && p == e && std::isfinite(out);
}

}  // namespace

int OpArgs::get_int(const std::string& key, int def, int lo, int hi) const {
  auto it = kv_.find(key);
  if (it == kv_.end()) return def;
  double v = 0;
  if (!parse_double(it->second, v) || v != std::floor(v) || v < lo || v > hi)
    bad(op_, cat(key, " must be an integer in [", lo, ", ", hi, "] (got '", it->second, "')"));
  return int(v);
}

double OpArgs::get_double(const std::string& key, double def, double lo, double hi) const {
  auto it = kv_.find(key);
  if (it == kv_.end()) return def;
  double v = 0;
  if (!parse_double(it->second, v) || v < lo || v > hi)
    bad(op_, cat(key, " must be a number in [", lo, ", ", hi, "] (got '", it->second, "')"));
  return v;
}

bool OpArgs::get_bool(const std::string& key, bool def) const {
  auto it = kv_.find(key);
  if (it == kv_.end()) return def;
  const std::string& v = it->second;
  if (v == "1" || v == "true" || v == "yes") return true;
  if (v == "0" || v == "false" || v == "no") return false;
  bad(op_, cat(key, " must be 0 or 1 (got '", v, "')"));
}

std::string OpArgs::get_choice(const std::string& key, const std::string& def,
                               const std::vector<std::string>& allowed) const {
  auto it = kv_.find(key);
  if (it == kv_.end()) return def;
  if (std::find(allowed.begin(), allowed.end(), it->second) != allowed.end()) return it->second;
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
  bad(op_, cat(key, " must be one of ", list, " (got '", it->second, "')"));
}

Depth OpArgs::get_depth(const std::string& key, Depth def) const {
  auto it = kv_.find(key);
  if (it == kv_.end()) return def;
  return parse_depth(it->second, op_ + ": " + key);
}

Border OpArgs::get_border(Border def) const {
  Border b = def;
  if (auto it = kv_.find("border"); it != kv_.end())
    b.type = parse_border(it->second, op_ + ": border");
  b.value = get_double("value", b.type == def.type ? def.value : 0.0);
  return b;
}

Image OpArgs::get_image(const std::string& key) const {
  auto it = kv_.find(key);
  if (it == kv_.end()) bad(op_, cat(key, "=FILE is required"));
  return read_image(it->second, limits_);
}

const std::string& OpArgs::get_string(const std::string& key) const {
  auto it = kv_.find(key);
  if (it == kv_.end()) bad(op_, cat(key, " is required"));
  return it->second;
}

const std::vector<OpInfo>& op_registry() {
  static const std::vector<OpInfo> reg = [] {
    std::vector<OpInfo> r;
    detail::register_median(r);
    detail::register_morphology(r);
    detail::register_box(r);
    detail::register_gaussian(r);
    detail::register_derivatives(r);
    detail::register_filter2d(r);
    detail::register_epsilon(r);
    detail::register_bilateral(r);
    detail::register_remap(r);
    detail::register_transpose(r);
    detail::register_color(r);
    detail::register_arith(r);
    detail::register_convert(r);
    detail::register_threshold(r);
    return r;
  }();
  return reg;
}

const OpInfo* find_op(std::string_view name) {
  for (const auto& op : op_registry())
    if (op.name == name) return &op;
  return nullptr;
}

namespace detail {
std::vector<ParamInfo> border_params(const char* default_border) {
  return {{"border", default_border, "replicate, reflect, reflect101, wrap or constant"},
          {"value", "0", "the constant border's value"}};
}
}  // namespace detail

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
  std::size_t start = 0;
  int index = 0;
  for (;;) {
    const std::size_t bar = text.find('|', start);
    const std::string stage =
        trim(text.substr(start, bar == std::string_view::npos ? std::string_view::npos
                                                              : bar - start));
    ++index;
    if (stage.empty())
      throw Error(Status::invalid_argument,
                  cat("pipeline: stage ", index, " is empty (expected OP KEY=VALUE ...)"));
    const auto words = split_ws(stage);
    const OpInfo* info = find_op(words[0]);
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
        bad(info->name, cat("expected KEY=VALUE, got '", words[i], "'"));
      std::string key = words[i].substr(0, eq), value = words[i].substr(eq + 1);
      const bool known = std::any_of(info->params.begin(), info->params.end(),
                                     [&](const ParamInfo& pi) { return pi.name == key; });
      if (!known) {
        std::string keys;
        for (const auto& pi : info->params) keys += (keys.empty() ? "" : ", ") + pi.name;
        bad(info->name, cat("unknown parameter '", key, "' (expected ",
                            keys.empty() ? std::string("none") : keys, ")"));
      }
      if (kv.count(key)) bad(info->name, cat("parameter '", key, "' given twice"));
      kv[key] = value;
    }
    p.stages_.push_back(info->bind(OpArgs(info->name, std::move(kv), limits)));
    p.names_.push_back(info->name);
    if (bar == std::string_view::npos) break;
    start = bar + 1;
  }
  return p;
}

Image Pipeline::run(ConstImageView src, const Context& ctx) const {
  Image cur;
  ConstImageView in = src;
  for (const auto& stage : stages_) {
    Image next = stage(in, ctx);
    cur = std::move(next);
    in = cur.view();
  }
  if (stages_.empty()) {
    cur = Image(src.width(), src.height(), src.format(), src.location());
    copy(src, cur);
  }
  return cur;
}

}  // namespace pixflow
