// The non-template parts of the schema: value parsers and range checks with the catalogue's
// error messages.
#include "src/schema/schema.hpp"

#include <charconv>
#include <cmath>

#include "src/base/error.hpp"

namespace pixflow::schema {

using detail::cat;
using detail::fail;

std::string join(const std::vector<std::string>& items) {
  std::string s;
  for (const auto& i : items) s += (s.empty() ? "" : ", ") + i;
  return s;
}

namespace {
// Parses the whole text as a number; NaN and infinities parse (so that the message can say
// what they are) and are refused by the callers.
bool parse_double(const std::string& s, double& out) {
  if (s.empty()) return false;
  const char* b = s.data();
  const char* e = b + s.size();
  if (*b == '+') ++b;
  auto [p, ec] = std::from_chars(b, e, out);
  return ec == std::errc() && p == e;
}

// " (got 'nan': not a number)": what a non-finite value is, in words.
std::string got_text(const std::string& text, double v) {
  if (std::isnan(v)) return cat(" (got '", text, "': not a number)");
  if (std::isinf(v)) return cat(" (got '", text, "': infinite)");
  return cat(" (got '", text, "')");
}
}  // namespace

void check_known_key(std::string_view op, const std::vector<Param>& params,
                     const std::string& key) {
  std::vector<std::string> names;
  for (const auto& p : params) {
    if (p.name == key) return;
    names.push_back(p.name);
  }
  fail(Status::invalid_argument, op, "unknown parameter '", key, "' (expected ",
       names.empty() ? std::string("none") : join(names), ")");
}

void check_integer(std::string_view op, const Param& p, long long v) {
  // Integer bounds print as integers (a double would print 2^31 - 1 as 2.14748e+09).
  const auto lo = static_cast<long long>(p.lo), hi = static_cast<long long>(p.hi);
  if (p.odd && p.zero_ok)
    detail::require(v == 0 || (v >= 1 && v <= hi && (v & 1)), Status::invalid_argument, op, p.name,
                    " must be 0 (", p.zero_means, ") or odd and in [1, ", hi, "] (got ", v, ")");
  else if (p.odd)
    detail::require(v >= lo && v <= hi && (v & 1), Status::invalid_argument, op, p.name,
                    " must be odd and in [", lo, ", ", hi, "] (got ", v, ")");
  else
    detail::require(v >= lo && v <= hi, Status::invalid_argument, op, p.name, " must be in [", lo,
                    ", ", hi, "] (got ", v, ")");
}

namespace {
// The range of a number as the messages say it: "in [lo, hi]", "finite and >= lo", "finite".
std::string range_text(const Param& p) {
  const bool lo = p.lo > -kUnbounded, hi = p.hi < kUnbounded;
  if (lo && hi) return cat("in [", p.lo, ", ", p.hi, "]");
  if (lo) return cat("finite and >= ", p.lo);
  if (hi) return cat("finite and <= ", p.hi);
  return "finite";
}
}  // namespace

void check_number(std::string_view op, const Param& p, double v) {
  if (std::isnan(v))
    fail(Status::invalid_argument, op, p.name, " must be ", range_text(p),
         " (got NaN: not a number)");
  detail::require(std::isfinite(v) && v >= p.lo && v <= p.hi, Status::invalid_argument, op, p.name,
                  " must be ", range_text(p), " (got ", v, ")");
}

void check_border(std::string_view op, const Border& b) {
  detail::require(std::isfinite(b.value), Status::invalid_argument, op,
                  "border value must be finite (got ", b.value, ")");
}

long long parse_integer(std::string_view op, const Param& p, const std::string& text) {
  double v = 0;
  const bool parsed = parse_double(text, v);
  if (!parsed || !std::isfinite(v) || v != std::floor(v) || v < p.lo || v > p.hi)
    fail(Status::invalid_argument, op, p.name, " must be an integer in [",
         static_cast<long long>(p.lo), ", ", static_cast<long long>(p.hi), "]",
         parsed ? got_text(text, v) : cat(" (got '", text, "')"));
  const auto i = static_cast<long long>(v);
  if (p.odd) check_integer(op, p, i);
  return i;
}

double parse_number(std::string_view op, const Param& p, const std::string& text) {
  double v = 0;
  const bool parsed = parse_double(text, v);
  if (!parsed || !std::isfinite(v) || v < p.lo || v > p.hi)
    fail(Status::invalid_argument, op, p.name, " must be a number, ", range_text(p),
         parsed ? got_text(text, v) : cat(" (got '", text, "')"));
  return v;
}

bool parse_boolean(std::string_view op, const Param& p, const std::string& text) {
  if (text == "1" || text == "true" || text == "yes") return true;
  if (text == "0" || text == "false" || text == "no") return false;
  fail(Status::invalid_argument, op, p.name, " must be 0 or 1 (got '", text, "')");
}

std::size_t parse_choice(std::string_view op, const Param& p, const std::string& text) {
  for (std::size_t i = 0; i < p.choices.size(); ++i)
    if (p.choices[i] == text) return i;
  fail(Status::invalid_argument, op, p.name, " must be one of ", join(p.choices), " (got '", text,
       "')");
}

}  // namespace pixflow::schema
