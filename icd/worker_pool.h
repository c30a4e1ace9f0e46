// The device's worker pool: runs the workgroups of one dispatch across threads. Each
// thread (the pool's workers and the queue thread that asked, which helps rather than
// sleeps) has its own jit::WorkgroupRunner and takes chunks of workgroups from an atomic
// counter. dispatch() returns when every workgroup has finished, so the queue thread
// starts the next command only after the dispatch is complete. The pool's tile cache
// (coopvk/jit/tile_cache.h) serves the dispatch it runs.
//
// Small dispatches are the common case in inference graphs (hundreds per command buffer,
// a barrier after each), so a dispatch takes no lock but the pool's own, allocates
// nothing, and while the workers are awake makes no system call: it is published by
// bumping an epoch the workers watch; after a job they spin on it for a short while
// (COOPVK_SPIN_US, default 50 us) before sleeping on it as a futex, so a command buffer's
// next dispatch finds them awake and an idle queue does not keep them running. A dispatch
// of one workgroup runs on the queue thread alone, without telling the workers, and so
// does any other for its first COOPVK_INLINE_US (default 5 us), unless the pipeline's last
// dispatch says it will take much longer: only what is left then is handed out. The
// protocol is described at the top of worker_pool.cpp.
#pragma once

#include "coopvk/jit/tile_cache.h"
#include "coopvk/jit/workgroup_runner.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace coopvk {

// What the pool has seen of a pipeline's workgroups: nanoseconds per workgroup in its
// last dispatch that ran more than one (0: none yet). Kept with the pipeline, shared by the
// dispatches recorded with it; a hint, read and written relaxed.
struct WorkgroupCost {
  std::atomic<uint32_t> ns{0};
};

class WorkerPool {
 public:
  // `threads` counts the calling thread too: threads - 1 workers are started.
  explicit WorkerPool(unsigned threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Runs workgroups base + [0, num_workgroups) of ds (DispatchState::num_workgroups and
  // base_workgroup), the calling thread's share with `runner` (its own: a queue thread's).
  // Dispatches from several queues are run one after the other. Every write of the
  // dispatch's workgroups happens-before the return. `cost`, if given, is read to decide
  // whether to run the dispatch on this thread alone, and updated.
  void dispatch(const jit::CompiledShader& shader, const jit::DispatchState& ds, WorkgroupCost* cost,
                jit::WorkgroupRunner& runner);

  unsigned threads() const { return static_cast<unsigned>(workers_.size()) + 1; }

  // COOPVK_THREADS if set to a positive number, else the hardware's thread count.
  static unsigned default_threads();

 private:
  void worker_main(unsigned index);
  // Takes chunks of the published job until none is left; returns the workgroups it ran,
  // and adds the nanoseconds they took to *ns if given.
  uint64_t work(jit::WorkgroupRunner& runner, uint64_t* ns = nullptr);
  // Blocks (spinning first) until epoch_ is a job's epoch other than `seen`, or the pool
  // stops; returns the epoch seen.
  uint32_t wait_for_job(uint32_t seen);
  // Blocks (spinning first) until no worker is inside a job.
  void wait_for_workers();

  std::vector<std::thread> workers_;
  std::vector<std::unique_ptr<jit::WorkgroupRunner>> runners_;
  std::mutex dispatch_mutex_;  // one dispatch at a time (per device, taken per dispatch)
  jit::TileCache tile_cache_;  // the running dispatch's (so one per pool)
  bool use_tile_cache_ = true;
  uint64_t spin_ns_ = 50'000;   // how long a waiting thread spins before it sleeps
  uint64_t inline_ns_ = 5'000;  // how long a dispatch runs on the calling thread alone

  // The published job: written by the dispatching thread while epoch_ is odd, read by
  // workers that joined it (worker_pool.cpp).
  const jit::CompiledShader* shader_ = nullptr;
  jit::DispatchState ds_{};
  uint64_t total_ = 0;
  uint64_t chunk_ = 1;
  // Counted by the dispatching thread, logged (COOPVK_LOG=info) when the pool goes.
  uint64_t dispatches_ = 0, published_ = 0, woken_ = 0;
  alignas(64) std::atomic<uint64_t> next_{0};  // the next workgroup to hand out
  // Even: the job of that epoch is open to join; odd: none is. Workers sleep on it.
  alignas(64) std::atomic<uint32_t> epoch_{1};
  std::atomic<uint32_t> sleepers_{0};  // workers asleep on epoch_ (or about to be)
  std::atomic<bool> stopping_{false};
  // Workers inside a job (joined, or checking whether they may), plus kWaiting while the
  // dispatching thread sleeps on it.
  alignas(64) std::atomic<uint32_t> active_{0};
};

}  // namespace coopvk
