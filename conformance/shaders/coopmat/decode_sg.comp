#version 450
// decode_body.glsl at subgroup scope.
#extension GL_GOOGLE_include_directive : require
#define SCOPE gl_ScopeSubgroup
#include "decode_body.glsl"
