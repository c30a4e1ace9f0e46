#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int32 : require
#define TA int8_t
#define TB int8_t
#define TC int32_t
#define TR int32_t
#define OPS 
#include "muladd_body.glsl"
