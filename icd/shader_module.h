// VkShaderModule: the SPIR-V words (for pipeline-cache keys), their hash, and the module
// as read by jit::read_spirv (so pipelines do not parse again). Malformed SPIR-V fails
// at vkCreateShaderModule with the reader's message in the log.
#pragma once

#include "device.h"
#include "sha256.h"

#include "coopvk/jit/spirv_module.h"

#include <memory>
#include <string>
#include <vector>

namespace coopvk {

struct ShaderModule {
  Hash256 words_hash{};
  std::shared_ptr<const jit::Module> module;
};

// Reads and validates a module from its create info (also used for a
// VkShaderModuleCreateInfo chained into VkPipelineShaderStageCreateInfo, maintenance5
// style). Logs and returns VK_ERROR_UNKNOWN on malformed input. `fn` names the caller.
VkResult load_shader_module(const VkShaderModuleCreateInfo* info, ShaderModule* out, const char* fn);

// A short name for a module in log lines and COOPVK_DUMP_SPIRV file names: the first 8
// bytes of the SHA-256 of its words, in hex.
std::string module_tag(const Hash256& words_hash);

}  // namespace coopvk
