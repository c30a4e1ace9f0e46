#version 450
// decode_body.glsl at workgroup scope.
#extension GL_GOOGLE_include_directive : require
#define SCOPE gl_ScopeWorkgroup
#include "decode_body.glsl"
