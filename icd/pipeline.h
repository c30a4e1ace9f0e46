// Compute pipelines and pipeline caches.
//
// A pipeline is a compiled shader (jit::CompiledShader) plus what dispatch checks need.
// A pipeline cache maps a 32-byte key (SHA-256 of everything that affects compilation:
// SPIR-V, entry point, specialization, subgroup size, layout) to a compiled shader,
// kept live and/or as jit::serialize() bytes. Without an application cache, the device's
// own implicit cache is used, so re-creating the same pipeline does not compile again;
// behind both, the disk cache (disk_cache.h) keeps compiled pipelines between runs.
#pragma once

#include "device.h"
#include "sha256.h"

#include "coopvk/jit/compiler.h"

#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace coopvk {

class DiskCache;
class WorkerPool;
struct WorkgroupCost;

struct Pipeline {
  std::shared_ptr<const jit::CompiledShader> shader;
  uint32_t required_sets_mask = 0;  // sets the layout gives descriptors: must be bound
  std::shared_ptr<WorkgroupCost> cost;  // what its dispatches took (worker_pool.h)
};

struct PipelineCache {
  struct Entry {
    std::vector<uint8_t> blob;                   // serialized form; empty until needed
    std::shared_ptr<const jit::CompiledShader> live;
  };
  std::mutex mutex;
  std::map<Hash256, Entry> entries;
  size_t max_entries = 0;  // 0: unbounded (application caches)

  // A compiled shader for the key, deserializing a stored blob if need be; null on miss.
  std::shared_ptr<const jit::CompiledShader> find(const Hash256& key);
  void insert(const Hash256& key, std::shared_ptr<const jit::CompiledShader> shader);
};

// Per-device compute state: the implicit pipeline cache, the disk cache the environment
// named when the device was created (null: off), and the worker pool (created at the first
// dispatch, so devices that never dispatch start no threads).
struct DeviceCompute {
  PipelineCache implicit_cache;
  std::shared_ptr<DiskCache> disk;
  std::once_flag pool_once;
  std::unique_ptr<WorkerPool> pool;
  DeviceCompute();
  ~DeviceCompute();
};

WorkerPool& device_worker_pool(Device* dev);

}  // namespace coopvk
