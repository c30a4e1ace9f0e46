// WorkerPool: see worker_pool.h.
//
// The hand-off, without locks (every atomic below is sequentially consistent where two
// threads each write one word and then read the other's: a store-then-load pair, which
// only seq_cst orders):
//
//   publish (dispatching thread, holding dispatch_mutex_, epoch_ odd):
//     write shader_, ds_, total_, chunk_, next_ = first; epoch_ = e (even);
//     if sleepers_ != 0: futex-wake everyone on epoch_
//   join (worker, having seen epoch_ == e):
//     active_ += 1; if epoch_ is still e: take chunks (next_ += chunk_) and run them;
//     active_ -= 1 (release; futex-wake the dispatching thread if it waits and was last)
//   finish (dispatching thread, after taking chunks itself until none is left):
//     epoch_ = e + 1 (odd: no one joins any more); wait until active_ == 0 (acquire)
//
// A worker that incremented active_ before the close is counted, so the dispatch does not
// return before it has left, and its writes (release) happen-before the return (acquire):
// dispatch completion is a full barrier, which is what lets pipeline barriers record
// nothing. A worker that incremented after the close sees the odd (or a newer) epoch in
// its check and leaves without touching the job (store epoch / load active_ against
// add active_ / load epoch: one of the two sees the other). The job's fields are written
// only while the epoch is odd, so no worker that passed its check reads them then. The
// dispatching thread always takes chunks too, so a worker that never wakes delays nothing
// but its own share.
//
// Sleeping: a worker with no job spins on epoch_ for spin_ns_ (a pause instruction per
// probe), then adds itself to sleepers_ and futex-waits on epoch_ while it still holds the
// value it read (the kernel compares atomically). The publisher wakes only when sleepers_
// says someone sleeps: add sleepers_ / load epoch_ against store epoch_ / load sleepers_.
// While dispatches come back to back the workers never sleep, and publishing costs a store
// and a load. The dispatching thread waits for active_ the same way: spin, then set
// kWaiting in active_ and futex-wait on it; the worker that brings the count to 0 with
// kWaiting set wakes it.
//
// Small dispatches are not published at all. Handing out tiny workgroups costs more than
// it saves: the counter's and the epoch's cache lines travel between cores, sleeping
// workers need a system call to wake, and a worker preempted while it holds a chunk holds
// the dispatch up. One workgroup, or a pool without workers: the dispatching thread runs
// it. Otherwise, unless the pipeline's WorkgroupCost predicts more than 4 x inline_ns_ (or
// knows nothing yet: a first workgroup might take seconds), the dispatching thread starts
// alone: as many workgroups as should take half of inline_ns_ (all of a small dispatch: two
// clock reads in all), then twice as many as done so far, until inline_ns_ has passed;
// what is left then is published as above. So a dispatch costs at most about inline_ns_
// more than if it had been handed out at once, however wrong the prediction, and a
// mispredicted small one (the first after an idle gap runs from cold caches and measures
// several times slower) is not handed out. The cost noted is what the dispatching thread's
// own workgroups took, the time spent taking chunks left out.
#include "worker_pool.h"

#include "disk_cache.h"
#include "log.h"
#include "pipeline.h"

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

using namespace coopvk;

namespace {

constexpr uint32_t kWaiting = 1u << 31;  // in active_: the dispatching thread sleeps on it

static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t) && std::atomic<uint32_t>::is_always_lock_free,
              "futexes need plain 32-bit atomics");

// The futex calls take the atomic's address: a lock-free std::atomic<uint32_t> is the
// 32-bit word itself (what libstdc++'s own atomic wait does).
void futex_wait(std::atomic<uint32_t>& word, uint32_t expected) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
}

void futex_wake_all(std::atomic<uint32_t>& word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

uint64_t now_ns() {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now().time_since_epoch()).count());
}

// Spins until done() or spin_ns have passed; returns whether done() held. The clock is read
// once every 32 probes. After the first kPauseOnlyNs each probe also yields the CPU: where
// threads outnumber CPUs (a busy machine, COOPVK_THREADS above the core count) a spinning
// thread would otherwise keep the very thread it waits for (a preempted worker, the queue
// thread that publishes) off its CPU.
constexpr uint64_t kPauseOnlyNs = 2'000;

