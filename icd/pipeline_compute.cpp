// vkCreateComputePipelines, vkDestroyPipeline.
#include "alloc.h"
#include "cooperative_options.h"
#include "descriptor.h"
#include "disk_cache.h"
#include "log.h"
#include "pipeline.h"
#include "shader_module.h"
#include "vk_entrypoints.h"
#include "worker_pool.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <new>
#include <system_error>
#include <thread>

using namespace coopvk;

namespace {

Hash256 cache_key(const ShaderModule& sm, const jit::CompileOptions& o) {
  Sha256 h;
  const char tag[] = "coopvk compute pipeline v6";
  h.update(tag, sizeof(tag));
  h.update(sm.words_hash.data(), sm.words_hash.size());
  h.update(o.entry_point.data(), o.entry_point.size() + 1);  // with the terminator
  h.update_value(static_cast<uint64_t>(o.specialization.size()));
  for (const auto& s : o.specialization) {  // already sorted by constant id
    h.update_value(s.constant_id);
    h.update_value(static_cast<uint32_t>(s.bytes.size()));
    h.update(s.bytes.data(), s.bytes.size());
  }
  // The width the code is compiled for: a required size, else the default, which
  // COOPVK_SUBGROUP_SIZE may change between runs that share cache data.
  h.update_value(o.subgroup_size ? o.subgroup_size : jit::default_subgroup_size());
  h.update_value(static_cast<uint8_t>(o.require_full_subgroups));
  h.update_value(static_cast<uint8_t>(o.robust_buffer_access));
  h.update_value(static_cast<uint8_t>(o.robust_matrix_access));
  uint8_t ext[14] = {o.nv_matrix, o.matrix_reductions, o.matrix_conversions, o.matrix_per_element, o.matrix_get_coordinate,
                     o.cooperative_vector, o.cooperative_vector_training, o.nv2.workgroup_scope,
                     o.nv2.flexible_dimensions, o.nv2.reductions, o.nv2.conversions, o.nv2.per_element,
                     o.nv2.tensor_addressing, o.nv2.block_loads};
  h.update(ext, sizeof(ext));
  h.update_value(static_cast<uint32_t>(o.matrix_combinations.size()));
  for (const auto& c : o.matrix_combinations) {
    uint32_t w[12] = {c.m, c.n, c.k, c.a, c.b, c.c, c.result, c.saturating,
                      c.scope, c.flexible, c.max_dimension, c.min_invocations | c.max_invocations << 16};
    h.update(w, sizeof(w));
  }
  // What decides which cooperative-vector shaders compile (jit/compiler.h).
  h.update_value(o.max_vector_components);
  h.update_value(static_cast<uint32_t>(o.vector_combinations.size()));
  for (const auto& c : o.vector_combinations) {
    uint8_t w[7] = {c.input, c.input_interpretation, c.matrix, c.bias, c.result, c.input_packed, c.transpose};
    h.update(w, sizeof(w));
  }
  h.update_value(o.layout.push_constant_bytes);
  for (uint32_t s = 0; s < jit::kMaxDescriptorSets; ++s) {
    const auto& b = o.layout.sets[s].bindings;
    h.update_value(static_cast<uint32_t>(b.size()));
    for (const auto& bi : b) {
      uint32_t w[4] = {bi.present, static_cast<uint32_t>(bi.kind), bi.first, bi.count};
      h.update(w, sizeof(w));
    }
  }
  return h.finish();
}

VkPipelineCreateFlags2 pipeline_flags(const VkComputePipelineCreateInfo& ci) {
  // maintenance5: VkPipelineCreateFlags2CreateInfo replaces flags when present.
  if (auto* f2 = find_in_chain<VkPipelineCreateFlags2CreateInfo>(
          ci.pNext, VK_STRUCTURE_TYPE_PIPELINE_CREATE_FLAGS_2_CREATE_INFO))
    return f2->flags;
  return ci.flags;
}

// What one create info gives: the compiled shader and what dispatch checks need, or why not.
struct Prepared {
  VkResult result = VK_ERROR_UNKNOWN;  // VK_SUCCESS, VK_PIPELINE_COMPILE_REQUIRED or an error
  std::shared_ptr<const jit::CompiledShader> shader;
  uint32_t required_sets = 0;
};

// Finds or compiles one pipeline's shader: the application's cache, the implicit cache, the
// disk cache, then the compiler. Safe to run for several create infos at once (it allocates
// nothing through the application's callbacks; the caches lock themselves).
VkResult prepare_one(Device* dev, PipelineCache* app_cache, const VkComputePipelineCreateInfo& ci,
                     Prepared* out) {
  const char* fn = "vkCreateComputePipelines";
  const VkPipelineShaderStageCreateInfo& st = ci.stage;
  if (st.stage != VK_SHADER_STAGE_COMPUTE_BIT) {
    COOPVK_ERROR("%s: stage is 0x%x, not VK_SHADER_STAGE_COMPUTE_BIT", fn, st.stage);
    return VK_ERROR_UNKNOWN;
  }
  // The module: a handle, or (maintenance5 / graphicsPipelineLibrary style) a
  // VkShaderModuleCreateInfo chained to the stage when the handle is VK_NULL_HANDLE.
  ShaderModule chained;
  const ShaderModule* sm = from_handle<ShaderModule>(st.module);
  if (!sm) {
    auto* smci = find_in_chain<VkShaderModuleCreateInfo>(st.pNext,
                                                         VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO);
    if (!smci) {
      COOPVK_ERROR("%s: stage has neither a module nor a chained VkShaderModuleCreateInfo", fn);
      return VK_ERROR_UNKNOWN;
    }
    if (VkResult r = load_shader_module(smci, &chained, fn); r != VK_SUCCESS) return r;
    sm = &chained;
  }

  jit::CompileOptions opts;
  opts.entry_point = st.pName ? st.pName : "";
  if (const VkSpecializationInfo* si = st.pSpecializationInfo) {
    for (uint32_t i = 0; i < si->mapEntryCount; ++i) {
      const VkSpecializationMapEntry& e = si->pMapEntries[i];
      if (e.offset > si->dataSize || e.size > si->dataSize - e.offset || !si->pData) {
        COOPVK_ERROR("%s: specialization entry %u (constant %u) lies outside pData (%zu bytes)",
                     fn, i, e.constantID, si->dataSize);
        return VK_ERROR_UNKNOWN;
      }
      auto* p = static_cast<const uint8_t*>(si->pData) + e.offset;
      opts.specialization.push_back({e.constantID, std::vector<uint8_t>(p, p + e.size)});
    }
    // Sorted so that the cache key does not depend on the order of the map entries.
    std::stable_sort(opts.specialization.begin(), opts.specialization.end(),
                     [](const auto& a, const auto& b) { return a.constant_id < b.constant_id; });
  }
  if (auto* rs = find_in_chain<VkPipelineShaderStageRequiredSubgroupSizeCreateInfo>(
          st.pNext, VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO)) {
    uint32_t s = rs->requiredSubgroupSize;
    if (s < jit::kMinSubgroupSize || s > jit::kMaxSubgroupSize || (s & (s - 1)) != 0) {
      COOPVK_ERROR("%s: requiredSubgroupSize %u is not a power of two in [%u, %u]", fn, s,
                   jit::kMinSubgroupSize, jit::kMaxSubgroupSize);
      return VK_ERROR_UNKNOWN;
    }
    opts.subgroup_size = s;
  }
  opts.require_full_subgroups = (st.flags & VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT) != 0;
  opts.robust_buffer_access = dev->robust_buffer_access;
  add_cooperative_options(*dev, &opts);

  const PipelineLayout* pl = from_handle<PipelineLayout>(ci.layout);
  uint32_t required_sets = 0;
  if (pl) {
    opts.layout = pl->jit_info;
    for (uint32_t s = 0; s < pl->set_count; ++s)
      if (pl->sets[s] && pl->sets[s]->descriptor_count) required_sets |= 1u << s;
  }

  if (log_enabled(LogLevel::Debug)) {
    std::string spec;
    for (const auto& sv : opts.specialization) {
      uint64_t v = 0;
      std::memcpy(&v, sv.bytes.data(), std::min<size_t>(sv.bytes.size(), 8));
      spec += ' ';
      spec += std::to_string(sv.constant_id);
      spec += '=';
      spec += std::to_string(v);
    }
    COOPVK_DEBUG("%s: module %s entry \"%s\" subgroup size %u%s, specialization:%s", fn,
                 module_tag(sm->words_hash).c_str(), opts.entry_point.c_str(), opts.subgroup_size,
                 opts.require_full_subgroups ? " (full)" : "", spec.c_str());
  }
  const Hash256 key = cache_key(*sm, opts);
  PipelineCache* cache = app_cache ? app_cache : &dev->compute->implicit_cache;
  std::shared_ptr<const jit::CompiledShader> shader = cache->find(key);
  if (!shader && app_cache) {
    // Also look in the implicit cache: same key, same code.
    shader = dev->compute->implicit_cache.find(key);
    if (shader) app_cache->insert(key, shader);
  }
  if (!shader) {
#ifdef COOPVK_HAVE_JIT_COMPILER
    DiskCache* disk = dev->compute->disk.get();
    Hash256 disk_key{};
    if (disk) {
      disk_key = DiskCache::entry_key(key, jit::host_code_signature());
      std::vector<uint8_t> blob = disk->load(disk_key);
      if (!blob.empty()) {
        // deserialize() checks the bytes again (signature, metadata, object file).
        jit::CompileResult r = jit::deserialize(blob.data(), blob.size());
        if (r.shader) {
          shader = std::shared_ptr<const jit::CompiledShader>(std::move(r.shader));
          COOPVK_INFO("%s: disk cache hit %s", fn, DiskCache::file_name(disk_key).c_str());
        } else {
          COOPVK_INFO("%s: disk cache entry %s cannot be used (%s); compiling instead", fn,
                      DiskCache::file_name(disk_key).c_str(), r.error.c_str());
          disk->remove(disk_key);
        }
      }
    }
    if (!shader) {
      if (pipeline_flags(ci) & VK_PIPELINE_CREATE_2_FAIL_ON_PIPELINE_COMPILE_REQUIRED_BIT)
        return VK_PIPELINE_COMPILE_REQUIRED;
      jit::CompileResult r = jit::compile_compute(*sm->module, opts);
      if (!r.shader) {  // failures are not cached anywhere: the next attempt reports them again
        COOPVK_ERROR("%s: cannot compile entry point \"%s\": %s", fn, opts.entry_point.c_str(),
                     r.error.c_str());
        return VK_ERROR_UNKNOWN;
      }
      shader = std::shared_ptr<const jit::CompiledShader>(std::move(r.shader));
      if (disk) disk->store(disk_key, jit::serialize(*shader));
    }
    cache->insert(key, shader);
    if (app_cache) dev->compute->implicit_cache.insert(key, shader);
#else
    if (pipeline_flags(ci) & VK_PIPELINE_CREATE_2_FAIL_ON_PIPELINE_COMPILE_REQUIRED_BIT)
      return VK_PIPELINE_COMPILE_REQUIRED;
    COOPVK_ERROR("%s: this build of coopvk has no shader compiler (jit/ library coopvk_jit)", fn);
    return VK_ERROR_UNKNOWN;
#endif
  }
  out->shader = std::move(shader);
  out->required_sets = required_sets;
  return VK_SUCCESS;
}

// Helper threads compiling for vkCreateComputePipelines calls, over all calls in the
// process: together with the calling threads, which always work, at most about one per
// hardware thread (several application threads each creating many pipelines share them).
std::atomic<unsigned> g_compile_helpers{0};

unsigned reserve_helpers(unsigned wanted) {
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  unsigned cur = g_compile_helpers.load();
  for (;;) {
    unsigned got = std::min(wanted, cur + 1 < hw ? hw - 1 - cur : 0u);
    if (got == 0 || g_compile_helpers.compare_exchange_weak(cur, cur + got)) return got;
  }
}

// Runs prepare_one for every create info, in parallel when there are several: the calling
// thread and helpers take indices in increasing order. After a failure of a create info
// with EARLY_RETURN_ON_FAILURE no later index is started (ones already running finish and
// are dropped by the caller). Returns how many leading create infos the caller should look
// at: all of them, or up to and including the first early-return failure.
uint32_t prepare_all(Device* dev, PipelineCache* cache, const VkComputePipelineCreateInfo* infos,
                     uint32_t count, Prepared* out) {
  std::atomic<uint32_t> next{0};
  std::atomic<uint32_t> stop{count};  // lowest index that failed with EARLY_RETURN_ON_FAILURE
  auto work = [&] {
    for (;;) {
      const uint32_t i = next.fetch_add(1);
      if (i >= count || i > stop.load()) return;
      try {
        out[i].result = prepare_one(dev, cache, infos[i], &out[i]);
      } catch (const std::bad_alloc&) {
        out[i].result = VK_ERROR_OUT_OF_HOST_MEMORY;
      }
      if (out[i].result != VK_SUCCESS &&
          (pipeline_flags(infos[i]) & VK_PIPELINE_CREATE_2_EARLY_RETURN_ON_FAILURE_BIT)) {
        uint32_t s = stop.load();
        while (i < s && !stop.compare_exchange_weak(s, i)) {
        }
      }
    }
  };
  const unsigned helpers = count > 1 ? reserve_helpers(count - 1) : 0;
  std::vector<std::thread> threads;
  threads.reserve(helpers);
  for (unsigned t = 0; t < helpers; ++t) {
    try {
      threads.emplace_back(work);
    } catch (const std::system_error&) {  // no more threads: fewer helpers
      break;
    }
  }
  g_compile_helpers -= helpers - unsigned(threads.size());
  if (threads.size()) COOPVK_DEBUG("vkCreateComputePipelines: %u pipelines on %zu threads", count, threads.size() + 1);
  work();
  for (auto& t : threads) t.join();
  g_compile_helpers -= unsigned(threads.size());
  const uint32_t s = stop.load();
  return s < count ? s + 1 : count;
}

}  // namespace

