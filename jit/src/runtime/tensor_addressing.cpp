// The addressing functions of SPV_NV_cooperative_matrix2 ("Tensor Layout and View":
// matrixCoordToLinear, linearToViewCoord, viewCoordToLinear, linearToSpanCoord,
// spanCoordToTensorCoord, tensorCoordToLinear), literally, for each element. A zero
// divisor (a span or dimension never set) or an address outside the bound range skips
// the element: loads leave it, stores drop it, and nothing outside the buffer is touched.
#include "runtime/tensor_addressing.h"

#include <algorithm>
#include <cstring>

namespace coopvk::jit {
namespace {

constexpr uint32_t kUndefined = 0, kConstant = 1, kClampToEdge = 2, kRepeat = 3;

int64_t smod(int64_t a, int64_t b) {  // OpSMod: the sign of the divisor
  int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

enum class Where { Skip, Clamp, At };

// Element (row, col)'s element index in the tensor, or why there is none.
Where locate(const uint32_t* t, const uint32_t* v, const TensorAccess& a, bool store, uint32_t row, uint32_t col,
             uint64_t* index, uint32_t* block_coord = nullptr, uint32_t* coord_in_block = nullptr) {
  uint64_t linear;
  if (a.view_dims) {
    const uint32_t ro = v[kTvClipRowOffset], rs = v[kTvClipRowSpan], co = v[kTvClipColOffset], cs = v[kTvClipColSpan];
    if (row < ro || uint64_t(row) >= uint64_t(ro) + rs || col < co || uint64_t(col) >= uint64_t(co) + cs)
      return Where::Skip;  // clipped: "the matrix element is unmodified" / not stored
    const uint64_t width = cs < a.cols ? cs : a.cols;
    linear = uint64_t(row - ro) * width + (col - co);
    // linearToViewCoord, then viewCoordToLinear.
    const uint32_t* dims = a.view_has_dims ? v + kTvDim : t + kTlSpan;
    uint64_t coord[5] = {};
    for (int d = int(a.view_dims) - 1; d >= 0; --d) {
      const uint32_t i = a.permutation[d];
      if (i >= 5 || dims[i] == 0) return Where::Skip;
      coord[i] = linear % dims[i];
      linear /= dims[i];
    }
    uint64_t stride[5] = {};
    if (a.view_has_dims) {
      for (uint32_t d = 0; d < a.view_dims; ++d) stride[d] = v[kTvStride + d];
    } else {
      stride[a.view_dims - 1] = 1;
      for (int d = int(a.view_dims) - 2; d >= 0; --d) stride[d] = stride[d + 1] * t[kTlSpan + d + 1];
    }
    linear = 0;
    for (uint32_t d = 0; d < a.view_dims; ++d) linear += coord[d] * stride[d];
  } else {
    linear = uint64_t(row) * a.cols + col;
  }
  // linearToSpanCoord.
  const uint32_t L = a.layout_dims;
  uint64_t span_coord[5] = {};
  for (int d = int(L) - 1; d >= 0; --d) {
    const uint32_t s = t[kTlSpan + d];
    if (s == 0) return Where::Skip;
    span_coord[d] = linear % s;
    linear /= s;
  }
  // spanCoordToTensorCoord, tensorCoordToLinear.
  uint64_t out = 0;
  for (uint32_t d = 0; d < L; ++d) {
    int64_t c = int64_t(span_coord[d]) + int32_t(t[kTlOffset + d]);
    const int64_t dim = t[kTlDim + d];
    if (c < 0 || c >= dim) {
      uint32_t mode = a.clamp_mode;
      if (store && mode != kUndefined) mode = kConstant;  // other stores out of bounds are discarded
      if (mode == kConstant) return store ? Where::Skip : Where::Clamp;
      if (dim == 0) return Where::Skip;
      if (mode == kClampToEdge) {
        c = c < 0 ? 0 : dim - 1;
      } else if (mode == kRepeat) {
        c = smod(c, dim);
      } else if (mode != kUndefined) {  // RepeatMirrored
        if (dim == 1) {
          c = 0;
        } else {
          c = smod(c, 2 * dim - 2);
          if (c >= dim) c = 2 * dim - 2 - c;
        }
      }
    }
    const uint32_t block = t[kTlBlock + d];
    if (block == 0) return Where::Skip;
    if (block_coord) block_coord[d] = uint32_t(c / int64_t(block));
    if (coord_in_block) coord_in_block[d] = uint32_t(c % int64_t(block));
    out += uint64_t(c / int64_t(block)) * t[kTlStride + d];  // Undefined: as computed
  }
  *index = out;
  return Where::At;
}

// The address of element index `i`, or null where it leaves the bound range.
const uint8_t* address(const void* base, uint64_t i, const TensorAccess& a) {
  const uint64_t off = i * a.element_size;
  if (a.range != ~uint64_t(0)) {
    const uint64_t at = uint64_t(reinterpret_cast<uintptr_t>(base)) + off;
    if (at < a.lo || a.range < a.element_size || at - a.lo > a.range - a.element_size) return nullptr;
  }
  return static_cast<const uint8_t*>(base) + off;
}

// Rows [row, row + count) that the addressing maps to a box of tensor coordinates: the
// tensor coordinates of the first row's first element (tc), the dimension a row runs along
// (*inner; its elements have consecutive coordinates there and equal ones elsewhere) and
// the one the rows step along by one (*next, -1 for a single row or one dimension), or
// false. That holds without a view or with a view that takes the layout's spans as
// dimensions (any permutation), with no clip inside the rows, and each row inside one line
// of the innermost (permuted) dimension: linearToViewCoord then gives a row's elements
// consecutive coordinates in that dimension, and viewCoordToLinear and linearToSpanCoord
// give those coordinates back (each is below its span). Several rows form one box when the
// innermost span is the matrix's width (every row starts a line) and the rows stay in one
// line of the next dimension. A box's corners decide whether all of it is inside the
// tensor, so no element needs clamping, whatever the clamp mode.
bool row_box(const uint32_t* t, const uint32_t* v, const TensorAccess& a, uint32_t row, uint32_t count, int64_t* tc,
             uint32_t* inner, int* next) {
  const uint32_t L = a.layout_dims;
  uint32_t order[5];  // dimensions from outermost to innermost, as linear indices run
  uint64_t linear = uint64_t(row) * a.cols;
  if (a.view_dims) {
    if (a.view_has_dims || a.view_dims != L) return false;
    const uint64_t ro = v[kTvClipRowOffset], rs = v[kTvClipRowSpan], co = v[kTvClipColOffset], cs = v[kTvClipColSpan];
    if (row < ro || uint64_t(row) + count > ro + rs || co != 0 || cs < a.cols) return false;
    linear = (row - ro) * a.cols;
    for (uint32_t d = 0; d < L; ++d) {
      if (a.permutation[d] >= L) return false;
      order[d] = a.permutation[d];
    }
  } else {
    for (uint32_t d = 0; d < L; ++d) order[d] = d;
  }
  uint64_t coord[5] = {};
  for (int d = int(L) - 1; d >= 0; --d) {
    const uint32_t i = order[d], s = t[kTlSpan + i];
    if (s == 0) return false;
    coord[i] = linear % s;
    linear /= s;
  }
  *inner = order[L - 1];
  if (coord[*inner] + a.cols > t[kTlSpan + *inner]) return false;  // the row wraps to another line
  *next = -1;
  if (count > 1) {
    if (t[kTlSpan + *inner] != a.cols) return false;
    if (L > 1) {
      *next = int(order[L - 2]);
      if (coord[*next] + count > t[kTlSpan + *next]) return false;
    }
  }
  for (uint32_t d = 0; d < L; ++d) {
    if (t[kTlBlock + d] == 0) return false;
    tc[d] = int64_t(coord[d]) + int32_t(t[kTlOffset + d]);
    const int64_t extent = d == *inner ? int64_t(a.cols) : int(d) == *next ? int64_t(count) : 1;
    if (tc[d] < 0 || tc[d] + extent > int64_t(t[kTlDim + d])) return false;
  }
  return true;
}

// A row_box() of block size 1 inside the bound range, as a strided block of elements: where
// it starts (*col_step: elements between neighbours in a row, *row_step: between rows), or
// null.
const uint8_t* strided_rows(const void* base, const uint32_t* t, const uint32_t* v, const TensorAccess& a, uint32_t row,
                            uint32_t count, uint64_t* col_step, uint64_t* row_step) {
  int64_t tc[5];
  uint32_t inner = 0;
  int next = -1;
  if (!row_box(t, v, a, row, count, tc, &inner, &next)) return nullptr;
  uint64_t index = 0;
  for (uint32_t d = 0; d < a.layout_dims; ++d) {
    if (t[kTlBlock + d] != 1) return nullptr;
    index += uint64_t(tc[d]) * t[kTlStride + d];
  }
  *col_step = t[kTlStride + inner];
  *row_step = next >= 0 ? t[kTlStride + next] : 0;  // one dimension: every row is the same line
  const uint64_t first = uint64_t(reinterpret_cast<uintptr_t>(base)) + index * a.element_size;
  const uint64_t bytes = ((uint64_t(a.cols) - 1) * *col_step + uint64_t(count - 1) * *row_step + 1) * a.element_size;
  if (a.range != ~uint64_t(0) && (first < a.lo || a.range < bytes || first - a.lo > a.range - bytes)) return nullptr;
  return static_cast<const uint8_t*>(base) + index * a.element_size;
}

// A rows x cols box of `size`-byte elements from one strided layout to another (steps in
// elements: between rows, between neighbours in a row). Rows contiguous on both sides are
// memcpy'd. Into a dense destination (loads) anything else (a transposing view) goes in
// 16 x 16 tiles, inner loop along whichever side of the source is contiguous, so that a
// tile's source and destination lines (often a page apart each, a column of a large tensor)
// stay in the cache and the TLB. Stores keep row-major order: where a layout maps several
// elements to one (zero or overlapping steps), the last one in that order is what stays,
// as element by element.
template <typename T>
void copy_box(uint8_t* to, uint64_t to_row, uint64_t to_col, const uint8_t* from, uint64_t from_row, uint64_t from_col,
              uint32_t rows, uint32_t cols) {
  constexpr uint32_t kTile = 16;
  auto one = [&](uint64_t r, uint64_t c) {
    T x;
    std::memcpy(&x, from + (r * from_row + c * from_col) * sizeof(T), sizeof(T));
    std::memcpy(to + (r * to_row + c * to_col) * sizeof(T), &x, sizeof(T));
  };
  const bool down_columns = from_row < from_col;  // the source's neighbours are in the next row
  for (uint32_t r0 = 0; r0 < rows; r0 += kTile)
    for (uint32_t c0 = 0; c0 < cols; c0 += kTile) {
      const uint32_t r1 = std::min(rows, r0 + kTile), c1 = std::min(cols, c0 + kTile);
      if (down_columns) {
        for (uint32_t c = c0; c < c1; ++c)
          for (uint32_t r = r0; r < r1; ++r) one(r, c);
      } else {
        for (uint32_t r = r0; r < r1; ++r)
          for (uint32_t c = c0; c < c1; ++c) one(r, c);
      }
    }
}

void copy_box(uint8_t* to, uint64_t to_row, uint64_t to_col, const uint8_t* from, uint64_t from_row, uint64_t from_col,
              uint32_t rows, uint32_t cols, uint32_t size) {
  const bool dense_destination = to_col == 1 && to_row == cols;
  if (to_col == 1 && from_col == 1 && (dense_destination || to_row >= cols || rows == 1)) {
    for (uint32_t r = 0; r < rows; ++r)
      std::memcpy(to + r * to_row * size, from + r * from_row * size, uint64_t(cols) * size);
    return;
  }
  if (dense_destination) switch (size) {
    case 1: return copy_box<uint8_t>(to, to_row, to_col, from, from_row, from_col, rows, cols);
    case 2: return copy_box<uint16_t>(to, to_row, to_col, from, from_row, from_col, rows, cols);
    case 4: return copy_box<uint32_t>(to, to_row, to_col, from, from_row, from_col, rows, cols);
    case 8: return copy_box<uint64_t>(to, to_row, to_col, from, from_row, from_col, rows, cols);
    default: break;
  }
  for (uint32_t r = 0; r < rows; ++r)
    for (uint32_t c = 0; c < cols; ++c)
      std::memcpy(to + (r * to_row + c * to_col) * size, from + (r * from_row + c * from_col) * size, size);
}

}  // namespace
}  // namespace coopvk::jit

using coopvk::jit::TensorAccess;

extern "C" void coopvk_rt_tensor_load(void* dense, const void* base, const uint32_t* layout, const uint32_t* view,
                                      const TensorAccess* access) {
  using namespace coopvk::jit;
  const TensorAccess& a = *access;
  auto* out = static_cast<uint8_t*>(dense);
  const uint32_t clamp = layout[kTlClampValue];
  const uint64_t line = uint64_t(a.cols) * a.element_size;
  const uint32_t count = a.first_row >= a.rows ? 0 : std::min(a.row_count, a.rows - a.first_row);
  uint64_t col_step = 0, row_step = 0;
  if (count > 1)
    if (const uint8_t* src = strided_rows(base, layout, view, a, a.first_row, count, &col_step, &row_step)) {
      copy_box(out, a.cols, 1, src, row_step, col_step, count, a.cols, a.element_size);
      return;
    }
  for (uint32_t r = 0; r < count; ++r) {
    const uint32_t row = a.first_row + r;
    if (const uint8_t* src = strided_rows(base, layout, view, a, row, 1, &col_step, &row_step)) {
      copy_box(out + r * line, a.cols, 1, src, 0, col_step, 1, a.cols, a.element_size);
      continue;
    }
    for (uint32_t col = 0; col < a.cols; ++col) {
      uint8_t* dst = out + (uint64_t(r) * a.cols + col) * a.element_size;
      uint64_t i = 0;
      switch (locate(layout, view, a, false, row, col, &i)) {
        case Where::Skip: break;
        case Where::Clamp: {
          // The clamp value's low bytes, zero-extended to wider components.
          std::memset(dst, 0, a.element_size);
          std::memcpy(dst, &clamp, a.element_size < 4 ? a.element_size : 4);
          break;
        }
        case Where::At:
          if (const uint8_t* src = address(base, i, a)) std::memcpy(dst, src, a.element_size);
          else std::memset(dst, 0, a.element_size);  // robust access: out of the buffer reads 0
          break;
      }
    }
  }
}

extern "C" void coopvk_rt_tensor_store(const void* dense, void* base, const uint32_t* layout, const uint32_t* view,
                                       const TensorAccess* access) {
  using namespace coopvk::jit;
  const TensorAccess& a = *access;
  const auto* in = static_cast<const uint8_t*>(dense);
  const uint64_t line = uint64_t(a.cols) * a.element_size;
  const uint32_t count = a.first_row >= a.rows ? 0 : std::min(a.row_count, a.rows - a.first_row);
  uint64_t col_step = 0, row_step = 0;
  // Rows stored in order, so where rows overlap (a zero step) the last one wins, as element by element.
  if (count > 1)
    if (const uint8_t* dst = strided_rows(base, layout, view, a, a.first_row, count, &col_step, &row_step)) {
      copy_box(const_cast<uint8_t*>(dst), row_step, col_step, in, a.cols, 1, count, a.cols, a.element_size);
      return;
    }
  for (uint32_t r = 0; r < count; ++r) {
    const uint32_t row = a.first_row + r;
    if (const uint8_t* dst = strided_rows(base, layout, view, a, row, 1, &col_step, &row_step)) {
      copy_box(const_cast<uint8_t*>(dst), 0, col_step, in + r * line, 0, 1, 1, a.cols, a.element_size);
      continue;
    }
    for (uint32_t col = 0; col < a.cols; ++col) {
      uint64_t i = 0;
      if (locate(layout, view, a, true, row, col, &i) != Where::At) continue;
      if (const uint8_t* dst = address(base, i, a))
        std::memcpy(const_cast<uint8_t*>(dst), in + (uint64_t(r) * a.cols + col) * a.element_size, a.element_size);
    }
  }
}

extern "C" void coopvk_rt_tensor_plan(uint32_t* status, uint64_t* addresses, uint32_t* coords, uint64_t n,
                                      const void* base, const uint32_t* layout, const uint32_t* view,
                                      const TensorAccess* access) {
  using namespace coopvk::jit;
  const TensorAccess& a = *access;
  const uint32_t L = a.layout_dims;
  for (uint32_t r = 0; r < a.row_count; ++r) {
    const uint32_t row = a.first_row + r;
    int64_t tc[5];
    uint32_t inner = 0;
    int next = -1;
    if (row < a.rows && row_box(layout, view, a, row, 1, tc, &inner, &next)) {
      // The whole row inside the tensor: only the inner coordinate moves, one block
      // coordinate per block of it, without dividing per element.
      uint64_t rest = 0;  // the other dimensions' part of the element index
      for (uint32_t d = 0; d < L; ++d)
        if (d != inner) rest += uint64_t(tc[d] / int64_t(layout[kTlBlock + d])) * layout[kTlStride + d];
      const uint32_t block = layout[kTlBlock + inner];
      const uint64_t stride = layout[kTlStride + inner];
      uint64_t q = uint64_t(tc[inner]) / block, in_block = uint64_t(tc[inner]) % block;
      const uint64_t e0 = uint64_t(r) * a.cols;
      for (uint32_t col = 0; col < a.cols; ++col) {
        const uint64_t e = e0 + col;
        status[e] = 2;
        addresses[e] = uint64_t(reinterpret_cast<uintptr_t>(base)) + (rest + q * stride) * a.element_size;
        for (uint32_t d = 0; d < L; ++d) {
          const bool in = d == inner;
          const uint32_t bd = layout[kTlBlock + d];
          coords[d * n + e] = in ? uint32_t(q) : uint32_t(tc[d] / int64_t(bd));
          coords[(L + d) * n + e] = in ? uint32_t(in_block) : uint32_t(tc[d] % int64_t(bd));
        }
        if (++in_block == block) in_block = 0, ++q;
      }
      continue;
    }
    for (uint32_t col = 0; col < a.cols; ++col) {
      const uint64_t e = uint64_t(r) * a.cols + col;
      status[e] = 0;
      if (row >= a.rows) continue;
      uint32_t bc[5] = {}, cib[5] = {};
      uint64_t i = 0;
      const Where w = locate(layout, view, a, false, row, col, &i, bc, cib);
      status[e] = w == Where::At ? 2 : w == Where::Clamp ? 1 : 0;
      addresses[e] = uint64_t(reinterpret_cast<uintptr_t>(base)) + i * a.element_size;
      for (uint32_t d = 0; d < L; ++d) {
        coords[d * n + e] = bc[d];
        coords[(L + d) * n + e] = cib[d];
      }
    }
  }
}
