// The edge tiles of the packed 3x3 short shape (u8_3x3.cuh, load_edge_tile_short) in 32-bit
// arithmetic, as host + device code so that tests/u8_3x3_edge_test.cpp runs it on the CPU
// against detail::border_index: the border rule on int coordinates (border_index32), the
// source byte of a row byte of u8 x CN (row_byte_index32: the byte's pixel through the rule,
// its channel kept) and its offset in the image (edge_row_offset, edge_byte_offset, read by
// edge_byte). The 64-bit rule
// of the word loader (near_border_index, border_row_byte) called a 64-bit division in every
// general case and kept 64-bit positions live: at the short shape's 32-register bound (8
// blocks a SM) it spilled 8-20 bytes; these are 32-bit (int division inline, no call).
// Range: |p| and len below 2^30 (u8_3x3.cuh launches the packed path only for rows of fewer
// than 2^30 bytes and images of fewer than 2^30 rows, kMaxEdgeCoord).
#pragma once

#include <cstdint>

#include "pixflow/border.hpp"
#include "src/backends/cuda/remap_border.hpp"
#include "src/base/qualifiers.hpp"

namespace pixflow::cuda::u8_3x3_edge {

/// Coordinates (row bytes, rows) of images the 32-bit rule serves: below this, every tile
/// coordinate (up to 160 bytes or 18 rows past the image) and 2 len fit an int.
constexpr long long kMaxEdgeCoord = 1LL << 30;

/// detail::border_index for int p, len (1 <= len < 2^30, |p| < 2^30): the rule of
/// remap_border.hpp (border_index32<kT>, one reflection or shift where p lies at most one
/// period outside, the periodic rule in 32 bits otherwise) picked by a switch on the run-time
/// type; -1 for the constant border. (This was a second copy of that rule.)
PIXFLOW_HD int border_index32(int p, int len, BorderType t) {
  if (p >= 0 && p < len) return p;
  switch (t) {
    case BorderType::replicate:
      return cuda::border_index32<BorderType::replicate>(p, len);
    case BorderType::reflect:
      return cuda::border_index32<BorderType::reflect>(p, len);
    case BorderType::reflect101:
      return cuda::border_index32<BorderType::reflect101>(p, len);
    case BorderType::wrap:
      return cuda::border_index32<BorderType::wrap>(p, len);
    case BorderType::constant:
      return -1;
  }
  return -1;
}

/// border_index32 of the index just outside a line of len >= 1: p = -1 (after = false) or p =
/// len (after = true), in closed form (no division): what the rows8 shape (u8_3x3.cuh) needs
/// of the rule, found at the start of every warp (border_index32's general form there was
/// ~350 dependent instructions before the first load).
PIXFLOW_HD int border_adjacent32(bool after, int len, BorderType t) {
  switch (t) {
    case BorderType::replicate:
    case BorderType::reflect:
      return after ? len - 1 : 0;
    case BorderType::reflect101:
      return len == 1 ? 0 : after ? len - 2 : 1;
    case BorderType::wrap:
      return after ? 0 : len - 1;
    case BorderType::constant:
      return -1;
  }
  return -1;
}

/// The source byte of row byte e (any sign, |e| < 2^30) of a u8 x CN row of w pixels: the
/// byte's pixel floor(e / CN) mapped by the rule, its channel kept; -1 for the constant
/// border (the border value). e inside the row is itself.
template <int CN>
PIXFLOW_HD int row_byte_index32(int e, int w, BorderType t) {
  if (e >= 0 && e < w * CN) return e;
  if constexpr (CN == 1) {
    return border_index32(e, w, t);
  } else {
    const int in = e < 0 ? -1 - e : e;  // e < 0: mirror onto 0.. so the division floors
    const int q = in / CN, r = in - q * CN;
    const int px = e < 0 ? -1 - q : q, ch = e < 0 ? CN - 1 - r : r;
    const int sp = border_index32(px, w, t);
    return sp < 0 ? -1 : sp * CN + ch;
  }
}

/// The offset from the image's first byte of row byte e of a source row through the rule:
/// row_off = sy * stride of the row's source row sy (-1: the constant border's row), e any
/// sign; -1 where the byte is the border value. 32 bits: the image's h * stride < 2^31
/// (launch_3x3_cn takes the short shape only then).
template <int CN>
PIXFLOW_HD int edge_byte_offset(int row_off, int e, int w, BorderType t) {
  const int sx = row_off < 0 ? -1 : row_byte_index32<CN>(e, w, t);
  return sx < 0 ? -1 : row_off + sx;
}

/// The row offset of edge_byte_offset for tile row y (any sign): sy * stride, -1 for the
/// constant border's rows.
PIXFLOW_HD int edge_row_offset(int y, int h, int stride, BorderType t) {
  const int sy = border_index32(y, h, t);
  return sy < 0 ? -1 : sy * stride;
}

/// The byte at an offset of edge_byte_offset: the image's byte, or the border value for -1.
/// byte(o) reads the image's byte at offset o >= 0; it is called at offset 0 for -1 too, so
/// that the read does not depend on the offset's sign (no branch around it: a tile's reads
/// stay in flight together).
template <class Byte>
PIXFLOW_HD std::uint32_t edge_byte(Byte&& byte, int off, std::uint8_t value) {
  const std::uint32_t b = byte(off < 0 ? 0 : off);
  return off < 0 ? value : b;
}

// ---- The rows path of the short shape (u8_3x3.cuh, load_rows_words) -------------------------
// A warp's 32 lanes hold the words b = row bytes bx0 + 4 lane .. + 3 of a block column's 128
// output bytes, one word load a lane a row; a lane's left and right words a, c (bytes x0 - 4 ..
// x0 - 1 and x0 + 4 .. x0 + 7) are its neighbours' b by shuffles, except lane 0's a and lane
// 31's c, outside the warp: each lane loads a second word a row, rows_extra_x (lane 0: bx0 - 4,
// lane 31: bx0 + 128, the others their own b again), and rows_left / rows_right pick it. Only
// block columns whose words all lie inside the row take it (rows_x_inside); the rows go
// through the rule (edge_row_offset; the constant border's rows: a word of the value).

/// Output bytes of a block column (u8_3x3.cuh's kBW) and lanes of a warp.
constexpr int kRowsBW = 128, kRowsLanes = 32;

/// True when block column bx0's words bx0 - 4 .. bx0 + 131 lie inside a row of wc bytes and
/// the rows are 4-byte aligned (word loads): the block takes the rows path.
PIXFLOW_HD bool rows_x_inside(int bx0, int wc, bool aligned4) {
  return aligned4 && bx0 >= 4 && bx0 + kRowsBW + 4 <= wc;
}

/// True when a block's output rows by0 .. by0 + bh - 1 and the row above and below lie inside
/// an image of h rows: its warps take the rows-inside form (offsets by the stride, no rule).
PIXFLOW_HD bool rows_y_inside(int by0, int bh, int h) {
  return by0 >= 1 && by0 + bh + 1 <= h;
}

/// Row byte of lane's second word (see above).
PIXFLOW_HD int rows_extra_x(int bx0, int lane) {
  return lane == 0 ? bx0 - 4 : lane == kRowsLanes - 1 ? bx0 + kRowsBW : bx0 + 4 * lane;
}

/// Offset from the image's first byte of the word at row byte x of the row at row_off
/// (edge_row_offset; -1: the constant border's row, whose loads read offset 0 and are
/// replaced by rows_word).
PIXFLOW_HD int rows_word_offset(int row_off, int x) {
  return row_off < 0 ? 0 : row_off + x;
}

/// A loaded word, or the constant border's word of the value for row_off = -1.
PIXFLOW_HD std::uint32_t rows_word(std::uint32_t loaded, int row_off, std::uint8_t value) {
  return row_off < 0 ? value * 0x01010101u : loaded;
}

/// a of lane: up = lane - 1's b (shuffled up; lane 0 gets its own), extra = its second word.
PIXFLOW_HD std::uint32_t rows_left(std::uint32_t up, std::uint32_t extra, int lane) {
  return lane == 0 ? extra : up;
}

/// c of lane: down = lane + 1's b (shuffled down; lane 31 gets its own).
PIXFLOW_HD std::uint32_t rows_right(std::uint32_t down, std::uint32_t extra, int lane) {
  return lane == kRowsLanes - 1 ? extra : down;
}

}  // namespace pixflow::cuda::u8_3x3_edge
