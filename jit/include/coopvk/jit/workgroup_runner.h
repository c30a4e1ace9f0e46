// Runs the subgroups of one workgroup. Without workgroup barriers they simply run one
// after the other; with barriers each subgroup gets a fiber and every barrier switches
// to the next fiber, so all subgroups reach the barrier before any passes it.
#pragma once

#include "coopvk/jit/compiler.h"

namespace coopvk::jit {

// Per-worker-thread scratch reused across workgroups (fiber stacks, shared memory).
class WorkgroupRunner {
 public:
  WorkgroupRunner();
  ~WorkgroupRunner();
  WorkgroupRunner(const WorkgroupRunner&) = delete;
  WorkgroupRunner& operator=(const WorkgroupRunner&) = delete;

  void run(const CompiledShader& shader, const DispatchState& ds, const uint32_t workgroup_id[3]);
  // Workgroups [first, first + count) in the dispatch's linear order (shader_abi.h), by
  // one call of CompiledShader::range_fn when the shader has one, else one run() each.
  void run_range(const CompiledShader& shader, const DispatchState& ds, uint64_t first, uint64_t count);

 private:
  struct Impl;
  Impl* impl_;
};

}  // namespace coopvk::jit
