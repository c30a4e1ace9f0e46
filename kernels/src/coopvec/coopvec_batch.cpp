// Batched cooperative-vector products (coopvec_batch.h): the matrix is brought to dense
// row-major M x K (widened to f32 for floats; kept per thread under a cache token), the
// inputs converted to the interpretation side by side, the bias broadcast into the
// accumulators, and one tile multiply-add runs over all lanes.
#include "coopvk/kernels/coopvec_batch.h"

#include <cstring>
#include <iterator>
#include <vector>

#include "coopvk/kernels/tile_mma.h"

namespace coopvk::kernels {

namespace {

using NF = NumberFormat;

NF fmt(uint32_t v) { return static_cast<NF>(v); }

std::vector<uint8_t>& scratch(int which) {
  thread_local std::vector<uint8_t> buffers[4];
  return buffers[which];
}

// The format the matrix is kept in for the tile kernel: f32 for floats (every
// interpretation widens to it exactly, and the f32 kernels read it where it lies), the 8-bit
// integers as they are. The inputs follow.
NF kernel_format(NF interpretation) { return format_is_float(interpretation) ? NF::F32 : interpretation; }

// The stored matrix: M x K, or K x M used transposed.
uint32_t stored_rows(const CoopVecMatMulDesc& d) { return d.transpose ? d.k : d.m; }
uint32_t stored_cols(const CoopVecMatMulDesc& d) { return d.transpose ? d.m : d.k; }

// Bytes the stored matrix spans from its first element.
size_t matrix_span(const CoopVecMatMulDesc& d, int64_t stride) {
  MatrixDesc s{stored_rows(d), stored_cols(d), fmt(d.matrix_format), static_cast<MatrixLayout>(d.layout),
               size_t(stride)};
  return layout_required_size(s);
}

// A as the tile kernel takes it: dense row-major M x K in kernel_format().
void prepare(const CoopVecMatMulDesc& d, const uint8_t* matrix, int64_t stride, std::vector<uint8_t>& out) {
  const NF mf = fmt(d.matrix_format);
  const size_t e = format_size(mf);
  const auto layout = static_cast<MatrixLayout>(d.layout);
  std::vector<uint8_t>& dense = scratch(0);
  dense.resize(size_t(d.m) * d.k * e);
  if (layout == MatrixLayout::RowMajor) {  // never transposed (coopvec_matmul_error())
    for (uint32_t i = 0; i < d.m; ++i) std::memcpy(dense.data() + size_t(i) * d.k * e, matrix + i * stride, d.k * e);
  } else {
    uint8_t* dst = dense.data();
    const uint32_t cols = stored_cols(d);
    for (uint32_t i = 0; i < d.m; ++i)
      for (uint32_t j = 0; j < d.k; ++j, dst += e) {
        const uint32_t r = d.transpose ? j : i, c = d.transpose ? i : j;
        std::memcpy(dst, matrix + coopvec_element_offset(layout, r, c, cols, e, stride), e);
      }
  }
  const NF kf = kernel_format(mf);
  out.resize(size_t(d.m) * d.k * format_size(kf));
  convert(mf, dense.data(), kf, out.data(), size_t(d.m) * d.k);
}

// Matrices prepared on this thread under a cache token; a few, for the layers of a small
// network that alternate.
struct Prepared {
  uint64_t token = 0;
  const uint8_t* matrix = nullptr;
  int64_t stride = 0;
  CoopVecMatMulDesc d{};
  std::vector<uint8_t> a;
  // The accumulators' starting values for the last bias and lane count seen with it (the
  // bias is as constant as the matrix, SPV_NV_cooperative_vector).
  const uint8_t* bias = nullptr;
  uint32_t lanes = 0;
  std::vector<uint8_t> c;
  // The tile kernel for the last lane count and input interpretation seen: looked up once,
  // not on every call.
  TileMmaDesc tile{};
  TileMmaFn fn = nullptr;
  bool same(const CoopVecMatMulDesc& x, const uint8_t* p, int64_t s, uint64_t t) const {
    return token == t && matrix == p && stride == s && d.matrix_format == x.matrix_format && d.m == x.m &&
           d.k == x.k && d.layout == x.layout && d.transpose == x.transpose && d.bias_format == x.bias_format &&
           d.has_bias == x.has_bias && d.result_format == x.result_format;
  }
};

// The accumulator format: f32 for floats, the result's own 32-bit integer format (for the
// saturation's signedness).
NF accumulator(const CoopVecMatMulDesc& d) {
  const NF res = fmt(d.result_format);
  return format_is_float(res) ? NF::F32 : res;
}

// The bias (or zero) broadcast over the lanes, in the accumulators' format.
void broadcast_bias(const CoopVecMatMulDesc& d, const uint8_t* bias, uint32_t lanes, std::vector<uint8_t>& c) {
  c.assign(size_t(d.m) * lanes * 4, 0);
  if (!d.has_bias) return;
  const NF bias_f = fmt(d.bias_format);
  const size_t eb = format_size(bias_f);
  const bool fp = accumulator(d) == NF::F32;
  for (uint32_t i = 0; i < d.m; ++i) {
    uint64_t bits = 0, v = 0;
    std::memcpy(&bits, bias + i * eb, eb);
    if (fp)
      convert_scalar(bias_f, bits, NF::F32, &v);  // exact: f16 / f32 into f32
    else
      v = bits;  // the 32 bits as they are: the sum wraps modulo 2^32 either way
    const uint32_t v32 = uint32_t(v);
    uint8_t* row = c.data() + size_t(i) * lanes * 4;
    for (uint32_t l = 0; l < lanes; ++l) std::memcpy(row + l * 4, &v32, 4);
  }
}

// The matrix prepared for the tile kernel and the accumulators' starting values, kept under
// the token (or made afresh, for token 0).
const Prepared& prepared(const CoopVecMatMulDesc& d, const CoopVecMatMulArgs& a, uint32_t lanes, uint64_t token) {
  thread_local Prepared kept[4];
  thread_local unsigned next = 0;
  Prepared* p = nullptr;
  if (token != 0)
    for (Prepared& k : kept)
      if (k.same(d, a.matrix, a.stride, token)) p = &k;
  if (!p) {
    thread_local Prepared once;
    p = token ? &kept[next++ % std::size(kept)] : &once;
    p->token = token;
    p->matrix = a.matrix;
    p->stride = a.stride;
    p->d = d;
    p->lanes = 0;
    prepare(d, a.matrix, a.stride, p->a);
  }
  if (p->lanes != lanes || p->bias != a.bias || token == 0) {
    broadcast_bias(d, a.bias, lanes, p->c);
    p->bias = a.bias;
    p->lanes = lanes;
  }
  const NF acc = accumulator(d);
  const TileMmaDesc t{kernel_format(fmt(d.matrix_format)), kernel_format(fmt(d.input_interp)), acc, acc, d.m,
                      lanes, d.k, acc != NF::F32 && d.saturate != 0};
  const TileMmaDesc& o = p->tile;
  if (!p->fn || o.a != t.a || o.b != t.b || o.c != t.c || o.n != t.n || o.saturate != t.saturate) {
    p->tile = t;
    p->fn = tile_mma_kernel(t);
  }
  return *p;
}

// The inputs as the tile kernel's B: K x lanes, dense, in kernel_format() of the
// interpretation, converted as coopvec_matmul() converts each lane's (coopvec_ops.h).
const uint8_t* inputs(const CoopVecMatMulDesc& d, const CoopVecMatMulArgs& a, uint32_t lanes) {
  const NF in = fmt(d.input_format), interp = fmt(d.input_interp), kf = kernel_format(interp);
  std::vector<uint8_t>& out = scratch(1);
  out.resize(size_t(d.k) * lanes * format_size(kf));
  if (d.input_packed) {  // 8-bit values, 4 to a 32-bit component, lower-numbered in lower bits
    for (uint32_t j = 0; j < d.k; ++j)
      for (uint32_t l = 0; l < lanes; ++l) out[size_t(j) * lanes + l] = a.input[int64_t(j / 4) * a.input_stride + 4 * l + j % 4];
    return out.data();
  }
  std::vector<uint8_t>& mid = scratch(2);
  if (a.input_stride == int64_t(lanes * format_size(in))) {  // the lanes' vectors back to back: one pass
    const size_t n = size_t(d.k) * lanes;
    if (in == interp) {  // no interpretation to apply: only the widening
      convert(in, a.input, kf, out.data(), n);
    } else if (interp == kf) {
      convert(in, a.input, interp, out.data(), n, Overflow::Saturate);
    } else {
      mid.resize(n * format_size(interp));
      convert(in, a.input, interp, mid.data(), n, Overflow::Saturate);
      convert(interp, mid.data(), kf, out.data(), n);
    }
    return out.data();
  }
  mid.resize(size_t(lanes) * format_size(interp));
  for (uint32_t j = 0; j < d.k; ++j) {
    const uint8_t* src = a.input + int64_t(j) * a.input_stride;
    uint8_t* dst = out.data() + size_t(j) * lanes * format_size(kf);
    if (in == interp) {
      convert(in, src, kf, dst, lanes);
    } else if (interp == kf) {
      convert(in, src, interp, dst, lanes, Overflow::Saturate);
    } else {
      convert(in, src, interp, mid.data(), lanes, Overflow::Saturate);
      convert(interp, mid.data(), kf, dst, lanes);
    }
  }
  return out.data();
}

bool inside(const uint8_t* p, size_t bytes, const uint8_t* lo, const uint8_t* hi) {
  return p >= lo && p <= hi && size_t(hi - p) >= bytes;
}

}  // namespace

void coopvec_matmul_lanes(const CoopVecMatMulDesc& d, const CoopVecMatMulArgs& a, uint32_t lanes,
                          uint64_t cache_token) {
  if (lanes == 0) return;
  const NF res = fmt(d.result_format), bias_f = fmt(d.bias_format);
  const size_t ein = d.input_packed ? 4 : format_size(fmt(d.input_format)), eout = format_size(res);
  // Robust access that cuts into the matrix or the bias: each lane reads zero past the
  // range, which the per-lane kernel does, one by one.
  const bool robust_m = a.matrix_lo || a.matrix_hi, robust_b = d.has_bias && (a.bias_lo || a.bias_hi);
  // So do saturating sums whose bias and result differ in signedness: the tile kernels
  // read C in the result's signedness, coopvec_matmul() the bias in its own.
  const bool mixed_saturation = d.saturate && d.has_bias && !format_is_float(res) && bias_f != res;
  if (mixed_saturation || (robust_m && !inside(a.matrix, matrix_span(d, a.stride), a.matrix_lo, a.matrix_hi)) ||
      (robust_b && !inside(a.bias, size_t(d.m) * format_size(bias_f), a.bias_lo, a.bias_hi))) {
    for (uint32_t l = 0; l < lanes; ++l) {
      CoopVecMatMulArgs one = a;
      one.input += l * ein;
      one.result += l * eout;
      coopvec_matmul(d, one);
    }
    return;
  }
  const NF acc = accumulator(d);
  const Prepared& p = prepared(d, a, lanes, cache_token);
  const uint8_t* b = inputs(d, a, lanes);
  thread_local std::vector<uint8_t> cbuf;  // D (C is the kept bias broadcast)
  cbuf.resize(p.c.size());
  p.fn(p.a.data(), b, p.c.data(), cbuf.data(), d.m, lanes, d.k);
  // The results in their format, one rounding.
  if (a.result_stride == int64_t(lanes * eout)) {
    convert(acc, cbuf.data(), res, a.result, size_t(d.m) * lanes);
    return;
  }
  for (uint32_t i = 0; i < d.m; ++i)
    convert(acc, cbuf.data() + size_t(i) * lanes * 4, res, a.result + int64_t(i) * a.result_stride, lanes);
}

}  // namespace coopvk::kernels
