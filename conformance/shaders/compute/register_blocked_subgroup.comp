#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_basic : require
// The same GEMM reading gl_SubgroupSize: it can observe its subgroup width, which must
// then stay the reported one.
#define OBSERVES_SUBGROUP 1
#include "register_blocked_body.glsl"
