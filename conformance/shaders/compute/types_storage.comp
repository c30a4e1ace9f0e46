#version 450
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_8bit_storage : require
// 8/16-bit loads and stores, float16 and int64 arithmetic, specialization constants
// (the workgroup size and a scale factor).
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const int SCALE = 1;
layout(set = 0, binding = 0) readonly buffer In8 { int8_t a8[]; };
layout(set = 0, binding = 1) readonly buffer In16 { float16_t h[]; };
layout(set = 0, binding = 2) buffer Out32 { int o32[]; };
layout(set = 0, binding = 3) buffer Out16 { float16_t oh[]; };
layout(set = 0, binding = 4) buffer Out64 { uint64_t o64[]; };
layout(set = 0, binding = 5) buffer Out8 { uint8_t ou8[]; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  o32[i] = int(a8[i]) * SCALE;
  oh[i] = h[i] * float16_t(2.0) + float16_t(1.0);
  o64[i] = uint64_t(i) * 0x100000001ul + (uint64_t(1) << 40);
  ou8[i] = uint8_t(i * 7u);
}