template <class Done>
bool spin_until(Done done, uint64_t spin_ns) {
  if (spin_ns == 0) return done();
  uint64_t start = 0;
  bool yielding = false;
  for (uint32_t i = 0;; ++i) {
    if (done()) return true;
    if ((i & 31) == 0 || yielding) {
      const uint64_t t = now_ns();
      if (start == 0) start = t;
      else if (t - start >= spin_ns) return false;
      yielding = t - start >= kPauseOnlyNs;
    }
    if (yielding) sched_yield();
    else cpu_relax();
  }
}

}  // namespace

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

namespace {

// A non-negative number of microseconds from the environment variable, in ns.
void read_us(const char* name, uint64_t* ns) {
  const char* env = std::getenv(name);
  if (!env) return;
  char* end = nullptr;
  long v = std::strtol(env, &end, 10);
  if (end != env && *end == '\0' && v >= 0 && v <= 1'000'000) *ns = uint64_t(v) * 1000;
  else COOPVK_WARN("%s=%s is not a number in [0, 1000000]; using %llu", name, env,
                   static_cast<unsigned long long>(*ns / 1000));
}

}  // namespace

WorkerPool::WorkerPool(unsigned threads) {
  if (threads == 0) threads = 1;
  // COOPVK_TILE_CACHE=0: every workgroup packs its own tiles (to compare, or to rule the
  // cache out when a result looks wrong).
  if (const char* env = std::getenv("COOPVK_TILE_CACHE")) use_tile_cache_ = std::strcmp(env, "0") != 0;
  // COOPVK_SPIN_US: how long an idle worker (and the dispatching thread waiting for the
  // workers) spins before it sleeps; 0 sleeps at once. COOPVK_INLINE_US: how long a
  // dispatch runs on the queue thread alone before the rest is handed out; 0 hands every
  // dispatch of more than one workgroup out at once.
  read_us("COOPVK_SPIN_US", &spin_ns_);
  read_us("COOPVK_INLINE_US", &inline_ns_);
  for (unsigned i = 0; i + 1 < threads; ++i)
    runners_.push_back(std::make_unique<jit::WorkgroupRunner>());
  for (unsigned i = 0; i + 1 < threads; ++i) workers_.emplace_back([this, i] { worker_main(i); });
}

WorkerPool::~WorkerPool() {
  COOPVK_INFO("worker pool: %llu dispatches, %llu handed to the workers, %llu of them woke sleeping workers",
               static_cast<unsigned long long>(dispatches_), static_cast<unsigned long long>(published_),
               static_cast<unsigned long long>(woken_));
  // Idle (the queues have stopped): a new even epoch with stopping_ set ends every worker,
  // spinning or asleep.
  stopping_.store(true, std::memory_order_seq_cst);
  epoch_.fetch_add(1, std::memory_order_seq_cst);
  futex_wake_all(epoch_);
  for (auto& t : workers_) t.join();
}

uint64_t WorkerPool::work(jit::WorkgroupRunner& runner, uint64_t* ns) {
  const uint64_t total = total_, chunk = chunk_;
  uint64_t ran = 0;
  for (;;) {
    uint64_t start = next_.fetch_add(chunk, std::memory_order_relaxed);
    if (start >= total) return ran;
    uint64_t end = std::min(start + chunk, total);
    const uint64_t t = ns ? now_ns() : 0;
    runner.run_range(*shader_, ds_, start, end - start);
    if (ns) *ns += now_ns() - t;
    ran += end - start;
  }
}

uint32_t WorkerPool::wait_for_job(uint32_t seen) {
  uint32_t e = 0;
  auto ready = [&] {
    e = epoch_.load(std::memory_order_acquire);
    return (e & 1) == 0 && e != seen;
  };
  if (spin_until(ready, spin_ns_)) return e;
  for (;;) {
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    e = epoch_.load(std::memory_order_seq_cst);
    if ((e & 1) != 0 || e == seen) futex_wait(epoch_, e);  // returns at once if epoch_ moved on
    sleepers_.fetch_sub(1, std::memory_order_relaxed);
    if (ready()) return e;
  }
}

