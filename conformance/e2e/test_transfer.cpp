// Memory, buffers, and the transfer commands, checked against CPU references.
#include <catch2/catch_test_macros.hpp>

#include <cstring>
#include <numeric>
#include <random>

#include "vk_test_env.h"

using namespace coopvk::test;

namespace {

std::vector<uint32_t> pattern(size_t n, uint32_t seed) {
  std::vector<uint32_t> v(n);
  std::mt19937 rng(seed);
  for (auto& x : v) x = rng();
  return v;
}

}  // namespace

TEST_CASE("copy, fill and update match a CPU reference") {
  Device dev;
  const size_t n = 1 << 16;  // 256 KiB of uint32
  Buffer src = dev.create_buffer(n * 4), dst = dev.create_buffer(n * 4);
  auto data = pattern(n, 1);
  std::memcpy(src.mapped, data.data(), n * 4);
  std::memset(dst.mapped, 0xAB, n * 4);

  std::vector<uint32_t> expect(n);
  std::memset(expect.data(), 0xAB, n * 4);

  VkCommandBuffer cb = dev.begin();
  // Three regions, one at an odd byte offset and size.
  VkBufferCopy regions[3] = {{0, 0, 4096}, {8192, 100, 1001}, {n * 4 - 64, n * 4 - 64, 64}};
  vkCmdCopyBuffer(cb, src.buffer, dst.buffer, 3, regions);
  uint8_t* e = reinterpret_cast<uint8_t*>(expect.data());
  const uint8_t* d = reinterpret_cast<const uint8_t*>(data.data());
  for (auto& r : regions) std::memcpy(e + r.dstOffset, d + r.srcOffset, r.size);
  // Fill after the copy overwrites part of it: order of commands must hold.
  vkCmdFillBuffer(cb, dst.buffer, 2048, 4096, 0xDEADBEEF);
  for (size_t i = 2048 / 4; i < (2048 + 4096) / 4; ++i) expect[i] = 0xDEADBEEF;
  uint32_t upd[5] = {1, 2, 3, 4, 5};
  vkCmdUpdateBuffer(cb, dst.buffer, 40000, sizeof(upd), upd);
  std::memcpy(e + 40000, upd, sizeof(upd));
  upd[0] = 999;  // the command must have copied the data already
  dev.submit_and_wait(cb);

  CHECK(std::memcmp(dst.mapped, expect.data(), n * 4) == 0);
  dev.destroy_buffer(src);
  dev.destroy_buffer(dst);
}

TEST_CASE("vkCmdFillBuffer with VK_WHOLE_SIZE rounds the tail down to 4 bytes") {
  Device dev;
  Buffer b = dev.create_buffer(1022);  // not a multiple of 4
  std::memset(b.mapped, 0, 1022);
  VkCommandBuffer cb = dev.begin();
  vkCmdFillBuffer(cb, b.buffer, 8, VK_WHOLE_SIZE, 0x01020304);
  dev.submit_and_wait(cb);
  auto* p = static_cast<uint8_t*>(b.mapped);
  for (size_t i = 0; i < 8; ++i) CHECK(p[i] == 0);
  uint32_t v;
  for (size_t i = 8; i + 4 <= 1020; i += 4) {
    std::memcpy(&v, p + i, 4);
    REQUIRE(v == 0x01020304u);
  }
  CHECK(p[1020] == 0);
  CHECK(p[1021] == 0);
  dev.destroy_buffer(b);
}

TEST_CASE("vkCmdCopyBuffer2 and a 64 MiB copy") {
  Device dev;
  const size_t bytes = 64ull << 20;
  Buffer src = dev.create_buffer(bytes), dst = dev.create_buffer(bytes);
  auto* s = static_cast<uint32_t*>(src.mapped);
  for (size_t i = 0; i < bytes / 4; ++i) s[i] = uint32_t(i * 2654435761u);
  VkCommandBuffer cb = dev.begin();
  VkBufferCopy2 region{VK_STRUCTURE_TYPE_BUFFER_COPY_2};
  region.size = bytes;
  VkCopyBufferInfo2 info{VK_STRUCTURE_TYPE_COPY_BUFFER_INFO_2};
  info.srcBuffer = src.buffer;
  info.dstBuffer = dst.buffer;
  info.regionCount = 1;
  info.pRegions = &region;
  vkCmdCopyBuffer2(cb, &info);
  dev.submit_and_wait(cb);
  CHECK(std::memcmp(src.mapped, dst.mapped, bytes) == 0);
  dev.destroy_buffer(src);
  dev.destroy_buffer(dst);
}

