#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#define TA float16_t
#define TB float16_t
#define TC float16_t
#define TR float16_t
#define OPS 
#include "muladd_body.glsl"
