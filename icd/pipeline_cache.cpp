// VkPipelineCache: create (from initial data), get data, merge, destroy.
//
// Data layout (all little-endian, as the host):
//   VkPipelineCacheHeaderVersionOne  (32 bytes; vendorID = deviceID = 0 as reported by
//                                     vkGetPhysicalDeviceProperties, the device's
//                                     pipelineCacheUUID)
//   uint32 magic 'CVKP', uint32 entry count
//   per entry: 32-byte key, uint64 byte count, jit::serialize() bytes
// Initial data that does not match (another driver, version or CPU: the UUID covers
// those) or is malformed is ignored, leaving an empty cache: the spec lets an
// implementation ignore incompatible data ("If pInitialData is not compatible ... the
// pipeline cache will be initially empty"). deserialize() still validates each entry
// when it is first used.
#include "alloc.h"
#include "log.h"
#include "pipeline.h"
#include "vk_entrypoints.h"

#include <cstring>

using namespace coopvk;

namespace {

constexpr uint32_t kMagic = 0x504b5643;  // "CVKP"
constexpr size_t kHeaderBytes = sizeof(VkPipelineCacheHeaderVersionOne);
static_assert(kHeaderBytes == 32);

#ifdef COOPVK_HAVE_JIT_COMPILER
constexpr bool kHaveCompiler = true;
#else
constexpr bool kHaveCompiler = false;
#endif

void load_initial_data(PipelineCache* cache, const PhysicalDevice* pd, const uint8_t* p, size_t n) {
  if (n < kHeaderBytes + 8) {
    COOPVK_INFO("vkCreatePipelineCache: %zu bytes of initial data are too short; ignored", n);
    return;
  }
  VkPipelineCacheHeaderVersionOne h;
  std::memcpy(&h, p, kHeaderBytes);
  if (h.headerSize < kHeaderBytes || h.headerSize > n - 8 ||
      h.headerVersion != VK_PIPELINE_CACHE_HEADER_VERSION_ONE || h.vendorID != 0 ||
      h.deviceID != 0 || std::memcmp(h.pipelineCacheUUID, pd->pipeline_cache_uuid, VK_UUID_SIZE) != 0) {
    COOPVK_INFO("vkCreatePipelineCache: initial data is from another device, driver or CPU; "
                "starting empty");
    return;
  }
  size_t at = h.headerSize;
  uint32_t magic, count;
  std::memcpy(&magic, p + at, 4);
  std::memcpy(&count, p + at + 4, 4);
  at += 8;
  if (magic != kMagic) {
    COOPVK_INFO("vkCreatePipelineCache: initial data has an unknown layout; starting empty");
    return;
  }
  for (uint32_t i = 0; i < count; ++i) {
    if (n - at < 40) break;
    Hash256 key;
    uint64_t size;
    std::memcpy(key.data(), p + at, 32);
    std::memcpy(&size, p + at + 32, 8);
    at += 40;
    if (size > n - at) break;  // truncated: keep what was whole
    cache->entries[key].blob.assign(p + at, p + at + size);
    at += size;
  }
}

// Serializes entries that only exist live, so size query and copy agree.
void ensure_blobs(PipelineCache* cache) {
  if (!kHaveCompiler) return;
  for (auto& [key, e] : cache->entries)
    if (e.blob.empty() && e.live) {
#ifdef COOPVK_HAVE_JIT_COMPILER
      e.blob = jit::serialize(*e.live);
#endif
    }
}

}  // namespace

std::shared_ptr<const jit::CompiledShader> PipelineCache::find(const Hash256& key) {
  std::vector<uint8_t> blob;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = entries.find(key);
    if (it == entries.end()) return nullptr;
    if (it->second.live) return it->second.live;
    blob = it->second.blob;
  }
#ifdef COOPVK_HAVE_JIT_COMPILER
  // Outside the lock: deserializing links object code, which takes a while.
  jit::CompileResult r = jit::deserialize(blob.data(), blob.size());
  std::lock_guard<std::mutex> lock(mutex);
  auto it = entries.find(key);
  if (!r.shader) {
    COOPVK_INFO("pipeline cache: a stored entry cannot be used (%s); compiling instead",
                r.error.c_str());
    if (it != entries.end() && !it->second.live) entries.erase(it);
    return nullptr;
  }
  std::shared_ptr<const jit::CompiledShader> s(std::move(r.shader));
  if (it != entries.end()) {
    if (it->second.live) return it->second.live;  // another thread got there first
    it->second.live = s;
  }
  return s;
#else
  return nullptr;
#endif
}

