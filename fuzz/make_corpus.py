#!/usr/bin/env python3
"""Writes the seed corpus of the decoder targets (fuzz/README.md):

    python3 fuzz/make_corpus.py            # into fuzz/corpus/{png,jpeg,tiff,pnm,npy,read_image}

Small valid files made here byte by byte with the standard library only (zlib for PNG and
deflate TIFF, a baseline JPEG encoder below), so that the corpus does not depend on the codecs
under test. The output is deterministic: running it again gives the same bytes. The seeds of
the pipeline and differential targets come from the op schema instead (pixflow_fuzz_seeds).
"""

import math
import os
import shutil
import struct
import sys
import zlib

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def pattern(w, h, ch, maxval, salt=0):
    """Rows of samples: a varied, deterministic pattern in [0, maxval]."""
    rows = []
    for y in range(h):
        row = []
        for x in range(w):
            for c in range(ch):
                v = (x * 37 + y * 71 + c * 113 + salt * 29 + (x * y) % 7 * 11) % (maxval + 1)
                row.append(v)
        rows.append(row)
    return rows


def write(target, name, data):
    d = os.path.join(ROOT, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


# ---- PNG ---------------------------------------------------------------------------------------

def png_chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def png_filter(raw_rows, bpp):
    """Filters rows with types 0..4 in turn (so every unfilter path runs)."""
    out = bytearray()
    prev = bytes(len(raw_rows[0])) if raw_rows else b""
    for i, row in enumerate(raw_rows):
        t = i % 5
        f = bytearray()
        for k, v in enumerate(row):
            a = row[k - bpp] if k >= bpp else 0
            b = prev[k]
            c = prev[k - bpp] if k >= bpp else 0
            pred = [0, a, b, (a + b) // 2, paeth(a, b, c)][t]
            f.append((v - pred) & 0xFF)
        out += bytes([t]) + f
        prev = row
    return bytes(out)


def pack_row(samples, bit_depth):
    if bit_depth == 16:
        return b"".join(struct.pack(">H", s) for s in samples)
    if bit_depth == 8:
        return bytes(samples)
    per = 8 // bit_depth
    out = bytearray()
    for i in range(0, len(samples), per):
        byte = 0
        group = samples[i:i + per]
        for j in range(per):
            byte <<= bit_depth
            if j < len(group):
                byte |= group[j]
        out.append(byte)
    return bytes(out)


CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}
ADAM7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2),
         (0, 1, 1, 2)]


