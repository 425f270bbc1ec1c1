// The shared half of the device benchmarks (bench/cases.hpp): case list, inputs, reference
// check and the backend-neutral row.
#include "bench/cases.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <mutex>
#include <sstream>
#include <thread>

#include "bench/maps.hpp"

namespace sc = pixflow::schema;

namespace pixflow::bench {
namespace {

std::string json_escape(const std::string& s) {
  std::string o;
  for (char ch : s) {
    const auto u = static_cast<unsigned char>(ch);
    if (ch == '"' || ch == '\\') {
      o += '\\';
      o += ch;
    } else if (u < 0x20) {
      char b[8];
      std::snprintf(b, sizeof b, "\\u%04x", u);
      o += b;
    } else {
      o += ch;
    }
  }
  return o;
}
}  // namespace

std::string fmt_double(double v, int prec) {
  if (!std::isfinite(v)) return "";
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", prec, v);
  return b;
}

std::string jnum(double v) {
  if (!std::isfinite(v)) return "null";
  char b[64];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}
std::string jstr(const std::string& s) {
  return "\"" + json_escape(s) + "\"";
}

void parallel_for(std::int64_t n, const std::function<void(std::int64_t)>& f) {
  const int nt = std::max(1u, std::thread::hardware_concurrency());
  std::atomic<std::int64_t> next{0};
  std::mutex m;
  std::exception_ptr first;
  std::vector<std::thread> ts;
  for (int t = 0; t < nt; ++t)
    ts.emplace_back([&] {
      for (std::int64_t i; (i = next++) < n;) {
        try {
          f(i);
        } catch (...) {
          std::lock_guard<std::mutex> g(m);
          if (!first) first = std::current_exception();
        }
      }
    });
  for (auto& t : ts) t.join();
  if (first) std::rethrow_exception(first);
}

std::uint64_t splitmix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  if (n == 0) return NAN;
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string Tol::text() const {
  if (abs == 0 && rel == 0) return "exact";
  std::string s;
  if (abs != 0) s += "abs " + fmt_double(abs, abs < 0.01 ? 6 : 2);
  if (rel != 0) s += std::string(s.empty() ? "" : " + ") + "rel " + jnum(rel);
  return s;
}

double Case::copy_bytes() const {
  return std::floor((in_bytes() + out_bytes()) / 2.0);
}

// ---- inputs ----------------------------------------------------------------------------------

std::shared_ptr<Buffer> Inputs::random(std::int64_t w, std::int64_t h, Format f, int salt) {
  const auto key = std::make_tuple(w, h, int(f.depth), f.channels, salt);
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  auto b = std::make_shared<Buffer>();
  b->host = Image(w, h, f);
  const std::int64_t spr = w * f.channels;
  Image& hi = b->host;
  parallel_for(h, [&](std::int64_t y) {
    std::uint64_t st = splitmix(std::uint64_t(salt) * 0x1000003ull + std::uint64_t(y));
    for (std::int64_t i = 0; i < spr; ++i) {
      st = splitmix(st);
      switch (f.depth) {
        case Depth::u8:
          hi.row<std::uint8_t>(y)[i] = std::uint8_t(st >> 56);
          break;
        case Depth::u16:
          hi.row<std::uint16_t>(y)[i] = std::uint16_t(st >> 48);
          break;
        case Depth::s16:
          hi.row<std::int16_t>(y)[i] = std::int16_t(st >> 48);
          break;
        case Depth::s32:
          hi.row<std::int32_t>(y)[i] = std::int32_t(st >> 40) - (1 << 23);
          break;
        case Depth::f32:
          hi.row<float>(y)[i] = float(st >> 40) / float(1 << 24);
          break;
      }
    }
  });
  b->dev = Image(w, h, f, dev_);
  copy(b->host, b->dev);
  cache_[key] = b;
  return b;
}

std::pair<std::shared_ptr<Buffer>, std::shared_ptr<Buffer>> Inputs::maps(std::int64_t w,
                                                                         std::int64_t h) {
  const auto kx = std::make_tuple(w, h, -1, 1, 0), ky = std::make_tuple(w, h, -1, 1, 1);
  if (cache_.count(kx)) return {cache_[kx], cache_[ky]};
  auto mx = std::make_shared<Buffer>(), my = std::make_shared<Buffer>();
  mx->host = Image(w, h, {Depth::f32, 1});
  my->host = Image(w, h, {Depth::f32, 1});
  parallel_for(h, [&](std::int64_t y) {
    bench::smooth_map_row(y, w, h, mx->host.row<float>(y), my->host.row<float>(y));
  });
  for (auto* b : {mx.get(), my.get()}) {
    b->dev = Image(w, h, {Depth::f32, 1}, dev_);
    copy(b->host, b->dev);
  }
  cache_[kx] = mx;
  cache_[ky] = my;
  return {mx, my};
}
// ---- the case list from the op schema ------------------------------------------------------
//
// Every schema::catalogue() op, every entry of op->bench(), in the formats below, at 1920x1080
// and 8192x8192 (--quick: 1080p). Everything about a case comes from the schema (parameters,
// output shape, halo, tolerance, target, label, formats, f32 parameters).
// dot and matmul (API only, not in the catalogue) are written by hand.

std::vector<Size> standard_sizes(bool quick) {
  std::vector<Size> sizes = {{1920, 1080}};
  if (!quick) sizes.push_back({8192, 8192});
  return sizes;
}

std::optional<Size> parse_size(const std::string& text) {
  const std::size_t x = text.find('x');
  if (x == std::string::npos || x == 0 || x + 1 >= text.size()) return std::nullopt;
  if (text.find_first_not_of("0123456789x") != std::string::npos) return std::nullopt;
  if (text.find('x', x + 1) != std::string::npos) return std::nullopt;
  const std::string ws = text.substr(0, x), hs = text.substr(x + 1);
  if (ws.size() > 9 || hs.size() > 9) return std::nullopt;
  const Size s{std::stoll(ws), std::stoll(hs)};
  if (s.w < 1 || s.h < 1) return std::nullopt;
  return s;
}

namespace {

const Format kU8{Depth::u8, 1}, kRGB{Depth::u8, 3}, kF32{Depth::f32, 1}, kRGBF{Depth::f32, 3};

/// "k=3 border=wrap" -> {k: 3, border: wrap}; later pairs replace earlier ones.
void parse_kv(const std::string& text, sc::KeyValues& kv) {
  std::istringstream in(text);
  for (std::string tok; in >> tok;) {
    const std::size_t eq = tok.find('=');
    if (eq == std::string::npos || eq == 0)
      throw Error(Status::invalid_argument, "bench: bad KEY=VALUE '" + tok + "' in '" + text + "'");
    kv[tok.substr(0, eq)] = tok.substr(eq + 1);
  }
}
std::string kv_text(const sc::KeyValues& kv) {
  std::string s;
  for (const auto& [k, v] : kv) s += (s.empty() ? "" : " ") + k + "=" + v;
  return s;
}

/// The source formats an op is benchmarked in: its schema's bench_formats(), else u8x1, u8x3 and
/// f32x1 (u8x3 and f32x3 for an op that takes no 1-channel source, e.g. gray), those its depths and
/// channel counts allow.
bool takes_one_channel(const sc::Op& op) {
  return std::count(op.channels().begin(), op.channels().end(), 1) > 0;
}
std::vector<Format> bench_formats(const sc::Op& op) {
  std::vector<Format> want = !op.bench_formats().empty() ? op.bench_formats()
                             : takes_one_channel(op)     ? std::vector<Format>{kU8, kRGB, kF32}
                                                         : std::vector<Format>{kRGB, kRGBF};
  std::vector<Format> out;
  for (Format f : want)
    if (std::count(op.depths().begin(), op.depths().end(), f.depth) &&
        std::count(op.channels().begin(), op.channels().end(), f.channels))
      out.push_back(f);
  return out;
}

/// An Image that does not own its pixels (the case's buffers outlive every call).
std::shared_ptr<const Image> borrowed(const ConstImageView& v) {
  return std::make_shared<const Image>(
      Image::wrap({}, ImageView(const_cast<std::byte*>(v.data()), v.width(), v.height(), v.stride(),
                                v.format(), v.location())));
}

/// The schema's image parameters resolved to the images of a call: `with` (like_src) = src2,
/// map_x/map_y = mx/my. The parameter's text is a placeholder.
sc::ImageSource views_source(const Views& v) {
  return [v](const sc::Param& p, const std::string&) {
    switch (p.role) {
      case sc::ImageRole::like_src:
        return borrowed(v.src2);
      case sc::ImageRole::map_x:
        return borrowed(v.mx);
      case sc::ImageRole::map_y:
        return borrowed(v.my);
    }
    throw Error(Status::internal, "bench: unknown image role of " + p.name);
  };
}

}  // namespace

std::unique_ptr<sc::Bound> bind_views(const Case& c, const Views& v) {
  return c.schema_op->bind(c.kv, views_source(v));
}

namespace {

/// The value of a number parameter as bound: the case's text, else the schema's default.
std::optional<double> param_number(const sc::Op& op, const sc::KeyValues& kv,
                                   const std::string& name) {
  for (const sc::Param& p : op.params()) {
    if (p.name != name) continue;
    auto it = kv.find(name);
    const std::string text = it != kv.end() ? it->second : p.default_text;
    if (text.empty()) return std::nullopt;
    return std::stod(text);
  }
  return std::nullopt;
}

/// The text of a parameter as bound: the case's text, else the schema's default.
std::string param_text(const sc::Op& op, const sc::KeyValues& kv, const std::string& name) {
  for (const sc::Param& p : op.params()) {
    if (p.name != name) continue;
    auto it = kv.find(name);
    return it != kv.end() ? it->second : p.default_text;
  }
  return "";
}

/// A `kernel=ROWS` parameter's taps (rows ';', values ','), for the NPP peer.
std::vector<float> kernel_taps(const std::string& text) {
  std::vector<float> taps;
  std::string t = text;
  std::replace(t.begin(), t.end(), ';', ',');
  std::istringstream in(t);
  for (std::string v; std::getline(in, v, ',');) taps.push_back(std::stof(v));
  return taps;
}

/// One case of a catalogue op: bench entry `params` (with the depth's rule merged over it) on
/// a w x h source of format f.
// A bench entry's parameters for a w x h source: "W-32" / "H-16" (crop's rectangle) become
// the source's width / height less that many pixels, so one entry fits every size.
std::string sized_params(const std::string& params, std::int64_t w, std::int64_t h) {
  static const std::regex side(R"(\b([WH])-(\d+)\b)");
  std::string out;
  auto at = params.cbegin();
  for (std::sregex_iterator it(params.begin(), params.end(), side), end; it != end; ++it) {
    const std::smatch& m = *it;
    out.append(at, m[0].first);
    const std::int64_t v = (m[1] == "W" ? w : h) - std::stoll(m[2]);
    out += std::to_string(std::max<std::int64_t>(v, 1));
    at = m[0].second;
  }
  out.append(at, params.cend());
  return out;
}

Case schema_case(const sc::Op& op, const std::string& params, const std::string& label,
                 const std::string& target, bool target_here, std::int64_t w, std::int64_t h,
                 Format f) {
  Case c;
  c.op = op.name();
  c.variant = label;
  c.w = c.w2 = w;
  c.h = c.h2 = h;
  c.fmt = f;
  c.schema_op = &op;
  parse_kv(sized_params(params, w, h), c.kv);
  if (f.depth == Depth::f32) parse_kv(op.bench_f32_params(), c.kv);
  // Image parameters: a required one the entry does not name (remap's maps) gets a
  // placeholder text; views_source resolves them all by role.
  for (const sc::Param& p : op.params())
    if (p.kind == sc::Kind::image && p.required && !c.kv.count(p.name)) c.kv[p.name] = p.name;
  c.params = kv_text(c.kv);
  for (const sc::Param& p : op.params()) {
    if (p.kind != sc::Kind::image || !c.kv.count(p.name)) continue;
    if (p.role == sc::ImageRole::like_src)
      c.two_inputs = true;
    else
      c.maps = true;
  }
  c.fn = [&op, kv = c.kv](const Views& v, ImageView d, const Context& x) {
    op.bind(kv, views_source(v))->run(v.src, d, x);
  };

  // Shape and halo from a binding to placeholder images (no pixels are touched): `with` of
  // the source's size and format, the maps of the source's size (the output is the maps').
  const auto placeholder = [](std::int64_t pw, std::int64_t ph, Format pf) {
    return ConstImageView(nullptr, pw, ph, pw * std::int64_t(pf.pixel_bytes()), pf,
                          Location::host());
  };
  Views shapes;
  shapes.src = shapes.src2 = placeholder(w, h, f);
  shapes.mx = shapes.my = placeholder(w, h, {Depth::f32, 1});
  const auto bound = bind_views(c, shapes);
  const sc::Shape out = bound->output(shapes.src);
  c.ow = out.width;
  c.oh = out.height;
  c.ofmt = out.format;
  const sc::Halo halo = bound->halo(f);
  if (halo.x >= 0 && halo.y >= 0) {
    c.ref = RefKind::local;
    c.halo = halo.y;
    c.peer.kw = 2 * halo.x + 1;
    c.peer.kh = 2 * halo.y + 1;
  } else if (c.maps) {
    c.ref = RefKind::remap;
  } else {
    // No locality: a transposing op (a 7x5 source gives 5x7) checks by source columns,
    // anything else (recursive filters; crop, whose rectangle a 7x5 source cannot hold) on
    // the whole image.
    c.ref = RefKind::full;
    try {
      const sc::Shape probe = bound->output(placeholder(7, 5, f));
      if (probe.width == 5 && probe.height == 7) c.ref = RefKind::transpose;
    } catch (const Error&) {
    }
  }
  const sc::Tolerance tol = op.bench_tolerance(f.depth);
  c.tol = Tol{tol.abs, tol.rel};
  if (target_here) c.target = target;

  // The NPP peer's parameters: kw/kh above, the rest by parameter name.
  c.peer.op = c.op;
  if (auto v = param_number(op, c.kv, "d")) c.peer.d = int(*v);
  if (auto v = param_number(op, c.kv, "sigma_color")) c.peer.sigma_color = *v;
  if (auto v = param_number(op, c.kv, "sigma_space")) c.peer.sigma_space = *v;
  if (auto v = param_number(op, c.kv, "t")) c.peer.t = *v;
  if (auto v = param_number(op, c.kv, "maxval")) c.peer.maxval = *v;
  if (c.op == "flip" || c.op == "rotate" || c.op == "crop" || c.op == "pad") {
    c.peer.mode = param_text(op, c.kv, "mode");
    c.peer.border = param_text(op, c.kv, "border");
    if (auto v = param_number(op, c.kv, "angle")) c.peer.angle = int(*v);
    if (auto v = param_number(op, c.kv, "x")) c.peer.x = int(*v);
    if (auto v = param_number(op, c.kv, "y")) c.peer.y = int(*v);
    if (auto v = param_number(op, c.kv, "top")) c.peer.top = int(*v);
    if (auto v = param_number(op, c.kv, "left")) c.peer.left = int(*v);
  }
  if (auto it = c.kv.find("interp"); it != c.kv.end()) c.peer.interp = it->second;
  if (auto it = c.kv.find("kernel"); it != c.kv.end()) c.kernel = kernel_taps(it->second);
  return c;
}

}  // namespace

std::vector<Case> make_cases(const std::vector<Size>& sizes) {
  std::vector<Case> cs;
  for (const auto [w, h] : sizes) {
    const bool big = w == 8192 && h == 8192;
    // Format-major within a size; ops that take 1 channel first, then the 3-channel-only
    // ones (gray), so that the order is that of the committed results.
    for (bool one_channel : {true, false}) {
      for (Format f : {kU8, kRGB, kF32, kRGBF}) {
        for (const sc::Op* op : sc::catalogue()) {
          if (takes_one_channel(*op) != one_channel) continue;
          const std::vector<Format> fs = bench_formats(*op);
          if (std::find(fs.begin(), fs.end(), f) == fs.end()) continue;
          // The PERFORMANCE.md targets are for 8K u8: the op's first u8 format (u8x1; gray:
          // u8x3).
          const bool target_here = big && f.depth == Depth::u8 && f == fs.front();
          for (const auto& e : op->bench()) {
            cs.push_back(schema_case(*op, e.params, e.label, e.target_us, target_here, w, h, f));
          }
        }
      }
    }

    auto base = [&](const std::string& op, const std::string& var, Format f, Format of) {
      Case c;
      c.op = op;
      c.variant = var;
      c.w = w;
      c.h = h;
      c.fmt = f;
      c.ow = w;
      c.oh = h;
      c.ofmt = of;
      c.w2 = w;
      c.h2 = h;
      c.peer.op = op;
      return c;
    };
    {
      const std::int64_t dw = big ? 4096 : w, dh = big ? 4096 : h;
      Case c = base("dot", "", {Depth::f32, 4}, kF32);
      c.w = c.ow = c.w2 = dw;
      c.h = c.oh = c.h2 = dh;
      c.two_inputs = true;
      c.fn = [](const Views& v, ImageView d, const Context& x) { dot(v.src, v.src2, d, x); };
      c.tol = Tol{1e-6, 1e-6};
      cs.push_back(c);
    }
    {
      const std::int64_t n = big                      ? 4096
                             : w == 1920 && h == 1080 ? 1024
                                                      : std::min<std::int64_t>({1024, w, h});
      Case c = base("matmul", std::to_string(n) + "^3", kF32, kF32);
      c.w = c.h = c.ow = c.oh = c.w2 = c.h2 = n;
      c.two_inputs = true;
      c.fn = [](const Views& v, ImageView d, const Context& x) { matmul(v.src, v.src2, d, x); };
      c.ref = RefKind::matmul;
      c.tol = Tol{0, 1e-5 * n};  // relative error <= 1e-5 * K (ops.hpp)
      c.peer.m = c.peer.n = c.peer.k = int(n);
      cs.push_back(c);
    }
  }
  return cs;
}

std::optional<std::vector<Case>> select_cases(std::vector<Size>& sizes, bool quick,
                                              const std::regex& filter, const char* tool) {
  if (sizes.empty()) sizes = standard_sizes(quick);
  std::vector<Case> cases;
  try {
    for (Case& c : make_cases(sizes))
      if (std::regex_search(c.name(), filter)) cases.push_back(std::move(c));
  } catch (const std::exception& e) {  // a bench entry the schema itself rejects
    std::fprintf(stderr, "%s: cannot make the case list: %s\n", tool, e.what());
    return std::nullopt;
  }
  return cases;
}

// ---- reference and comparison ----------------------------------------------------------------

namespace {

/// Computes reference rows [y0, y1) of the case's destination into `out` (host, out rows only)
/// with Backend::ref on host views.
void ref_rows(const Case& c, const Views& h, std::int64_t y0, std::int64_t y1,
              const ImageView& out) {
  const Context rc{Backend::ref};
  switch (c.ref) {
    case RefKind::local: {
      const std::int64_t c0 = std::max<std::int64_t>(0, y0 - c.halo);
      const std::int64_t c1 = std::min<std::int64_t>(c.h, y1 + c.halo);
      Views v = h;
      v.src = h.src.roi(0, c0, c.w, c1 - c0);
      if (c.two_inputs) v.src2 = h.src2.roi(0, c0, c.w, c1 - c0);
      Image tmp(c.ow, c1 - c0, c.ofmt);
      c.fn(v, tmp, rc);
      copy(ConstImageView(tmp.view()).roi(0, y0 - c0, c.ow, y1 - y0), out);
      return;
    }
    case RefKind::remap: {
      Views v = h;
      v.mx = h.mx.roi(0, y0, c.ow, y1 - y0);
      v.my = h.my.roi(0, y0, c.ow, y1 - y0);
      c.fn(v, out, rc);
      return;
    }
    case RefKind::matmul: {
      Views v = h;
      v.src = h.src.roi(0, y0, c.w, y1 - y0);
      c.fn(v, out, rc);
      return;
    }
    case RefKind::transpose: {
      Views v = h;
      v.src = h.src.roi(y0, 0, y1 - y0, c.h);
      c.fn(v, out, rc);
      return;
    }
    case RefKind::full:
      break;
  }
  throw Error(Status::internal, "bench: full reference goes through ref_full");
}

template <class T>
double as_double(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return double(v);
}
double sample(Depth d, const std::byte* p) {
  switch (d) {
    case Depth::u8:
      return as_double<std::uint8_t>(p);
    case Depth::u16:
      return as_double<std::uint16_t>(p);
    case Depth::s16:
      return as_double<std::int16_t>(p);
    case Depth::s32:
      return as_double<std::int32_t>(p);
    case Depth::f32:
      return as_double<float>(p);
  }
  return NAN;
}

void compare_row(const Case& c, const ConstImageView& got, const ConstImageView& want,
                 std::int64_t y_got, std::int64_t y_want, std::int64_t y_report, CheckResult& r) {
  const Depth d = c.ofmt.depth;
  const std::size_t sb = depth_bytes(d);
  const std::int64_t n = c.ow * c.ofmt.channels;
  const std::byte* g = got.row_ptr(y_got);
  const std::byte* w = want.row_ptr(y_want);
  for (std::int64_t i = 0; i < n; ++i) {
    const double a = sample(d, g + i * sb), b = sample(d, w + i * sb);
    ++r.checked;
    if (std::isnan(a) && std::isnan(b)) continue;
    const double err = std::fabs(a - b);
    const bool ok = err <= c.tol.abs + c.tol.rel * std::fabs(b);
    if (!(err <= r.max_err)) r.max_err = std::isnan(err) ? INFINITY : std::max(r.max_err, err);
    if (!ok) {
      if (r.mismatches == 0) {
        std::ostringstream s;
        s.precision(9);
        s << "first at x=" << i / c.ofmt.channels << " y=" << y_report
          << " c=" << i % c.ofmt.channels << ": got " << a << ", want " << b;
        r.first = s.str();
      }
      ++r.mismatches;
    }
  }
}

/// Destination rows checked: all for small images; for large ones the first and last 4 rows,
/// the middle row and random rows, >= 120k pixels (whole rows, so border columns are in).
std::vector<std::int64_t> check_rows(const Case& c) {
  std::vector<std::int64_t> rows;
  if (c.ow * c.oh <= 4'000'000) {
    for (std::int64_t y = 0; y < c.oh; ++y) rows.push_back(y);
    return rows;
  }
  const std::int64_t want = std::max<std::int64_t>(16, (120000 + c.ow - 1) / c.ow);
  for (std::int64_t y : {std::int64_t(0), std::int64_t(1), std::int64_t(2), std::int64_t(3),
                         c.oh / 2, c.oh - 4, c.oh - 3, c.oh - 2, c.oh - 1})
    rows.push_back(y);
  std::uint64_t st = splitmix(std::hash<std::string>{}(c.name()));
  while (std::int64_t(rows.size()) < want) {
    st = splitmix(st);
    const std::int64_t y = std::int64_t(st % std::uint64_t(c.oh));
    if (std::find(rows.begin(), rows.end(), y) == rows.end()) rows.push_back(y);
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

}  // namespace

CheckResult check_case(const Case& c, const Views& host, const Image& got) {
  CheckResult r;
  if (c.ref == RefKind::full) {
    Image want(c.ow, c.oh, c.ofmt);
    c.fn(host, want, Context{Backend::ref});
    for (std::int64_t y : check_rows(c)) compare_row(c, got, want, y, y, y, r);
    return r;
  }
  const std::vector<std::int64_t> rows = check_rows(c);
  const bool all = std::int64_t(rows.size()) == c.oh;
  // Bands of consecutive rows (all rows) or single sampled rows, in parallel.
  const std::int64_t band = all ? 32 : 1;
  const std::int64_t nb = all ? (c.oh + band - 1) / band : std::int64_t(rows.size());
  std::vector<CheckResult> parts(static_cast<std::size_t>(nb));
  parallel_for(nb, [&](std::int64_t b) {
    const std::int64_t y0 = all ? b * band : rows[std::size_t(b)];
    const std::int64_t y1 = all ? std::min(c.oh, y0 + band) : y0 + 1;
    Image want(c.ow, y1 - y0, c.ofmt);
    ref_rows(c, host, y0, y1, want);
    for (std::int64_t y = y0; y < y1; ++y)
      compare_row(c, got, want, y, y - y0, y, parts[std::size_t(b)]);
  });
  for (auto& p : parts) {
    if (p.mismatches && !r.mismatches) r.first = p.first;
    r.checked += p.checked;
    r.mismatches += p.mismatches;
    r.max_err = std::max(r.max_err, p.max_err);
  }
  return r;
}

CaseViews case_views(const Case& c, Inputs& in) {
  CaseViews v;
  v.in = in.random(c.w, c.h, c.fmt, 1);
  if (c.two_inputs) v.in2 = in.random(c.w2, c.h2, c.fmt, 2);
  if (c.maps) std::tie(v.mx, v.my) = in.maps(c.ow, c.oh);
  v.dev.src = v.in->dev;
  v.host.src = v.in->host;
  if (v.in2) {
    v.dev.src2 = v.in2->dev;
    v.host.src2 = v.in2->host;
  }
  if (v.mx) {
    v.dev.mx = v.mx->dev;
    v.dev.my = v.my->dev;
    v.host.mx = v.mx->host;
    v.host.my = v.my->host;
  }
  return v;
}

// ---- result rows -----------------------------------------------------------------------------

void describe(const Case& c, RowBase& row) {
  row.name = c.name();
  row.op = c.op;
  row.variant = c.variant;
  row.params = c.params;
  row.size = c.size();
  row.fmt = to_string(c.fmt);
  row.out_fmt = to_string(c.ofmt);
  row.in_bytes = c.in_bytes();
  row.out_bytes = c.out_bytes();
  row.out_pixels = double(c.ow) * double(c.oh);
  row.copy_bytes = c.copy_bytes();
  row.tol = c.tol.text();
  row.target = c.target;
}

std::pair<std::string, bool> error_status(const Error& e, const char* backend) {
  const std::string what = e.what();
  if (e.status() == Status::unsupported && what.find("implementation") != std::string::npos)
    return {std::string("n/a (no ") + backend + " kernel)", false};
  if (e.status() == Status::unsupported) return {"n/a (unsupported: " + what + ")", false};
  if (e.status() == Status::internal && what.find("not implemented") != std::string::npos)
    return {"n/a (not implemented: " + what + ")", false};
  return {std::string("error (") + status_name(e.status()) + ": " + what + ")", true};
}

void check_into(const Case& c, const Views& host, const Image& got, RowBase& row) {
  try {
    const CheckResult r = check_case(c, host, got);
    row.checked = r.checked;
    row.mismatches = r.mismatches;
    row.max_err = r.max_err;
    if (r.mismatches) {
      row.check = "FAILED";
      row.check_detail = std::to_string(r.mismatches) + " of " + std::to_string(r.checked) +
                         " samples off (tolerance " + row.tol + "); " + r.first;
      row.failed = true;
    } else {
      row.check = "ok";
      row.check_detail = std::to_string(r.checked) + " samples, " + row.tol;
    }
  } catch (const Error& e) {
    row.check = "n/a (reference: " + std::string(e.what()) + ")";
  }
}

std::string row_json_fields(const RowBase& r) {
  std::ostringstream o;
  o << "\"case\": " << jstr(r.name) << ", \"op\": " << jstr(r.op)
    << ", \"variant\": " << jstr(r.variant) << ", \"params\": " << jstr(r.params)
    << ", \"size\": " << jstr(r.size) << ", \"format\": " << jstr(r.fmt)
    << ", \"out_format\": " << jstr(r.out_fmt) << ", \"status\": " << jstr(r.status)
    << ", \"in_bytes\": " << jnum(r.in_bytes) << ", \"out_bytes\": " << jnum(r.out_bytes)
    << ", \"out_pixels\": " << jnum(r.out_pixels) << ", \"copy_bytes\": " << jnum(r.copy_bytes)
    << ", \"check\": " << jstr(r.check) << ", \"check_detail\": " << jstr(r.check_detail)
    << ", \"checked\": " << r.checked << ", \"mismatches\": " << r.mismatches
    << ", \"max_err\": " << jnum(r.max_err) << ", \"tolerance\": " << jstr(r.tol)
    << ", \"target_us\": " << (r.target.empty() ? "null" : r.target)
    << ", \"failed\": " << (r.failed ? "true" : "false");
  return o.str();
}

}  // namespace pixflow::bench
