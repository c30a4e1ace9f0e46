// WorkerPool: see worker_pool.h.
#include "worker_pool.h"

#include "disk_cache.h"
#include "log.h"
#include "pipeline.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>

using namespace coopvk;

struct WorkerPool::Job {
  const jit::CompiledShader* shader;
  const jit::DispatchState* ds;
  uint64_t total;
  uint64_t chunk;
  std::atomic<uint64_t> next{0};
};

unsigned WorkerPool::default_threads() {
  if (const char* env = std::getenv("COOPVK_THREADS")) {
    char* end = nullptr;
    long v = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && v > 0 && v <= 1024) return static_cast<unsigned>(v);
    COOPVK_WARN("COOPVK_THREADS=%s is not a number in [1, 1024]; using the hardware's count", env);
  }
  unsigned n = std::thread::hardware_concurrency();
  return n ? n : 1;
}

WorkerPool::WorkerPool(unsigned threads) {
  if (threads == 0) threads = 1;
  // COOPVK_TILE_CACHE=0: every workgroup packs its own tiles (to compare, or to rule the
  // cache out when a result looks wrong).
  if (const char* env = std::getenv("COOPVK_TILE_CACHE")) use_tile_cache_ = std::strcmp(env, "0") != 0;
  for (unsigned i = 0; i + 1 < threads; ++i)
    runners_.push_back(std::make_unique<jit::WorkgroupRunner>());
  for (unsigned i = 0; i + 1 < threads; ++i) workers_.emplace_back([this, i] { worker_main(i); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  work_cv_.notify_all();
  for (auto& t : workers_) t.join();
}

void WorkerPool::work(Job& job, jit::WorkgroupRunner& runner) {
  for (;;) {
    uint64_t start = job.next.fetch_add(job.chunk, std::memory_order_relaxed);
    if (start >= job.total) return;
    uint64_t end = std::min(start + job.chunk, job.total);
    runner.run_range(*job.shader, *job.ds, start, end - start);
  }
}

void WorkerPool::worker_main(unsigned index) {
  jit::WorkgroupRunner& runner = *runners_[index];
  uint64_t seen = 0;
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    work_cv_.wait(lock, [&] { return stopping_ || generation_ != seen; });
    if (stopping_) return;
    seen = generation_;
    Job* job = job_;
    if (!job) continue;  // that dispatch already finished without us
    ++busy_;
    lock.unlock();
    work(*job, runner);
    lock.lock();
    if (--busy_ == 0) done_cv_.notify_all();
  }
}

void WorkerPool::dispatch(const jit::CompiledShader& shader, const jit::DispatchState& ds) {
  const uint64_t total = uint64_t(ds.num_workgroups[0]) * ds.num_workgroups[1] * ds.num_workgroups[2];
  if (total == 0) return;
  // The calling (queue) thread's own runner: queue threads are few and long-lived.
  static thread_local jit::WorkgroupRunner caller_runner;
  std::lock_guard<std::mutex> one_at_a_time(dispatch_mutex_);
  jit::DispatchState with_cache = ds;
  tile_cache_.begin(ds.dispatch_serial);
  with_cache.tile_cache = use_tile_cache_ ? &tile_cache_ : nullptr;
  Job job;
  job.shader = &shader;
  job.ds = &with_cache;
  job.total = total;
  // Chunks small enough to balance uneven workgroups, large enough that the counter is
  // not contended when workgroups are tiny.
  job.chunk = std::clamp<uint64_t>(total / (uint64_t(threads()) * 16), 1, 256);
  if (total > 1 && !workers_.empty()) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = &job;
      ++generation_;
    }
    work_cv_.notify_all();
  }
  work(job, caller_runner);
  std::unique_lock<std::mutex> lock(mutex_);
  done_cv_.wait(lock, [&] { return busy_ == 0; });
  job_ = nullptr;  // workers that wake late see no job
}

// ---- the device's compute state -----------------------------------------------------

DeviceCompute::DeviceCompute() : disk(DiskCache::from_environment()) { implicit_cache.max_entries = 512; }
DeviceCompute::~DeviceCompute() = default;

WorkerPool& coopvk::device_worker_pool(Device* dev) {
  DeviceCompute& c = *dev->compute;
  std::call_once(c.pool_once, [&] {
    unsigned n = WorkerPool::default_threads();
    c.pool = std::make_unique<WorkerPool>(n);
    COOPVK_INFO("worker pool: %u threads", n);
  });
  return *c.pool;
}
