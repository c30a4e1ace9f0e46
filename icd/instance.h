// VkInstance and the single VkPhysicalDevice it exposes.
#pragma once

#include "handles.h"
#include "physical_device.h"

namespace coopvk {

struct Instance : DispatchableObject {
  VkAllocationCallbacks allocator{};
  bool has_allocator = false;
  uint32_t api_version = VK_API_VERSION_1_0;  // what the application asked for
  PhysicalDevice physical_device;

  const VkAllocationCallbacks* alloc() const { return has_allocator ? &allocator : nullptr; }
};

}  // namespace coopvk
