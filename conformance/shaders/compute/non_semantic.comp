#version 450
#extension GL_EXT_debug_printf : require
// Non-semantic instructions (here NonSemantic.DebugPrintf) must be accepted and have no
// effect on the result (VK_KHR_shader_non_semantic_info).
layout(local_size_x = 8) in;
layout(set = 0, binding = 0) buffer Out { uint v[]; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  debugPrintfEXT("invocation %u", i);
  v[i] = i * i + 5u;
}
