// The differential target: a small random pipeline (1-4 stages of catalogue ops, parameters
// drawn from the op schema's ranges and choices) on a small random image (1-40 pixels per
// side, a depth and channel count the first op takes), run stage by stage on Backend::ref
// and Backend::cpu. Per stage, both must give the same bytes (f32 NaN matches NaN whatever
// its payload; docs/contract.md §3: every op but matmul is bit-identical across backends) or
// both must throw an Error of the same status. Also: neither backend writes outside its
// destination view or into its source, and no op answers Status::internal.
//
// Both backends run each stage on the same input (the reference's output of the previous
// stage, in differently padded ROI views with different guard bytes), so a difference is
// always the stage's own. Image parameters are made by the harness: arith's `with` as an
// image of the stage input's size and format (sometimes not, for the error path), remap's
// maps as 1-channel f32 images of a random size holding in-range, half-integer, huge and
// non-finite coordinates. dot and matmul (API only, not in the catalogue) are not covered.
//
// Input: text mode when the first byte is a lowercase letter: the first line is a pipeline
// ("median k=3 | gray"; the seeds are every op example), the rest drives the image. Else
// everything (ops, parameters, image) is drawn from the bytes by FuzzedDataProvider.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>

#include "fuzz/fuzz_util.hpp"
#include "fuzz/targets.hpp"
#include "src/schema/schema.hpp"

namespace pixflow::fuzz {

namespace {

using schema::Kind;
using schema::Op;
using schema::Param;

constexpr std::int64_t kMaxSide = 40;
constexpr int kMaxStages = 4;
/// A stage whose window work (pixels x samples per window) exceeds this is skipped: under
/// the sanitizers a 255x255 median over 40x40 pixels takes minutes, not milliseconds.
constexpr double kWorkBudget = 3e6;
constexpr int kBindTries = 4;

struct Gen {
  FuzzedDataProvider& in;
  std::uint64_t state = 0;

