// The op schema: one declaration per catalogue op, the single source of truth for its
// parameters (name, field, default, range, odd-only, doc), depths, channel counts, halo,
// default border, output shape, parameter sets for tests and benchmarks, and tolerances.
//
// From it come: the argument checks of the C++ API (core calls `validate`), the pipeline's
// KEY=VALUE parsing (`bind`), `pixflow info` and the README's op table, the generic
// backend-versus-reference test and the benchmark's case list.
//
// A declaration is typed on the op's parameter struct P (the public MedianParams, ...,
// or a stage struct for ops whose C++ API takes images as parameters):
//
//   OpDef<MedianParams>("median", "median of the kw x kh window (...)")
//       .depths({Depth::u8, Depth::u16, Depth::f32})
//       .shorthand("k", {"kw", "kh"}, "odd window size in [1, 255]; sets kw and kh")
//       .integer("kw", &MedianParams::kw, 1, 255, "odd window width", Odd::yes)
//       ...
//       .border(&MedianParams::border)
//       .halo([](const MedianParams& p, Format) { return Halo{p.kw / 2, p.kh / 2}; })
//       .run(&median)   // the public function the pipeline calls
//
// Defaults are those of P{} (the public struct's member initialisers): written once.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pixflow/image.hpp"
#include "pixflow/ops.hpp"

namespace pixflow::schema {

/// A number range bound meaning "none" (any finite value).
inline constexpr double kUnbounded = 1e300;

enum class Kind { integer, number, boolean, choice, depth, border, image, text };
enum class Odd {
  no,
  yes,     ///< odd only
  or_zero  ///< 0 (meaning "derive it", see Param::zero_means) or odd
};

/// What a test or benchmark must supply for an image parameter.
enum class ImageRole {
  like_src,  ///< the source's size and format (arith's `with`)
  map_x,     ///< 1-channel f32 x coordinates of the output's size (remap)
  map_y,     ///< 1-channel f32 y coordinates of the output's size (remap)
};

/// One parameter as the CLI, the docs and the bindings see it.
struct Param {
  std::string name;
  Kind kind = Kind::integer;
  std::string default_text;  ///< as shown by `pixflow info` ("" = required or none)
  std::string doc;
  double lo = 0, hi = 0;  ///< integer and number ranges (inclusive)
  bool odd = false;
  bool zero_ok = false;    ///< with odd: 0 is allowed too
  std::string zero_means;  ///< what 0 means ("from sigma"), for messages
  bool required = false;
  std::vector<std::string> choices;  ///< choice and depth kinds; words a number also takes
  std::vector<std::string> sets;     ///< a shorthand: the parameters it sets
  ImageRole role = ImageRole::like_src;
};

struct Halo {
  int x = 0, y = 0;
};

/// Allowed deviation of a backend from the reference: |got - want| <= abs + rel * |want|.
struct Tolerance {
  double abs = 0, rel = 0;
  bool exact() const { return abs == 0 && rel == 0; }
};

/// The size and format of an op's output for a given source.
struct Shape {
  std::int64_t width = 0, height = 0;
  Format format;
};

/// One benchmark case of an op (bench/pixflow_bench.cpp runs it at 1080p and 8K).
struct BenchCase {
  std::string params;     ///< KEY=VALUE list, written for u8 data; W-n / H-n: the size less n
  std::string target_us;  ///< the PERFORMANCE.md target at 8K u8 (µs), "" if none
  std::string label;      ///< the case's name in results ("3x3"); "" = none
};

/// Resolves image parameters (the pipeline loads files; tests make random images).
using ImageSource = std::function<std::shared_ptr<const Image>(const Param&, const std::string&)>;

/// A stage's KEY=VALUE list, already split.
using KeyValues = std::map<std::string, std::string>;

/// A bound stage: parameters parsed and checked, ready to run on any image.
class Bound {
 public:
  virtual ~Bound() = default;
  /// Output size and format for `src` (throws, naming the op, for a source the op cannot take).
  virtual Shape output(const ConstImageView& src) const = 0;
  /// Runs the op through its public C++ function: src -> dst (dst of output(src)).
  virtual void run(const ConstImageView& src, const ImageView& dst, const Context& ctx) const = 0;
  /// Neighbourhood reach of one output pixel, for a source of format f.
  virtual Halo halo(Format f) const = 0;
  /// Bytes of Context::workspace the op takes for `src` (a view without data is fine): its
  /// public *_workspace_bytes query, 0 for an op that declares none (needs no scratch).
  virtual std::size_t workspace_bytes(const ConstImageView& src, const Context& ctx) const = 0;
};

/// The type-erased view of one op's declaration.
class Op {
 public:
  virtual ~Op() = default;
  const std::string& name() const { return name_; }
  const std::string& doc() const { return doc_; }
  const std::vector<Param>& params() const { return params_; }
  const std::vector<Depth>& depths() const { return depths_; }
  const std::vector<int>& channels() const { return channels_; }
  /// Parameter sets that tests and benchmarks run ("k=3", "k=5 border=wrap", ...).
  const std::vector<std::string>& examples() const { return examples_; }
  /// Benchmark cases (parameters, the PERFORMANCE.md target at 8K u8, the result label).
  const std::vector<BenchCase>& bench() const { return bench_; }
  /// Source formats benchmarked (empty: u8x1, u8x3, f32x1 as the op's depths and channels
  /// allow) and KEY=VALUE pairs merged over every case for f32 sources (data in [0, 1)).
  const std::vector<Format>& bench_formats() const { return bench_formats_; }
  const std::string& bench_f32_params() const { return bench_f32_; }
  bool has_border() const { return has_border_; }
  /// The benchmark's check tolerance for depth d (docs/bench.md). Tests compare every
  /// backend with the reference exactly: bit-identical results are the contract.
  Tolerance bench_tolerance(Depth d) const { return tolerance_ ? tolerance_(d) : Tolerance{}; }
  /// Parses and checks a KEY=VALUE list (unknown keys, ranges, cross-field rules), throwing
  /// invalid_argument naming the op and the key; resolves image parameters through `images`.
  virtual std::unique_ptr<Bound> bind(const KeyValues& kv, const ImageSource& images) const = 0;

