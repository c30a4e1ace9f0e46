// Cooperative-vector matrix layouts: which descriptions are valid, how big a matrix is in
// each layout, where an element lives in the optimal layouts. The byte formulas are
// documented in coopvec_layout.h; this file is their single implementation.
#include "coopvec/coopvec_layout_internal.h"

namespace coopvk::kernels {

size_t coopvec_element_size(NumberFormat f) {
  // The formats a VkCooperativeVectorPropertiesNV::matrixInterpretation can name (plus
  // F32, which VUID-VkConvertCooperativeVectorMatrixInfoNV-srcComponentType-10079/-10080
  // always allow as a conversion end). Wider or 16-bit integer formats are not matrix
  // element types of this extension.
  switch (f) {
    case NumberFormat::F32: return 4;
    case NumberFormat::F16:
    case NumberFormat::BF16: return 2;
    case NumberFormat::E4M3:
    case NumberFormat::E5M2:
    case NumberFormat::I8:
    case NumberFormat::U8: return 1;
    default: return 0;
  }
}

namespace {

// Significand bits (with the implicit bit): the "precision" of
// VUID-VkConvertCooperativeVectorMatrixInfoNV-srcComponentType-10081; 0 = not a float.
int float_precision(NumberFormat f) {
  switch (f) {
    case NumberFormat::F32: return 24;
    case NumberFormat::F16: return 11;
    case NumberFormat::BF16: return 8;
    case NumberFormat::E4M3: return 4;
    case NumberFormat::E5M2: return 3;
    default: return 0;
  }
}

bool layout_is_valid(MatrixLayout l) {
  return static_cast<uint32_t>(l) <= static_cast<uint32_t>(MatrixLayout::TrainingOptimal);
}

}  // namespace

bool layout_is_optimal(MatrixLayout l) {
  return l == MatrixLayout::InferencingOptimal || l == MatrixLayout::TrainingOptimal;
}

bool coopvec_conversion_allowed(NumberFormat s, NumberFormat d) {
  if (coopvec_element_size(s) == 0 || coopvec_element_size(d) == 0) return false;
  if (s == d) return true;  // a pure layout change is allowed for every element type
  // 10081: "one must be FLOAT32 or FLOAT16 and the other must be a lower-precision
  // floating-point type" (so conversions go both ways, e.g. fp8 -> fp16 too).
  int ps = float_precision(s), pd = float_precision(d);
  if (ps == 0 || pd == 0) return false;
  auto wide = [](NumberFormat f) { return f == NumberFormat::F32 || f == NumberFormat::F16; };
  return (wide(s) && pd < ps) || (wide(d) && ps < pd);
}

const char* matrix_desc_error(const MatrixDesc& d) {
  if (d.rows == 0 || d.cols == 0) return "matrix has zero rows or columns";
  const size_t e = coopvec_element_size(d.format);
  if (e == 0) return "element format cannot be a cooperative-vector matrix element";
  if (!layout_is_valid(d.layout)) return "matrix layout value out of range";
  if (!layout_is_optimal(d.layout)) {
    // VUID-VkConvertCooperativeVectorMatrixInfoNV-srcLayout-10077 / dstLayout-10078.
    // The VU says "greater than the length of a row/column"; a tightly packed matrix
    // (stride == length) is the common case, is what the validation layers accept, and
    // is what the proposal's own example passes (K*sizeof(float16_t)), so >= is meant.
    const size_t line = size_t(d.layout == MatrixLayout::RowMajor ? d.cols : d.rows) * e;
    if (d.stride < line) return "stride smaller than one row/column";
    if (d.stride % e != 0) return "stride not a multiple of the element size";
  }
  if (layout_required_size(d) == 0) return "matrix size overflows size_t";
  return nullptr;
}

size_t layout_required_size(const MatrixDesc& d) {
  const size_t e = coopvec_element_size(d.format);
  if (d.rows == 0 || d.cols == 0 || e == 0 || !layout_is_valid(d.layout)) return 0;
  size_t size = 0;
  if (layout_is_optimal(d.layout)) {
    const size_t g = 4 / e;
    const size_t rp = round_up(d.rows, kOptimalBlockRows);
    const size_t cp = round_up(d.cols, g);
    if (__builtin_mul_overflow(rp, cp, &size) || __builtin_mul_overflow(size, e, &size)) return 0;
    return size;
  }
  // The span a strided matrix touches: (lines - 1) * stride + one tight line.
  const bool row = d.layout == MatrixLayout::RowMajor;
  const size_t lines = row ? d.rows : d.cols;
  const size_t line = size_t(row ? d.cols : d.rows) * e;
  if (__builtin_mul_overflow(lines - 1, d.stride, &size) || __builtin_add_overflow(size, line, &size))
    return 0;
  return size;
}

size_t optimal_element_offset(uint32_t r, uint32_t c, uint32_t cols, size_t elem_size) {
  const size_t g = 4 / elem_size;
  const size_t panels_per_block = round_up(cols, g) / g;
  return size_t(r / kOptimalBlockRows) * panels_per_block * kOptimalPanelBytes +
         size_t(c / g) * kOptimalPanelBytes + size_t(r % kOptimalBlockRows) * 4 +
         size_t(c % g) * elem_size;
}

}  // namespace coopvk::kernels