void WorkerPool::worker_main(unsigned index) {
  jit::WorkgroupRunner& runner = *runners_[index];
  uint32_t seen = 1;
  for (;;) {
    const uint32_t e = wait_for_job(seen);
    if (stopping_.load(std::memory_order_acquire)) return;
    seen = e;
    active_.fetch_add(1, std::memory_order_seq_cst);
    if (epoch_.load(std::memory_order_seq_cst) == e) work(runner);
    // The last one out wakes the dispatching thread if it sleeps. (A worker that only
    // checked, above, may be the one: the wake is then early, and the waiter looks again.)
    if (active_.fetch_sub(1, std::memory_order_release) == (kWaiting | 1)) futex_wake_all(active_);
  }
}

void WorkerPool::wait_for_workers() {
  auto none = [&] { return active_.load(std::memory_order_seq_cst) == 0; };
  if (spin_until(none, spin_ns_)) return;
  for (;;) {
    uint32_t a = active_.load(std::memory_order_acquire);
    if ((a & ~kWaiting) == 0) break;
    if (!(a & kWaiting)) {
      if (!active_.compare_exchange_weak(a, a | kWaiting, std::memory_order_acquire)) continue;
      a |= kWaiting;
    }
    futex_wait(active_, a);
  }
  active_.fetch_and(~kWaiting, std::memory_order_acquire);
}

void WorkerPool::dispatch(const jit::CompiledShader& shader, const jit::DispatchState& ds, WorkgroupCost* cost,
                          jit::WorkgroupRunner& runner) {
  const uint64_t total = uint64_t(ds.num_workgroups[0]) * ds.num_workgroups[1] * ds.num_workgroups[2];
  if (total == 0) return;
  std::lock_guard<std::mutex> one_at_a_time(dispatch_mutex_);
  ++dispatches_;
  tile_cache_.begin(ds.dispatch_serial);
  // epoch_ is odd here (the last dispatch closed it): no worker reads the job fields.
  shader_ = &shader;
  ds_ = ds;
  ds_.tile_cache = use_tile_cache_ ? &tile_cache_ : nullptr;
  if (total == 1 || workers_.empty()) {
    runner.run_range(shader, ds_, 0, total);
    return;
  }
  // What one workgroup is expected to take. (Measured without the workers, so the cache
  // lines that travel between threads do not count: they are what running alone saves.)
  const uint64_t known = cost ? cost->ns.load(std::memory_order_relaxed) : 0;
  auto note_cost = [&](uint64_t ns, uint64_t workgroups) {
    if (cost && workgroups)
      cost->ns.store(uint32_t(std::clamp<uint64_t>(ns / workgroups, 1, UINT32_MAX)), std::memory_order_relaxed);
  };
  uint64_t done = 0;
  if (known != 0 && total < 4 * inline_ns_ && known * total < 4 * inline_ns_) {  // (no overflow: known < 2^32)
    const uint64_t t0 = now_ns();
    uint64_t batch = std::max<uint64_t>(1, inline_ns_ / 2 / known);
    for (;;) {
      const uint64_t n = std::min(batch, total - done);
      runner.run_range(shader, ds_, done, n);
      done += n;
      const uint64_t t = now_ns();
      if (done == total) return note_cost(t - t0, total);
      if (t - t0 >= inline_ns_) break;
      batch = done;
    }
  }
  ++published_;
  const uint64_t left = total - done;
  total_ = total;
  // Chunks small enough to balance uneven workgroups, large enough that the counter is
  // not contended when workgroups are tiny.
  chunk_ = std::clamp<uint64_t>(left / (uint64_t(threads()) * 16), 1, 256);
  next_.store(done, std::memory_order_relaxed);
  const uint32_t e = epoch_.load(std::memory_order_relaxed) + 1;
  epoch_.store(e, std::memory_order_seq_cst);
  if (sleepers_.load(std::memory_order_seq_cst) != 0) {
    ++woken_;
    futex_wake_all(epoch_);
  }
  uint64_t mine_ns = 0;
  const uint64_t mine = work(runner, &mine_ns);
  epoch_.store(e + 1, std::memory_order_seq_cst);
  wait_for_workers();
  note_cost(mine_ns, mine);
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
