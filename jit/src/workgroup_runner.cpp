// WorkgroupRunner: runs the subgroups of one workgroup on the calling thread.
//
// Without workgroup barriers the subgroups run one after the other. With barriers each
// subgroup runs on its own fiber (ucontext); coopvk_jit_workgroup_barrier() switches to
// the next live fiber in round-robin order, so by the time fiber k runs again every other
// live fiber has reached its barrier too: that is exactly OpControlBarrier's rule that no
// invocation passes until all invocations of the workgroup have arrived. Fibers switch
// straight to each other (no trip through a scheduler context), one swapcontext per
// barrier per subgroup.
//
// Stacks are mmap'd once per runner (one runner per worker thread) and reused for every
// workgroup; each has a PROT_NONE guard page below it so an overflow faults instead of
// silently corrupting a neighbour. Pages are only touched when used, so generous stacks
// cost address space, not memory.
//
// Workgroup memory is zeroed before every workgroup. Vulkan leaves it undefined unless
// shaderZeroInitializeWorkgroupMemory is enabled (then only variables with an initializer
// are zeroed), so zeroing is always allowed; it makes results deterministic and costs a
// memset of at most maxComputeSharedMemorySize per workgroup.
#include "coopvk/jit/workgroup_runner.h"

#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

namespace coopvk::jit {

namespace {

// Enough for JIT frames holding subgroup-wide vectors and cooperative-matrix tiles.
constexpr size_t kFiberStackBytes = 1u << 20;
constexpr size_t kSharedAlign = 64;

[[noreturn]] void fatal(const char* what) {
  std::fprintf(stderr, "coopvk: workgroup runner: %s\n", what);
  std::abort();
}

struct Stack {
  void* mapping = nullptr;  // guard page + stack
  size_t mapping_bytes = 0;
  void* base() const { return static_cast<char*>(mapping) + page_size(); }
  size_t size() const { return mapping_bytes - page_size(); }
  static size_t page_size() {
    static const size_t p = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    return p;
  }
};

struct Fiber {
  ucontext_t ctx;
  bool done = false;
};

// Everything a runner owns. A namespace-scope type (not the private Impl itself) so that
// coopvk_jit_workgroup_barrier can reach it through WorkgroupState::scheduler.
struct FiberScheduler {
  // Shared (workgroup) memory, grown on demand, 64-byte aligned.
  uint8_t* shared = nullptr;
  size_t shared_capacity = 0;

  std::vector<Stack> stacks;
  std::vector<Fiber> fibers;
  ucontext_t runner_ctx;  // the worker thread's own context, resumed when all are done
  uint32_t current = 0;
  uint32_t live = 0;

  const CompiledShader* shader = nullptr;
  const DispatchState* ds = nullptr;
  WorkgroupState ws{};

  ~FiberScheduler() {
    std::free(shared);
    for (Stack& s : stacks) munmap(s.mapping, s.mapping_bytes);
  }

  void ensure_shared(size_t bytes) {
    if (bytes <= shared_capacity) return;
    std::free(shared);
    size_t rounded = (bytes + kSharedAlign - 1) & ~(kSharedAlign - 1);
    shared = static_cast<uint8_t*>(std::aligned_alloc(kSharedAlign, rounded));
    if (!shared) fatal("out of memory for workgroup shared memory");
    shared_capacity = rounded;
  }