def png(w, h, color_type, bit_depth, samples=None, plte=None, trns=None, interlace=False,
        extra=b""):
    ch = CHANNELS[color_type]
    maxval = (1 << bit_depth) - 1
    if samples is None:
        samples = pattern(w, h, ch, maxval if color_type != 3 else len(plte) // 3 - 1)
    bpp = max(1, ch * bit_depth // 8)
    if interlace:
        data = b""
        for x0, y0, dx, dy in ADAM7:
            sub = [[samples[y][x * ch + c] for x in range(x0, w, dx) for c in range(ch)]
                   for y in range(y0, h, dy)]
            sub = [r for r in sub if r]
            if sub:
                data += png_filter([pack_row(r, bit_depth) for r in sub], bpp)
    else:
        data = png_filter([pack_row(r, bit_depth) for r in samples], bpp)
    out = b"\x89PNG\r\n\x1a\n"
    out += png_chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, bit_depth, color_type, 0, 0,
                                          1 if interlace else 0))
    out += extra
    if plte is not None:
        out += png_chunk(b"PLTE", plte)
    if trns is not None:
        out += png_chunk(b"tRNS", trns)
    z = zlib.compress(data, 9)
    # Two IDAT chunks: decoders must join them.
    out += png_chunk(b"IDAT", z[:len(z) // 2]) + png_chunk(b"IDAT", z[len(z) // 2:])
    return out + png_chunk(b"IEND", b"")


def make_png():
    palette = bytes(v for i in range(6) for v in (i * 40, 255 - i * 30, (i * 90) % 256))
    files = {
        "gray8.png": png(5, 4, 0, 8),
        "gray16.png": png(4, 3, 0, 16),
        "gray1.png": png(11, 3, 0, 1),
        "gray2.png": png(5, 2, 0, 2),
        "gray4.png": png(3, 5, 0, 4, trns=struct.pack(">H", 3)),
        "rgb8.png": png(6, 5, 2, 8, extra=png_chunk(b"gAMA", struct.pack(">I", 45455))),
        "rgb16.png": png(3, 3, 2, 16, trns=struct.pack(">HHH", 1, 2, 3)),
        "rgba8.png": png(4, 4, 6, 8),
        "rgba16.png": png(2, 3, 6, 16),
        "gray_alpha8.png": png(3, 2, 4, 8),
        "gray_alpha16.png": png(2, 2, 4, 16),
        "palette.png": png(7, 3, 3, 8, plte=palette),
        "palette_trns.png": png(5, 4, 3, 8, plte=palette, trns=bytes([0, 128, 255])),
        "palette4.png": png(9, 2, 3, 4, plte=palette),
        "interlaced_rgb8.png": png(9, 9, 2, 8, interlace=True),
        "interlaced_gray16.png": png(3, 10, 0, 16, interlace=True),
        "one_pixel.png": png(1, 1, 0, 8),
        "text_chunk.png": png(2, 2, 0, 8, extra=png_chunk(b"tEXt", b"Comment\0pixflow fuzz seed")),
    }
    for name, data in files.items():
        write("png", name, data)
    return files


# ---- JPEG (baseline, sequential, Huffman; Annex K tables) --------------------------------------

ZIGZAG = [0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48, 41, 34,
          27, 20, 13, 6, 7, 14, 21, 28, 35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37,
          44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63]
Q_LUMA = [16, 11, 10, 16, 24, 40, 51, 61, 12, 12, 14, 19, 26, 58, 60, 55, 14, 13, 16, 24, 40, 57,
          69, 56, 14, 17, 22, 29, 51, 87, 80, 62, 18, 22, 37, 56, 68, 109, 103, 77, 24, 35, 55,
          64, 81, 104, 113, 92, 49, 64, 78, 87, 103, 121, 120, 101, 72, 92, 95, 98, 112, 100, 103,
          99]
Q_CHROMA = [17, 18, 24, 47, 99, 99, 99, 99, 18, 21, 26, 66, 99, 99, 99, 99, 24, 26, 56, 99, 99, 99,
            99, 99, 47, 66, 99, 99, 99, 99, 99, 99] + [99] * 32
DC_LUMA = ([0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0], list(range(12)))
DC_CHROMA = ([0, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0], list(range(12)))
AC_LUMA = ([0, 2, 1, 3, 3, 2, 4, 3, 5, 5, 4, 4, 0, 0, 1, 0x7d], bytes.fromhex(
    "01020300041105122131410613516107227114328191a1082342b1c11552d1f02433627282090a161718191a"
    "25262728292a3435363738393a434445464748494a535455565758595a636465666768696a73747576777879"
    "7a838485868788898a92939495969798999aa2a3a4a5a6a7a8a9aab2b3b4b5b6b7b8b9bac2c3c4c5c6c7c8c9"
    "cad2d3d4d5d6d7d8d9dae1e2e3e4e5e6e7e8e9eaf1f2f3f4f5f6f7f8f9fa"))
AC_CHROMA = ([0, 2, 1, 2, 4, 4, 3, 4, 7, 5, 4, 4, 0, 1, 2, 0x77], bytes.fromhex(
    "000102031104052131061241510761711322328108144291a1b1c109233352f0156272d10a162434e125f1"
    "1718191a262728292a35363738393a434445464748494a535455565758595a636465666768696a73747576"
    "7778797a82838485868788898a92939495969798999aa2a3a4a5a6a7a8a9aab2b3b4b5b6b7b8b9bac2c3c4"
    "c5c6c7c8c9cad2d3d4d5d6d7d8d9dae2e3e4e5e6e7e8e9eaf2f3f4f5f6f7f8f9fa"))


def huff_codes(table):
    bits, vals = table
    codes, code, k = {}, 0, 0
    for length in range(1, 17):
        for _ in range(bits[length - 1]):
            codes[vals[k]] = (code, length)
            code += 1
            k += 1
        code <<= 1
    return codes


class BitWriter:
    def __init__(self):
        self.out = bytearray()
        self.acc = 0
        self.n = 0

    def put(self, code, length):
        for i in range(length - 1, -1, -1):
            self.acc = (self.acc << 1) | ((code >> i) & 1)
            self.n += 1
            if self.n == 8:
                self.out.append(self.acc)
                if self.acc == 0xFF:
                    self.out.append(0)
                self.acc = self.n = 0

    def flush(self):
        while self.n:
            self.put(1, 1)


def fdct(block):
    out = [0.0] * 64
    for v in range(8):
        for u in range(8):
            s = 0.0
            for y in range(8):
                for x in range(8):
                    s += (block[y * 8 + x] * math.cos((2 * x + 1) * u * math.pi / 16) *
                          math.cos((2 * y + 1) * v * math.pi / 16))
            cu = 1 / math.sqrt(2) if u == 0 else 1
            cv = 1 / math.sqrt(2) if v == 0 else 1
            out[v * 8 + u] = 0.25 * cu * cv * s
    return out


def category(v):
    v = abs(v)
    n = 0
    while v:
        n += 1
        v >>= 1
    return n


def encode_block(bw, coeffs, pred, dc, ac):
    diff = coeffs[0] - pred
    n = category(diff)
    bw.put(*dc[n])
    if n:
        bw.put(diff if diff > 0 else diff + (1 << n) - 1, n)
    run = 0
    for k in range(1, 64):
        v = coeffs[k]
        if v == 0:
            run += 1
            continue
        while run > 15:
            bw.put(*ac[0xF0])
            run -= 16
        n = category(v)
        bw.put(*ac[(run << 4) | n])
        bw.put(v if v > 0 else v + (1 << n) - 1, n)
        run = 0
    if run:
        bw.put(*ac[0x00])
    return coeffs[0]


def marker(code, payload=b""):
    return b"\xff" + bytes([code]) + (struct.pack(">H", len(payload) + 2) + payload
                                      if code not in (0xD8, 0xD9) else b"")


def jpeg(w, h, kind, restart=0):
    """kind: gray, ycc (4:4:4), ycc420, rgb (Adobe transform 0), cmyk (Adobe)."""
    ncomp = {"gray": 1, "ycc": 3, "ycc420": 3, "rgb": 3, "cmyk": 4}[kind]
    src = pattern(w, h, 3 if kind != "cmyk" else 4, 255)

    def comp_sample(c, x, y):
        x, y = min(x, w - 1), min(y, h - 1)
        px = src[y][x * (4 if kind == "cmyk" else 3):][:4]
        r, g, b = px[0], px[1], px[2]
        if kind == "gray":
            return 0.299 * r + 0.587 * g + 0.114 * b
        if kind in ("ycc", "ycc420"):
            return [0.299 * r + 0.587 * g + 0.114 * b,
                    -0.168736 * r - 0.331264 * g + 0.5 * b + 128,
                    0.5 * r - 0.418688 * g - 0.081312 * b + 128][c]
        return px[c]

    sampling = [(2, 2), (1, 1), (1, 1)] if kind == "ycc420" else [(1, 1)] * ncomp
    hmax = max(s[0] for s in sampling)
    vmax = max(s[1] for s in sampling)
    qt = [Q_LUMA] + [Q_CHROMA] * (ncomp - 1) if kind in ("ycc", "ycc420") else [Q_LUMA] * ncomp
    tbl = [0] + [1] * (ncomp - 1) if kind in ("ycc", "ycc420") else [0] * ncomp
    out = marker(0xD8)
    if kind in ("rgb", "cmyk"):
        out += marker(0xEE, b"Adobe" + struct.pack(">HHHB", 100, 0, 0, 0))
    else:
        out += marker(0xE0, b"JFIF\0" + bytes([1, 1, 0]) + struct.pack(">HH", 1, 1) + b"\0\0")
    out += marker(0xDB, b"\x00" + bytes(Q_LUMA[z] for z in ZIGZAG))
    if kind in ("ycc", "ycc420"):
        out += marker(0xDB, b"\x01" + bytes(Q_CHROMA[z] for z in ZIGZAG))
    ids = [ord("R"), ord("G"), ord("B")] if kind == "rgb" else list(range(1, ncomp + 1))
    sof = struct.pack(">BHHB", 8, h, w, ncomp)
    for c in range(ncomp):
        sof += bytes([ids[c], (sampling[c][0] << 4) | sampling[c][1], tbl[c]])
    out += marker(0xC0, sof)
    out += marker(0xC4, b"\x00" + bytes(DC_LUMA[0]) + bytes(DC_LUMA[1]))
    out += marker(0xC4, b"\x10" + bytes(AC_LUMA[0]) + AC_LUMA[1])
    if 1 in tbl:
        out += marker(0xC4, b"\x01" + bytes(DC_CHROMA[0]) + bytes(DC_CHROMA[1]))
        out += marker(0xC4, b"\x11" + bytes(AC_CHROMA[0]) + AC_CHROMA[1])
    if restart:
        out += marker(0xDD, struct.pack(">H", restart))
    sos = bytes([ncomp])
    for c in range(ncomp):
        sos += bytes([ids[c], (tbl[c] << 4) | tbl[c]])
    out += marker(0xDA, sos + b"\x00\x3f\x00")
    dcs = [huff_codes(DC_LUMA), huff_codes(DC_CHROMA)]
    acs = [huff_codes(AC_LUMA), huff_codes(AC_CHROMA)]
    mcu_w, mcu_h = 8 * hmax, 8 * vmax
    mx, my = (w + mcu_w - 1) // mcu_w, (h + mcu_h - 1) // mcu_h
    bw = BitWriter()
    preds = [0] * ncomp
    data = bytearray()
    count = 0
    for j in range(my):
        for i in range(mx):
            if restart and count and count % restart == 0:
                bw.flush()
                data += bw.out + bytes([0xFF, 0xD0 + (count // restart - 1) % 8])
                bw = BitWriter()
                preds = [0] * ncomp
            count += 1
            for c in range(ncomp):
                hs, vs = sampling[c]
                for by in range(vs):
                    for bx in range(hs):
                        block = []
                        for y in range(8):
                            for x in range(8):
                                # the component's pixel (x, y) of this block, averaged over the
                                # full-resolution pixels it covers
                                fx, fy = hmax // hs, vmax // vs
                                px = (i * mcu_w // fx + bx * 8 + x) * fx
                                py = (j * mcu_h // fy + by * 8 + y) * fy
                                s = sum(comp_sample(c, px + a, py + b)
                                        for a in range(fx) for b in range(fy)) / (fx * fy)
                                block.append(s - 128)
                        dct = fdct(block)
                        q = qt[c]
                        coeffs = [int(round(dct[ZIGZAG[k]] / q[ZIGZAG[k]])) for k in range(64)]
                        preds[c] = encode_block(bw, coeffs, preds[c], dcs[tbl[c]], acs[tbl[c]])
    bw.flush()
    data += bw.out
    return out + bytes(data) + marker(0xD9)


def make_jpeg():
    files = {
        "gray.jpg": jpeg(8, 8, "gray"),
        "gray_17x9.jpg": jpeg(17, 9, "gray"),
        "ycc444.jpg": jpeg(9, 8, "ycc"),
        "ycc420.jpg": jpeg(19, 13, "ycc420"),
        "ycc420_restart.jpg": jpeg(33, 17, "ycc420", restart=1),
        "adobe_rgb.jpg": jpeg(8, 9, "rgb"),
        "adobe_cmyk.jpg": jpeg(8, 8, "cmyk"),
    }
    for name, data in files.items():
        write("jpeg", name, data)
    return files


# ---- TIFF --------------------------------------------------------------------------------------

TYPES = {1: "B", 2: "s", 3: "H", 4: "I", 11: "f", 16: "Q"}  # BYTE ASCII SHORT LONG FLOAT LONG8
SIZES = {1: 1, 2: 1, 3: 2, 4: 4, 11: 4, 16: 8}


def tiff(entries, blocks, big_endian=False, bigtiff=False):
    """entries: {tag: (type, [values] or bytes)}; values that are strings 'block:N' become the
    offset of blocks[N]; blocks: byte strings appended after the header."""
    e = ">" if big_endian else "<"
    header_len = 16 if bigtiff else 8
    data = bytearray()
    offsets = []
    for b in blocks:
        if len(data) % 2:
            data.append(0)
        offsets.append(header_len + len(data))
        data += b
    if len(data) % 2:
        data.append(0)
    ifd_offset = header_len + len(data)
    count_fmt, entry_len, inline = ("Q", 20, 8) if bigtiff else ("H", 12, 4)
    n = len(entries)
    ifd = struct.pack(e + count_fmt, n)
    extra = bytearray()
    extra_base = ifd_offset + len(ifd) + n * entry_len + (8 if bigtiff else 4)
    for tag in sorted(entries):
        typ, vals = entries[tag]
        vals = [offsets[int(v[6:])] if isinstance(v, str) else v for v in vals]
        if typ == 2:
            payload = bytes(vals)
        else:
            payload = struct.pack(e + TYPES[typ] * len(vals), *vals)
        count = len(vals)
        if len(payload) <= inline:
            field = payload + bytes(inline - len(payload))
        else:
            if len(extra) % 2:
                extra.append(0)
            field = struct.pack(e + ("Q" if bigtiff else "I"), extra_base + len(extra))
            extra += payload
        ifd += struct.pack(e + "HH" + ("Q" if bigtiff else "I"), tag, typ, count) + field
    ifd += struct.pack(e + ("Q" if bigtiff else "I"), 0)
    order = b"MM" if big_endian else b"II"
    if bigtiff:
        head = order + struct.pack(e + "HHHQ", 43, 8, 0, ifd_offset)
    else:
        head = order + struct.pack(e + "HI", 42, ifd_offset)
    return bytes(head + data + ifd + extra)


def tiff_samples(w, h, spp, kind, big_endian=False):
    fmt = {"u8": "B", "u16": "H", "s16": "h", "f32": "f"}[kind]
    maxval = {"u8": 255, "u16": 65535, "s16": 65535, "f32": 1000}[kind]
    rows = pattern(w, h, spp, maxval)
    e = ">" if big_endian else "<"
    out = bytearray()
    for r in rows:
        if kind == "s16":
            r = [v - 32768 for v in r]
        if kind == "f32":
            r = [v / 7.0 - 50 for v in r]
        out += struct.pack(e + fmt * len(r), *r)
    return bytes(out)


def strip_tiff(w, h, spp, kind, rows_per_strip=None, big_endian=False, compression=1,
               predictor=1, photometric=None, bigtiff=False):
    bps = {"u8": 8, "u16": 16, "s16": 16, "f32": 32}[kind]
    sf = {"u8": 1, "u16": 1, "s16": 2, "f32": 3}[kind]
    pixels = tiff_samples(w, h, spp, kind, big_endian)
    row_bytes = w * spp * bps // 8
    rps = rows_per_strip or h
    strips = []
    for y in range(0, h, rps):
        raw = bytearray(pixels[y * row_bytes:min(h, y + rps) * row_bytes])
        if predictor == 2 and bps == 8:
            for r in range(len(raw) // row_bytes):
                base = r * row_bytes
                for k in range(row_bytes - 1, spp - 1, -1):
                    raw[base + k] = (raw[base + k] - raw[base + k - spp]) & 0xFF
        if compression == 8:
            raw = zlib.compress(bytes(raw), 9)
        elif compression == 32773:  # PackBits: literal runs of at most 128 bytes
            packed = bytearray()
            for i in range(0, len(raw), 128):
                chunk = raw[i:i + 128]
                packed += bytes([len(chunk) - 1]) + chunk
            raw = packed
        strips.append(bytes(raw))
    if photometric is None:
        photometric = 2 if spp >= 3 else 1
    off_type = 16 if bigtiff else 4
    entries = {
        256: (4, [w]), 257: (4, [h]), 258: (3, [bps] * spp), 259: (3, [compression]),
        262: (3, [photometric]), 273: (off_type, ["block:%d" % i for i in range(len(strips))]),
        277: (3, [spp]), 278: (4, [rps]), 279: (4, [len(s) for s in strips]), 284: (3, [1]),
        339: (3, [sf] * spp),
    }
    if spp == 4:
        entries[338] = (3, [2])  # ExtraSamples: unassociated alpha
    if predictor != 1:
        entries[317] = (3, [predictor])
    return tiff(entries, strips, big_endian, bigtiff)


def tiled_tiff(w, h, tw, th):
    pixels = tiff_samples(w, h, 1, "u8")
    tiles = []
    for ty in range(0, h, th):
        for tx in range(0, w, tw):
            t = bytearray()
            for y in range(ty, ty + th):
                for x in range(tx, tx + tw):
                    t.append(pixels[y * w + x] if y < h and x < w else 0)
            tiles.append(bytes(t))
    entries = {
        256: (4, [w]), 257: (4, [h]), 258: (3, [8]), 259: (3, [1]), 262: (3, [1]), 277: (3, [1]),
        284: (3, [1]), 322: (4, [tw]), 323: (4, [th]),
        324: (4, ["block:%d" % i for i in range(len(tiles))]), 325: (4, [len(t) for t in tiles]),
    }
    return tiff(entries, tiles)


def make_tiff():
    files = {
        "gray8.tif": strip_tiff(5, 4, 1, "u8"),
        "gray8_strips.tif": strip_tiff(6, 7, 1, "u8", rows_per_strip=3),
        "rgb8_mm.tif": strip_tiff(4, 3, 3, "u8", big_endian=True),
        "rgba8.tif": strip_tiff(3, 3, 4, "u8"),
        "gray16.tif": strip_tiff(4, 4, 1, "u16"),
        "rgb16_mm.tif": strip_tiff(3, 2, 3, "u16", big_endian=True),
        "s16.tif": strip_tiff(3, 4, 1, "s16"),
        "f32.tif": strip_tiff(4, 2, 1, "f32"),
        "f32_rgb_mm.tif": strip_tiff(2, 2, 3, "f32", big_endian=True),
        "deflate_predictor.tif": strip_tiff(8, 5, 3, "u8", compression=8, predictor=2,
                                            rows_per_strip=2),
        "packbits.tif": strip_tiff(9, 3, 1, "u8", compression=32773),
        "miniswhite.tif": strip_tiff(4, 2, 1, "u8", photometric=0),
        "tiled.tif": tiled_tiff(20, 10, 16, 16),
        "bigtiff.tif": strip_tiff(5, 3, 1, "u8", bigtiff=True),
    }
    for name, data in files.items():
        write("tiff", name, data)
    return files


# ---- PGM/PPM -----------------------------------------------------------------------------------

def pnm(kind, w, h, maxval, comment=False):
    ch = 3 if kind in ("P3", "P6") else 1
    rows = pattern(w, h, ch, maxval)
    head = kind + "\n" + ("# pixflow fuzz seed\n" if comment else "") + "%d %d\n%d\n" % (w, h, maxval)
    if kind in ("P2", "P3"):
        body = "\n".join(" ".join(str(v) for v in r) for r in rows) + "\n"
        return (head + body).encode()
    fmt = ">" + ("B" if maxval < 256 else "H") * (w * ch)
    return head.encode() + b"".join(struct.pack(fmt, *r) for r in rows)


def make_pnm():
    files = {
        "p5_u8.pgm": pnm("P5", 5, 4, 255),
        "p5_maxval100.pgm": pnm("P5", 3, 3, 100, comment=True),
        "p5_u16.pgm": pnm("P5", 4, 2, 1000),
        "p6_u8.ppm": pnm("P6", 3, 4, 255),
        "p6_u16.ppm": pnm("P6", 2, 2, 65535),
        "p2_ascii.pgm": pnm("P2", 4, 3, 15, comment=True),
        "p3_ascii.ppm": pnm("P3", 2, 3, 300),
    }
    for name, data in files.items():
        write("pnm", name, data)
    return files


# ---- NPY ---------------------------------------------------------------------------------------

def npy(descr, shape, version=1, fortran=False):
    code = descr[1:]
    endian = ">" if descr[0] == ">" else "<"
    fmt = {"u1": "B", "u2": "H", "i2": "h", "i4": "i", "f4": "f"}[code]
    h, w = shape[0], shape[1]
    ch = shape[2] if len(shape) == 3 else 1
    maxval = {"u1": 255, "u2": 65535, "i2": 65535, "i4": 100000, "f4": 1000}[code]
    vals = [v for r in pattern(w, h, ch, maxval) for v in r]
    if code == "i2":
        vals = [v - 32768 for v in vals]
    if code == "i4":
        vals = [v * 37 - 1000000 for v in vals]
    if code == "f4":
        vals = [v / 3.0 - 100 for v in vals]
    data = struct.pack(endian + fmt * len(vals), *vals)
    shape_text = "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"
    d = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (
        descr, "True" if fortran else "False", shape_text)
    prefix = 10 if version == 1 else 12
    total = (prefix + len(d) + 1 + 63) // 64 * 64
    d = d + " " * (total - prefix - len(d) - 1) + "\n"
    head = b"\x93NUMPY" + bytes([version, 0])
    head += struct.pack("<H", len(d)) if version == 1 else struct.pack("<I", len(d))
    return head + d.encode("latin-1") + data


def make_npy():
    files = {
        "u8_hw.npy": npy("|u1", (3, 5)),
        "u8_hwc3.npy": npy("|u1", (2, 3, 3)),
        "u16_le.npy": npy("<u2", (4, 2)),
        "u16_be_hwc4.npy": npy(">u2", (2, 2, 4)),
        "s16.npy": npy("<i2", (3, 3)),
        "s32_hwc2.npy": npy("<i4", (2, 3, 2)),
        "f32.npy": npy("<f4", (3, 4)),
        "f32_be_hwc3.npy": npy(">f4", (2, 2, 3)),
        "v2_u8.npy": npy("|u1", (2, 2), version=2),
        "v3_f32.npy": npy("<f4", (1, 3), version=3),
        "fortran.npy": npy("<f4", (2, 2), fortran=True),
    }
    for name, data in files.items():
        write("npy", name, data)
    return files


def main():
    for target in ("png", "jpeg", "tiff", "pnm", "npy", "read_image"):
        shutil.rmtree(os.path.join(ROOT, target), ignore_errors=True)
    made = {"png": make_png(), "jpeg": make_jpeg(), "tiff": make_tiff(), "pnm": make_pnm(),
            "npy": make_npy()}
    # read_image: a few of each, and the signatures it refuses.
    picks = {"png": ["gray8.png", "palette_trns.png", "rgb16.png"],
             "jpeg": ["gray.jpg", "ycc420.jpg"],
             "tiff": ["gray8.tif", "f32.tif", "bigtiff.tif"],
             "pnm": ["p5_u8.pgm", "p3_ascii.ppm"],
             "npy": ["u8_hw.npy", "f32_be_hwc3.npy"]}
    for fmt, names in picks.items():
        for n in names:
            write("read_image", n, made[fmt][n])
    write("read_image", "gif.gif", b"GIF89a\x01\x00\x01\x00\x00\x00\x00;")
    write("read_image", "bmp.bmp", b"BM" + bytes(52))
    total = 0
    for target in made:
        for n in os.listdir(os.path.join(ROOT, target)):
            total += os.path.getsize(os.path.join(ROOT, target, n))
    print("make_corpus: %d files, %d bytes" % (sum(len(f) for f in made.values()), total))


if __name__ == "__main__":
    sys.exit(main())
