#version 450
// tensor_body.glsl at workgroup scope.
#extension GL_GOOGLE_include_directive : require
#define SCOPE gl_ScopeWorkgroup
#include "tensor_body.glsl"
