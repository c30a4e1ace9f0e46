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
  // Workgroups [first, first + count) of the dispatch's order, by one call of
  // CompiledShader::range_fn when the shader has one, else one run() each. The order is the
  // linear one (shader_abi.h), except for a 2D grid of a shader that walks the tile cache:
  // strips of rows, each column by column (workgroup_runner.cpp).
  void run_range(const CompiledShader& shader, const DispatchState& ds, uint64_t first, uint64_t count);

 private:
  struct Impl;
  Impl* impl_;
};

}  // namespace coopvk::jit