void PipelineCache::insert(const Hash256& key, std::shared_ptr<const jit::CompiledShader> shader) {
  std::lock_guard<std::mutex> lock(mutex);
  if (max_entries && entries.size() >= max_entries && !entries.count(key))
    entries.erase(entries.begin());  // bounded implicit cache: drop an arbitrary entry
  entries[key].live = std::move(shader);
}

VKAPI_ATTR VkResult VKAPI_CALL coopvk_CreatePipelineCache(VkDevice device,
                                                          const VkPipelineCacheCreateInfo* info,
                                                          const VkAllocationCallbacks* pAllocator,
                                                          VkPipelineCache* pCache) {
  Device* dev = from_handle<Device>(device);
  auto* cache = vk_new<PipelineCache>(pick_allocator(pAllocator, dev->alloc()),
                                      VK_SYSTEM_ALLOCATION_SCOPE_OBJECT);
  if (!cache) return VK_ERROR_OUT_OF_HOST_MEMORY;
  if (info->initialDataSize && info->pInitialData)
    load_initial_data(cache, dev->physical, static_cast<const uint8_t*>(info->pInitialData),
                      info->initialDataSize);
  *pCache = to_handle<VkPipelineCache>(cache);
  return VK_SUCCESS;
}

VKAPI_ATTR void VKAPI_CALL coopvk_DestroyPipelineCache(VkDevice device, VkPipelineCache pipelineCache,
                                                       const VkAllocationCallbacks* pAllocator) {
  Device* dev = from_handle<Device>(device);
  vk_delete(pick_allocator(pAllocator, dev->alloc()), from_handle<PipelineCache>(pipelineCache));
}

VKAPI_ATTR VkResult VKAPI_CALL coopvk_GetPipelineCacheData(VkDevice device,
                                                           VkPipelineCache pipelineCache,
                                                           size_t* pDataSize, void* pData) {
  Device* dev = from_handle<Device>(device);
  PipelineCache* cache = from_handle<PipelineCache>(pipelineCache);
  std::lock_guard<std::mutex> lock(cache->mutex);
  ensure_blobs(cache);
  size_t full = kHeaderBytes + 8;
  uint32_t count = 0;
  for (auto& [key, e] : cache->entries)
    if (!e.blob.empty()) {
      full += 40 + e.blob.size();
      ++count;
    }
  if (!pData) {
    *pDataSize = full;
    return VK_SUCCESS;
  }
  // "If pDataSize is less than what is necessary to store this header, nothing will be
  // written to pData and zero will be written to pDataSize."
  if (*pDataSize < kHeaderBytes + 8) {
    *pDataSize = 0;
    return VK_INCOMPLETE;
  }
  auto* out = static_cast<uint8_t*>(pData);
  VkPipelineCacheHeaderVersionOne h{};
  h.headerSize = kHeaderBytes;
  h.headerVersion = VK_PIPELINE_CACHE_HEADER_VERSION_ONE;
  h.vendorID = 0;
  h.deviceID = 0;
  std::memcpy(h.pipelineCacheUUID, dev->physical->pipeline_cache_uuid, VK_UUID_SIZE);
  std::memcpy(out, &h, kHeaderBytes);
  // Only whole entries are written; the count says how many follow.
  size_t at = kHeaderBytes + 8;
  uint32_t written = 0;
  for (auto& [key, e] : cache->entries) {
    if (e.blob.empty()) continue;
    if (*pDataSize - at < 40 + e.blob.size()) break;
    uint64_t size = e.blob.size();
    std::memcpy(out + at, key.data(), 32);
    std::memcpy(out + at + 32, &size, 8);
    std::memcpy(out + at + 40, e.blob.data(), e.blob.size());
    at += 40 + e.blob.size();
    ++written;
  }
  std::memcpy(out + kHeaderBytes, &kMagic, 4);
  std::memcpy(out + kHeaderBytes + 4, &written, 4);
  *pDataSize = at;
  return written < count ? VK_INCOMPLETE : VK_SUCCESS;
}

VKAPI_ATTR VkResult VKAPI_CALL coopvk_MergePipelineCaches(VkDevice, VkPipelineCache dstCache,
                                                          uint32_t srcCacheCount,
                                                          const VkPipelineCache* pSrcCaches) {
  PipelineCache* dst = from_handle<PipelineCache>(dstCache);
  for (uint32_t i = 0; i < srcCacheCount; ++i) {
    PipelineCache* src = from_handle<PipelineCache>(pSrcCaches[i]);
    if (src == dst) continue;  // not allowed, but harmless to skip (and would self-deadlock)
    std::scoped_lock lock(dst->mutex, src->mutex);
    for (auto& [key, e] : src->entries) {
      auto& d = dst->entries[key];
      if (!d.live) d.live = e.live;
      if (d.blob.empty()) d.blob = e.blob;
    }
  }
  return VK_SUCCESS;
}
