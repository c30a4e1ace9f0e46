// Block loads (cooperativeMatrixBlockLoads, test_tensor_addressing.cpp): a 16x64 f32 matrix of
// scope SCOPE (from the including file) decoded from blocks of 32 int8 values with an f16
// scale, one block per 1x32 of the tensor (block size 1 x 32, 16 x 128 elements), through a
// decode function that also adds its block coordinates; then a slice partly out of bounds
// under the Constant clamp mode. The workgroup size is specialization constant 0.
#pragma use_vulkan_memory_model
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_buffer_reference : require
layout(local_size_x_id = 0) in;
layout(buffer_reference, std430, buffer_reference_align = 2) readonly buffer QBlock {
  float16_t scale;
  int8_t q[32];
};
layout(set = 0, binding = 0) readonly buffer BQ { uint8_t raw[]; };  // 16 x 4 blocks of 34 bytes
layout(set = 0, binding = 1) writeonly buffer BO { float o[]; };     // 2 x 16 x 64
#define MAT coopmat<float, SCOPE, 16, 64, gl_MatrixUseAccumulator>

float decodeQ(const in QBlock b, const in uint32_t bc[2], const in uint32_t cib[2]) {
  return float(b.q[cib[1]]) * float(b.scale) + float(bc[0] * 1000u + bc[1] * 100u);
}

void main() {
  tensorLayoutNV<2> t = createTensorLayoutNV(2);
  t = setTensorLayoutBlockSizeNV(t, 1, 32);
  t = setTensorLayoutDimensionNV(t, 16, 128);
  MAT m = MAT(0.0);
  coopMatLoadTensorNV(m, raw, 0, sliceTensorLayoutNV(t, 0, 16, 32, 64), decodeQ);
  coopMatStore(m, o, 0, 64, gl_CooperativeMatrixLayoutRowMajor);

  tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> k = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
  k = setTensorLayoutBlockSizeNV(k, 1, 32);
  k = setTensorLayoutDimensionNV(k, 16, 128);
  k = setTensorLayoutClampValueNV(k, floatBitsToUint(-2.5));
  MAT c = MAT(0.0);
  coopMatLoadTensorNV(c, raw, 0, sliceTensorLayoutNV(k, 8, 16, 96, 64), decodeQ);
  coopMatStore(c, o, 1024, 64, gl_CooperativeMatrixLayoutRowMajor);
}
