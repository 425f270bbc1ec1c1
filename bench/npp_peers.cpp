// NPP equivalents of the pixflow-bench cases (CUDA 13: only the _Ctx variants exist).
// Signatures were taken from the CUDA 13.0 headers of the GPU machine (nppi_*.h). Every call
// returns its NppStatus as text; failures become "n/a" rows, never a crash.
#include "bench/peers.hpp"

#if PIXFLOW_HAVE_NPP

#include <npp.h>

#include <cmath>
#include <cstdint>
#include <vector>

namespace pixflow_bench {
namespace {

std::string npp_error(const char* fn, NppStatus st) {
  if (st >= 0) return "";  // NPP_SUCCESS or a warning (positive codes)
  return std::string(fn) + " returned NppStatus " + std::to_string(static_cast<int>(st));
}

std::string cuda_error(const char* what, cudaError_t e) {
  if (e == cudaSuccess) return "";
  (void)cudaGetLastError();
  return std::string(what) + ": " + cudaGetErrorName(e);
}

// The stream context NPP would get from the (removed) nppGetStreamContext.
std::string make_ctx(cudaStream_t s, NppStreamContext& c) {
  c = NppStreamContext{};
  c.hStream = s;
  std::string err = cuda_error("cudaGetDevice", cudaGetDevice(&c.nCudaDeviceId));
  if (!err.empty()) return err;
  cudaDeviceProp p{};
  err = cuda_error("cudaGetDeviceProperties", cudaGetDeviceProperties(&p, c.nCudaDeviceId));
  if (!err.empty()) return err;
  c.nMultiProcessorCount = p.multiProcessorCount;
  c.nMaxThreadsPerMultiProcessor = p.maxThreadsPerMultiProcessor;
  c.nMaxThreadsPerBlock = p.maxThreadsPerBlock;
  c.nSharedMemPerBlock = p.sharedMemPerBlock;
  err = cuda_error("cudaDeviceGetAttribute",
                   cudaDeviceGetAttribute(&c.nCudaDevAttrComputeCapabilityMajor,
                                          cudaDevAttrComputeCapabilityMajor, c.nCudaDeviceId));
  if (!err.empty()) return err;
  err = cuda_error("cudaDeviceGetAttribute",
                   cudaDeviceGetAttribute(&c.nCudaDevAttrComputeCapabilityMinor,
                                          cudaDevAttrComputeCapabilityMinor, c.nCudaDeviceId));
  if (!err.empty()) return err;
  return cuda_error("cudaStreamGetFlags", cudaStreamGetFlags(s, &c.nStreamFlags));
}

// Device buffers owned by one PeerLaunch.
struct State {
  std::vector<void*> bufs;
  ~State() {
    for (void* p : bufs) (void)cudaFree(p);
  }
  void* alloc(std::size_t bytes, std::string& err) {
    void* p = nullptr;
    err = cuda_error("cudaMalloc", cudaMalloc(&p, bytes ? bytes : 1));
    if (!err.empty()) return nullptr;
    bufs.push_back(p);
    return p;
  }
};

std::size_t sample_bytes(PDepth d) {
  return d == PDepth::u8 ? 1 : d == PDepth::s16 ? 2 : 4;
}

// NPP functions without a border mode read outside the ROI: give them a copy of the source
// inside a zero margin of `pad` pixels, so that they compute the same number of pixels as the
// pixflow case without reading out of bounds.
PeerImage padded_copy(const PeerImage& s, int pad, cudaStream_t stream, State& st,
                      std::string& err) {
  const std::size_t px = sample_bytes(s.depth) * std::size_t(s.channels);
  const std::size_t pitch = (std::size_t(s.width) + 2 * std::size_t(pad)) * px;
  const std::size_t rows = std::size_t(s.height) + 2 * std::size_t(pad);
  auto* base = static_cast<unsigned char*>(st.alloc(pitch * rows, err));
  if (!base) return {};
  err = cuda_error("cudaMemsetAsync", cudaMemsetAsync(base, 0, pitch * rows, stream));
  if (!err.empty()) return {};
  unsigned char* centre = base + std::size_t(pad) * pitch + std::size_t(pad) * px;
  err = cuda_error(
      "cudaMemcpy2DAsync",
      cudaMemcpy2DAsync(centre, pitch, s.data, std::size_t(s.stride), std::size_t(s.width) * px,
                        std::size_t(s.height), cudaMemcpyDeviceToDevice, stream));
  if (!err.empty()) return {};
  err = cuda_error("cudaStreamSynchronize", cudaStreamSynchronize(stream));
  PeerImage r = s;
  r.data = centre;
  r.stride = static_cast<long long>(pitch);
  return r;
}

bool mask_size(int k, NppiMaskSize& m) {
  switch (k) {
    case 3:
      m = NPP_MASK_SIZE_3_X_3;
      return true;
    case 5:
      m = NPP_MASK_SIZE_5_X_5;
      return true;
    case 7:
      m = NPP_MASK_SIZE_7_X_7;
      return true;
    case 9:
      m = NPP_MASK_SIZE_9_X_9;
      return true;
    case 11:
      m = NPP_MASK_SIZE_11_X_11;
      return true;
    case 13:
      m = NPP_MASK_SIZE_13_X_13;
      return true;
    case 15:
      m = NPP_MASK_SIZE_15_X_15;
      return true;
    default:
      return false;
  }
}

template <class T>
T* ptr(const PeerImage& i) {
  return static_cast<T*>(i.data);
}
int step(const PeerImage& i) {
  return static_cast<int>(i.stride);
}

enum class Fmt { u8c1, u8c3, f32c1, f32c3, other };
Fmt fmt_of(const PeerImage& i) {
  if (i.depth == PDepth::u8 && i.channels == 1) return Fmt::u8c1;
  if (i.depth == PDepth::u8 && i.channels == 3) return Fmt::u8c3;
  if (i.depth == PDepth::f32 && i.channels == 1) return Fmt::f32c1;
  if (i.depth == PDepth::f32 && i.channels == 3) return Fmt::f32c3;
  return Fmt::other;
}

#define PF_NPP(fn, ...) npp_error(#fn, fn(__VA_ARGS__))

PeerLaunch none(const std::string& why) {
  PeerLaunch l;
  l.note = why;
  return l;
}

}  // namespace

bool npp_compiled() {
  return true;
}

PeerLaunch make_npp_peer(const PeerCase& c) {
  NppStreamContext ctx;
  std::string err = make_ctx(c.stream, ctx);
  if (!err.empty()) return none(err);
  auto st = std::make_shared<State>();
  PeerLaunch l;
  l.state = st;
  const PeerImage s = c.src, s2 = c.src2, d = c.dst;
  const Fmt f = fmt_of(s);
  const NppiSize roi{s.width, s.height};
  const NppiPoint origin{0, 0};
  const NppiPoint anchor{c.kw / 2, c.kh / 2};
  const NppiSize mask{c.kw, c.kh};

  if (c.op == "median") {
    const PeerImage p =
        padded_copy(s, c.kw / 2 > c.kh / 2 ? c.kw / 2 : c.kh / 2, c.stream, *st, err);
    if (!err.empty()) return none(err);
    Npp32u bytes = 0;
    Npp8u* buf = nullptr;
    auto get_buf = [&](NppStatus gs) {
      err = npp_error("nppiFilterMedianGetBufferSize", gs);
      if (err.empty()) buf = static_cast<Npp8u*>(st->alloc(bytes, err));
    };
    l.note = "no border mode: source copied into a zero margin";
    switch (f) {
      case Fmt::u8c1:
        get_buf(nppiFilterMedianGetBufferSize_8u_C1R_Ctx(roi, mask, &bytes, ctx));
        if (!err.empty()) return none(err);
        l.name = "nppiFilterMedian_8u_C1R_Ctx";
        l.launch = [=] {
          return PF_NPP(nppiFilterMedian_8u_C1R_Ctx, ptr<const Npp8u>(p), step(p), ptr<Npp8u>(d),
                        step(d), roi, mask, anchor, buf, ctx);
        };
        break;
      case Fmt::u8c3:
        get_buf(nppiFilterMedianGetBufferSize_8u_C3R_Ctx(roi, mask, &bytes, ctx));
        if (!err.empty()) return none(err);
        l.name = "nppiFilterMedian_8u_C3R_Ctx";
        l.launch = [=] {
          return PF_NPP(nppiFilterMedian_8u_C3R_Ctx, ptr<const Npp8u>(p), step(p), ptr<Npp8u>(d),
                        step(d), roi, mask, anchor, buf, ctx);
        };
        break;
      case Fmt::f32c1:
        get_buf(nppiFilterMedianGetBufferSize_32f_C1R_Ctx(roi, mask, &bytes, ctx));
        if (!err.empty()) return none(err);
        l.name = "nppiFilterMedian_32f_C1R_Ctx";
        l.launch = [=] {
          return PF_NPP(nppiFilterMedian_32f_C1R_Ctx, ptr<const Npp32f>(p), step(p), ptr<Npp32f>(d),
                        step(d), roi, mask, anchor, buf, ctx);
        };
        break;
      default:
        return none("no NPP median for this format");
    }
    return l;
  }

  if (c.op == "dilate" || c.op == "erode") {
    const PeerImage p =
        padded_copy(s, c.kw / 2 > c.kh / 2 ? c.kw / 2 : c.kh / 2, c.stream, *st, err);
    if (!err.empty()) return none(err);
    const std::size_t mbytes = std::size_t(c.kw) * std::size_t(c.kh);
    auto* m = static_cast<Npp8u*>(st->alloc(mbytes, err));
    if (!err.empty()) return none(err);
    const std::vector<Npp8u> ones(mbytes, 1);
    err = cuda_error("cudaMemcpy", cudaMemcpy(m, ones.data(), mbytes, cudaMemcpyHostToDevice));
    if (!err.empty()) return none(err);
    l.note = "no border mode: source copied into a zero margin";
    const bool dil = c.op == "dilate";
    switch (f) {
      case Fmt::u8c1:
        l.name = dil ? "nppiDilate_8u_C1R_Ctx" : "nppiErode_8u_C1R_Ctx";
        l.launch = [=] {
          return dil ? PF_NPP(nppiDilate_8u_C1R_Ctx, ptr<const Npp8u>(p), step(p), ptr<Npp8u>(d),
                              step(d), roi, m, mask, anchor, ctx)
                     : PF_NPP(nppiErode_8u_C1R_Ctx, ptr<const Npp8u>(p), step(p), ptr<Npp8u>(d),
                              step(d), roi, m, mask, anchor, ctx);
        };
        break;
      case Fmt::u8c3:
        l.name = dil ? "nppiDilate_8u_C3R_Ctx" : "nppiErode_8u_C3R_Ctx";
        l.launch = [=] {
          return dil ? PF_NPP(nppiDilate_8u_C3R_Ctx, ptr<const Npp8u>(p), step(p), ptr<Npp8u>(d),
                              step(d), roi, m, mask, anchor, ctx)
                     : PF_NPP(nppiErode_8u_C3R_Ctx, ptr<const Npp8u>(p), step(p), ptr<Npp8u>(d),
                              step(d), roi, m, mask, anchor, ctx);
        };
        break;
      case Fmt::f32c1:
        l.name = dil ? "nppiDilate_32f_C1R_Ctx" : "nppiErode_32f_C1R_Ctx";
        l.launch = [=] {
          return dil ? PF_NPP(nppiDilate_32f_C1R_Ctx, ptr<const Npp32f>(p), step(p), ptr<Npp32f>(d),
                              step(d), roi, m, mask, anchor, ctx)
                     : PF_NPP(nppiErode_32f_C1R_Ctx, ptr<const Npp32f>(p), step(p), ptr<Npp32f>(d),
                              step(d), roi, m, mask, anchor, ctx);
        };
        break;
      default:
        return none("no NPP morphology for this format");
    }
    return l;
  }

  if (c.op == "box") {
    l.note = "NPP border: replicate";
    switch (f) {
      case Fmt::u8c1:
        l.name = "nppiFilterBoxBorder_8u_C1R_Ctx";
        l.launch = [=] {
          return PF_NPP(nppiFilterBoxBorder_8u_C1R_Ctx, ptr<const Npp8u>(s), step(s), roi, origin,
                        ptr<Npp8u>(d), step(d), roi, mask, anchor, NPP_BORDER_REPLICATE, ctx);
        };
        break;
      case Fmt::u8c3:
        l.name = "nppiFilterBoxBorder_8u_C3R_Ctx";
        l.launch = [=] {
          return PF_NPP(nppiFilterBoxBorder_8u_C3R_Ctx, ptr<const Npp8u>(s), step(s), roi, origin,
                        ptr<Npp8u>(d), step(d), roi, mask, anchor, NPP_BORDER_REPLICATE, ctx);
        };
        break;
      case Fmt::f32c1:
        l.name = "nppiFilterBoxBorder_32f_C1R_Ctx";
        l.launch = [=] {
          return PF_NPP(nppiFilterBoxBorder_32f_C1R_Ctx, ptr<const Npp32f>(s), step(s), roi, origin,
                        ptr<Npp32f>(d), step(d), roi, mask, anchor, NPP_BORDER_REPLICATE, ctx);
        };
        break;
      default:
        return none("no NPP box filter for this format");
    }
    return l;
  }

  if (c.op == "gaussian") {
    NppiMaskSize ms = NPP_MASK_SIZE_3_X_3;
    if (c.kw != c.kh || !mask_size(c.kw, ms))
      return none("NPP Gaussian masks are 3x3..15x15 only (case needs " + std::to_string(c.kw) +
                  "x" + std::to_string(c.kh) + ")");
    l.note = "NPP fixed-sigma mask " + std::to_string(c.kw) + "x" + std::to_string(c.kh) +
             ", border replicate";
    switch (f) {
      case Fmt::u8c1:
        l.name = "nppiFilterGaussBorder_8u_C1R_Ctx";
        l.launch = [=] {
          return PF_NPP(nppiFilterGaussBorder_8u_C1R_Ctx, ptr<const Npp8u>(s), step(s), roi, origin,
                        ptr<Npp8u>(d), step(d), roi, ms, NPP_BORDER_REPLICATE, ctx);
        };
        break;
      case Fmt::u8c3:
        l.name = "nppiFilterGaussBorder_8u_C3R_Ctx";
        l.launch = [=] {
          return PF_NPP(nppiFilterGaussBorder_8u_C3R_Ctx, ptr<const Npp8u>(s), step(s), roi, origin,
                        ptr<Npp8u>(d), step(d), roi, ms, NPP_BORDER_REPLICATE, ctx);
        };
        break;
      case Fmt::f32c1:
        l.name = "nppiFilterGaussBorder_32f_C1R_Ctx";
        l.launch = [=] {
          return PF_NPP(nppiFilterGaussBorder_32f_C1R_Ctx, ptr<const Npp32f>(s), step(s), roi,
                        origin, ptr<Npp32f>(d), step(d), roi, ms, NPP_BORDER_REPLICATE, ctx);
        };
        break;
      default:
        return none("no NPP Gaussian for this format");
    }
    return l;
  }

  if (c.op == "sobel" || c.op == "scharr") {
    const bool sob = c.op == "sobel";
    l.note = "NPP *Vert* filter (d/dx), border replicate";
    if (f == Fmt::u8c1 && d.depth == PDepth::s16) {
      if (sob) {
        l.name = "nppiFilterSobelVertBorder_8u16s_C1R_Ctx";
        l.launch = [=] {
          return PF_NPP(nppiFilterSobelVertBorder_8u16s_C1R_Ctx, ptr<const Npp8u>(s), step(s), roi,
                        origin, ptr<Npp16s>(d), step(d), roi, NPP_MASK_SIZE_3_X_3,
                        NPP_BORDER_REPLICATE, ctx);
        };
      } else {
        l.name = "nppiFilterScharrVertBorder_8u16s_C1R_Ctx";
        l.launch = [=] {
          return PF_NPP(nppiFilterScharrVertBorder_8u16s_C1R_Ctx, ptr<const Npp8u>(s), step(s), roi,
                        origin, ptr<Npp16s>(d), step(d), roi, NPP_BORDER_REPLICATE, ctx);
        };
      }
      return l;
    }
    if (f == Fmt::f32c1 && d.depth == PDepth::f32) {
      if (sob) {
        l.name = "nppiFilterSobelVertBorder_32f_C1R_Ctx";
        l.launch = [=] {
          return PF_NPP(nppiFilterSobelVertBorder_32f_C1R_Ctx, ptr<const Npp32f>(s), step(s), roi,
                        origin, ptr<Npp32f>(d), step(d), roi, NPP_BORDER_REPLICATE, ctx);
        };
      } else {
        l.name = "nppiFilterScharrVertBorder_32f_C1R_Ctx";
        l.launch = [=] {
          return PF_NPP(nppiFilterScharrVertBorder_32f_C1R_Ctx, ptr<const Npp32f>(s), step(s), roi,
                        origin, ptr<Npp32f>(d), step(d), roi, NPP_BORDER_REPLICATE, ctx);
        };
      }
      return l;
    }
    return none("no NPP derivative for this format");
  }

  if (c.op == "filter2d") {
    if (!c.kernel) return none("no kernel");
    const std::size_t kbytes = std::size_t(c.kw) * std::size_t(c.kh) * sizeof(Npp32f);
    auto* k = static_cast<Npp32f*>(st->alloc(kbytes, err));
    if (!err.empty()) return none(err);
    err = cuda_error("cudaMemcpy", cudaMemcpy(k, c.kernel, kbytes, cudaMemcpyHostToDevice));
    if (!err.empty()) return none(err);
    l.note = "NPP convolves (kernel flipped), border replicate";
    switch (f) {
      case Fmt::u8c1:
        l.name = "nppiFilterBorder32f_8u_C1R_Ctx";
        l.launch = [=] {
          return PF_NPP(nppiFilterBorder32f_8u_C1R_Ctx, ptr<const Npp8u>(s), step(s), roi, origin,
                        ptr<Npp8u>(d), step(d), roi, k, mask, anchor, NPP_BORDER_REPLICATE, ctx);
        };
        break;
      case Fmt::u8c3:
        l.name = "nppiFilterBorder32f_8u_C3R_Ctx";
        l.launch = [=] {
          return PF_NPP(nppiFilterBorder32f_8u_C3R_Ctx, ptr<const Npp8u>(s), step(s), roi, origin,
                        ptr<Npp8u>(d), step(d), roi, k, mask, anchor, NPP_BORDER_REPLICATE, ctx);
        };
        break;
      case Fmt::f32c1:
        l.name = "nppiFilterBorder_32f_C1R_Ctx";
        l.launch = [=] {
          return PF_NPP(nppiFilterBorder_32f_C1R_Ctx, ptr<const Npp32f>(s), step(s), roi, origin,
                        ptr<Npp32f>(d), step(d), roi, k, mask, anchor, NPP_BORDER_REPLICATE, ctx);
        };
        break;
      default:
        return none("no NPP filter for this format");
    }
    return l;
  }

  if (c.op == "bilateral") {
    const int r = c.d / 2;
    const Npp32f vs = static_cast<Npp32f>(c.sigma_color * c.sigma_color);
    const Npp32f ps = static_cast<Npp32f>(c.sigma_space * c.sigma_space);
    l.note = "radius " + std::to_string(r) + ", border replicate";
    switch (f) {
      case Fmt::u8c1:
        l.name = "nppiFilterBilateralGaussBorder_8u_C1R_Ctx";
        l.launch = [=] {
          return PF_NPP(nppiFilterBilateralGaussBorder_8u_C1R_Ctx, ptr<const Npp8u>(s), step(s),
                        roi, origin, ptr<Npp8u>(d), step(d), roi, r, 1, vs, ps,
                        NPP_BORDER_REPLICATE, ctx);
        };
        break;
      case Fmt::u8c3:
        l.name = "nppiFilterBilateralGaussBorder_8u_C3R_Ctx";
        l.launch = [=] {
          return PF_NPP(nppiFilterBilateralGaussBorder_8u_C3R_Ctx, ptr<const Npp8u>(s), step(s),
                        roi, origin, ptr<Npp8u>(d), step(d), roi, r, 1, vs, ps,
                        NPP_BORDER_REPLICATE, ctx);
        };
        break;
      case Fmt::f32c1:
        l.name = "nppiFilterBilateralGaussBorder_32f_C1R_Ctx";
        l.launch = [=] {
          return PF_NPP(nppiFilterBilateralGaussBorder_32f_C1R_Ctx, ptr<const Npp32f>(s), step(s),
                        roi, origin, ptr<Npp32f>(d), step(d), roi, r, 1, vs, ps,
                        NPP_BORDER_REPLICATE, ctx);
        };
        break;
      default:
        return none("no NPP bilateral for this format");
    }
    return l;
  }

  if (c.op == "remap") {
    const NppiRect sroi{0, 0, s.width, s.height};
    const NppiSize droi{d.width, d.height};
    const PeerImage mx = c.map_x, my = c.map_y;
    l.note = "NPPI_INTER_LINEAR";
    switch (f) {
      case Fmt::u8c1:
        l.name = "nppiRemap_8u_C1R_Ctx";
        l.launch = [=] {
          return PF_NPP(nppiRemap_8u_C1R_Ctx, ptr<const Npp8u>(s), roi, step(s), sroi,
                        ptr<const Npp32f>(mx), step(mx), ptr<const Npp32f>(my), step(my),
                        ptr<Npp8u>(d), step(d), droi, NPPI_INTER_LINEAR, ctx);
        };
        break;
      case Fmt::u8c3:
        l.name = "nppiRemap_8u_C3R_Ctx";
        l.launch = [=] {
          return PF_NPP(nppiRemap_8u_C3R_Ctx, ptr<const Npp8u>(s), roi, step(s), sroi,
                        ptr<const Npp32f>(mx), step(mx), ptr<const Npp32f>(my), step(my),
                        ptr<Npp8u>(d), step(d), droi, NPPI_INTER_LINEAR, ctx);
        };
        break;
      case Fmt::f32c1:
        l.name = "nppiRemap_32f_C1R_Ctx";
        l.launch = [=] {
          return PF_NPP(nppiRemap_32f_C1R_Ctx, ptr<const Npp32f>(s), roi, step(s), sroi,
                        ptr<const Npp32f>(mx), step(mx), ptr<const Npp32f>(my), step(my),
                        ptr<Npp32f>(d), step(d), droi, NPPI_INTER_LINEAR, ctx);
        };
        break;
      default:
        return none("no NPP remap for this format");
    }
    return l;
  }

  if (c.op == "resize") {
    // NPP's rules are not OpenCV's EXACT ones (speed comparison only): linear = LINEAR,
    // nearest = NN, area = SUPER (NPP's supersampling, for shrinking; SUPER cannot enlarge).
    const int interp = c.interp == "nearest" ? NPPI_INTER_NN
                       : c.interp == "area"  ? NPPI_INTER_SUPER
                                             : NPPI_INTER_LINEAR;
    l.note = c.interp == "nearest" ? "NPPI_INTER_NN"
             : c.interp == "area"  ? "NPPI_INTER_SUPER"
                                   : "NPPI_INTER_LINEAR";
    if (interp == NPPI_INTER_SUPER && (d.width > s.width || d.height > s.height))
      return none("NPPI_INTER_SUPER only shrinks");
    const NppiRect sroi{0, 0, s.width, s.height};
    const NppiSize dsize{d.width, d.height};
    const NppiRect droi{0, 0, d.width, d.height};
    switch (f) {
      case Fmt::u8c1:
        l.name = "nppiResize_8u_C1R_Ctx";
        l.launch = [=] {
          return PF_NPP(nppiResize_8u_C1R_Ctx, ptr<const Npp8u>(s), step(s), roi, sroi,
                        ptr<Npp8u>(d), step(d), dsize, droi, interp, ctx);
        };
        break;
      case Fmt::u8c3:
        l.name = "nppiResize_8u_C3R_Ctx";
        l.launch = [=] {
          return PF_NPP(nppiResize_8u_C3R_Ctx, ptr<const Npp8u>(s), step(s), roi, sroi,
                        ptr<Npp8u>(d), step(d), dsize, droi, interp, ctx);
        };
        break;
      case Fmt::f32c1:
        l.name = "nppiResize_32f_C1R_Ctx";
        l.launch = [=] {
          return PF_NPP(nppiResize_32f_C1R_Ctx, ptr<const Npp32f>(s), step(s), roi, sroi,
                        ptr<Npp32f>(d), step(d), dsize, droi, interp, ctx);
        };
        break;
      default:
        return none("no NPP resize for this format");
    }
    return l;
  }

  if (c.op == "transpose") {
    switch (f) {
      case Fmt::u8c1:
        l.name = "nppiTranspose_8u_C1R_Ctx";
        l.launch = [=] {
          return PF_NPP(nppiTranspose_8u_C1R_Ctx, ptr<const Npp8u>(s), step(s), ptr<Npp8u>(d),
                        step(d), roi, ctx);
        };
        break;
      case Fmt::u8c3:
        l.name = "nppiTranspose_8u_C3R_Ctx";
        l.launch = [=] {
          return PF_NPP(nppiTranspose_8u_C3R_Ctx, ptr<const Npp8u>(s), step(s), ptr<Npp8u>(d),
                        step(d), roi, ctx);
        };
        break;
      case Fmt::f32c1:
        l.name = "nppiTranspose_32f_C1R_Ctx";
        l.launch = [=] {
          return PF_NPP(nppiTranspose_32f_C1R_Ctx, ptr<const Npp32f>(s), step(s), ptr<Npp32f>(d),
                        step(d), roi, ctx);
        };
        break;
      default:
        return none("no NPP transpose for this format");
    }
    return l;
  }

  // Geometry: flip (and rotate 180) by nppiMirror; crop by nppiCopy from the rectangle's
  // first pixel; pad by nppiCopyConstBorder / CopyReplicateBorder / CopyWrapBorder (no
  // reflect modes in NPP). rotate 90 / 270 has no one-call NPP equivalent.
  if (c.op == "flip" || (c.op == "rotate" && c.angle == 180)) {
    const NppiAxis axis = c.op == "rotate" || c.mode == "both" ? NPP_BOTH_AXIS
                          : c.mode == "v"                      ? NPP_HORIZONTAL_AXIS
                                                               : NPP_VERTICAL_AXIS;
    switch (f) {
      case Fmt::u8c1:
        l.name = "nppiMirror_8u_C1R_Ctx";
        l.launch = [=] {
          return PF_NPP(nppiMirror_8u_C1R_Ctx, ptr<const Npp8u>(s), step(s), ptr<Npp8u>(d), step(d),
                        roi, axis, ctx);
        };
        break;
      case Fmt::u8c3:
        l.name = "nppiMirror_8u_C3R_Ctx";
        l.launch = [=] {
          return PF_NPP(nppiMirror_8u_C3R_Ctx, ptr<const Npp8u>(s), step(s), ptr<Npp8u>(d), step(d),
                        roi, axis, ctx);
        };
        break;
      case Fmt::f32c1:
        l.name = "nppiMirror_32f_C1R_Ctx";
        l.launch = [=] {
          return PF_NPP(nppiMirror_32f_C1R_Ctx, ptr<const Npp32f>(s), step(s), ptr<Npp32f>(d),
                        step(d), roi, axis, ctx);
        };
        break;
      default:
        return none("no NPP mirror for this format");
    }
    return l;
  }
  if (c.op == "rotate") return none("no NPP rotate by 90 / 270 in one call");

  if (c.op == "crop") {
    const std::size_t px = sample_bytes(s.depth) * std::size_t(s.channels);
    const void* first = static_cast<const unsigned char*>(s.data) + std::size_t(c.y) * s.stride +
                        std::size_t(c.x) * px;
    const NppiSize droi{d.width, d.height};
    switch (f) {
      case Fmt::u8c1:
        l.name = "nppiCopy_8u_C1R_Ctx";
        l.launch = [=] {
          return PF_NPP(nppiCopy_8u_C1R_Ctx, static_cast<const Npp8u*>(first), step(s),
                        ptr<Npp8u>(d), step(d), droi, ctx);
        };
        break;
      case Fmt::u8c3:
        l.name = "nppiCopy_8u_C3R_Ctx";
        l.launch = [=] {
          return PF_NPP(nppiCopy_8u_C3R_Ctx, static_cast<const Npp8u*>(first), step(s),
                        ptr<Npp8u>(d), step(d), droi, ctx);
        };
        break;
      case Fmt::f32c1:
        l.name = "nppiCopy_32f_C1R_Ctx";
        l.launch = [=] {
          return PF_NPP(nppiCopy_32f_C1R_Ctx, static_cast<const Npp32f*>(first), step(s),
                        ptr<Npp32f>(d), step(d), droi, ctx);
        };
        break;
      default:
        return none("no NPP copy for this format");
    }
    return l;
  }

  if (c.op == "pad") {
    const NppiSize droi{d.width, d.height};
    const int top = c.top, left = c.left;
    if (c.border == "constant") {
      l.note = "constant 0";
      switch (f) {
        case Fmt::u8c1:
          l.name = "nppiCopyConstBorder_8u_C1R_Ctx";
          l.launch = [=] {
            return PF_NPP(nppiCopyConstBorder_8u_C1R_Ctx, ptr<const Npp8u>(s), step(s), roi,
                          ptr<Npp8u>(d), step(d), droi, top, left, Npp8u(0), ctx);
          };
          break;
        case Fmt::u8c3:
          l.name = "nppiCopyConstBorder_8u_C3R_Ctx";
          l.launch = [=] {
            const Npp8u zero[3] = {0, 0, 0};
            return PF_NPP(nppiCopyConstBorder_8u_C3R_Ctx, ptr<const Npp8u>(s), step(s), roi,
                          ptr<Npp8u>(d), step(d), droi, top, left, zero, ctx);
          };
          break;
        case Fmt::f32c1:
          l.name = "nppiCopyConstBorder_32f_C1R_Ctx";
          l.launch = [=] {
            return PF_NPP(nppiCopyConstBorder_32f_C1R_Ctx, ptr<const Npp32f>(s), step(s), roi,
                          ptr<Npp32f>(d), step(d), droi, top, left, Npp32f(0), ctx);
          };
          break;
        default:
          return none("no NPP constant border copy for this format");
      }
      return l;
    }
    if (c.border == "replicate" && f == Fmt::u8c1) {
      l.name = "nppiCopyReplicateBorder_8u_C1R_Ctx";
      l.launch = [=] {
        return PF_NPP(nppiCopyReplicateBorder_8u_C1R_Ctx, ptr<const Npp8u>(s), step(s), roi,
                      ptr<Npp8u>(d), step(d), droi, top, left, ctx);
      };
      return l;
    }
    if (c.border == "wrap" && f == Fmt::u8c1) {
      l.name = "nppiCopyWrapBorder_8u_C1R_Ctx";
      l.launch = [=] {
        return PF_NPP(nppiCopyWrapBorder_8u_C1R_Ctx, ptr<const Npp8u>(s), step(s), roi,
                      ptr<Npp8u>(d), step(d), droi, top, left, ctx);
      };
      return l;
    }
    return none("no NPP border copy for this border and format");
  }

  if (c.op == "gray") {
    l.note = "NPP weights 0.299/0.587/0.114";
    if (f == Fmt::u8c3) {
      l.name = "nppiRGBToGray_8u_C3C1R_Ctx";
      l.launch = [=] {
        return PF_NPP(nppiRGBToGray_8u_C3C1R_Ctx, ptr<const Npp8u>(s), step(s), ptr<Npp8u>(d),
                      step(d), roi, ctx);
      };
      return l;
    }
    if (f == Fmt::f32c3) {
      l.name = "nppiRGBToGray_32f_C3C1R_Ctx";
      l.launch = [=] {
        return PF_NPP(nppiRGBToGray_32f_C3C1R_Ctx, ptr<const Npp32f>(s), step(s), ptr<Npp32f>(d),
                      step(d), roi, ctx);
      };
      return l;
    }
    return none("no NPP RGB->gray for this format");
  }

  if (c.op == "add" || c.op == "sub" || c.op == "mul") {
    const int which = c.op == "add" ? 0 : c.op == "sub" ? 1 : 2;
    if (f == Fmt::u8c1 || f == Fmt::u8c3) {
      const bool c3 = f == Fmt::u8c3;
      static const char* const names[2][3] = {
          {"nppiAdd_8u_C1RSfs_Ctx", "nppiSub_8u_C1RSfs_Ctx", "nppiMul_8u_C1RSfs_Ctx"},
          {"nppiAdd_8u_C3RSfs_Ctx", "nppiSub_8u_C3RSfs_Ctx", "nppiMul_8u_C3RSfs_Ctx"}};
      l.name = names[c3][which];
      l.note = "scale factor 0";
      l.launch = [=]() -> std::string {
        const Npp8u* a = ptr<const Npp8u>(s);
        const Npp8u* b = ptr<const Npp8u>(s2);
        Npp8u* o = ptr<Npp8u>(d);
        if (!c3) {
          if (which == 0)
            return PF_NPP(nppiAdd_8u_C1RSfs_Ctx, a, step(s), b, step(s2), o, step(d), roi, 0, ctx);
          if (which == 1)  // NPP computes src2 - src1
            return PF_NPP(nppiSub_8u_C1RSfs_Ctx, b, step(s2), a, step(s), o, step(d), roi, 0, ctx);
          return PF_NPP(nppiMul_8u_C1RSfs_Ctx, a, step(s), b, step(s2), o, step(d), roi, 0, ctx);
        }
        if (which == 0)
          return PF_NPP(nppiAdd_8u_C3RSfs_Ctx, a, step(s), b, step(s2), o, step(d), roi, 0, ctx);
        if (which == 1)
          return PF_NPP(nppiSub_8u_C3RSfs_Ctx, b, step(s2), a, step(s), o, step(d), roi, 0, ctx);
        return PF_NPP(nppiMul_8u_C3RSfs_Ctx, a, step(s), b, step(s2), o, step(d), roi, 0, ctx);
      };
      return l;
    }
    if (f == Fmt::f32c1) {
      static const char* const names[3] = {"nppiAdd_32f_C1R_Ctx", "nppiSub_32f_C1R_Ctx",
                                           "nppiMul_32f_C1R_Ctx"};
      l.name = names[which];
      l.launch = [=]() -> std::string {
        const Npp32f* a = ptr<const Npp32f>(s);
        const Npp32f* b = ptr<const Npp32f>(s2);
        Npp32f* o = ptr<Npp32f>(d);
        if (which == 0)
          return PF_NPP(nppiAdd_32f_C1R_Ctx, a, step(s), b, step(s2), o, step(d), roi, ctx);
        if (which == 1)
          return PF_NPP(nppiSub_32f_C1R_Ctx, b, step(s2), a, step(s), o, step(d), roi, ctx);
        return PF_NPP(nppiMul_32f_C1R_Ctx, a, step(s), b, step(s2), o, step(d), roi, ctx);
      };
      return l;
    }
    return none("no NPP arithmetic for this format");
  }

  if (c.op == "absdiff") {
    switch (f) {
      case Fmt::u8c1:
        l.name = "nppiAbsDiff_8u_C1R_Ctx";
        l.launch = [=] {
          return PF_NPP(nppiAbsDiff_8u_C1R_Ctx, ptr<const Npp8u>(s), step(s), ptr<const Npp8u>(s2),
                        step(s2), ptr<Npp8u>(d), step(d), roi, ctx);
        };
        break;
      case Fmt::u8c3:
        l.name = "nppiAbsDiff_8u_C3R_Ctx";
        l.launch = [=] {
          return PF_NPP(nppiAbsDiff_8u_C3R_Ctx, ptr<const Npp8u>(s), step(s), ptr<const Npp8u>(s2),
                        step(s2), ptr<Npp8u>(d), step(d), roi, ctx);
        };
        break;
      case Fmt::f32c1:
        l.name = "nppiAbsDiff_32f_C1R_Ctx";
        l.launch = [=] {
          return PF_NPP(nppiAbsDiff_32f_C1R_Ctx, ptr<const Npp32f>(s), step(s),
                        ptr<const Npp32f>(s2), step(s2), ptr<Npp32f>(d), step(d), roi, ctx);
        };
        break;
      default:
        return none("no NPP absdiff for this format");
    }
    return l;
  }

  if (c.op == "convert") {
    if (d.depth != PDepth::f32) return none("no NPP equivalent");
    l.note = "no scale (NPP converts only)";
    if (f == Fmt::u8c1) {
      l.name = "nppiConvert_8u32f_C1R_Ctx";
      l.launch = [=] {
        return PF_NPP(nppiConvert_8u32f_C1R_Ctx, ptr<const Npp8u>(s), step(s), ptr<Npp32f>(d),
                      step(d), roi, ctx);
      };
      return l;
    }
    if (f == Fmt::u8c3) {
      l.name = "nppiConvert_8u32f_C3R_Ctx";
      l.launch = [=] {
        return PF_NPP(nppiConvert_8u32f_C3R_Ctx, ptr<const Npp8u>(s), step(s), ptr<Npp32f>(d),
                      step(d), roi, ctx);
      };
      return l;
    }
    return none("no NPP conversion for this format");
  }

  if (c.op == "threshold") {
    // Binary threshold with maxval 255 is exactly NPP's compare-with-constant (255 / 0).
    if (f == Fmt::u8c1 && c.maxval == 255.0) {
      const Npp8u t = static_cast<Npp8u>(std::floor(c.t));
      l.name = "nppiCompareC_8u_C1R_Ctx";
      l.launch = [=] {
        return PF_NPP(nppiCompareC_8u_C1R_Ctx, ptr<const Npp8u>(s), step(s), t, ptr<Npp8u>(d),
                      step(d), roi, NPP_CMP_GREATER, ctx);
      };
      return l;
    }
    return none("no NPP binary threshold for this format");
  }

  return none("no NPP equivalent");
}

}  // namespace pixflow_bench

#else  // !PIXFLOW_HAVE_NPP

namespace pixflow_bench {
bool npp_compiled() {
  return false;
}
PeerLaunch make_npp_peer(const PeerCase&) {
  PeerLaunch l;
  l.note = "NPP not built (CMake found no CUDA::nppif or the NPP peer file did not compile)";
  return l;
}
}  // namespace pixflow_bench

#endif
