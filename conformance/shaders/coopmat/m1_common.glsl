// What every m1_*_body.glsl shares: the extensions and the workgroup size (two subgroups
// of the size the test requires, as specialization constant 0).
#pragma use_vulkan_memory_model
#extension GL_KHR_cooperative_matrix : require
#extension GL_EXT_cooperative_matrix_maintenance1 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x_id = 0) in;
