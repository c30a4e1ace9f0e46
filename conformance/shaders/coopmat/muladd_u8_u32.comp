#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int32 : require
#define TA uint8_t
#define TB uint8_t
#define TC uint32_t
#define TR uint32_t
#define OPS 
#include "muladd_body.glsl"
