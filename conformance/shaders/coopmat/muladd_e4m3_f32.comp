#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_float_e4m3 : require
#define TA floate4m3_t
#define TB floate4m3_t
#define TC float
#define TR float
#define OPS 
#include "muladd_body.glsl"
