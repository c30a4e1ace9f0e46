#version 460
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
#define MAT_T float16_t
#define MAT_INTERP gl_ComponentTypeFloat16NV
#include "training_body.glsl"
