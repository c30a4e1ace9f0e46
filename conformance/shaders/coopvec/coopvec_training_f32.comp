#version 460
#extension GL_GOOGLE_include_directive : require
#define MAT_T float
#define MAT_INTERP gl_ComponentTypeFloat32NV
#include "training_body.glsl"