VKAPI_ATTR VkResult VKAPI_CALL coopvk_CreateComputePipelines(
    VkDevice device, VkPipelineCache pipelineCache, uint32_t count,
    const VkComputePipelineCreateInfo* infos, const VkAllocationCallbacks* pAllocator,
    VkPipeline* pPipelines) {
  Device* dev = from_handle<Device>(device);
  const VkAllocationCallbacks* alloc = pick_allocator(pAllocator, dev->alloc());
  PipelineCache* cache = from_handle<PipelineCache>(pipelineCache);
  for (uint32_t i = 0; i < count; ++i) pPipelines[i] = VK_NULL_HANDLE;

  // The shaders are found or compiled in parallel (prepare_all), then the pipeline objects
  // made here in order. Each pipeline succeeds or fails on its own; failed ones are
  // VK_NULL_HANDLE and the call returns the failure ("Multiple Pipeline Creation" in the
  // Vulkan spec). With EARLY_RETURN_ON_FAILURE nothing after the first failure is made, as if
  // created one by one: the handles after it stay null.
  std::vector<Prepared> prepared(count);
  const uint32_t attempted = prepare_all(dev, cache, infos, count, prepared.data());
  VkResult result = VK_SUCCESS;
  for (uint32_t i = 0; i < attempted; ++i) {
    VkResult r = prepared[i].result;
    if (r == VK_SUCCESS) {
      auto* p = vk_new<Pipeline>(alloc, VK_SYSTEM_ALLOCATION_SCOPE_OBJECT);
      if (p) {
        p->shader = std::move(prepared[i].shader);
        p->required_sets_mask = prepared[i].required_sets;
        p->cost = std::make_shared<WorkgroupCost>();
        pPipelines[i] = to_handle<VkPipeline>(p);
        continue;
      }
      r = VK_ERROR_OUT_OF_HOST_MEMORY;
    }
    if (r < 0 || result == VK_SUCCESS) result = r;  // errors override COMPILE_REQUIRED
    if (pipeline_flags(infos[i]) & VK_PIPELINE_CREATE_2_EARLY_RETURN_ON_FAILURE_BIT) break;
  }
  return result;
}

VKAPI_ATTR void VKAPI_CALL coopvk_DestroyPipeline(VkDevice device, VkPipeline pipeline,
                                                  const VkAllocationCallbacks* pAllocator) {
  Device* dev = from_handle<Device>(device);
  vk_delete(pick_allocator(pAllocator, dev->alloc()), from_handle<Pipeline>(pipeline));
}
