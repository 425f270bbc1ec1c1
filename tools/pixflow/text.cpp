// Text the tool prints: file names and messages made safe for a terminal line and for JSON
// (docs/cli.md, "Errors" and "Progress").
#include <cstdio>
#include <string>
#include <string_view>

#include "tools/pixflow/cli.hpp"

namespace pixflow::cli {

namespace {

/// Length of the well-formed UTF-8 sequence at s[i] (RFC 3629: no overlongs, no surrogates,
/// nothing above U+10FFFF), or 0 when the byte there does not start one.
std::size_t utf8_length(std::string_view s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const auto cont = [&](std::size_t k) { return i + k < s.size() && (b(k) & 0xc0) == 0x80; };
  const unsigned c = b(0);
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf) return cont(1) ? 2 : 0;
  if (c >= 0xe0 && c <= 0xef) {
    if (!cont(1) || !cont(2)) return 0;
    if (c == 0xe0 && b(1) < 0xa0) return 0;   // overlong
    if (c == 0xed && b(1) >= 0xa0) return 0;  // UTF-16 surrogate
    return 3;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if (c == 0xf0 && b(1) < 0x90) return 0;   // overlong
    if (c == 0xf4 && b(1) >= 0x90) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;
}

std::string hex_escape(unsigned char c, const char* form) {
  char buf[8];
  std::snprintf(buf, sizeof buf, form, unsigned(c));
  return buf;
}

}  // namespace

std::string escape_text(std::string_view s) {
  std::string o;
  o.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const std::size_t n = utf8_length(s, i);
    if (n == 0) {
      o += hex_escape(c, "\\x%02x");
      ++i;
      continue;
    }
    if (n == 1 && (c < 0x20 || c == 0x7f)) {
      o += c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t" : hex_escape(c, "\\x%02x");
      ++i;
      continue;
    }
    o.append(s.substr(i, n));
    i += n;
  }
  return o;
}

std::string json_string(std::string_view s) {
  std::string o = "\"";
  for (std::size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    const std::size_t n = utf8_length(s, i);
    if (n == 0) {  // JSON text is UTF-8: a byte that is not becomes U+FFFD
      o += "\\ufffd";
      ++i;
      continue;
    }
    if (n == 1) {
      if (c == '"')
        o += "\\\"";
      else if (c == '\\')
        o += "\\\\";
      else if (c == '\n')
        o += "\\n";
      else if (c == '\r')
        o += "\\r";
      else if (c == '\t')
        o += "\\t";
      else if (c < 0x20 || c == 0x7f)
        o += hex_escape(c, "\\u%04x");
      else
        o += char(c);
    } else {
      o.append(s.substr(i, n));
    }
    i += n;
  }
  return o + "\"";
}

}  // namespace pixflow::cli
