// convert_matrix: the host side of vkConvertCooperativeVectorMatrixNV. Validates
// everything first, so that invalid input writes nothing, then walks the matrix one
// logical row at a time: gather the row from the source layout, convert its elements,
// scatter them into the destination layout.
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>

#include "coopvec/coopvec_layout_internal.h"

namespace coopvk::kernels {
namespace {

bool is_fp8(NumberFormat f) { return f == NumberFormat::E4M3 || f == NumberFormat::E5M2; }

// Calls fn(byte_offset, first_column, count) for each run of row r that is contiguous in
// memory in layout d (elements of e bytes): the whole row for row-major, single
// elements for column-major, the dwords of the row's panels for the optimal layouts.
template <class Fn>
void for_each_run(const MatrixDesc& d, size_t e, uint32_t r, Fn&& fn) {
  switch (d.layout) {
    case MatrixLayout::RowMajor:
      fn(size_t(r) * d.stride, 0u, d.cols);
      break;
    case MatrixLayout::ColumnMajor:
      for (uint32_t c = 0; c < d.cols; ++c) fn(size_t(c) * d.stride + size_t(r) * e, c, 1u);
      break;
    case MatrixLayout::InferencingOptimal:
    case MatrixLayout::TrainingOptimal: {
      const uint32_t g = uint32_t(4 / e);
      const size_t row_base = optimal_element_offset(r, 0, d.cols, e);
      for (uint32_t c = 0; c < d.cols; c += g)
        fn(row_base + size_t(c / g) * kOptimalPanelBytes, c, d.cols - c < g ? d.cols - c : g);
      break;
    }
  }
}

// Checks that convert() implements the pair, on a local scratch element, so that an
// unsupported pair fails before anything is written.
bool conversion_implemented(NumberFormat sf, NumberFormat df) {
  if (sf == df) return true;
  alignas(8) unsigned char in[8] = {}, out[8] = {};
  return convert(sf, in, df, out, 1, Overflow::Ieee);
}

bool ranges_overlap(const void* a, size_t an, const void* b, size_t bn) {
  const auto a0 = reinterpret_cast<uintptr_t>(a), b0 = reinterpret_cast<uintptr_t>(b);
  return a0 < b0 + bn && b0 < a0 + an;
}

}  // namespace

ConvertStatus convert_matrix(const MatrixDesc& src, const void* srcData, size_t srcSize,
                             const MatrixDesc& dst, void* dstData, size_t* dstSize,
                             const char** why) {
  auto fail = [&](const char* reason) {
    if (why) *why = reason;
    return ConvertStatus::InvalidArgument;
  };
  if (why) *why = nullptr;

  // --- validation: nothing below writes until every rule has been checked ---
  if (dstSize == nullptr)  // VUID-VkConvertCooperativeVectorMatrixInfoNV-pDstSize-parameter
    return fail("pDstSize is null");
  if (src.rows != dst.rows || src.cols != dst.cols)
    return fail("source and destination shapes differ");
  if (const char* e = matrix_desc_error(src)) return fail(e);
  if (const char* e = matrix_desc_error(dst)) return fail(e);
  if (!coopvec_conversion_allowed(src.format, dst.format))  // 10079, 10080, 10081
    return fail("component type pair cannot be converted");
  // VUID-VkConvertCooperativeVectorMatrixInfoNV-dstComponentType-10082: fp8 only into
  // the optimal layouts.
  if (is_fp8(dst.format) && !layout_is_optimal(dst.layout))
    return fail("fp8 destination requires an optimal layout");

  const size_t src_bytes = layout_required_size(src);
  const size_t dst_bytes = layout_required_size(dst);
  // VUID-vkConvertCooperativeVectorMatrixNV-pInfo-10074 applies whenever srcData is not
  // NULL, size query included.
  if (srcData != nullptr && srcSize < src_bytes) return fail("srcSize too small for the source matrix");

  // vkConvertCooperativeVectorMatrixNV: "If pInfo->dstData is NULL, then the number of
  // bytes required to store the converted matrix is returned in pDstSize" and
  // "pInfo->srcData can be NULL when pInfo->dstData is NULL".
  if (dstData == nullptr) {
    *dstSize = dst_bytes;
    return ConvertStatus::Success;
  }
  // VUID-vkConvertCooperativeVectorMatrixNV-pInfo-10073.
  if (srcData == nullptr) return fail("srcData is null but dstData is not");

  // "If pInfo->pDstSize is less than the number of bytes required to store the converted
  // matrix, no bytes will be written, and VK_INCOMPLETE will be returned", while "on
  // return the variable is overwritten with the number of bytes actually written to
  // pInfo->dstData" -- which is zero here (the vkGetPipelineCacheData convention).
  if (*dstSize < dst_bytes) {
    *dstSize = 0;
    return ConvertStatus::Incomplete;
  }
  // VUID-vkConvertCooperativeVectorMatrixNV-pInfo-10076, checked on the bytes actually
  // read and written.
  if (ranges_overlap(srcData, src_bytes, dstData, dst_bytes))
    return fail("source and destination memory overlap");
  if (!conversion_implemented(src.format, dst.format))
    return fail("component type pair not implemented by convert()");

  const size_t es = coopvec_element_size(src.format);
  const size_t ed = coopvec_element_size(dst.format);
  const size_t cols = src.cols;
  // Same-format conversions are byte copies and never call convert().
  const bool same = src.format == dst.format;
  std::unique_ptr<unsigned char[]> row_in(new (std::nothrow) unsigned char[cols * es]);
  std::unique_ptr<unsigned char[]> row_out(same ? nullptr : new (std::nothrow) unsigned char[cols * ed]);
  if (!row_in || (!same && !row_out)) {
    if (why) *why = "out of host memory for a row of scratch";
    return ConvertStatus::OutOfHostMemory;
  }

  // --- conversion ---
  const auto* s = static_cast<const unsigned char*>(srcData);
  auto* d = static_cast<unsigned char*>(dstData);
  // Padding of the optimal layouts must read as zeros (see coopvec_layout.h); strided
  // layouts keep the application's bytes between lines untouched.
  if (layout_is_optimal(dst.layout)) std::memset(d, 0, dst_bytes);

  unsigned char* out = same ? row_in.get() : row_out.get();
  for (uint32_t r = 0; r < src.rows; ++r) {
    for_each_run(src, es, r, [&](size_t off, uint32_t c, uint32_t n) {
      std::memcpy(row_in.get() + c * es, s + off, n * es);
    });
    // conversion_implemented() has vouched for the pair, so this cannot fail.
    // Rounding to nearest even is convert()'s rule for every float narrowing, as the spec
    // asks of this command; fp8 overflow follows the default (non-saturating) rule.
    if (!same && !convert(src.format, row_in.get(), dst.format, out, cols, Overflow::Ieee))
      return fail("convert() failed mid-way");
    for_each_run(dst, ed, r, [&](size_t off, uint32_t c, uint32_t n) {
      std::memcpy(d + off, out + c * ed, n * ed);
    });
  }
  *dstSize = dst_bytes;
  return ConvertStatus::Success;
}

}  // namespace coopvk::kernels
