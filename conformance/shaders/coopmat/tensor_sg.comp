#version 450
// tensor_body.glsl at subgroup scope.
#extension GL_GOOGLE_include_directive : require
#define SCOPE gl_ScopeSubgroup
#include "tensor_body.glsl"
