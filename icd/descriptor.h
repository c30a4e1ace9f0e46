// Descriptor set layouts, pools, sets, update templates and pipeline layouts. Only
// buffer descriptors exist (storage and uniform, plain and dynamic): a set's memory is a
// flat array with binding b, element i at BindingLayout::first + i, bindings numbered in
// increasing binding order, which is also the JIT's numbering (jit::PipelineLayoutInfo)
// and the order of dynamic offsets (Vulkan spec, vkCmdBindDescriptorSets: "ordered by
// binding number", then array element).
#pragma once

#include "device.h"

#include "coopvk/jit/compiler.h"

#include <list>
#include <memory>
#include <vector>

namespace coopvk {

struct Buffer;

struct BindingLayout {
  bool present = false;
  VkDescriptorType type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
  uint32_t first = 0;  // flat index of element 0
  uint32_t count = 0;
};

// What a layout says, shared by the sets and pipeline layouts made from it: the spec
// lets the layout object be destroyed while those still live ("not further accessed
// ... after the duration of the object creation command", except by sets).
struct SetLayoutInfo {
  std::vector<BindingLayout> bindings;  // indexed by binding number
  uint32_t descriptor_count = 0;
  uint32_t dynamic_count = 0;
  uint32_t count_by_type[4] = {};  // storage, uniform, storage dynamic, uniform dynamic
  std::vector<uint8_t> is_dynamic;  // per flat index
};

struct DescriptorSetLayout {
  std::shared_ptr<const SetLayoutInfo> info;
};

// One buffer descriptor as written by the application, captured at update time: the
// host address and size of the buffer, never the Buffer object. A descriptor that the
// bound pipeline does not statically use may refer to a buffer (or memory) destroyed
// since (Vulkan spec, "Descriptor Validity"); llama.cpp relies on that, so nothing here
// may be dereferenced before a shader actually reads through it. The buffer must be
// bound to memory when it is written (VUID-VkWriteDescriptorSet-descriptorType-00329
// and friends), so its address is final then.
struct DescriptorSlot {
  uint8_t* base = nullptr;       // the buffer's host address; null: never written / null descriptor
  VkDeviceSize buffer_size = 0;  // the buffer's size at write time
  VkDeviceSize offset = 0;
  VkDeviceSize range = 0;        // VK_WHOLE_SIZE kept as such: dynamic offsets shorten it
};

struct DescriptorPool;

struct DescriptorSet {
  DescriptorPool* pool = nullptr;
  std::shared_ptr<const SetLayoutInfo> layout;
  std::vector<DescriptorSlot> slots;  // flat
};

struct DescriptorPool {
  VkDescriptorPoolCreateFlags flags = 0;
  uint32_t max_sets = 0;
  uint32_t capacity[4] = {};  // descriptors per type index (see type_index)
  uint32_t used[4] = {};
  std::list<DescriptorSet*> sets;
};

struct PipelineLayout {
  std::shared_ptr<const SetLayoutInfo> sets[jit::kMaxDescriptorSets];
  uint32_t set_count = 0;
  uint32_t push_constant_bytes = 0;
  jit::PipelineLayoutInfo jit_info;
};

struct DescriptorUpdateTemplate {
  struct Entry {
    uint32_t binding, element, count;
    VkDescriptorType type;
    size_t offset, stride;
  };
  std::vector<Entry> entries;
};

// 0..3 for the four supported buffer types, -1 for every other type.
int descriptor_type_index(VkDescriptorType t);
bool descriptor_type_dynamic(VkDescriptorType t);

// The set's descriptors as the shader sees them (jit::BufferDescriptor), with dynamic
// offsets (already validated) applied in flat order; consumes layout->dynamic_count of
// them.
void resolve_descriptors(const DescriptorSet* set, const uint32_t* dynamic_offsets,
                         jit::BufferDescriptor* out);

}  // namespace coopvk
