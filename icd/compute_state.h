// What vkCmdBindPipeline / vkCmdBindDescriptorSets / vkCmdPushConstants leave bound in a
// command buffer while it records. Each dispatch snapshots it into its closure, so later
// binds never affect an earlier dispatch.
#pragma once

#include "coopvk/jit/compiler.h"

#include <array>
#include <memory>
#include <vector>

namespace coopvk {

struct Pipeline;
struct WorkgroupCost;

struct ComputeBindState {
  const Pipeline* pipeline = nullptr;
  std::shared_ptr<const jit::CompiledShader> shader;
  std::shared_ptr<WorkgroupCost> cost;
  // Per set: its descriptors resolved for the shader (offsets and dynamic offsets
  // applied). Shared between the dispatches that use the same binding.
  std::shared_ptr<const std::vector<jit::BufferDescriptor>> sets[jit::kMaxDescriptorSets];
  std::array<uint8_t, jit::kMaxPushConstantBytes> push{};
};

}  // namespace coopvk
