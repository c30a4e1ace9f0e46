// Cooperative-vector matrix layouts and the conversion between them
// (the work behind vkConvertCooperativeVectorMatrixNV / vkCmdConvertCooperativeVectorMatrixNV).
//
// Pure functions: no Vulkan types here. The ICD maps VkComponentTypeKHR ->
// NumberFormat and VkCooperativeVectorMatrixLayoutNV -> MatrixLayout (the enum values
// below equal the Vulkan/SPIR-V values, so that mapping is a cast after a range check).
//
// ---------------------------------------------------------------------------------
// Layouts of an R x C matrix (R = numRows, C = numColumns), element size E bytes.
// Offsets are in bytes from the start of the matrix.
//
//   RowMajor    element (r,c) at  r * stride + c * E        stride >= C * E, stride % E == 0
//   ColumnMajor element (r,c) at  c * stride + r * E        stride >= R * E, stride % E == 0
//   Size of a strided matrix: the span it touches, (R-1)*stride + C*E for row-major and
//   (C-1)*stride + R*E for column-major (the "standard matrix layout" size that
//   VUID-vkConvertCooperativeVectorMatrixNV-pInfo-10074/10075 measure against). The
//   gap bytes between rows/columns are never written by a conversion.
//
//   InferencingOptimal and TrainingOptimal (identical bytes; see "why" below):
//     G  = 4 / E                    elements of one row packed into a 4-byte "dword"
//                                   (E=1: 4, E=2: 2, E=4: 1)
//     Rp = round_up(R, 16)          rows padded to whole 16-row blocks
//     Cp = round_up(C, G)           columns padded to whole dwords
//     element (r,c) at
//         (r / 16) * (Cp / G) * 64  start of the 16-row block
//       + (c / G) * 64              the 64-byte "panel" of column group c/G
//       + (r % 16) * 4              the dword of row r inside the panel
//       + (c % G) * E               the element inside the dword
//     size = Rp * Cp * E = (Rp / 16) * (Cp / G) * 64 bytes, always a multiple of 64.
//     Every padding element (r >= R or c >= C) is zero bytes.
//   So a panel is one 512-bit register: 16 dwords, dword j = row (block*16 + j), holding
//   G consecutive columns of that row. With the matrix at a 64-byte aligned address
//   (VUID-RuntimeSpirv-OpCooperativeVectorMatrixMulNV-10097 requires that of Matrix +
//   MatrixOffset) every panel is 64-byte aligned.
//
// Why this layout (for the multiply y[R] = A[R x C] * x[C], batched over a subgroup):
//   The kernel computes Y[lanes x R] = X[lanes x C] * A^T. Vectorizing over 16 output
//   rows, the inner loop over column groups does: load one aligned panel, broadcast the
//   lane's dword x[c..c+G) and multiply-accumulate, which is exactly the shape of the
//   AVX-512 dot-product instructions: VPDPBUSD/VPDPBSSD for 8-bit (G=4), VDPBF16PS for
//   bf16 (G=2), and for fp16 a VFMADD231PH over 32 halves (or VCVTPH2PS of each half)
//   followed by one pairwise add at the end; fp32 (G=1) is a plain broadcast FMA. fp8
//   (G=4) widens a panel to fp16/fp32 first. Panels of one block are consecutive, so a
//   block streams linearly through memory. R and C are padded with zeros, so no kernel
//   needs a tail: the input vector is zero-extended to Cp and outputs r >= R dropped.
//   Portable (AVX2/NEON via xsimd) code reads a panel as 2 or 4 narrower registers.
//
// Why TrainingOptimal == InferencingOptimal:
//   Training needs (a) the transposed multiply (Transpose = true, y[C] = A^T x[R]):
//   the panel at column group g of a block holds A[block rows][g*G..g*G+G), so a
//   transposed kernel multiplies panels element-wise by x[block rows] (16-vector) and
//   reduces over rows, with the same aligned loads; (b) OpCooperativeVectorOuterProduct-
//   AccumulateNV, A += a b^T: for each column group the panel update is
//   a[16 rows] (x) b[G columns], one vector op per panel (outputs into padding are
//   a_pad * b = 0 since operands are zero-extended); (c) the spec's promise that
//   training-optimal fp16/fp32 data can be treated as a plain array for element-wise
//   updates (optimizers): every element is naturally aligned, and padding holds finite
//   zeros, which "do not affect the result of a matrix-vector multiply" (spec,
//   VkCooperativeVectorMatrixLayoutNV). A second layout would buy nothing on a CPU,
//   where the gather-free transposed path above is already panel-based, and one layout
//   makes conversions between the two a plain copy.
// ---------------------------------------------------------------------------------
#pragma once

