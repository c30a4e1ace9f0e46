// VkDevice: owns the queues and the device-wide lock that every fence, semaphore and
// event waits on (one condition variable makes "wait for any" and "wait for all" the
// same simple loop).
#pragma once

#include "handles.h"
#include "physical_device.h"

#include <bitset>
#include <condition_variable>
#include <mutex>

namespace coopvk {

struct Queue;
struct DeviceCompute;

struct Device : DispatchableObject {
  PhysicalDevice* physical = nullptr;
  VkAllocationCallbacks allocator{};
  bool has_allocator = false;
  std::bitset<64> enabled_extensions;  // indices into extension_table()
  Queue* queues[kQueuesPerFamily] = {};
  DeviceCompute* compute = nullptr;  // implicit pipeline cache, worker pool (pipeline.h)
  uint32_t queue_count = 0;
  bool robust_buffer_access = false;  // the app enabled robustBufferAccess (pipelines bounds-check)
  // Cooperative-matrix features the app enabled (pipelines accept what they allow).
  bool cooperative_matrix = false;
  bool nv_cooperative_matrix = false;  // VK_NV_cooperative_matrix's cooperativeMatrix
  bool cooperative_matrix_robust = false;  // cooperativeMatrixRobustBufferAccess
  bool bfloat16_matrices = false;          // shaderBFloat16CooperativeMatrix
  // VK_EXT_cooperative_matrix_maintenance1, as enabled
  bool matrix_reductions = false;
  bool matrix_conversions = false;
  bool matrix_per_element = false;
  bool matrix_get_coordinate = false;
  // VK_NV_cooperative_matrix2's features, as enabled (those coopvk offers)
  bool nv2_reductions = false;
  bool nv2_conversions = false;
  bool nv2_per_element = false;
  bool nv2_workgroup_scope = false;
  bool nv2_flexible_dimensions = false;
  bool nv2_tensor_addressing = false;
  bool nv2_block_loads = false;
  bool float8_matrices = false;            // shaderFloat8CooperativeMatrix
  // VK_NV_cooperative_vector, as enabled
  bool cooperative_vector = false;           // cooperativeVector
  bool cooperative_vector_training = false;  // cooperativeVectorTraining

  std::mutex sync_mutex;
  std::condition_variable sync_cv;  // notified whenever a fence/semaphore/event changes

  const VkAllocationCallbacks* alloc() const { return has_allocator ? &allocator : nullptr; }
  bool extension_enabled(int index) const { return index >= 0 && enabled_extensions.test(index); }
};

// Waits on dev->sync_cv (lock held) until pred() holds or the Vulkan timeout (ns) runs
// out. Returns VK_SUCCESS or VK_TIMEOUT.
template <typename Pred>
VkResult wait_with_timeout(Device* dev, std::unique_lock<std::mutex>& lock, uint64_t timeout_ns,
                           Pred pred);

}  // namespace coopvk

#include "device_wait.inl"