 protected:
  std::string name_, doc_;
  std::vector<Param> params_;
  std::vector<Depth> depths_;
  std::vector<int> channels_{1, 2, 3, 4};
  std::vector<std::string> examples_;
  std::vector<BenchCase> bench_;
  std::vector<Format> bench_formats_;
  std::string bench_f32_;
  std::function<Tolerance(Depth)> tolerance_;
  bool has_border_ = false;
};

/// Every op of the catalogue, in catalogue order.
const std::vector<const Op*>& catalogue();
const Op* find(std::string_view name);

// ---- checks shared by the typed declarations and core --------------------------------------
/// "<op>: <name> must be odd and in [lo, hi] (got v)" / "... must be in [lo, hi] (got v)".
void check_integer(std::string_view op, const Param& p, long long v);
/// "<op>: <name> must be in [lo, hi] (got v)" (finite).
void check_number(std::string_view op, const Param& p, double v);
void check_border(std::string_view op, const Border& b);
/// Parsers of one KEY=VALUE value, naming the op and the key in their errors.
long long parse_integer(std::string_view op, const Param& p, const std::string& text);
double parse_number(std::string_view op, const Param& p, const std::string& text);
bool parse_boolean(std::string_view op, const Param& p, const std::string& text);
std::size_t parse_choice(std::string_view op, const Param& p, const std::string& text);

/// An op's declaration, typed on its parameter struct P.
template <class P>
class OpDef final : public Op {
 public:
  using RunFn =
      std::function<void(const ConstImageView&, const ImageView&, const P&, const Context&)>;
  using WorkspaceFn = std::function<std::size_t(const ConstImageView&, const P&, const Context&)>;
  using Given = std::set<std::string>;

