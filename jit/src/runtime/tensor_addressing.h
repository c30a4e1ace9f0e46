// Tensor-addressed cooperative-matrix loads and stores (SPV_NV_cooperative_matrix2,
// "Tensor Layout and View" with SPV_NV_tensor_addressing's state), element by element:
// the addressing functions of the SPIR-V text, which compiled code calls as
// coopvk_rt_tensor_load / coopvk_rt_tensor_store (runtime_symbols.h).
#pragma once

#include <cstdint>

namespace coopvk::jit {

// A tensor layout's run-time state as compiled code keeps it: 26 u32 words.
enum TensorLayoutField : uint32_t {
  kTlBlock = 0, kTlDim = 5, kTlStride = 10, kTlOffset = 15, kTlSpan = 20, kTlClampValue = 25, kTlWords = 26,
};
// A tensor view's: 14 u32 words.
enum TensorViewField : uint32_t {
  kTvDim = 0, kTvStride = 5, kTvClipRowOffset = 10, kTvClipRowSpan = 11, kTvClipColOffset = 12, kTvClipColSpan = 13,
  kTvWords = 14,
};

// What the types fix, and the access.
struct TensorAccess {
  uint32_t layout_dims;  // 1..5
  uint32_t clamp_mode;   // TensorClampMode: 0 Undefined, 1 Constant, 2 ClampToEdge, 3 Repeat, 4 RepeatMirrored
  uint32_t view_dims;    // 0: no view
  uint32_t view_has_dims;
  uint32_t permutation[5];
  uint32_t element_size;  // bytes of a matrix component
  uint32_t rows, cols;    // the whole matrix's
  uint32_t first_row;     // the rows this call moves: [first_row, first_row + row_count)
  uint32_t row_count;     //   (a workgroup-scope share; the whole matrix otherwise)
  // Bytes [lo, lo + range) may be touched (robust access); range ~0: no bound.
  uint64_t lo, range;
};

}  // namespace coopvk::jit

// dense: row_count x cols components, row-major. A load leaves the elements a view clips
// as they are (the caller puts the Object operand there first).
extern "C" void coopvk_rt_tensor_load(void* dense, const void* base, const uint32_t* layout, const uint32_t* view,
                                      const coopvk::jit::TensorAccess* access);
// For a load with a decode function: per element e of the rows (row-major, n entries a
// column of each array) status[e] (0 skipped: keep; 1 out of bounds: the clamp value; 2
// decode), addresses[e] = base + the element index x access->element_size (the decode
// function's block size), and coords: blockCoord[d] at coords[d * n + e], coordInBlock[d]
// at coords[(layout_dims + d) * n + e].
extern "C" void coopvk_rt_tensor_plan(uint32_t* status, uint64_t* addresses, uint32_t* coords, uint64_t n,
                                      const void* base, const uint32_t* layout, const uint32_t* view,
                                      const coopvk::jit::TensorAccess* access);
extern "C" void coopvk_rt_tensor_store(const void* dense, void* base, const uint32_t* layout, const uint32_t* view,
                                       const coopvk::jit::TensorAccess* access);
