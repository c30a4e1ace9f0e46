// Cooperative-vector Vulkan structures the tests share, needing only the Vulkan headers
// (for the tests through the loader and those on the driver directly alike): a
// conversion's info and the property rows the spec requires.
#pragma once

#include <vulkan/vulkan.h>

#include <cstddef>
#include <cstdint>

namespace coopvk::test {

// A VkConvertCooperativeVectorMatrixInfoNV with the shape, types, layouts and strides set
// (no data, sizes or pNext).
inline VkConvertCooperativeVectorMatrixInfoNV convert_info(uint32_t rows, uint32_t cols, VkComponentTypeKHR src_type,
                                                          VkCooperativeVectorMatrixLayoutNV src_layout, size_t src_stride,
                                                          VkComponentTypeKHR dst_type,
                                                          VkCooperativeVectorMatrixLayoutNV dst_layout, size_t dst_stride) {
  VkConvertCooperativeVectorMatrixInfoNV info{VK_STRUCTURE_TYPE_CONVERT_COOPERATIVE_VECTOR_MATRIX_INFO_NV};
  info.numRows = rows;
  info.numColumns = cols;
  info.srcComponentType = src_type;
  info.srcLayout = src_layout;
  info.srcStride = src_stride;
  info.dstComponentType = dst_type;
  info.dstLayout = dst_layout;
  info.dstStride = dst_stride;
  return info;
}

// One VkCooperativeVectorPropertiesNV combination, transpose aside.
struct VectorRow {
  VkComponentTypeKHR input, input_interp, matrix, bias, result;
};
// "The following combinations must be supported (each row is a required combination)"
// (chapter-shaders-cooperative-matrices-and-vectors.adoc, VkCooperativeVectorPropertiesNV).
inline constexpr VectorRow kRequiredVectorRows[] = {
    {VK_COMPONENT_TYPE_FLOAT16_KHR, VK_COMPONENT_TYPE_FLOAT16_KHR, VK_COMPONENT_TYPE_FLOAT16_KHR,
     VK_COMPONENT_TYPE_FLOAT16_KHR, VK_COMPONENT_TYPE_FLOAT16_KHR},
    {VK_COMPONENT_TYPE_UINT32_KHR, VK_COMPONENT_TYPE_SINT8_PACKED_NV, VK_COMPONENT_TYPE_SINT8_KHR,
     VK_COMPONENT_TYPE_SINT32_KHR, VK_COMPONENT_TYPE_SINT32_KHR},
    {VK_COMPONENT_TYPE_SINT8_KHR, VK_COMPONENT_TYPE_SINT8_KHR, VK_COMPONENT_TYPE_SINT8_KHR,
     VK_COMPONENT_TYPE_SINT32_KHR, VK_COMPONENT_TYPE_SINT32_KHR},
    {VK_COMPONENT_TYPE_FLOAT32_KHR, VK_COMPONENT_TYPE_SINT8_KHR, VK_COMPONENT_TYPE_SINT8_KHR,
     VK_COMPONENT_TYPE_SINT32_KHR, VK_COMPONENT_TYPE_SINT32_KHR},
    {VK_COMPONENT_TYPE_FLOAT16_KHR, VK_COMPONENT_TYPE_FLOAT_E4M3_NV, VK_COMPONENT_TYPE_FLOAT_E4M3_NV,
     VK_COMPONENT_TYPE_FLOAT16_KHR, VK_COMPONENT_TYPE_FLOAT16_KHR},
    {VK_COMPONENT_TYPE_FLOAT16_KHR, VK_COMPONENT_TYPE_FLOAT_E5M2_NV, VK_COMPONENT_TYPE_FLOAT_E5M2_NV,
     VK_COMPONENT_TYPE_FLOAT16_KHR, VK_COMPONENT_TYPE_FLOAT16_KHR},
};

inline bool row_matches(const VectorRow& r, const VkCooperativeVectorPropertiesNV& p) {
  return p.inputType == r.input && p.inputInterpretation == r.input_interp && p.matrixInterpretation == r.matrix &&
         p.biasInterpretation == r.bias && p.resultType == r.result;
}

}  // namespace coopvk::test
