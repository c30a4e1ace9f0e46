#version 450
// bfloat16 and float8 as plain shader types (SPV_KHR_bfloat16, SPV_EXT_float8):
// conversions from and to float and integers, loads and stores, bfloat16 vectors and
// OpDot (test_jit_special_floats.cpp checks each against kernels/number_formats).
#extension GL_EXT_bfloat16 : require
#extension GL_EXT_float_e4m3 : require
#extension GL_EXT_float_e5m2 : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) readonly buffer In { float x[]; };
layout(set = 0, binding = 1) writeonly buffer OutBf { bfloat16_t bf[]; };
layout(set = 0, binding = 2) writeonly buffer OutE4 { floate4m3_t e4[]; };
layout(set = 0, binding = 3) writeonly buffer OutE5 { floate5m2_t e5[]; };
// Per element: float(bf16), float(e4m3), float(e5m2), dot, int(e4m3), bf16(int) as float.
layout(set = 0, binding = 4) writeonly buffer Back { float back[]; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  bfloat16_t b = bfloat16_t(x[i]);
  floate4m3_t e = floate4m3_t(x[i]);
  floate5m2_t f = floate5m2_t(x[i]);
  bf[i] = b;
  e4[i] = e;
  e5[i] = f;
  back[6 * i + 0] = float(b);
  back[6 * i + 1] = float(e);
  back[6 * i + 2] = float(f);
  bf16vec4 va = bf16vec4(b, bfloat16_t(x[i ^ 1u]), bfloat16_t(1.5), bfloat16_t(int(i) - 7));
  bf16vec4 vb = bf16vec4(bfloat16_t(x[(i + 3u) % 32u]), b, bfloat16_t(-0.25), bfloat16_t(3.0));
  back[6 * i + 3] = float(dot(va, vb));
  back[6 * i + 4] = float(int(e));
  back[6 * i + 5] = float(bfloat16_t(int(i) * 1001));
}