  OpDef(std::string name, std::string doc) {
    name_ = std::move(name);
    doc_ = std::move(doc);
  }
  // The builder's setters below overload the getters of Op.
  using Op::bench;
  using Op::bench_f32_params;
  using Op::bench_formats;
  using Op::bench_tolerance;
  using Op::channels;
  using Op::depths;
  using Op::examples;

  OpDef& depths(std::vector<Depth> d) {
    depths_ = std::move(d);
    return *this;
  }
  OpDef& channels(std::vector<int> c) {
    channels_ = std::move(c);
    return *this;
  }
  OpDef& examples(std::vector<std::string> e) {
    examples_ = std::move(e);
    return *this;
  }
  OpDef& bench(std::vector<BenchCase> b) {
    bench_ = std::move(b);
    return *this;
  }
  OpDef& bench_formats(std::vector<Format> f) {
    bench_formats_ = std::move(f);
    return *this;
  }
  OpDef& bench_f32_params(std::string p) {
    bench_f32_ = std::move(p);
    return *this;
  }
  OpDef& bench_tolerance(std::function<Tolerance(Depth)> t) {
    tolerance_ = std::move(t);
    return *this;
  }

  /// An integer field in [lo, hi] (odd only with Odd::yes).
  template <class C, class M>
  OpDef& integer(const char* name, M C::*m, long long lo, long long hi, const char* doc,
                 Odd odd = Odd::no, const char* zero_means = "") {
    Param p{name, Kind::integer, std::to_string(P{}.*m), doc, double(lo), double(hi)};
    p.odd = odd != Odd::no;
    p.zero_ok = odd == Odd::or_zero;
    p.zero_means = zero_means;
    return field(
        p,
        [m, op = name_](P& v, const std::string& t, const Param& as) {
          v.*m = M(parse_integer(op, as, t));
        },
        [m, p](const P& v, std::string_view op) { check_integer(op, p, (long long)(v.*m)); });
  }
  /// A shorthand setting several integer fields at once ("k" sets kw and kh); its checks
  /// are those of the first field it sets.
  OpDef& shorthand(const char* name, std::vector<std::string> sets, const char* doc) {
    Param p{name, Kind::integer, "", doc};
    p.sets = std::move(sets);
    shorthands_.push_back(params_.size());
    params_.push_back(p);
    fields_.push_back({});
    return *this;
  }
  /// A floating-point field in [lo, hi] (finite).
  template <class C, class M>
  OpDef& number(const char* name, M C::*m, double lo, double hi, const char* doc) {
    Param p{name, Kind::number, format_number(double(P{}.*m)), doc, lo, hi};
    return field(
        p,
        [m, op = name_](P& v, const std::string& t, const Param& as) {
          v.*m = M(parse_number(op, as, t));
        },
        [m, p](const P& v, std::string_view op) { check_number(op, p, double(v.*m)); });
  }
  /// A 0/1 field.
  template <class C>
  OpDef& boolean(const char* name, bool C::*m, const char* doc) {
    Param p{name, Kind::boolean, (P{}.*m) ? "1" : "0", doc};
    return field(
        p,
        [m, op = name_](P& v, const std::string& t, const Param& as) {
          v.*m = parse_boolean(op, as, t);
        },
        nullptr);
  }
  /// One of named values.
  template <class C, class E>
  OpDef& choice(const char* name, E C::*m, std::vector<std::pair<std::string, E>> values,
                const char* doc) {
    Param p{name, Kind::choice, "", doc};
    for (const auto& [n, e] : values) {
      p.choices.push_back(n);
      if (e == P{}.*m) p.default_text = n;
    }
    return field(
        p,
        [m, values, op = name_](P& v, const std::string& t, const Param& as) {
          v.*m = values[parse_choice(op, as, t)].second;
        },
        nullptr);
  }
  /// A border field: adds `border` (one of the five modes) and `value` (the constant).
  template <class C>
  OpDef& border(Border C::*m) {
    has_border_ = true;
    const Border def = P{}.*m;
    Param b{"border", Kind::border, border_name(def.type),
            "replicate, reflect, reflect101, wrap or constant"};
    b.choices = {"replicate", "reflect", "reflect101", "wrap", "constant"};
    Param v{"value", Kind::number, "0", "the constant border's value"};
    v.lo = -kUnbounded;
    v.hi = kUnbounded;
    field(
        b,
        [m, op = name_](P& s, const std::string& t, const Param& as) {
          (s.*m).type = BorderType(parse_choice(op, as, t));
        },
        [m](const P& s, std::string_view op) { check_border(op, s.*m); });
    return field(
        v,
        [m, op = name_](P& s, const std::string& t, const Param& as) {
          (s.*m).value = parse_number(op, as, t);
        },
        nullptr);
  }
  /// A parameter with its own parser (image files, kernels, ...): `parse(P&, text, images)`.
  OpDef& custom(Param p, std::function<void(P&, const std::string&, const ImageSource&)> parse,
                std::function<void(const P&, std::string_view)> check = nullptr) {
    params_.push_back(std::move(p));
    fields_.push_back({nullptr, std::move(check), std::move(parse)});
    return *this;
  }

