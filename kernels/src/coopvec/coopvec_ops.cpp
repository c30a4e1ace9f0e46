// Cooperative-vector arithmetic of one invocation (coopvec_ops.h says what and why).
#include "coopvk/kernels/coopvec_ops.h"

#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace coopvk::kernels {

namespace {

using NF = NumberFormat;

NF fmt(uint32_t v) { return static_cast<NF>(v); }

bool is_int8(NF f) { return f == NF::I8 || f == NF::U8; }
bool is_fp_matrix(NF f) { return f == NF::F16 || f == NF::F32 || f == NF::BF16 || f == NF::E4M3 || f == NF::E5M2; }
bool valid_format(uint32_t v) { return v <= uint32_t(NF::U64); }

uint64_t read_bits(const uint8_t* p, size_t size) {
  uint64_t bits = 0;
  std::memcpy(&bits, p, size);  // little-endian hosts only (x86-64, AArch64)
  return bits;
}

// Bits of format f as a double / a sign- or zero-extended integer.
double as_double(NF f, uint64_t bits) {
  uint64_t out = 0;
  convert_scalar(f, bits, NF::F64, &out);
  double d;
  std::memcpy(&d, &out, 8);
  return d;
}
int64_t as_int(NF f, uint64_t bits) {
  uint64_t out = 0;
  convert_scalar(f, bits, NF::I64, &out);
  return int64_t(out);
}

// An element of `size` bytes at p, or zero when robust access puts it outside [lo, hi).
uint64_t checked_bits(const uint8_t* p, size_t size, const uint8_t* lo, const uint8_t* hi) {
  if (lo || hi) {
    if (p < lo || p > hi || size_t(hi - p) < size) return 0;
  }
  return read_bits(p, size);
}

bool in_range(const uint8_t* p, size_t size, const uint8_t* lo, const uint8_t* hi) {
  if (!lo && !hi) return true;
  return p >= lo && p <= hi && size_t(hi - p) >= size;
}

// Input component k converted to the interpretation (its bits in that format).
uint64_t input_value(const CoopVecMatMulDesc& d, const CoopVecMatMulArgs& a, uint32_t k) {
  if (d.input_packed) return a.input[int64_t(k / 4) * a.input_stride + k % 4];
  const NF in = fmt(d.input_format);
  uint64_t bits = read_bits(a.input + int64_t(k) * a.input_stride, format_size(in));
  uint64_t out = 0;
  convert_scalar(in, bits, fmt(d.input_interp), &out, Overflow::Saturate);
  return out;
}

template <typename T>
void store(uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

}  // namespace

int64_t coopvec_element_offset(MatrixLayout layout, uint32_t r, uint32_t c, uint32_t cols, size_t elem_size,
                               int64_t stride) {
  switch (layout) {
    case MatrixLayout::RowMajor: return int64_t(r) * stride + int64_t(c) * int64_t(elem_size);
    case MatrixLayout::ColumnMajor: return int64_t(c) * stride + int64_t(r) * int64_t(elem_size);
    default: return int64_t(optimal_element_offset(r, c, cols, elem_size));
  }
}

const char* coopvec_matmul_error(const CoopVecMatMulDesc& d) {
  if (!valid_format(d.input_format) || !valid_format(d.input_interp) || !valid_format(d.matrix_format) ||
      !valid_format(d.bias_format) || !valid_format(d.result_format))
    return "unknown component type";
  const NF in = fmt(d.input_format), interp = fmt(d.input_interp), mat = fmt(d.matrix_format);
  const NF bias = fmt(d.bias_format), res = fmt(d.result_format);
  if (d.m == 0 || d.k == 0) return "M and K must be at least 1";
  if (d.layout > uint32_t(MatrixLayout::TrainingOptimal)) return "unknown matrix layout";
  if (coopvec_element_size(mat) == 0) return "the matrix interpretation is not a matrix element type";
  if (d.input_packed && (!is_int8(interp) || in != NF::U32))
    return "packed inputs are 8-bit integers in 32-bit unsigned components";
  if (in == NF::F64 || in == NF::I64 || in == NF::U64) return "64-bit inputs are not supported";
  const bool fp = format_is_float(res);
  if (fp) {
    if (res != NF::F16 && res != NF::F32) return "float results must be float16 or float32";
    if (!is_fp_matrix(mat) || !format_is_float(interp) || interp == NF::F64)
      return "a float result needs a float matrix and input interpretation";
    if (d.has_bias && bias != NF::F16 && bias != NF::F32) return "float bias must be float16 or float32";
  } else {
    if (res != NF::I32 && res != NF::U32) return "integer results must be 32-bit";
    if (!is_int8(mat) || !is_int8(interp)) return "an integer result needs an 8-bit integer matrix and input interpretation";
    if (d.has_bias && bias != NF::I32 && bias != NF::U32) return "integer bias must be 32-bit";
  }
  const bool optimal = d.layout >= uint32_t(MatrixLayout::InferencingOptimal);
  if ((mat == NF::E4M3 || mat == NF::E5M2) && !optimal)
    return "float8 matrices must use an optimal layout (VUID-RuntimeSpirv-OpCooperativeVectorMatrixMulNV-10090)";
  if (d.transpose && !optimal) return "row- and column-major matrices cannot be transposed";
  return nullptr;
}

void coopvec_matmul(const CoopVecMatMulDesc& d, const CoopVecMatMulArgs& a) {
  const NF interp = fmt(d.input_interp), mat = fmt(d.matrix_format), res = fmt(d.result_format);
  const NF bias = fmt(d.bias_format);
  const MatrixLayout layout = static_cast<MatrixLayout>(d.layout);
  const size_t esz = coopvec_element_size(mat);
  const size_t bsz = d.has_bias ? format_size(bias) : 0;
  // The stored matrix: M x K, or K x M used transposed; element (row, col) of it.
  const uint32_t stored_cols = d.transpose ? d.m : d.k;
  auto element = [&](uint32_t r, uint32_t c) {
    int64_t off = coopvec_element_offset(layout, r, c, stored_cols, esz, a.stride);
    return checked_bits(a.matrix + off, esz, a.matrix_lo, a.matrix_hi);
  };
  if (format_is_float(res)) {
    thread_local std::vector<float> x;
    x.resize(d.k);
    for (uint32_t k = 0; k < d.k; ++k) x[k] = float(as_double(interp, input_value(d, a, k)));
    for (uint32_t m = 0; m < d.m; ++m) {
      // From the bias, as the batched kernel's accumulators start (coopvec_batch.h), so
      // that a lane gives the same bits on either path.
      float acc = d.has_bias ? float(as_double(bias, checked_bits(a.bias + m * bsz, bsz, a.bias_lo, a.bias_hi))) : 0.0f;
      for (uint32_t k = 0; k < d.k; ++k) {
        uint64_t bits = d.transpose ? element(k, m) : element(m, k);
        acc = std::fmaf(float(as_double(mat, bits)), x[k], acc);
      }
      uint8_t* out = a.result + int64_t(m) * a.result_stride;
      if (res == NF::F32) {
        store(out, acc);
      } else {
        store(out, f32_to_f16(acc));
      }
    }
    return;
  }
  thread_local std::vector<int64_t> x;
  x.resize(d.k);
  for (uint32_t k = 0; k < d.k; ++k) x[k] = as_int(interp, input_value(d, a, k));
  const bool is_signed = res == NF::I32;
  for (uint32_t m = 0; m < d.m; ++m) {
    // |a x| <= 2^15 per term: an int64 holds any K this extension can have.
    int64_t acc = 0;
    for (uint32_t k = 0; k < d.k; ++k) {
      uint64_t bits = d.transpose ? element(k, m) : element(m, k);
      acc += as_int(mat, bits) * x[k];
    }
    if (d.has_bias) {
      uint64_t bb = checked_bits(a.bias + m * bsz, bsz, a.bias_lo, a.bias_hi);
      acc += as_int(bias, bb);
    }
    uint32_t r;
    if (d.saturate) {
      int64_t lo = is_signed ? std::numeric_limits<int32_t>::min() : 0;
      int64_t hi = is_signed ? std::numeric_limits<int32_t>::max() : int64_t(std::numeric_limits<uint32_t>::max());
      r = uint32_t(acc < lo ? lo : acc > hi ? hi : acc);
    } else {
      r = uint32_t(uint64_t(acc));  // modulo 2^32
    }
    store(a.result + int64_t(m) * a.result_stride, r);
  }
}

namespace {

// Relaxed atomic float additions (SPV_NV_cooperative_vector: "behaves as if it were a
// Relaxed atomic add with Device scope"): f32 natively, f16 by compare-and-swap.
void atomic_add(NF f, uint8_t* p, double v) {
  if (f == NF::F32) {
    std::atomic_ref<float> ref(*reinterpret_cast<float*>(p));
    float old = ref.load(std::memory_order_relaxed);
    while (!ref.compare_exchange_weak(old, float(double(old) + v), std::memory_order_relaxed)) {
    }
    return;
  }
  std::atomic_ref<uint16_t> ref(*reinterpret_cast<uint16_t*>(p));
  uint16_t old = ref.load(std::memory_order_relaxed);
  for (;;) {
    double sum = double(f16_to_f32(old)) + v;
    uint64_t sum_bits, h = 0;
    std::memcpy(&sum_bits, &sum, 8);
    convert_scalar(NF::F64, sum_bits, NF::F16, &h);  // one rounding, from the f64 sum
    if (ref.compare_exchange_weak(old, uint16_t(h), std::memory_order_relaxed)) return;
  }
}

double vector_element(NF f, const uint8_t* p) { return as_double(f, read_bits(p, format_size(f))); }

}  // namespace

const char* coopvec_outer_error(const CoopVecOuterDesc& d) {
  auto fp = [](uint32_t f) { return f == uint32_t(NF::F16) || f == uint32_t(NF::F32); };
  if (!fp(d.vector_format)) return "outer-product vectors must be float16 or float32";
  if (!fp(d.matrix_format)) return "the outer-product matrix interpretation must be float16 or float32";
  if (d.m == 0 || d.n == 0) return "empty outer product";
  if (d.layout > uint32_t(MatrixLayout::TrainingOptimal)) return "unknown matrix layout";
  return nullptr;
}

void coopvec_outer_product_accumulate(const CoopVecOuterDesc& d, const CoopVecOuterArgs& a) {
  const NF vf = fmt(d.vector_format), mf = fmt(d.matrix_format);
  const size_t esz = format_size(mf);
  for (uint32_t i = 0; i < d.m; ++i) {
    double ai = vector_element(vf, a.a + int64_t(i) * a.a_stride);
    for (uint32_t j = 0; j < d.n; ++j) {
      uint8_t* p = a.matrix + coopvec_element_offset(static_cast<MatrixLayout>(d.layout), i, j, d.n, esz, a.stride);
      if (!in_range(p, esz, a.lo, a.hi)) continue;  // robust access: dropped
      // The product of two f16 (or f32) values, exact in double; the add rounds once.
      atomic_add(mf, p, ai * vector_element(vf, a.b + int64_t(j) * a.b_stride));
    }
  }
}

void coopvec_reduce_sum_accumulate(NumberFormat f, uint32_t count, const CoopVecReduceArgs& a) {
  const size_t esz = format_size(f);
  for (uint32_t i = 0; i < count; ++i) {
    uint8_t* p = a.dst + i * esz;
    if (!in_range(p, esz, a.lo, a.hi)) continue;
    atomic_add(f, p, vector_element(f, a.v + int64_t(i) * a.v_stride));
  }
}

}  // namespace coopvk::kernels
