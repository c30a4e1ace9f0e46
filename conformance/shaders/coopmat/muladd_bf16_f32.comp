#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_bfloat16 : require
#define TA bfloat16_t
#define TB bfloat16_t
#define TC float
#define TR float
#define OPS 
#include "muladd_body.glsl"