TEST_CASE("secondary command buffers run inside primaries, and re-recording works") {
  Device dev;
  Buffer b = dev.create_buffer(256);
  VkCommandBuffer sec = dev.begin(VK_COMMAND_BUFFER_LEVEL_SECONDARY);
  vkCmdFillBuffer(sec, b.buffer, 0, 128, 0x11111111);
  VK_CHECK(vkEndCommandBuffer(sec));

  VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  ai.commandPool = dev.pool;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  VkCommandBuffer prim;
  VK_CHECK(vkAllocateCommandBuffers(dev.device, &ai, &prim));
  VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkFence fence;
  VK_CHECK(vkCreateFence(dev.device, &fci, nullptr, &fence));
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &prim;

  for (uint32_t round = 0; round < 3; ++round) {
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    VK_CHECK(vkBeginCommandBuffer(prim, &bi));  // implicit reset (pool has RESET bit)
    vkCmdFillBuffer(prim, b.buffer, 0, 256, round);
    vkCmdExecuteCommands(prim, 1, &sec);
    uint32_t tail = 0x22220000u + round;
    vkCmdUpdateBuffer(prim, b.buffer, 252, 4, &tail);
    VK_CHECK(vkEndCommandBuffer(prim));
    VK_CHECK(vkQueueSubmit(dev.queues[0], 1, &si, fence));
    VK_CHECK(vkWaitForFences(dev.device, 1, &fence, VK_TRUE, UINT64_MAX));
    VK_CHECK(vkResetFences(dev.device, 1, &fence));
    auto* w = static_cast<uint32_t*>(b.mapped);
    for (int i = 0; i < 32; ++i) REQUIRE(w[i] == 0x11111111u);
    for (int i = 32; i < 63; ++i) REQUIRE(w[i] == round);
    CHECK(w[63] == tail);
  }
  // A reset command buffer runs nothing: submit it empty and check nothing changed.
  VK_CHECK(vkResetCommandBuffer(prim, 0));
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  VK_CHECK(vkBeginCommandBuffer(prim, &bi));
  VK_CHECK(vkEndCommandBuffer(prim));
  std::memset(b.mapped, 0x5A, 256);
  VK_CHECK(vkQueueSubmit(dev.queues[0], 1, &si, fence));
  VK_CHECK(vkWaitForFences(dev.device, 1, &fence, VK_TRUE, UINT64_MAX));
  CHECK(static_cast<uint8_t*>(b.mapped)[0] == 0x5A);
  vkDestroyFence(dev.device, fence, nullptr);
  vkFreeCommandBuffers(dev.device, dev.pool, 1, &sec);
  vkFreeCommandBuffers(dev.device, dev.pool, 1, &prim);
  dev.destroy_buffer(b);
}

TEST_CASE("device addresses are distinct per binding offset") {
  Device dev;
  VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bci.size = 1024;
  bci.usage = VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT | VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
  VkBuffer a, b;
  VK_CHECK(vkCreateBuffer(dev.device, &bci, nullptr, &a));
  VK_CHECK(vkCreateBuffer(dev.device, &bci, nullptr, &b));
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(dev.device, a, &req);
  CHECK(req.alignment >= 16);
  CHECK(req.size >= 1024);
  VkMemoryAllocateFlagsInfo flags{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
  flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
  VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, &flags};
  mai.allocationSize = req.size * 4;
  VkDeviceMemory mem;
  VK_CHECK(vkAllocateMemory(dev.device, &mai, nullptr, &mem));
  VK_CHECK(vkBindBufferMemory(dev.device, a, mem, 0));
  VK_CHECK(vkBindBufferMemory(dev.device, b, mem, req.size * 2));
  VkBufferDeviceAddressInfo ia{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO, nullptr, a};
  VkBufferDeviceAddressInfo ib{VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO, nullptr, b};
  VkDeviceAddress da = vkGetBufferDeviceAddress(dev.device, &ia);
  VkDeviceAddress db = vkGetBufferDeviceAddress(dev.device, &ib);
  CHECK(da != 0);
  CHECK(db - da == req.size * 2);
  vkDestroyBuffer(dev.device, a, nullptr);
  vkDestroyBuffer(dev.device, b, nullptr);
  vkFreeMemory(dev.device, mem, nullptr);
}

