// The benchmark MLP (bench_coopvec_mlp.cpp): one 64-component vector per invocation, two
// 64 x 64 layers with biases, weights in the inferencing-optimal layout (layer 1 at byte
// pc.w1 of the weights, its bias at pc.b1), a ReLU between them. The including file defines
// IN_T / MID_T / OUT_T (the vectors' types), INTERP, BIAS_INTERP and BETWEEN(h) (the ReLU,
// and for 8 bits the scale back), and the element size ESZ / OUT_ESZ in bytes.
#extension GL_NV_cooperative_vector : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_8bit_storage : require
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer In { IN_T x[]; };
layout(set = 0, binding = 1) readonly buffer W { uint w[]; };
layout(set = 0, binding = 2) readonly buffer Bias { uint b[]; };
layout(set = 0, binding = 3) writeonly buffer Out { OUT_T y[]; };
layout(push_constant) uniform P { uint w1, b1; } pc;
void main() {
  const uint i = gl_GlobalInvocationID.x;
  coopvecNV<IN_T, 64> v;
  coopVecLoadNV(v, x, i * 64 * ESZ);
  coopvecNV<MID_T, 64> h;
  coopVecMatMulAddNV(h, v, INTERP, w, 0, INTERP, b, 0, BIAS_INTERP, 64, 64,
                     gl_CooperativeVectorMatrixLayoutInferencingOptimalNV, false, 0);
  coopvecNV<IN_T, 64> q = BETWEEN(h);
  coopvecNV<OUT_T, 64> r;
  coopVecMatMulAddNV(r, q, INTERP, w, pc.w1, INTERP, b, pc.b1, BIAS_INTERP, 64, 64,
                     gl_CooperativeVectorMatrixLayoutInferencingOptimalNV, false, 0);
  coopVecStoreNV(r, y, i * 64 * OUT_ESZ);
}