  /// Marks an already declared parameter as required (shown as "(required)"; the op's
  /// check_keys says so when it is missing).
  OpDef& required(const char* name) {
    for (Param& p : params_)
      if (p.name == name) p.required = true;
    return *this;
  }
  /// Cross-field rules, checked by the C++ API and by bind.
  OpDef& check(std::function<void(const P&)> f) {
    check_ = std::move(f);
    return *this;
  }
  /// Rules on which keys a stage gave, checked by bind before any image parameter is read
  /// (so that a bad stage fails before it touches a file).
  OpDef& check_keys(std::function<void(const Given&)> f) {
    check_keys_ = std::move(f);
    return *this;
  }
  /// Rules that need the bound image parameters (bind only, after they are read).
  OpDef& check_given(std::function<void(const P&, const Given&)> f) {
    check_given_ = std::move(f);
    return *this;
  }
  /// Adjusts a stage's parameters for its source (e.g. sobel's `to` when not given).
  OpDef& adapt(std::function<void(P&, const ConstImageView&, const Given&)> f) {
    adapt_ = std::move(f);
    return *this;
  }
  OpDef& halo(std::function<Halo(const P&, Format)> f) {
    halo_ = std::move(f);
    return *this;
  }
  /// Output shape for a source; default: the source's size and format.
  OpDef& output(std::function<Shape(const ConstImageView&, const P&)> f) {
    output_ = std::move(f);
    return *this;
  }
  OpDef& run(RunFn f) {
    run_ = std::move(f);
    return *this;
  }
  /// The op's scratch query (the public *_workspace_bytes function), for an op that needs
  /// scratch on some backend; without it the op needs none.
  OpDef& workspace(WorkspaceFn f) {
    workspace_ = std::move(f);
    return *this;
  }

  /// Output size and format of the op for `src` (parameters already validated).
  Shape shape(const ConstImageView& src, const P& p) const {
    if (output_) return output_(src, p);
    return {src.width(), src.height(), src.format()};
  }

  /// The C++ API's parameter checks (ranges, odd sizes, borders, cross-field rules).
  void validate(const P& p) const {
    for (const auto& f : fields_)
      if (f.check) f.check(p, name_);
    if (check_) check_(p);
  }

  std::unique_ptr<Bound> bind(const KeyValues& kv, const ImageSource& images) const override;

 private:
  struct Field {
    std::function<void(P&, const std::string&, const Param&)> parse;
    std::function<void(const P&, std::string_view)> check;
    std::function<void(P&, const std::string&, const ImageSource&)> parse_custom;
  };
  OpDef& field(Param p, std::function<void(P&, const std::string&, const Param&)> parse,
               std::function<void(const P&, std::string_view)> check) {
    for (std::size_t s : shorthands_)
      if (params_[s].default_text.empty() && params_[s].sets.front() == p.name)
        params_[s].default_text = p.default_text;
    params_.push_back(std::move(p));
    fields_.push_back({std::move(parse), std::move(check), nullptr});
    return *this;
  }
  static std::string format_number(double v);

