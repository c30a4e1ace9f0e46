// Use conversions (VK_EXT_cooperative_matrix_maintenance1, or with NV2 defined
// VK_NV_cooperative_matrix2) of an S x S accumulator of component type T: transposed to A
// (NV2: B), as is to B (OpCooperativeMatrixConvertUseEXT / ConvertNV), back from A to an
// accumulator (NV2: the transposed B stored column-major), and with a component-type change to U as A (a value
// conversion that also changes the use). test_matrix_maintenance1.cpp checks each.
#include "m1_common.glsl"
layout(constant_id = 1) const uint S = 16;
layout(set = 0, binding = 0) readonly buffer BX { T x[]; };
layout(set = 0, binding = 2) writeonly buffer BO { T o[]; };   // 3 results per tile
layout(set = 0, binding = 3) writeonly buffer BU { U u[]; };   // 1 result per tile

void main() {
  uint t = gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID;
  uint tile = S * S;
  coopmat<T, gl_ScopeSubgroup, S, S, gl_MatrixUseAccumulator> acc;
  coopMatLoad(acc, x, t * tile, S, gl_CooperativeMatrixLayoutRowMajor);
#ifdef NV2
  // NV2 transposes to B only and converts only from accumulators: region 2 is the
  // transposed B stored column-major instead (= acc again).
  coopmat<T, gl_ScopeSubgroup, S, S, gl_MatrixUseB> at;
  coopMatTransposeNV(at, acc);
#else
  coopmat<T, gl_ScopeSubgroup, S, S, gl_MatrixUseA> at;
  coopMatTransposeEXT(at, acc);
#endif
  coopMatStore(at, o, t * tile * 3, S, gl_CooperativeMatrixLayoutRowMajor);
  coopmat<T, gl_ScopeSubgroup, S, S, gl_MatrixUseB> b = coopmat<T, gl_ScopeSubgroup, S, S, gl_MatrixUseB>(acc);
  coopMatStore(b, o, t * tile * 3 + tile, S, gl_CooperativeMatrixLayoutRowMajor);
#ifdef NV2
  coopMatStore(at, o, t * tile * 3 + 2 * tile, S, gl_CooperativeMatrixLayoutColumnMajor);  // = acc
#else
  coopmat<T, gl_ScopeSubgroup, S, S, gl_MatrixUseAccumulator> back = coopmat<T, gl_ScopeSubgroup, S, S, gl_MatrixUseAccumulator>(at);
  coopMatStore(back, o, t * tile * 3 + 2 * tile, S, gl_CooperativeMatrixLayoutColumnMajor);  // = acc
#endif
  coopmat<U, gl_ScopeSubgroup, S, S, gl_MatrixUseA> ua = coopmat<U, gl_ScopeSubgroup, S, S, gl_MatrixUseA>(acc);
  coopMatStore(ua, u, t * tile, S, gl_CooperativeMatrixLayoutRowMajor);
}
