// vkCreateShaderModule / vkDestroyShaderModule.
#include "shader_module.h"

#include "alloc.h"
#include "log.h"
#include "vk_entrypoints.h"

#include "coopvk/jit/spirv_reader.h"

#include <cstdio>
#include <cstdlib>
#include <string>

using namespace coopvk;

std::string coopvk::module_tag(const Hash256& h) {
  char tag[17];
  for (int i = 0; i < 8; ++i) std::snprintf(tag + 2 * i, 3, "%02x", h[i]);
  return tag;
}

namespace {
// COOPVK_DUMP_SPIRV=<dir>: every module the application creates is written to
// <dir>/<tag>.spv (tag: the first 8 bytes of its SHA-256, as the debug log names it), so
// a shader from a real client can be disassembled or replayed outside it.
void dump_spirv(const uint32_t* words, size_t bytes, const Hash256& hash) {
  const char* dir = std::getenv("COOPVK_DUMP_SPIRV");
  if (!dir || !*dir) return;
  std::string path = std::string(dir) + "/" + module_tag(hash) + ".spv";
  if (FILE* f = std::fopen(path.c_str(), "wb")) {
    std::fwrite(words, 1, bytes, f);
    std::fclose(f);
  }
}
}  // namespace

VkResult coopvk::load_shader_module(const VkShaderModuleCreateInfo* info, ShaderModule* out,
                                    const char* fn) {
  // VK_ERROR_INVALID_SHADER_NV is only for VK_NV_glsl_shader; VK_ERROR_UNKNOWN is allowed
  // for every command and the log says what is wrong.
  if (!info->pCode || info->codeSize == 0 || info->codeSize % 4 != 0) {
    COOPVK_ERROR("%s: codeSize %zu is not a positive multiple of 4 (or pCode is null)", fn,
                 static_cast<size_t>(info->codeSize));
    return VK_ERROR_UNKNOWN;
  }
  const size_t n = info->codeSize / 4;
  auto module = std::make_shared<jit::Module>();
  jit::ReadResult r = jit::read_spirv(info->pCode, n, module.get());
  if (!r.ok) {
    COOPVK_ERROR("%s: invalid or unsupported SPIR-V: %s", fn, r.error.c_str());
    return VK_ERROR_UNKNOWN;
  }
  Sha256 h;
  h.update(info->pCode, info->codeSize);
  out->words_hash = h.finish();
  dump_spirv(info->pCode, info->codeSize, out->words_hash);
  out->module = std::move(module);
  return VK_SUCCESS;
}

VKAPI_ATTR VkResult VKAPI_CALL coopvk_CreateShaderModule(VkDevice device,
                                                         const VkShaderModuleCreateInfo* info,
                                                         const VkAllocationCallbacks* pAllocator,
                                                         VkShaderModule* pModule) {
  Device* dev = from_handle<Device>(device);
  ShaderModule tmp;
  if (VkResult r = load_shader_module(info, &tmp, "vkCreateShaderModule"); r != VK_SUCCESS) return r;
  auto* sm = vk_new<ShaderModule>(pick_allocator(pAllocator, dev->alloc()),
                                  VK_SYSTEM_ALLOCATION_SCOPE_OBJECT, std::move(tmp));
  if (!sm) return VK_ERROR_OUT_OF_HOST_MEMORY;
  *pModule = to_handle<VkShaderModule>(sm);
  return VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL coopvk_DestroyShaderModule(VkDevice device, VkShaderModule module,
                                                      const VkAllocationCallbacks* pAllocator) {
  Device* dev = from_handle<Device>(device);
  vk_delete(pick_allocator(pAllocator, dev->alloc()), from_handle<ShaderModule>(module));
}