  class BoundOp;

  std::vector<Field> fields_;
  std::vector<std::size_t> shorthands_;
  std::function<void(const P&)> check_;
  std::function<void(const Given&)> check_keys_;
  std::function<void(const P&, const Given&)> check_given_;
  std::function<void(P&, const ConstImageView&, const Given&)> adapt_;
  std::function<Halo(const P&, Format)> halo_;
  std::function<Shape(const ConstImageView&, const P&)> output_;
  RunFn run_;
  WorkspaceFn workspace_;
};

/// Joins a list for messages: "a, b, c".
std::string join(const std::vector<std::string>& items);
/// Throws invalid_argument unless `key` is one of `params`, listing them.
void check_known_key(std::string_view op, const std::vector<Param>& params, const std::string& key);

template <class P>
std::string OpDef<P>::format_number(double v) {
  std::string s = std::to_string(v);
  while (s.find('.') != std::string::npos && (s.back() == '0' || s.back() == '.')) {
    const bool dot = s.back() == '.';
    s.pop_back();
    if (dot) break;
  }
  return s;
}

template <class P>
class OpDef<P>::BoundOp final : public Bound {
 public:
  BoundOp(const OpDef& def, P p, Given given)
      : def_(def), p_(std::move(p)), given_(std::move(given)) {}
  Shape output(const ConstImageView& src) const override { return def_.shape(src, adapted(src)); }
  void run(const ConstImageView& src, const ImageView& dst, const Context& ctx) const override {
    def_.run_(src, dst, adapted(src), ctx);
  }
  Halo halo(Format f) const override { return def_.halo_ ? def_.halo_(p_, f) : Halo{}; }
  std::size_t workspace_bytes(const ConstImageView& src, const Context& ctx) const override {
    return def_.workspace_ ? def_.workspace_(src, adapted(src), ctx) : 0;
  }

 private:
  P adapted(const ConstImageView& src) const {
    P p = p_;
    if (def_.adapt_) def_.adapt_(p, src, given_);
    return p;
  }
  const OpDef& def_;
  P p_;
  Given given_;
};

template <class P>
std::unique_ptr<Bound> OpDef<P>::bind(const KeyValues& kv, const ImageSource& images) const {
  P p{};
  Given given;
  for (const auto& [key, value] : kv) {
    check_known_key(name_, params_, key);
    given.insert(key);
  }
  // Shorthands first, so that an explicit field given beside them wins; errors name the key
  // the user typed, with the range of the field it sets.
  for (std::size_t s : shorthands_) {
    auto it = kv.find(params_[s].name);
    if (it == kv.end()) continue;
    for (const auto& target : params_[s].sets)
      for (std::size_t i = 0; i < params_.size(); ++i)
        if (params_[i].name == target) {
          Param as = params_[i];
          as.name = params_[s].name;
          fields_[i].parse(p, it->second, as);
        }
  }
  // Then plain values, then the key rules, and only then image parameters (files).
  for (std::size_t i = 0; i < params_.size(); ++i) {
    if (!params_[i].sets.empty() || params_[i].kind == Kind::image) continue;
    auto it = kv.find(params_[i].name);
    const Field& f = fields_[i];
    if (f.parse_custom)
      f.parse_custom(p, it == kv.end() ? std::string() : it->second, images);
    else if (it != kv.end())
      f.parse(p, it->second, params_[i]);
  }
  if (check_keys_) check_keys_(given);
  for (std::size_t i = 0; i < params_.size(); ++i) {
    if (params_[i].kind != Kind::image) continue;
    auto it = kv.find(params_[i].name);
    fields_[i].parse_custom(p, it == kv.end() ? std::string() : it->second, images);
  }
  validate(p);
  if (check_given_) check_given_(p, given);
  return std::make_unique<BoundOp>(*this, std::move(p), std::move(given));
}

}  // namespace pixflow::schema
