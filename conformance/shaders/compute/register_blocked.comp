#version 450
#extension GL_GOOGLE_include_directive : require
// A register-blocked GEMM that cannot observe its subgroup width: the compiler may run it
// at the host's natural width (jit/src/width/subgroup_width.h).
#include "register_blocked_body.glsl"
