// Device memory is host memory; a device address is a host address.
#pragma once

#include "device.h"

namespace coopvk {

constexpr VkDeviceSize kMemoryAlignment = 256;  // of every allocation's base

struct DeviceMemory {
  uint8_t* data = nullptr;
  VkDeviceSize size = 0;
  bool mmapped = false;
  bool mapped = false;
};

struct Buffer {
  VkDeviceSize size = 0;
  VkBufferUsageFlags usage = 0;
  VkBufferCreateFlags flags = 0;
  DeviceMemory* memory = nullptr;
  VkDeviceSize offset = 0;

  uint8_t* data() const { return memory ? memory->data + offset : nullptr; }
};

}  // namespace coopvk
