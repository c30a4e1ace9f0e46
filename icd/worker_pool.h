// The device's worker pool: runs the workgroups of one dispatch across threads. Each
// thread (the pool's workers and the queue thread that asked, which helps rather than
// sleeps) has its own jit::WorkgroupRunner and takes chunks of workgroups from an atomic
// counter. dispatch() returns when every workgroup has finished, so the queue thread
// starts the next command only after the dispatch is complete. The pool's tile cache
// (coopvk/jit/tile_cache.h) serves the dispatch it runs.
#pragma once

#include "coopvk/jit/tile_cache.h"
#include "coopvk/jit/workgroup_runner.h"

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace coopvk {

class WorkerPool {
 public:
  // `threads` counts the calling thread too: threads - 1 workers are started.
  explicit WorkerPool(unsigned threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Runs workgroups base + [0, num_workgroups) of ds (DispatchState::num_workgroups and
  // base_workgroup). Dispatches from several queues are run one after the other.
  void dispatch(const jit::CompiledShader& shader, const jit::DispatchState& ds);

  unsigned threads() const { return static_cast<unsigned>(workers_.size()) + 1; }

  // COOPVK_THREADS if set to a positive number, else the hardware's thread count.
  static unsigned default_threads();

 private:
  struct Job;
  void worker_main(unsigned index);
  static void work(Job& job, jit::WorkgroupRunner& runner);

  std::vector<std::thread> workers_;
  std::vector<std::unique_ptr<jit::WorkgroupRunner>> runners_;
  std::mutex dispatch_mutex_;  // one dispatch at a time
  jit::TileCache tile_cache_;  // the running dispatch's (so one per pool)
  bool use_tile_cache_ = true;
  std::mutex mutex_;
  std::condition_variable work_cv_, done_cv_;
  Job* job_ = nullptr;
  uint64_t generation_ = 0;
  unsigned busy_ = 0;
  bool stopping_ = false;
};

}  // namespace coopvk
