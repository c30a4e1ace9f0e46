#version 450
#pragma use_vulkan_memory_model
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_scalar_block_layout : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_shader_subgroup_extended_types_int64 : require
#extension GL_EXT_shader_subgroup_extended_types_int16 : require
#extension GL_KHR_shader_subgroup_arithmetic : require
// Scalar block layout (12-byte vec3 stride), float64 arithmetic, subgroup operations on
// 64- and 16-bit integers, and a device-scope atomic under the Vulkan memory model.
layout(local_size_x = 32) in;
layout(set = 0, binding = 0, scalar) buffer S { vec3 v[]; };
layout(set = 0, binding = 1) buffer D { double d[]; };
layout(set = 0, binding = 2) buffer E64 { uint64_t s64[]; };
layout(set = 0, binding = 3) buffer E16 { int16_t s16[]; };
layout(set = 0, binding = 4) buffer C { uint counter; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  vec3 a = v[i];
  v[i] = a.zxy * 2.0;
  double x = double(i) / 3.0;
  d[i] = x * x + 1.0 / (x + 1.0);
  s64[i] = subgroupAdd(uint64_t(i) << 33);
  s16[i] = subgroupMax(int16_t(i) - int16_t(10));
  atomicAdd(counter, 1u, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsAcquireRelease);
}
