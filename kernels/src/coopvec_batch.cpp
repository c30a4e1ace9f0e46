// Batched cooperative-vector matrix products (coopvec_batch.h): the matrix is brought to
// dense row-major M x K (widened to f32 for floats; kept per thread under a cache token),
// the bias broadcast into the accumulators, and one tile multiply-add runs over all lanes.
#include "coopvk/kernels/coopvec_batch.h"

#include <cmath>
#include <cstring>
#include <iterator>
#include <vector>

#include "coopvk/kernels/tile_mma.h"

namespace coopvk::kernels {

namespace {

using NF = NumberFormat;

bool is_int8(NF f) { return f == NF::I8 || f == NF::U8; }
bool is_int32(NF f) { return f == NF::I32 || f == NF::U32; }

// The accumulator format: f32 for float products, i32 for integer ones.
NF accumulator(const CoopVecBatchDesc& d) { return format_is_float(d.result) ? NF::F32 : NF::I32; }

// The combination the interpretations name (what must be supported at all).
TileMmaDesc tile_desc(const CoopVecBatchDesc& d, uint32_t lanes) {
  const NF acc = accumulator(d);
  return TileMmaDesc{d.matrix, d.input, acc, acc, d.m, lanes, d.k, false};
}

// The stored matrix: M x K, or K x M when transposed.
MatrixDesc stored(const CoopVecBatchDesc& d) {
  MatrixDesc s;
  s.rows = d.transpose ? d.k : d.m;
  s.cols = d.transpose ? d.m : d.k;
  s.format = d.matrix;
  s.layout = d.layout;
  s.stride = d.stride;
  return s;
}

// Byte offset of A(i, j) (the matrix as multiplied) in the stored matrix.
size_t element_offset(const CoopVecBatchDesc& d, uint32_t i, uint32_t j) {
  const MatrixDesc s = stored(d);
  const uint32_t r = d.transpose ? j : i, c = d.transpose ? i : j;
  const size_t e = format_size(d.matrix);
  switch (d.layout) {
    case MatrixLayout::RowMajor: return r * d.stride + c * e;
    case MatrixLayout::ColumnMajor: return c * d.stride + r * e;
    default: return optimal_element_offset(r, c, s.cols, e);
  }
}

double load_float(NF f, const uint8_t* p) {
  uint64_t bits = 0;
  std::memcpy(&bits, p, format_size(f));
  uint64_t out = 0;
  convert_scalar(f, bits, NF::F32, &out);
  float v;
  const uint32_t b32 = uint32_t(out);
  std::memcpy(&v, &b32, 4);
  return v;
}

int64_t load_int(NF f, const uint8_t* p) {
  switch (f) {
    case NF::I8: return int8_t(*p);
    case NF::U8: return *p;
    case NF::I32: {
      int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    default: {
      uint32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
  }
}

std::vector<uint8_t>& scratch(int which) {
  thread_local std::vector<uint8_t> buffers[3];
  return buffers[which];
}

// The format the matrix is kept in for the tile kernel: f32 for floats (every
// interpretation widens to it exactly, and the f32 kernels read it where it lies), the 8-bit
// integers as they are.
NF prepared_format(const CoopVecBatchDesc& d) { return format_is_float(d.matrix) ? NF::F32 : d.matrix; }

// A as the tile kernel takes it: dense row-major M x K in prepared_format(d). A transposed
// stored matrix (K x M) is gathered the other way round.
void prepare(const CoopVecBatchDesc& d, const void* matrix, std::vector<uint8_t>& out) {
  const size_t e = format_size(d.matrix);
  std::vector<uint8_t>& dense = scratch(0);
  dense.resize(size_t(d.m) * d.k * e);
  const auto* src = static_cast<const uint8_t*>(matrix);
  if (d.layout == MatrixLayout::RowMajor && !d.transpose) {
    for (uint32_t i = 0; i < d.m; ++i) std::memcpy(dense.data() + size_t(i) * d.k * e, src + i * d.stride, d.k * e);
  } else {
    uint8_t* dst = dense.data();
    for (uint32_t i = 0; i < d.m; ++i)
      for (uint32_t j = 0; j < d.k; ++j, dst += e) std::memcpy(dst, src + element_offset(d, i, j), e);
  }
  const NF pf = prepared_format(d);
  out.resize(size_t(d.m) * d.k * format_size(pf));
  convert(d.matrix, dense.data(), pf, out.data(), size_t(d.m) * d.k);
}

// Matrices prepared on this thread under a cache token (coopvec_batch_matmul()); a few, for the
// layers of a small network that alternate.
struct Prepared {
  uint64_t token = 0;
  const void* matrix = nullptr;
  NF format = NF::F32;
  uint32_t m = 0, k = 0;
  MatrixLayout layout = MatrixLayout::RowMajor;
  size_t stride = 0;
  bool transpose = false;
  std::vector<uint8_t> a;
  bool same(const CoopVecBatchDesc& d, const void* p, uint64_t t) const {
    return token == t && matrix == p && format == d.matrix && m == d.m && k == d.k && layout == d.layout &&
           stride == d.stride && transpose == d.transpose;
  }
};

const std::vector<uint8_t>& prepared_matrix(const CoopVecBatchDesc& d, const void* matrix, uint64_t token) {
  thread_local Prepared kept[4];
  thread_local unsigned next = 0;
  if (token == 0) {
    thread_local std::vector<uint8_t> once;
    prepare(d, matrix, once);
    return once;
  }
  for (const Prepared& p : kept)
    if (p.same(d, matrix, token)) return p.a;
  Prepared& p = kept[next++ % std::size(kept)];
  p.token = token;
  p.matrix = matrix;
  p.format = d.matrix;
  p.m = d.m;
  p.k = d.k;
  p.layout = d.layout;
  p.stride = d.stride;
  p.transpose = d.transpose;
  prepare(d, matrix, p.a);
  return p.a;
}

}  // namespace

const char* coopvec_batch_error(const CoopVecBatchDesc& d) {
  if (d.m == 0 || d.k == 0) return "a cooperative-vector matrix product needs M and K of at least 1";
  const bool fp = format_is_float(d.result);
  if (fp ? !(d.result == NF::F32 || d.result == NF::F16) : !is_int32(d.result))
    return "the result of a cooperative-vector matrix product must be f16, f32 or a 32-bit integer";
  if (format_is_float(d.input) != fp || format_is_float(d.matrix) != fp)
    return "a cooperative-vector matrix product mixes float and integer input, matrix and result";
  if (!fp && !(is_int8(d.input) && is_int8(d.matrix)))
    return "integer cooperative-vector matrix products take 8-bit inputs and matrices";
  if (d.has_bias && (format_is_float(d.bias) != fp || (!fp && !is_int32(d.bias)) ||
                     (fp && !(d.bias == NF::F16 || d.bias == NF::F32))))
    return "the bias of a cooperative-vector matrix product must be f16 / f32 (floats) or a 32-bit integer";
  if (!tile_mma_supported(tile_desc(d, 1)))
    return "no kernel multiplies this matrix interpretation by this input interpretation";
  if (d.transpose && (d.layout == MatrixLayout::RowMajor || d.layout == MatrixLayout::ColumnMajor))
    return "a row- or column-major cooperative-vector matrix cannot be transposed (SPV_NV_cooperative_vector)";
  if (const char* why = matrix_desc_error(stored(d))) return why;
  return nullptr;
}

size_t coopvec_batch_matrix_bytes(const CoopVecBatchDesc& d) { return layout_required_size(stored(d)); }

void coopvec_batch_matmul(const CoopVecBatchDesc& d, const void* matrix, const void* bias, const void* x,
                    size_t ldx, void* y, size_t ldy, uint32_t lanes, uint64_t cache_token) {
  if (lanes == 0) return;
  const bool fp = format_is_float(d.result);
  const NF acc = accumulator(d);
  const std::vector<uint8_t>& a = prepared_matrix(d, matrix, cache_token);
  // B: the inputs, K x lanes, dense, in the prepared matrix's format for floats (f32: exact,
  // so the products and sums are those of the narrow formats).
  const NF b_format = fp ? NF::F32 : d.input;
  const size_t ein = format_size(d.input), eb = format_size(b_format), eout = format_size(d.result);
  const void* b = x;
  if (ldx != lanes || b_format != d.input) {
    std::vector<uint8_t>& buf = scratch(1);
    buf.resize(size_t(d.k) * lanes * eb);
    for (uint32_t j = 0; j < d.k; ++j)
      convert(d.input, static_cast<const uint8_t*>(x) + j * ldx * ein, b_format, buf.data() + size_t(j) * lanes * eb,
              lanes);
    b = buf.data();
  }
  // C: the bias broadcast over the lanes, in the accumulator's format; D in place.
  std::vector<uint8_t>& cbuf = scratch(2);
  cbuf.assign(size_t(d.m) * lanes * 4, 0);
  if (d.has_bias) {
    const auto* bp = static_cast<const uint8_t*>(bias);
    const size_t ebias = format_size(d.bias);
    for (uint32_t i = 0; i < d.m; ++i) {
      uint32_t v = 0;
      if (acc == NF::F32) {
        float f = float(load_float(d.bias, bp + i * ebias));
        std::memcpy(&v, &f, 4);
      } else {
        v = uint32_t(load_int(d.bias, bp + i * ebias));
      }
      for (uint32_t l = 0; l < lanes; ++l) std::memcpy(cbuf.data() + (size_t(i) * lanes + l) * 4, &v, 4);
    }
  }
  const TileMmaDesc t{prepared_format(d), b_format, acc, acc, d.m, lanes, d.k, false};
  tile_mma_kernel(t)(a.data(), b, cbuf.data(), cbuf.data(), t.m, t.n, t.k);
  // Y: the accumulators in the result's format, one rounding.
  auto* out = static_cast<uint8_t*>(y);
  for (uint32_t i = 0; i < d.m; ++i)
    convert(acc, cbuf.data() + size_t(i) * lanes * 4, d.result, out + i * ldy * eout, lanes);
}

void coopvec_batch_reference(const CoopVecBatchDesc& d, const void* matrix, const void* bias, const void* x,
                              size_t ldx, void* y, size_t ldy, uint32_t lanes) {
  const auto* mp = static_cast<const uint8_t*>(matrix);
  const auto* bp = static_cast<const uint8_t*>(bias);
  const auto* xp = static_cast<const uint8_t*>(x);
  auto* out = static_cast<uint8_t*>(y);
  const size_t ein = format_size(d.input), eb = format_size(d.bias), eout = format_size(d.result);
  const bool fp = format_is_float(d.result);
  for (uint32_t l = 0; l < lanes; ++l)
    for (uint32_t i = 0; i < d.m; ++i) {
      uint8_t* dst = out + (i * ldy + l) * eout;
      if (fp) {
        float acc = d.has_bias ? float(load_float(d.bias, bp + i * eb)) : 0.0f;
        for (uint32_t j = 0; j < d.k; ++j)
          acc = std::fma(float(load_float(d.matrix, mp + element_offset(d, i, j))),
                         float(load_float(d.input, xp + (j * ldx + l) * ein)), acc);
        convert(NF::F32, &acc, d.result, dst, 1);
      } else {
        int64_t acc = d.has_bias ? load_int(d.bias, bp + i * eb) : 0;
        for (uint32_t j = 0; j < d.k; ++j)
          acc += load_int(d.matrix, mp + element_offset(d, i, j)) * load_int(d.input, xp + (j * ldx + l) * ein);
        const uint32_t bits = uint32_t(uint64_t(acc));
        std::memcpy(dst, &bits, 4);
      }
    }
}

}  // namespace coopvk::kernels
