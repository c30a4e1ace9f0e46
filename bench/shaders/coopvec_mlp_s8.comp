#version 460
// s8 inputs and weights, s32 biases and results: bench_coopvec_mlp s8. Between the layers
// the s32 values are ReLU'd and scaled back to s8 (>> 8, clamped), as quantized networks do.
#extension GL_GOOGLE_include_directive : require
#define IN_T int8_t
#define MID_T int32_t
#define OUT_T int32_t
#define ESZ 1
#define OUT_ESZ 4
#define INTERP gl_ComponentTypeSignedInt8NV
#define BIAS_INTERP gl_ComponentTypeSignedInt32NV
#define I32V(v) coopvecNV<int32_t, 64>(v)
#define BETWEEN(h) coopvecNV<int8_t, 64>(clamp(max(h, I32V(0)) >> I32V(8), I32V(-128), I32V(127)))
#include "coopvec_mlp_body.glsl"