  void ensure_stacks(uint32_t n) {
    while (stacks.size() < n) {
      Stack s;
      s.mapping_bytes = kFiberStackBytes + Stack::page_size();
      s.mapping = mmap(nullptr, s.mapping_bytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (s.mapping == MAP_FAILED) fatal("cannot map a fiber stack");
      // Stacks grow down: the guard page is the lowest page of the mapping.
      if (mprotect(s.mapping, Stack::page_size(), PROT_NONE) != 0)
        fatal("cannot protect a fiber stack's guard page");
      stacks.push_back(s);
    }
    if (fibers.size() < n) fibers.resize(n);
  }

  // The next live fiber after `from`, in round-robin order; `from` itself if it is the
  // only live one; n if none is live.
  uint32_t next_live(uint32_t from) const {
    const uint32_t n = shader->subgroups_per_workgroup;
    for (uint32_t k = 1; k <= n; ++k) {
      uint32_t i = (from + k) % n;
      if (!fibers[i].done) return i;
    }
    return n;
  }

  void barrier() {
    uint32_t me = current;
    uint32_t next = next_live(me);
    if (next == me || next == shader->subgroups_per_workgroup) return;  // alone: nothing to wait for
    current = next;
    if (swapcontext(&fibers[me].ctx, &fibers[next].ctx) != 0) fatal("swapcontext failed");
    // Resumed: every other live fiber has reached a barrier (or returned) since we left.
  }

  // makecontext passes int arguments only: the scheduler pointer travels as two halves.
  static void fiber_entry(unsigned lo, unsigned hi) {
    auto* self = reinterpret_cast<FiberScheduler*>((static_cast<uintptr_t>(hi) << 32) | lo);
    uint32_t me = self->current;
    self->shader->fn(self->ds, &self->ws, me);
    self->fibers[me].done = true;
    self->live--;
    uint32_t next = self->next_live(me);
    // This fiber's stack is abandoned here and reused by the next workgroup.
    if (next == self->shader->subgroups_per_workgroup) {
      setcontext(&self->runner_ctx);
    } else {
      self->current = next;
      setcontext(&self->fibers[next].ctx);
    }
    fatal("setcontext returned");
  }

  void run_fibers(uint32_t n) {
    ensure_stacks(n);
    uintptr_t p = reinterpret_cast<uintptr_t>(this);
    for (uint32_t i = 0; i < n; ++i) {
      Fiber& f = fibers[i];
      f.done = false;
      if (getcontext(&f.ctx) != 0) fatal("getcontext failed");
      f.ctx.uc_stack.ss_sp = stacks[i].base();
      f.ctx.uc_stack.ss_size = stacks[i].size();
      f.ctx.uc_link = nullptr;  // fiber_entry never returns; it switches away itself
      makecontext(&f.ctx, reinterpret_cast<void (*)()>(&fiber_entry), 2,
                  static_cast<unsigned>(p & 0xffffffffu), static_cast<unsigned>(p >> 32));
    }
    live = n;
    current = 0;
    if (swapcontext(&runner_ctx, &fibers[0].ctx) != 0) fatal("swapcontext failed");
    // Back here only when every fiber has returned.
  }
};

}  // namespace

struct WorkgroupRunner::Impl : FiberScheduler {};

WorkgroupRunner::WorkgroupRunner() : impl_(new Impl) {}
WorkgroupRunner::~WorkgroupRunner() { delete impl_; }

void WorkgroupRunner::run(const CompiledShader& shader, const DispatchState& ds,
                          const uint32_t workgroup_id[3]) {
  Impl& im = *impl_;
  im.shader = &shader;
  im.ds = &ds;
  WorkgroupState& ws = im.ws;
  for (int i = 0; i < 3; ++i) ws.workgroup_id[i] = workgroup_id[i];
  ws.scheduler = static_cast<FiberScheduler*>(&im);
  if (shader.shared_memory_bytes) {
    im.ensure_shared(shader.shared_memory_bytes);
    std::memset(im.shared, 0, shader.shared_memory_bytes);
    ws.shared_memory = im.shared;
  } else {
    ws.shared_memory = nullptr;
  }

  const uint32_t n = shader.subgroups_per_workgroup;
  // One subgroup has nobody to wait for: a barrier is then a no-op (see barrier()).
  if (!shader.uses_workgroup_barrier || n <= 1) {
    im.current = 0;
    im.live = 0;  // barrier() finds no fiber and returns at once
    for (uint32_t s = 0; s < n; ++s) shader.fn(&ds, &ws, s);
    return;
  }
  im.run_fibers(n);
}

}  // namespace coopvk::jit

extern "C" void coopvk_jit_workgroup_barrier(coopvk::jit::WorkgroupState* ws) {
  auto* im = static_cast<coopvk::jit::FiberScheduler*>(ws->scheduler);
  if (im->live == 0) return;  // not running as fibers: only one subgroup, or no barriers
  im->barrier();
}