  /// 0..n-1; 0 once the input is used up.
  int pick(int n) { return n <= 1 ? 0 : in.ConsumeIntegralInRange<int>(0, n - 1); }
  /// True with probability 1/n; false once the input is used up.
  bool one_in(int n) { return pick(n) == n - 1; }
  std::uint64_t next() {  // splitmix64, for bulk pixel data
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double unit() { return double(next() >> 11) * 0x1.0p-53; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * unit(); }
};

std::string number_text(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// ---- images ----------------------------------------------------------------------------------

void put(const ImageView& v, std::int64_t y, std::int64_t i, double value) {
  auto sat = [&](double lo, double hi) {
    if (std::isnan(value)) return 0.0;
    return std::nearbyint(std::clamp(value, lo, hi));
  };
  switch (v.depth()) {
    case Depth::u8:
      v.row<std::uint8_t>(y)[i] = std::uint8_t(sat(0, 255));
      break;
    case Depth::u16:
      v.row<std::uint16_t>(y)[i] = std::uint16_t(sat(0, 65535));
      break;
    case Depth::s16:
      v.row<std::int16_t>(y)[i] = std::int16_t(sat(-32768, 32767));
      break;
    case Depth::s32:
      v.row<std::int32_t>(y)[i] = std::int32_t(sat(-2147483648.0, 2147483647.0));
      break;
    case Depth::f32:
      v.row<float>(y)[i] = float(value);
      break;
  }
}

double depth_min(Depth d) {
  switch (d) {
    case Depth::u8:
    case Depth::u16:
      return 0;
    case Depth::s16:
      return -32768;
    case Depth::s32:
      return -2147483648.0;
    case Depth::f32:
      return -1000;
  }
  return 0;
}
double depth_max(Depth d) {
  switch (d) {
    case Depth::u8:
      return 255;
    case Depth::u16:
      return 65535;
    case Depth::s16:
      return 32767;
    case Depth::s32:
      return 2147483647.0;
    case Depth::f32:
      return 1000;
  }
  return 0;
}

double special(Gen& g, Depth d) {
  if (d != Depth::f32) return g.pick(2) ? depth_max(d) : depth_min(d);
  static const double values[] = {std::numeric_limits<double>::quiet_NaN(),
                                  INFINITY,
                                  -INFINITY,
                                  -0.0,
                                  1e-40,
                                  3.4e38,
                                  -3.4e38,
                                  0.5,
                                  -0.5,
                                  16777217.0};
  return values[g.next() % std::size(values)];
}

/// Fills a view from the input: its raw bytes, a uniform range, few distinct values (ties),
/// a constant, the depth's extremes and non-finite floats, or [lo, hi] when lo < hi.
void fill(Gen& g, const ImageView& v, double lo = 0, double hi = 0) {
  g.state = g.in.ConsumeIntegral<std::uint64_t>();
  const int mode = g.pick(6);
  const std::int64_t n = v.width() * v.channels();
  const Depth d = v.depth();
  const double c =
      g.pick(3) == 0 ? special(g, d) : std::floor(g.uniform(depth_min(d), depth_max(d)));
  for (std::int64_t y = 0; y < v.height(); ++y) {
    if (mode == 1) {
      const std::vector<std::uint8_t> raw =
          g.in.ConsumeBytes<std::uint8_t>(std::size_t(v.row_bytes()));
      if (!raw.empty()) std::memcpy(v.row_ptr(y), raw.data(), raw.size());
      for (std::int64_t b = std::int64_t(raw.size()); b < v.row_bytes(); ++b)
        v.row_ptr(y)[b] = std::byte(g.next());
      continue;
    }
    for (std::int64_t i = 0; i < n; ++i) {
      double x = 0;
      switch (mode) {
        case 0:
          x = lo < hi ? g.uniform(lo, hi) : g.uniform(depth_min(d), depth_max(d));
          break;
        case 2:
          x = double(g.next() % 4) * (d == Depth::f32 ? 0.5 : 1.0);
          break;
        case 3:
          x = c;
          break;
        case 4:
          x = g.next() % 8 == 0 ? special(g, d) : g.uniform(depth_min(d), depth_max(d));
          break;
        default:
          x = lo < hi ? std::floor(g.uniform(lo, hi)) + (g.next() % 2 ? 0.5 : 0.0)
                      : g.uniform(depth_min(d), depth_max(d));
          break;
      }
      put(v, y, i, x);
    }
  }
}

/// A copy of `src` (or, without src, a w x h image of `fmt`) at offset (ox, oy) inside a
/// larger buffer whose other bytes are `guard`.
struct Placed {
  Image backing;
  ImageView view;
  std::int64_t ox = 0, oy = 0;
  std::uint8_t guard = 0;
};

Placed place(std::int64_t w, std::int64_t h, Format fmt, Gen& g, std::uint8_t guard) {
  Placed p;
  p.ox = g.pick(3);
  p.oy = g.pick(2);
  p.guard = guard;
  p.backing = Image(w + p.ox + g.pick(4), h + p.oy + 1, fmt);
  for (std::int64_t y = 0; y < p.backing.height(); ++y)
    std::memset(p.backing.view().row_ptr(y), guard, std::size_t(p.backing.view().row_bytes()));
  p.view = p.backing.view().roi(p.ox, p.oy, w, h);
  return p;
}

/// Whether every byte of the buffer outside the view still holds the guard.
bool guard_intact(const Placed& p) {
  const ConstImageView b = p.backing.view();
  const std::int64_t pb = std::int64_t(b.format().pixel_bytes());
  for (std::int64_t y = 0; y < b.height(); ++y) {
    const bool in_rows = y >= p.oy && y < p.oy + p.view.height();
    for (std::int64_t i = 0; i < b.row_bytes(); ++i) {
      if (in_rows && i >= p.ox * pb && i < (p.ox + p.view.width()) * pb) continue;
      if (std::uint8_t(b.row_ptr(y)[i]) != p.guard) return false;
    }
  }
  return true;
}

std::shared_ptr<const Image> as_image(std::shared_ptr<Placed> p) {
  std::shared_ptr<std::byte> owner(p, p->backing.data());
  return std::make_shared<const Image>(Image::wrap(owner, p->view));
}

// ---- parameters ------------------------------------------------------------------------------

const Param& range_of(const Op& op, const Param& p) {
  if (p.sets.empty()) return p;
  for (const Param& q : op.params())
    if (q.name == p.sets.front()) return q;
  return p;
}

std::string gen_integer(Gen& g, const Param& p) {
  const auto lo = static_cast<long long>(p.lo), hi = static_cast<long long>(p.hi);
  long long v = 0;
  switch (g.pick(16)) {
    case 13:
      v = g.in.ConsumeIntegralInRange<long long>(lo, hi);
      break;
    case 14:
      return std::to_string(g.pick(2) ? lo - 1 : hi + 1);
    case 15:
      return g.in.ConsumeRandomLengthString(6);
    default:
      v = lo + g.in.ConsumeIntegralInRange<long long>(0, std::min<long long>(hi - lo, 6));
      break;
  }
  if (p.odd && !(p.zero_ok && v == 0) && v % 2 == 0) v = v + 1 <= hi ? v + 1 : v - 1;
  return std::to_string(v);
}

std::string gen_number(Gen& g, const Param& p) {
  static const double interesting[] = {0,     1,    -1,   0.5,  2,       3,    0.25,  1.5,
                                       5,     10,   20,   75,   100,     127,  127.5, 255,
                                       256,   1000, -3.5, 0.1,  65535,   1e-7, 1e6,   1e30,
                                       -1e30, 33.3, -255, 0.75, 1.0 / 3, 2.5,  -0.5,  4e9};
  const double lo = std::max(p.lo, -1e300), hi = std::min(p.hi, 1e300);
  switch (g.pick(16)) {
    case 10:
    case 11:
    case 12:
      return number_text(
          g.in.ConsumeFloatingPointInRange<double>(std::max(lo, -1e3), std::min(hi, 1e3)));
    case 13:
      return number_text(g.in.ConsumeFloatingPointInRange<double>(lo, hi));
    case 14: {
      static const char* bad[] = {"nan", "inf", "-inf", "1e999", "0x10", "+", ""};
      if (g.pick(2) && p.lo > -schema::kUnbounded) return number_text(p.lo - 1);
      return bad[g.pick(int(std::size(bad)))];
    }
    case 15:
      return g.in.ConsumeRandomLengthString(8);
    default:
      return number_text(std::clamp(interesting[g.pick(int(std::size(interesting)))], lo, hi));
  }
}

std::string gen_kernel(Gen& g) {
  static const double values[] = {0, 1, -1, 0.5, 0.25, 2, -0.02, 1.48, 3, 1e-3, 100, -4, 0.1};
  const int kw = g.one_in(8) ? 1 + g.pick(16) : 1 + g.pick(5);
  const int kh = g.one_in(8) ? 1 + g.pick(16) : 1 + g.pick(5);
  std::string s;
  for (int y = 0; y < kh; ++y) {
    if (y) s += ';';
    for (int x = 0; x < kw; ++x) {
      if (x) s += ',';
      s += g.pick(4)
               ? number_text(values[g.pick(int(std::size(values)))])
               : number_text(std::round(g.in.ConsumeFloatingPointInRange<double>(-4, 4) * 64) / 64);
    }
  }
  return s;
}

schema::KeyValues gen_params(Gen& g, const Op& op) {
  schema::KeyValues kv;
  for (const Param& p : op.params()) {
    if (!p.required && !g.in.ConsumeBool()) continue;
    const Param& r = range_of(op, p);
    switch (p.kind) {
      case Kind::integer:
        kv[p.name] = gen_integer(g, r);
        break;
      case Kind::number:  // a number, or one of the words it also takes (convert's scale=auto)
        kv[p.name] = !p.choices.empty() && g.one_in(4)
                         ? p.choices[std::size_t(g.pick(int(p.choices.size())))]
                         : gen_number(g, r);
        break;
      case Kind::boolean: {
        static const char* b[] = {"0", "1", "true", "no", "2"};
        kv[p.name] = b[g.pick(int(std::size(b)))];
        break;
      }
      case Kind::choice:
      case Kind::depth:
      case Kind::border:
        kv[p.name] = g.one_in(32) || p.choices.empty()
                         ? std::string("bogus")
                         : p.choices[std::size_t(g.pick(int(p.choices.size())))];
        break;
      case Kind::image:
        kv[p.name] = "generated";
        break;
      case Kind::text:
        kv[p.name] = g.one_in(16) ? g.in.ConsumeRandomLengthString(12) : gen_kernel(g);
        break;
    }
  }
  return kv;
}

/// The images a stage's image parameters name (see the file comment).
struct StageImages {
  Gen& g;
  ConstImageView src;
  std::int64_t mw = 0, mh = 0;  // the maps' size, chosen by the first map

  std::shared_ptr<const Image> operator()(const Param& p, const std::string&) {
    std::int64_t w = src.width(), h = src.height();
    Format f = src.format();
    double lo = 0, hi = 0;
    if (p.role == schema::ImageRole::like_src) {
      if (g.one_in(16)) {  // the error path: another size or format
        w = 1 + g.pick(int(kMaxSide));
        f = {Depth(g.pick(5)), 1 + g.pick(4)};
      }
    } else {
      if (mw == 0 || g.one_in(32)) {
        mw = 1 + g.pick(int(kMaxSide));
        mh = 1 + g.pick(int(kMaxSide));
      }
      w = mw;
      h = mh;
      f = {Depth::f32, g.one_in(32) ? 3 : 1};
      lo = -3;
      hi = double(p.role == schema::ImageRole::map_x ? src.width() : src.height()) + 3;
    }
    auto placed = std::make_shared<Placed>(place(w, h, f, g, 0xee));
    fill(g, placed->view, lo, hi);
    return as_image(placed);
  }
};

// ---- one stage on both backends --------------------------------------------------------------

struct Stage {
  const Op* op;
  schema::KeyValues kv;
};

std::string describe(const Stage& s) {
  std::string t = s.op->name();
  for (const auto& [k, v] : s.kv) t += " " + k + "=" + v;
  return t;
}

struct Outcome {
  bool threw = false;
  Status status = Status::internal;
  std::string what;
};

Outcome run_on(const schema::Bound& b, const ConstImageView& src, const ImageView& dst,
               const Context& ctx) {
  try {
    b.run(src, dst, ctx);
    return {};
  } catch (const Error& e) {
    return {true, e.status(), e.what()};
  }
}

/// Runs one stage on both backends. Returns the reference's output, or an empty image when
/// the stage failed (on both, with the same status) and the pipeline ends.
Image run_stage(Gen& g, const std::string& pipeline, const Stage& st, const schema::Bound& bound,
                const ConstImageView& cur) {
  schema::Shape out;
  try {
    out = bound.output(cur);  // backend-independent: a pipeline asks it before running
  } catch (const Error& e) {
    if (e.status() == Status::internal) die("differential: ", describe(st), ": ", e.what());
    return {};
  }
  const bool too_large = out.width > 4 * kMaxSide || out.height > 4 * kMaxSide;
  // A window op (finite halo) keeps the size: any other shape is a bug. An op whose output
  // size is a parameter (pad's sides, resize's w/h/scale) may ask for a large image: a valid
  // request, left unrun (it would only make the fuzzer slow).
  if (out.width < 1 || out.height < 1 || (too_large && bound.halo(cur.format()).x >= 0))
    die("differential: ", describe(st), " on ", cur.width(), "x", cur.height(), " ",
        to_string(cur.format()), ": output shape ", out.width, "x", out.height);
  if (too_large) return {};

  static const int thread_counts[] = {1, 2, 3, 0, 5};
  const Context ref_ctx{Backend::ref, {}, 0};
  const Context cpu_ctx{Backend::cpu, {}, thread_counts[g.pick(int(std::size(thread_counts)))]};

  Placed ref_src = place(cur.width(), cur.height(), cur.format(), g, 0x3c);
  Placed cpu_src = place(cur.width(), cur.height(), cur.format(), g, 0xc3);
  copy(cur, ref_src.view);
  copy(cur, cpu_src.view);
  Placed ref_dst = place(out.width, out.height, out.format, g, 0xa5);
  Placed cpu_dst = place(out.width, out.height, out.format, g, 0x5a);

  const Outcome r = run_on(bound, ref_src.view, ref_dst.view, ref_ctx);
  const Outcome c = run_on(bound, cpu_src.view, cpu_dst.view, cpu_ctx);

  auto where = [&] {
    return detail::cat("\n  stage: ", describe(st), "\n  pipeline: ", pipeline,
                       "\n  source: ", cur.width(), "x", cur.height(), " ", to_string(cur.format()),
                       " (cpu view at (", cpu_src.ox, ",", cpu_src.oy,
                       "), threads=", cpu_ctx.threads, ")\n  output: ", out.width, "x", out.height,
                       " ", to_string(out.format));
  };
  if (r.threw && r.status == Status::internal) die("differential: ref: ", r.what, where());
  if (c.threw && c.status == Status::internal) die("differential: cpu: ", c.what, where());
  if (r.threw != c.threw || (r.threw && r.status != c.status))
    die("differential: ref ",
        r.threw ? detail::cat("threw ", status_name(r.status), " (", r.what, ")")
                : std::string("succeeded"),
        " but cpu ",
        c.threw ? detail::cat("threw ", status_name(c.status), " (", c.what, ")")
                : std::string("succeeded"),
        where());
  // Neither may write outside its destination or into its source, failed or not.
  if (!guard_intact(ref_dst) || !guard_intact(cpu_dst))
    die("differential: ", guard_intact(ref_dst) ? "cpu" : "ref",
        " wrote outside its destination view", where());
  if (!guard_intact(ref_src) || !guard_intact(cpu_src) ||
      !compare_bits(ref_src.view, cur).empty() || !compare_bits(cpu_src.view, cur).empty())
    die("differential: a backend wrote into its source", where());
  if (r.threw) return {};
  const std::string diff = compare_bits(cpu_dst.view, ref_dst.view);
  if (!diff.empty()) die("differential: Backend::cpu differs from Backend::ref: ", diff, where());
  return clone(ref_dst.view);
}

/// Window work of a bound stage on `src` (see kWorkBudget).
double work(const schema::Bound& b, const ConstImageView& src) {
  schema::Halo h{-1, -1};
  try {
    h = b.halo(src.format());
  } catch (const Error&) {  // the run says why
  }
  const double px = double(src.width() * src.height() * src.channels());
  if (h.x < 0 || h.y < 0) return px * 8;
  return px * double(2 * h.x + 1) * double(2 * h.y + 1);
}

bool accepts(const Op& op, Format f) {
  return std::find(op.depths().begin(), op.depths().end(), f.depth) != op.depths().end() &&
         std::find(op.channels().begin(), op.channels().end(), f.channels) != op.channels().end();
}

/// The stages of a text pipeline: "op k=v ... | op ...". Words without '=' are dropped,
/// unknown ops skipped; the schema's binding judges the rest.
std::vector<Stage> parse_text(std::string_view text) {
  std::vector<Stage> out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t bar = text.find('|', start);
    const std::string_view part =
        text.substr(start, bar == std::string_view::npos ? std::string_view::npos : bar - start);
    std::vector<std::string> words;
    for (std::size_t i = 0; i < part.size();) {
      while (i < part.size() && std::isspace(static_cast<unsigned char>(part[i]))) ++i;
      std::size_t j = i;
      while (j < part.size() && !std::isspace(static_cast<unsigned char>(part[j]))) ++j;
      if (j > i) words.emplace_back(part.substr(i, j - i));
      i = j;
    }
    if (!words.empty())
      if (const Op* op = schema::find(words[0])) {
        Stage s{op, {}};
        for (std::size_t i = 1; i < words.size(); ++i) {
          const std::size_t eq = words[i].find('=');
          if (eq != std::string::npos) s.kv[words[i].substr(0, eq)] = words[i].substr(eq + 1);
        }
        for (const Param& p : op->params())
          if (p.kind == Kind::image && p.required && !s.kv.count(p.name))
            s.kv[p.name] = "generated";
        out.push_back(std::move(s));
      }
    if (bar == std::string_view::npos || out.size() >= std::size_t(kMaxStages)) break;
    start = bar + 1;
  }
  return out;
}

}  // namespace

int fuzz_differential(const std::uint8_t* data, std::size_t size) {
  std::vector<Stage> text_stages;
  bool text_mode = size > 0 && data[0] >= 'a' && data[0] <= 'z';
  if (text_mode) {
    const std::uint8_t* nl = static_cast<const std::uint8_t*>(std::memchr(data, '\n', size));
    const std::size_t len = nl ? std::size_t(nl - data) : size;
    text_stages = parse_text(std::string_view(reinterpret_cast<const char*>(data), len));
    data += nl ? len + 1 : len;
    size -= nl ? len + 1 : len;
    if (text_stages.empty()) return 0;
  }
  FuzzedDataProvider in(data, size);
  Gen g{in};
  const auto& ops = schema::catalogue();

  // The first op and a source it takes (rarely one it does not: the error path).
  const Op* first = text_mode ? text_stages.front().op : ops[std::size_t(g.pick(int(ops.size())))];
  Format fmt{first->depths()[std::size_t(g.pick(int(first->depths().size())))],
             first->channels()[std::size_t(g.pick(int(first->channels().size())))]};
  if (g.one_in(32)) fmt = {Depth(g.pick(5)), 1 + g.pick(4)};
  const std::int64_t w = g.one_in(4) ? 1 + g.pick(int(kMaxSide)) : 1 + g.pick(12);
  const std::int64_t h = g.one_in(4) ? 1 + g.pick(int(kMaxSide)) : 1 + g.pick(12);
  Image cur(w, h, fmt);
  fill(g, cur.view());

  const int n = text_mode ? int(text_stages.size()) : 1 + g.pick(kMaxStages);
  std::string pipeline;
  for (int i = 0; i < n; ++i) {
    const Op* op = nullptr;
    if (text_mode) {
      op = text_stages[std::size_t(i)].op;
    } else if (i == 0) {
      op = first;
    } else {
      std::vector<const Op*> fit;
      for (const Op* o : ops)
        if (accepts(*o, cur.format())) fit.push_back(o);
      const auto& from = fit.empty() || g.one_in(16) ? ops : fit;
      op = from[std::size_t(g.pick(int(from.size())))];
    }
    // Bind; random parameters that break a cross-field rule are drawn again.
    std::unique_ptr<schema::Bound> bound;
    Stage st{op, {}};
    for (int t = 0; t < (text_mode ? 1 : kBindTries) && !bound; ++t) {
      st.kv = text_mode ? text_stages[std::size_t(i)].kv : gen_params(g, *op);
      StageImages images{g, cur.view()};
      try {
        bound = op->bind(st.kv, std::ref(images));
      } catch (const Error& e) {
        check_error_status("differential: bind", e,
                           {Status::invalid_argument, Status::unsupported});
      }
    }
    if (!bound || work(*bound, cur) > kWorkBudget) continue;  // the stage is left out
    pipeline += (pipeline.empty() ? "" : " | ") + describe(st);
    Image next = run_stage(g, pipeline, st, *bound, cur);
    if (next.empty()) break;
    cur = std::move(next);
  }
  return 0;
}

std::vector<Seed> differential_seeds() {
  std::vector<Seed> out;
  // The bytes after the text drive the image: a fixed, varied pattern.
  std::string tail;
  for (int i = 0; i < 64; ++i) tail += char((i * 37 + 11) & 0xff);
  for (const schema::Op* op : schema::catalogue()) {
    int i = 0;
    for (const std::string& example : op->examples())
      out.push_back({op->name() + "-" + std::to_string(i++),
                     op->name() + (example.empty() ? "" : " " + example) + "\n" + tail});
  }
  return out;
}

}  // namespace pixflow::fuzz
