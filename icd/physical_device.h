// The one physical device: the host CPU. Identity, queue families, memory, and the
// feature/property queries (physical_device_features.cpp, physical_device_properties.cpp).
#pragma once

#include <string_view>

#include "handles.h"

#include <cstdint>
#include <string>

namespace coopvk {

// Vulkan version this driver implements (reported as apiVersion).
constexpr uint32_t kDriverApiVersion = VK_MAKE_API_VERSION(0, 1, 3, VK_HEADER_VERSION);
constexpr uint32_t kQueueFamilyCount = 1;
constexpr uint32_t kQueuesPerFamily = 4;
constexpr VkQueueFlags kQueueFlags = VK_QUEUE_COMPUTE_BIT | VK_QUEUE_TRANSFER_BIT;

struct PhysicalDevice : DispatchableObject {
  // The instance's allocation callbacks (null: none), the default for device objects. A
  // pointer into the owning Instance rather than the Instance itself, so that this layer
  // does not depend on the one above it.
  const VkAllocationCallbacks* instance_allocator = nullptr;
  char device_name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE] = {};
  uint8_t pipeline_cache_uuid[VK_UUID_SIZE] = {};
  uint8_t device_uuid[VK_UUID_SIZE] = {};
  uint8_t driver_uuid[VK_UUID_SIZE] = {};
  VkDeviceSize heap_size = 0;
  uint32_t cpu_count = 1;

  void init(const VkAllocationCallbacks* owner_allocator);
};

// Fills every VkBool32 of a feature struct this driver knows from the single list of
// supported feature names (physical_device_features.cpp). Unknown structs are left alone.
void fill_features(void* feature_struct, VkStructureType stype);
void fill_core_features(VkPhysicalDeviceFeatures* f);
// Checks that everything the application enables (pEnabledFeatures and the pNext chain
// of VkDeviceCreateInfo) is supported; logs the first offender.
VkResult check_requested_features(const VkDeviceCreateInfo* info);
// Whether the create info enables the feature member `name` in any struct that has it, or
// with "Struct::member" in that struct only.
bool requested_feature(const VkDeviceCreateInfo* info, std::string_view name);

void fill_properties(const PhysicalDevice* pd, VkPhysicalDeviceProperties* p);
void fill_memory_properties(const PhysicalDevice* pd, VkPhysicalDeviceMemoryProperties* p);

// Cooperative-matrix/vector property structs in a VkPhysicalDeviceProperties2 chain;
// returns true if `s` was one of them (cooperative_properties.cpp).
bool fill_cooperative_properties(const PhysicalDevice* pd, VkBaseOutStructure* s);

}  // namespace coopvk