#include <cstddef>
#include <cstdint>

#include "coopvk/kernels/number_formats.h"

namespace coopvk::kernels {

// Values equal VkCooperativeVectorMatrixLayoutNV and SPIR-V's Cooperative Vector Matrix
// Layout ("All enum values match the corresponding SPIR-V value").
enum class MatrixLayout : uint32_t {
  RowMajor = 0,
  ColumnMajor = 1,
  InferencingOptimal = 2,
  TrainingOptimal = 3,
};

// Constants of the optimal layouts (see the header comment), for the multiply kernels.
inline constexpr uint32_t kOptimalBlockRows = 16;   // rows per block
inline constexpr uint32_t kOptimalPanelBytes = 64;  // one panel = 16 rows x 4 bytes

struct MatrixDesc {
  uint32_t rows = 0;
  uint32_t cols = 0;
  NumberFormat format = NumberFormat::F32;
  MatrixLayout layout = MatrixLayout::RowMajor;
  size_t stride = 0;  // bytes between rows (RowMajor) / columns (ColumnMajor); else ignored
};

enum class ConvertStatus : uint8_t {
  Success,          // VK_SUCCESS
  Incomplete,       // VK_INCOMPLETE: *dstSize smaller than needed; nothing written
  InvalidArgument,  // a valid-usage rule is broken; nothing written
  OutOfHostMemory,  // scratch allocation failed; nothing written
};

// Element size in bytes of a format usable as a cooperative-vector matrix element
// (F32, F16, BF16, E4M3, E5M2, I8, U8), or 0 when the format cannot be one.
size_t coopvec_element_size(NumberFormat f);

// Why `d` is not a valid matrix description (zero size, unsupported format, bad layout
// value, stride too small or misaligned, size overflow), or nullptr when it is valid.
const char* matrix_desc_error(const MatrixDesc& d);

// Bytes a matrix occupies in d.layout (the formulas above); 0 when d is invalid.
size_t layout_required_size(const MatrixDesc& d);

// Byte offset of element (r, c) in an optimal-layout matrix with `cols` columns of
// `elem_size` bytes (1, 2 or 4).
size_t optimal_element_offset(uint32_t r, uint32_t c, uint32_t cols, size_t elem_size);

// Whether a conversion from format `s` to format `d` is allowed
// (VUID-VkConvertCooperativeVectorMatrixInfoNV-srcComponentType-10081).
bool coopvec_conversion_allowed(NumberFormat s, NumberFormat d);

// vkConvertCooperativeVectorMatrixNV on host memory. src and dst must have the same
// rows and cols (the Vulkan struct has one numRows/numColumns).
//  - dstData == nullptr: size query; *dstSize = layout_required_size(dst), Success.
//    srcData may be null then.
//  - *dstSize < required: Incomplete; nothing is written to dstData and *dstSize is set
//    to 0, the number of bytes actually written (see convert_matrix in the .cpp for the
//    spec text).
//  - otherwise converts, *dstSize = required, Success.
// Any invalid input returns InvalidArgument and writes nothing (neither dstData nor
// *dstSize); `why`, when not null, receives a static description of the first problem
// (or nullptr on success).
// Float narrowing rounds to nearest even (spec, VkConvertCooperativeVectorMatrixInfoNV);
// values out of range of an fp8 destination follow the default SPIR-V conversion rule
// (E4M3 -> NaN, E5M2 -> +-inf: Overflow::Ieee) since the command has no saturation
// option.
ConvertStatus convert_matrix(const MatrixDesc& src, const void* srcData, size_t srcSize,
                             const MatrixDesc& dst, void* dstData, size_t* dstSize,
                             const char** why = nullptr);

}  // namespace coopvk::kernels
