// What every m1_*_body.glsl shares: the extensions and the workgroup size (two subgroups
// of the size the test requires, as specialization constant 0). With NV2 defined the
// bodies use VK_NV_cooperative_matrix2's spellings of the same operations (its
// capabilities instead of the maintenance1 ones): REDUCE, the mode names and PER_ELEMENT
// below; NV2 has no coordinate query and transposes only to B.
#pragma use_vulkan_memory_model
#extension GL_KHR_cooperative_matrix : require
#ifdef NV2
#extension GL_NV_cooperative_matrix2 : require
#define REDUCE coopMatReduceNV
#define REDUCE_ROW gl_CooperativeMatrixReduceRowNV
#define REDUCE_COLUMN gl_CooperativeMatrixReduceColumnNV
#define REDUCE_ROW_AND_COLUMN gl_CooperativeMatrixReduceRowAndColumnNV
#define REDUCE_2X2 gl_CooperativeMatrixReduce2x2NV
#define PER_ELEMENT coopMatPerElementNV
#else
#extension GL_EXT_cooperative_matrix_maintenance1 : require
#define REDUCE coopMatReduceEXT
#define REDUCE_ROW gl_CooperativeMatrixReduceRowEXT
#define REDUCE_COLUMN gl_CooperativeMatrixReduceColumnEXT
#define REDUCE_ROW_AND_COLUMN gl_CooperativeMatrixReduceRowAndColumnEXT
#define REDUCE_2X2 gl_CooperativeMatrixReduce2x2EXT
#define PER_ELEMENT coopMatPerElementEXT
#endif
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x_id = 0) in;