TEST_CASE("bad memory and transfer arguments fail cleanly") {
  Device dev;
  SECTION("allocation larger than the heap") {
    VkPhysicalDeviceMemoryProperties mp;
    vkGetPhysicalDeviceMemoryProperties(dev.inst.physical, &mp);
    VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    mai.allocationSize = mp.memoryHeaps[0].size + 4096;
    VkDeviceMemory mem;
    CHECK(vkAllocateMemory(dev.device, &mai, nullptr, &mem) == VK_ERROR_OUT_OF_DEVICE_MEMORY);
  }
  SECTION("a memory type that does not exist") {
    VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    mai.allocationSize = 4096;
    mai.memoryTypeIndex = 31;
    VkDeviceMemory mem;
    CHECK(vkAllocateMemory(dev.device, &mai, nullptr, &mem) != VK_SUCCESS);
  }
  SECTION("mapping outside the allocation") {
    Buffer b = dev.create_buffer(256);
    vkUnmapMemory(dev.device, b.memory);
    void* p = reinterpret_cast<void*>(1);
    CHECK(vkMapMemory(dev.device, b.memory, 1 << 20, 16, 0, &p) == VK_ERROR_MEMORY_MAP_FAILED);
    CHECK(p == nullptr);
    dev.destroy_buffer(b);
  }
  SECTION("binding at a misaligned or too-large offset") {
    VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bci.size = 1024;
    bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
    VkBuffer buf;
    VK_CHECK(vkCreateBuffer(dev.device, &bci, nullptr, &buf));
    VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    mai.allocationSize = 2048;
    VkDeviceMemory mem;
    VK_CHECK(vkAllocateMemory(dev.device, &mai, nullptr, &mem));
    CHECK(vkBindBufferMemory(dev.device, buf, mem, 3) != VK_SUCCESS);
    CHECK(vkBindBufferMemory(dev.device, buf, mem, 1536) != VK_SUCCESS);
    vkDestroyBuffer(dev.device, buf, nullptr);
    vkFreeMemory(dev.device, mem, nullptr);
  }
  SECTION("copy and fill regions outside a buffer make vkEndCommandBuffer fail") {
    Buffer a = dev.create_buffer(256), b = dev.create_buffer(256);
    std::memset(b.mapped, 0x77, 256);
    VkCommandBuffer cb = dev.begin();
    VkBufferCopy r{0, 200, 100};  // runs past b's end
    vkCmdCopyBuffer(cb, a.buffer, b.buffer, 1, &r);
    vkCmdFillBuffer(cb, b.buffer, 0, 256, 0);  // valid, but the buffer is already failed
    CHECK(vkEndCommandBuffer(cb) != VK_SUCCESS);
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cb;
    CHECK(vkQueueSubmit(dev.queues[0], 1, &si, VK_NULL_HANDLE) != VK_SUCCESS);
    VK_CHECK(vkQueueWaitIdle(dev.queues[0]));
    CHECK(static_cast<uint8_t*>(b.mapped)[255] == 0x77);  // nothing ran
    vkFreeCommandBuffers(dev.device, dev.pool, 1, &cb);
    dev.destroy_buffer(a);
    dev.destroy_buffer(b);
  }
  SECTION("misaligned fill and oversized update") {
    Buffer b = dev.create_buffer(256);
    VkCommandBuffer cb = dev.begin();
    vkCmdFillBuffer(cb, b.buffer, 2, 8, 0);
    CHECK(vkEndCommandBuffer(cb) != VK_SUCCESS);
    VK_CHECK(vkResetCommandBuffer(cb, 0));
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    VK_CHECK(vkBeginCommandBuffer(cb, &bi));
    std::vector<uint8_t> big(65536 + 4);
    vkCmdUpdateBuffer(cb, b.buffer, 0, big.size(), big.data());
    CHECK(vkEndCommandBuffer(cb) != VK_SUCCESS);
    vkFreeCommandBuffers(dev.device, dev.pool, 1, &cb);
    dev.destroy_buffer(b);
  }
}
