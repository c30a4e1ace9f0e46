// VkComponentTypeKHR values as the tests' number formats and the tags the generated test
// shaders are named with (muladd_variants.cmake, coopvec_variants.cmake).
#pragma once

#include <vulkan/vulkan.h>

#include <map>

#include "matrix_reference.h"

namespace coopvk::test {

struct Format {
  NumberFormat f;
  const char* tag;  // in the generated shader names (muladd_variants.cmake)
};
inline bool format_of(VkComponentTypeKHR t, Format* out) {
  static const std::map<VkComponentTypeKHR, Format> m = {
      {VK_COMPONENT_TYPE_FLOAT16_KHR, {NumberFormat::F16, "f16"}},   {VK_COMPONENT_TYPE_FLOAT32_KHR, {NumberFormat::F32, "f32"}},
      {VK_COMPONENT_TYPE_BFLOAT16_KHR, {NumberFormat::BF16, "bf16"}}, {VK_COMPONENT_TYPE_FLOAT8_E4M3_EXT, {NumberFormat::E4M3, "e4m3"}},
      {VK_COMPONENT_TYPE_FLOAT8_E5M2_EXT, {NumberFormat::E5M2, "e5m2"}}, {VK_COMPONENT_TYPE_SINT8_KHR, {NumberFormat::I8, "s8"}},
      {VK_COMPONENT_TYPE_UINT8_KHR, {NumberFormat::U8, "u8"}},       {VK_COMPONENT_TYPE_SINT16_KHR, {NumberFormat::I16, "s16"}},
      {VK_COMPONENT_TYPE_UINT16_KHR, {NumberFormat::U16, "u16"}},    {VK_COMPONENT_TYPE_SINT32_KHR, {NumberFormat::I32, "s32"}},
      {VK_COMPONENT_TYPE_UINT32_KHR, {NumberFormat::U32, "u32"}},
  };
  auto it = m.find(t);
  if (it == m.end()) return false;
  *out = it->second;
  return true;
}

}  // namespace coopvk::test
