// Tensor-addressed loads and stores (SPV_NV_tensor_addressing, test_tensor_addressing.cpp)
// of a 16x16 f32 accumulator of scope SCOPE (from the including file): a 2D slice, each
// clamp mode, a transposing view, a 3D layout, a clipping view, explicit strides, a block
// size, and stores with the Constant clamp mode and through a transposing view.
// src[i] holds i; test_tensor_addressing.cpp computes each result from the SPIR-V text's
// addressing rules. The workgroup size is specialization constant 0.
#pragma use_vulkan_memory_model
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x_id = 0) in;
layout(set = 0, binding = 0) readonly buffer BS { float src[]; };  // 2048
layout(set = 0, binding = 1) writeonly buffer BO { float o[]; };   // 10 x 256
layout(set = 0, binding = 2) buffer BD { float dst[]; };           // 40 x 24
layout(set = 0, binding = 3) buffer BE { float dst2[]; };          // 40 x 24
#define MAT coopmat<float, SCOPE, 16, 16, gl_MatrixUseAccumulator>
#define STORE(m, slot) coopMatStore(m, o, (slot) * 256, 16, gl_CooperativeMatrixLayoutRowMajor)

void main() {
  MAT m = MAT(0.0);
  tensorLayoutNV<2> plain = createTensorLayoutNV(2);
  plain = setTensorLayoutDimensionNV(plain, 40, 24);
  coopMatLoadTensorNV(m, src, 0, sliceTensorLayoutNV(plain, 5, 16, 3, 16));
  STORE(m, 0);

  tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> k = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
  k = setTensorLayoutDimensionNV(k, 40, 24);
  k = setTensorLayoutClampValueNV(k, floatBitsToUint(7.5));
  MAT m1 = MAT(0.0);
  coopMatLoadTensorNV(m1, src, 0, sliceTensorLayoutNV(k, 30, 16, 14, 16));
  STORE(m1, 1);

  tensorLayoutNV<2, gl_CooperativeMatrixClampModeClampToEdgeNV> e = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeClampToEdgeNV);
  e = setTensorLayoutDimensionNV(e, 40, 24);
  MAT m2 = MAT(0.0);
  coopMatLoadTensorNV(m2, src, 0, sliceTensorLayoutNV(e, -3, 16, 20, 16));
  STORE(m2, 2);

  tensorLayoutNV<2, gl_CooperativeMatrixClampModeRepeatNV> w = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeRepeatNV);
  w = setTensorLayoutDimensionNV(w, 40, 24);
  MAT m3 = MAT(0.0);
  coopMatLoadTensorNV(m3, src, 0, sliceTensorLayoutNV(w, 35, 16, -5, 16));
  STORE(m3, 3);

  tensorLayoutNV<2, gl_CooperativeMatrixClampModeMirrorRepeatNV> r = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeMirrorRepeatNV);
  r = setTensorLayoutDimensionNV(r, 40, 24);
  MAT m4 = MAT(0.0);
  coopMatLoadTensorNV(m4, src, 0, sliceTensorLayoutNV(r, 36, 16, 18, 16));
  STORE(m4, 4);

  tensorViewNV<2, false, 1, 0> transposed = createTensorViewNV(2, false, 1, 0);
  MAT m5 = MAT(0.0);
  coopMatLoadTensorNV(m5, src, 0, sliceTensorLayoutNV(plain, 5, 16, 3, 16), transposed);
  STORE(m5, 5);

  tensorLayoutNV<3> cube = createTensorLayoutNV(3);
  cube = setTensorLayoutDimensionNV(cube, 3, 20, 16);
  MAT m6 = MAT(0.0);
  coopMatLoadTensorNV(m6, src, 0, sliceTensorLayoutNV(cube, 1, 1, 2, 16, 0, 16));
  STORE(m6, 6);

  tensorViewNV<2, false, 0, 1> clip = createTensorViewNV(2, false, 0, 1);
  clip = setTensorViewClipNV(clip, 2, 8, 4, 8);
  MAT m7 = MAT(100.0);
  coopMatLoadTensorNV(m7, src, 0, sliceTensorLayoutNV(plain, 5, 16, 3, 16), clip);
  STORE(m7, 7);

  tensorLayoutNV<2> strided = setTensorLayoutStrideNV(plain, 48, 2);
  MAT m8 = MAT(0.0);
  coopMatLoadTensorNV(m8, src, 0, sliceTensorLayoutNV(strided, 5, 16, 3, 16));
  STORE(m8, 8);

  tensorLayoutNV<2> blocked = createTensorLayoutNV(2);
  blocked = setTensorLayoutBlockSizeNV(blocked, 1, 2);
  blocked = setTensorLayoutDimensionNV(blocked, 40, 48);
  MAT m9 = MAT(0.0);
  coopMatLoadTensorNV(m9, src, 0, sliceTensorLayoutNV(blocked, 5, 16, 3, 16));
  STORE(m9, 9);

  coopMatStoreTensorNV(m, dst, 0, sliceTensorLayoutNV(k, 30, 16, 16, 16));
  coopMatStoreTensorNV(m, dst2, 0, sliceTensorLayoutNV(plain, 0, 16, 0, 16), transposed);
}
