// The contract between JIT-compiled shader code and the driver that runs it. Plain C
// layout: generated code reads these structs at fixed offsets.
//
// A compiled shader is one function that runs ONE SUBGROUP of one workgroup: each
// invocation is a lane of the LLVM vectors (structure of arrays). The runtime
// (workgroup_runner.h) calls it once per subgroup of each workgroup; when the shader
// has workgroup barriers the subgroups run as fibers that switch at each barrier.
#pragma once

#include <cstdint>

namespace coopvk::jit {

class TileCache;

constexpr uint32_t kMaxDescriptorSets = 8;
constexpr uint32_t kMaxPushConstantBytes = 256;

// A buffer descriptor as shader code sees it: the first byte of the bound range
// (offset and dynamic offset already applied) and its size in bytes.
struct BufferDescriptor {
  uint8_t* base;
  uint64_t range;
};

// Read-only state of one dispatch, owned by the driver while the dispatch runs.
// sets[s] points to the flat descriptor array of set s: binding b, array element i
// is at index PipelineLayoutInfo::sets[s].bindings[b].first + i.
struct DispatchState {
  const BufferDescriptor* sets[kMaxDescriptorSets];
  const uint8_t* push_constants;  // kMaxPushConstantBytes bytes
  uint32_t num_workgroups[3];     // the dispatch's group counts (NumWorkgroups)
  uint32_t base_workgroup[3];     // vkCmdDispatchBase's base (already in workgroup_id)
  // Nonzero and different for every execution of a dispatch: the cache token of kernels
  // that keep what they derive from memory a dispatch may not change (a cooperative-vector
  // matrix, kernels/coopvec_batch.h). 0: no caching.
  uint64_t dispatch_serial;
  // The runner's packed tiles shared by the dispatch's workgroups (tile_cache.h), or null.
  TileCache* tile_cache;
};

struct WorkgroupState {
  uint32_t workgroup_id[3];  // absolute: base_workgroup + index within the dispatch
  uint32_t pad_;
  uint8_t* shared_memory;    // Workgroup storage, CompiledShader::shared_memory_bytes
  void* scheduler;           // runtime-private: fiber scheduler for barriers
  // Shared packing (lower_interleave.cpp), in shaders that interleave their subgroups.
  // pack_epoch is bumped by the runner at every workgroup and by compiled code after
  // everything that may write memory other invocations see (or make their writes visible
  // to this one: atomics, barriers) and at the end of a function's packed copies: a tile
  // packed at another epoch is not reused. pack_memo: CompiledShader::pack_sites records of
  // kPackMemoSiteBytes, where compiled code notes the tiles each site packed last.
  uint64_t pack_epoch;
  uint8_t* pack_memo;
};

// Signature of compiled code.
using SubgroupFn = void (*)(const DispatchState* ds, WorkgroupState* ws, uint32_t subgroup_index);
// Every subgroup of workgroups [first, first + count) of the dispatch, linear index i being
// workgroup base + (i % nx, i / nx % ny, i / (nx * ny)). Compiled only for shaders with no
// workgroup barrier and no workgroup memory, which need nothing between workgroups: one
// call then runs a whole chunk, and what the subgroups share (descriptors, push
// constants) is loaded once. `ws` is the caller's, its workgroup_id unused.
using WorkgroupRangeFn = void (*)(const DispatchState* ds, WorkgroupState* ws, uint64_t first, uint64_t count);

// Called by compiled code at OpControlBarrier with Workgroup execution scope.
extern "C" void coopvk_jit_workgroup_barrier(WorkgroupState* ws);
// Called by compiled code of shaders without workgroup barriers
// (CompiledShader::interleaves_subgroups) once per iteration of a loop that loads and
// multiplies cooperative matrices: lets the next subgroup of the workgroup run its
// iteration, so that subgroups loading the same tiles load them while they are in cache.
extern "C" void coopvk_jit_subgroup_yield(WorkgroupState* ws);
// A pack_memo record: kPackMemoEntries entries of {const void* src; uint64_t ld; uint64_t
// epoch; void* packed}, a fifth whose `packed` stays null (what a lookup finding none
// reads), then at kPackMemoNext the index of the entry to replace next (uint32_t). Zero
// when made.
constexpr uint32_t kPackMemoEntries = 4;
constexpr uint32_t kPackMemoNext = 160;
constexpr uint32_t kPackMemoSiteBytes = 192;

}  // namespace coopvk::jit
