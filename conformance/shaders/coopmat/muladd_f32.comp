#version 450
#extension GL_GOOGLE_include_directive : require
#define TA float
#define TB float
#define TC float
#define TR float
#define OPS 
#include "muladd_body.glsl"
