// WorkgroupRunner: runs the subgroups of one workgroup on the calling thread.
//
// Without workgroup barriers the subgroups run one after the other, on the calling
// thread's stack unless the shader's frames are too large for one (needs_fiber_stack:
// then on the fibers below, each to its end in turn). With barriers each
// subgroup runs on its own fiber (ucontext); coopvk_jit_workgroup_barrier() switches to
// the next live fiber in round-robin order, so by the time fiber k runs again every other
// live fiber has reached its barrier too: that is exactly OpControlBarrier's rule that no
// invocation passes until all invocations of the workgroup have arrived. Fibers switch
// straight to each other (no trip through a scheduler context), one switch per barrier
// per subgroup. On x86-64 the switch is a few instructions of our own (callee-saved
// registers, MXCSR and the x87 control word, then the stack pointer): glibc's
// swapcontext also saves the signal mask with a system call, which made barrier-heavy
// shaders spend half their time in the kernel. Elsewhere, and under AddressSanitizer
// (which must see stack switches), ucontext does the switching.
//
// ThreadSanitizer must be told about every switch too, or it would take the fibers' code
// for one thread whose stack pointer jumps about, and its shadow call stack would be
// garbage. Under TSan (only: __SANITIZE_THREAD__) each fiber has a TSan fiber context,
// created with its stack and reused for every workgroup, and __tsan_switch_to_fiber runs
// right before each switch. The switch synchronizes (flags 0): everything a subgroup did
// before its barrier happens-before what the next subgroup does after resuming, which is
// OpControlBarrier's ordering of workgroup memory. Fiber bodies are not instrumented
// (COOPVK_TSAN_FIBER_ROOT): a fiber never returns, it is abandoned mid-frame, so an
// instrumented bottom frame would leave one unmatched entry on its TSan context's shadow
// stack per workgroup and a reused context would overflow it after enough workgroups.
// Code the JIT generates is not instrumented at all; TSan sees only what it calls into.
//
// Stacks are mmap'd once per runner (one runner per worker thread) and reused for every
// workgroup; each has a PROT_NONE guard page below it so an overflow faults instead of
// silently corrupting a neighbour. Pages are only touched when used, so generous stacks
// cost address space, not memory.
//
// Shaders without barriers whose loops load and multiply cooperative matrices (a tiled GEMM:
// several subgroups per workgroup, each walking K over its own block of tiles) also run as
// fibers: coopvk_jit_subgroup_yield() at each iteration switches to the next subgroup, the
// same switch a barrier makes. Subgroups that share tiles (two use each A tile, two each B
// tile in a 2x2 grid) then load them one after the other instead of a whole K loop apart.
// Run to its end first, a subgroup's panel of B rows at a power-of-two row stride maps to a
// few cache sets only and is gone from every cache level but L3 before the next subgroup
// needs it. And a tile packed for the multiply-add by one subgroup is copied by the next
// that loads it (lower_interleave.cpp, WorkgroupState::pack_memo): packing 8-bit B tiles
// for vpdpbusd cost 80% as much as the multiply-adds. Any interleaving of the subgroups of
// a barrier-free workgroup is an execution the memory model allows, and so is reusing what
// another subgroup packed as long as nothing could have written the memory since: compiled
// code bumps WorkgroupState::pack_epoch after every store other invocations could see,
// every atomic and every barrier or fence, and the runner at each workgroup.
//
// Workgroup memory is zeroed before every workgroup. Vulkan leaves it undefined unless
// shaderZeroInitializeWorkgroupMemory is enabled (then only variables with an initializer
// are zeroed), so zeroing is always allowed; it makes results deterministic and costs a
// memset of at most maxComputeSharedMemorySize per workgroup.
#include "coopvk/jit/workgroup_runner.h"

#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#define COOPVK_TSAN_FIBERS 1
#define COOPVK_TSAN_FIBER_ROOT __attribute__((no_sanitize_thread))
#else
#define COOPVK_TSAN_FIBERS 0
#define COOPVK_TSAN_FIBER_ROOT
#endif

#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
#define COOPVK_FAST_FIBERS 1
// void coopvk_fiber_switch(void** save_sp, void* load_sp): saves the callee-saved state
// on the current stack, stores the stack pointer in *save_sp, and resumes the context
// whose stack pointer is load_sp (System V AMD64 ABI: rbx, rbp, r12-r15, MXCSR and the
// x87 control word are callee-saved). MXCSR and the control word are loaded only where
// they differ from the ones saved: both loads are microcoded, and interleaved subgroups
// switch once per K step (their fibers all run with the same).
// (rax and rcx are scratch: caller-saved, and no argument comes back in them.)
// coopvk_fiber_start: first "return address" of a new fiber; its FiberScheduler* was
// planted in r12's slot.
asm(R"(
  .text
  .p2align 4
  .hidden coopvk_fiber_switch
  .type coopvk_fiber_switch, @function
coopvk_fiber_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsp, %rax
  movq %rsi, %rsp
  movl (%rsp), %ecx
  cmpl (%rax), %ecx
  je 1f
  ldmxcsr (%rsp)
1:
  movzwl 4(%rsp), %ecx
  cmpw 4(%rax), %cx
  je 2f
  fldcw 4(%rsp)
2:
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size coopvk_fiber_switch, .-coopvk_fiber_switch

  .p2align 4
  .hidden coopvk_fiber_start
  .type coopvk_fiber_start, @function
coopvk_fiber_start:
  movq %r12, %rdi
  call coopvk_fiber_main
  ud2
  .size coopvk_fiber_start, .-coopvk_fiber_start
)");
extern "C" void coopvk_fiber_switch(void** save_sp, void* load_sp);
extern "C" void coopvk_fiber_start();
#endif

namespace coopvk::jit {

namespace {

// Enough for JIT frames holding subgroup-wide vectors, cooperative-matrix tiles and the
// cooperative-vector buffers lower_coopvec.cpp allows (kMaxCoopVecFrameBytes, 6 MiB).
constexpr size_t kFiberStackBytes = 8u << 20;
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
#if COOPVK_FAST_FIBERS
  void* sp = nullptr;  // saved stack pointer while switched out
#else
  ucontext_t ctx;
#endif
#if COOPVK_TSAN_FIBERS
  void* tsan = nullptr;  // this fiber's TSan context (see the file comment)
#endif
  bool done = false;
};

// Tells TSan that the thread is about to switch to `fiber`; nothing without TSan.
#if COOPVK_TSAN_FIBERS
#define COOPVK_TSAN_SWITCH(fiber) __tsan_switch_to_fiber((fiber), 0)
#else
#define COOPVK_TSAN_SWITCH(fiber) ((void)0)
#endif

// Everything a runner owns. A namespace-scope type (not the private Impl itself) so that
// coopvk_jit_workgroup_barrier can reach it through WorkgroupState::scheduler.
struct FiberScheduler {
  // Shared (workgroup) memory, grown on demand, 64-byte aligned.
  uint8_t* shared = nullptr;
  size_t shared_capacity = 0;

  std::vector<Stack> stacks;
  std::vector<Fiber> fibers;
#if COOPVK_FAST_FIBERS
  void* runner_sp = nullptr;  // the worker thread's own stack, resumed when all are done
#else
  ucontext_t runner_ctx;  // the worker thread's own context, resumed when all are done
#endif
#if COOPVK_TSAN_FIBERS
  void* runner_tsan = nullptr;  // the worker thread's own TSan context
#endif
  uint32_t current = 0;
  uint32_t live = 0;

  const CompiledShader* shader = nullptr;
  const DispatchState* ds = nullptr;
  WorkgroupState ws{};
  // WorkgroupState::pack_memo, grown on demand, kept across workgroups (its entries carry
  // their epoch), zeroed when made (epoch 0 is no workgroup's).
  uint8_t* memo = nullptr;
  size_t memo_capacity = 0;

  ~FiberScheduler() {
    std::free(shared);
    std::free(memo);
    for (Stack& s : stacks) munmap(s.mapping, s.mapping_bytes);
#if COOPVK_TSAN_FIBERS
    // No fiber is running here (run_fibers returns only when all are done), so none of
    // these contexts is current.
    for (Fiber& f : fibers)
      if (f.tsan) __tsan_destroy_fiber(f.tsan);
#endif
  }

  void ensure_shared(size_t bytes) {
    if (bytes <= shared_capacity) return;
    std::free(shared);
    size_t rounded = (bytes + kSharedAlign - 1) & ~(kSharedAlign - 1);
    shared = static_cast<uint8_t*>(std::aligned_alloc(kSharedAlign, rounded));
    if (!shared) fatal("out of memory for workgroup shared memory");
    shared_capacity = rounded;
  }

  void ensure_memo(size_t bytes) {
    if (bytes <= memo_capacity) return;
    std::free(memo);
    memo = static_cast<uint8_t*>(std::calloc(1, bytes));
    if (!memo) fatal("out of memory for the packed-tile memo");
    memo_capacity = bytes;
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
#if COOPVK_TSAN_FIBERS
    for (Fiber& f : fibers)
      if (!f.tsan) {
        f.tsan = __tsan_create_fiber(0);
        __tsan_set_fiber_name(f.tsan, "coopvk subgroup fiber");
      }
#endif
  }

  // The next live fiber after `from`, in round-robin order; `from` itself if it is the
  // only live one; n if none is live.
  uint32_t next_live(uint32_t from) const {
    const uint32_t n = shader->subgroups_per_workgroup;
    uint32_t i = from;
    for (uint32_t k = 1; k <= n; ++k) {
      i = i + 1 == n ? 0 : i + 1;  // (no division: this runs at every yield of a GEMM's K loop)
      if (!fibers[i].done) return i;
    }
    return n;
  }

  // Switches to the next live fiber, if there is another: a barrier (in shaders whose
  // fibers switch only at barriers) and a yield (in shaders without barriers).
  void switch_to_next() {
    uint32_t me = current;
    uint32_t next = next_live(me);
    if (next == me || next == shader->subgroups_per_workgroup) return;  // alone: nothing to wait for
    current = next;
    COOPVK_TSAN_SWITCH(fibers[next].tsan);
#if COOPVK_FAST_FIBERS
    coopvk_fiber_switch(&fibers[me].sp, fibers[next].sp);
#else
    if (swapcontext(&fibers[me].ctx, &fibers[next].ctx) != 0) fatal("swapcontext failed");
#endif
    // Resumed: every other live fiber has reached a barrier (or returned) since we left.
  }

  // Body of every fiber: run one subgroup, then hand the thread to the next live fiber
  // (or back to the runner). This fiber's stack is abandoned and reused next workgroup.
  [[noreturn]] COOPVK_TSAN_FIBER_ROOT void fiber_main() {
    uint32_t me = current;
    shader->fn(ds, &ws, me);
    fibers[me].done = true;
    live--;
    uint32_t next = next_live(me);
#if COOPVK_FAST_FIBERS
    void* discard = nullptr;
    if (next == shader->subgroups_per_workgroup) {
      COOPVK_TSAN_SWITCH(runner_tsan);
      coopvk_fiber_switch(&discard, runner_sp);
    } else {
      current = next;
      COOPVK_TSAN_SWITCH(fibers[next].tsan);
      coopvk_fiber_switch(&discard, fibers[next].sp);
    }
#else
    if (next == shader->subgroups_per_workgroup) {
      COOPVK_TSAN_SWITCH(runner_tsan);
      setcontext(&runner_ctx);
    } else {
      current = next;
      COOPVK_TSAN_SWITCH(fibers[next].tsan);
      setcontext(&fibers[next].ctx);
    }
#endif
    fatal("a finished fiber was resumed");
  }

#if !COOPVK_FAST_FIBERS
  // makecontext passes int arguments only: the scheduler pointer travels as two halves.
  COOPVK_TSAN_FIBER_ROOT static void fiber_entry(unsigned lo, unsigned hi) {
    reinterpret_cast<FiberScheduler*>((static_cast<uintptr_t>(hi) << 32) | lo)->fiber_main();
  }
#endif

  void run_fibers(uint32_t n) {
    ensure_stacks(n);
    for (uint32_t i = 0; i < n; ++i) {
      Fiber& f = fibers[i];
      f.done = false;
#if COOPVK_FAST_FIBERS
      // A frame as coopvk_fiber_switch leaves it: MXCSR/FPU control word, r15..r12,
      // rbx, rbp, then the return address. After `ret` pops coopvk_fiber_start the stack
      // pointer is 16-byte aligned, as the ABI wants before its call.
      // Each fiber's stack starts 17 cache lines further into a 4 KiB period than the one
      // before (17 is prime to the 64 lines of a period): the stacks are a whole number of
      // pages apart, so the same frame slot of every subgroup (its tiles' packed copies,
      // its accumulators) would otherwise fall into the same L1 sets, and interleaved
      // subgroups copying each other's packed tiles measured 5% slower for it.
      const uintptr_t colour = uintptr_t(i * 17 % 64) * 64;
      uintptr_t top = (reinterpret_cast<uintptr_t>(stacks[i].base()) + stacks[i].size() - colour) & ~uintptr_t(15);
      auto* frame = reinterpret_cast<uint64_t*>(top - 24 - 56);
      uint32_t mxcsr = 0x1F80;  // defaults: all exceptions masked, round to nearest
      uint16_t fcw = 0x037F;
      std::memcpy(&frame[0], &mxcsr, 4);
      std::memcpy(reinterpret_cast<char*>(&frame[0]) + 4, &fcw, 2);
      frame[1] = 0;                                   // r15
      frame[2] = 0;                                   // r14
      frame[3] = 0;                                   // r13
      frame[4] = reinterpret_cast<uint64_t>(this);    // r12: coopvk_fiber_start's argument
      frame[5] = 0;                                   // rbx
      frame[6] = 0;                                   // rbp
      frame[7] = reinterpret_cast<uint64_t>(&coopvk_fiber_start);
      f.sp = frame;
#else
      if (getcontext(&f.ctx) != 0) fatal("getcontext failed");
      f.ctx.uc_stack.ss_sp = stacks[i].base();
      f.ctx.uc_stack.ss_size = stacks[i].size();
      f.ctx.uc_link = nullptr;  // fiber_entry never returns; it switches away itself
      uintptr_t p = reinterpret_cast<uintptr_t>(this);
      makecontext(&f.ctx, reinterpret_cast<void (*)()>(&fiber_entry), 2,
                  static_cast<unsigned>(p & 0xffffffffu), static_cast<unsigned>(p >> 32));
#endif
    }
    live = n;
    current = 0;
#if COOPVK_TSAN_FIBERS
    runner_tsan = __tsan_get_current_fiber();
#endif
    COOPVK_TSAN_SWITCH(fibers[0].tsan);
#if COOPVK_FAST_FIBERS
    coopvk_fiber_switch(&runner_sp, fibers[0].sp);
#else
    if (swapcontext(&runner_ctx, &fibers[0].ctx) != 0) fatal("swapcontext failed");
#endif
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

  ws.pack_epoch++;  // what an earlier workgroup packed is not this one's to reuse
  if (shader.pack_sites) {
    im.ensure_memo(size_t(shader.pack_sites) * kPackMemoSiteBytes);
    ws.pack_memo = im.memo;
  }

  const uint32_t n = shader.subgroups_per_workgroup;
  // One subgroup has nobody to wait for or yield to: a barrier or yield is then a no-op.
  const bool switches = shader.uses_workgroup_barrier || shader.interleaves_subgroups;
  if ((!switches || n <= 1) && !shader.needs_fiber_stack) {
    im.current = 0;
    im.live = 0;  // switch_to_next() is not called without fibers
    for (uint32_t s = 0; s < n; ++s) shader.fn(&ds, &ws, s);
    return;
  }
  im.run_fibers(n);
}

namespace {

// A GEMM's workgroups in a 2D grid read one panel of A per row of the grid and one of B per
// column. In the linear order (rows one after another) every panel of B is fetched again for
// each row, from L3 or memory once B outgrows the caches. Taken instead in strips of this
// many rows, column by column, each panel of B is read that many times in a row while the
// strip's panels of A stay in L2. Measured on Zen 5 (two threads, 1 MiB L2 each) in one
// process alternating the two orders: f16 -> f32 2048^3 1.06-1.13x (its packed tiles are
// f32, 16 MiB each of A and B), s8 -> s32 0.96-1.00x (4 MiB each, in L3 either way).
// Vulkan promises no order among a dispatch's workgroups.
constexpr uint64_t kStripRows = 4;

// The linear index (shader_abi.h) of the workgroup at `pos` of the strip order: a bijection
// of [0, nx * ny); the last strip has the rows left.
uint64_t strip_workgroup(uint64_t pos, uint64_t nx, uint64_t ny) {
  const uint64_t y0 = pos / (kStripRows * nx) * kStripRows;
  const uint64_t rows = std::min(kStripRows, ny - y0);
  const uint64_t r = pos - y0 * nx;  // within the strip, column-major
  return (y0 + r % rows) * nx + r / rows;
}

}  // namespace

void WorkgroupRunner::run_range(const CompiledShader& shader, const DispatchState& ds, uint64_t first,
                                uint64_t count) {
  const uint64_t nx = ds.num_workgroups[0], ny = ds.num_workgroups[1], nxy = nx * ny;
  const bool strips = shader.walks_tile_cache && ds.num_workgroups[2] == 1 && nx > 1 && ny > kStripRows;
  if (shader.range_fn && !shader.needs_fiber_stack) {
    Impl& im = *impl_;
    WorkgroupState& ws = im.ws;
    ws.shared_memory = nullptr;  // range_fn exists only without workgroup memory
    ws.scheduler = static_cast<FiberScheduler*>(&im);
    im.live = 0;
    if (!strips) return shader.range_fn(&ds, &ws, first, count);
    // (One call per workgroup: a tiled GEMM's workgroups are long.)
    for (uint64_t pos = first; pos < first + count; ++pos) shader.range_fn(&ds, &ws, strip_workgroup(pos, nx, ny), 1);
    return;
  }
  for (uint64_t pos = first; pos < first + count; ++pos) {
    const uint64_t i = strips ? strip_workgroup(pos, nx, ny) : pos;
    uint32_t id[3] = {ds.base_workgroup[0] + static_cast<uint32_t>(i % nx),
                      ds.base_workgroup[1] + static_cast<uint32_t>((i / nx) % ds.num_workgroups[1]),
                      ds.base_workgroup[2] + static_cast<uint32_t>(i / nxy)};
    run(shader, ds, id);
  }
}

}  // namespace coopvk::jit

#if COOPVK_FAST_FIBERS
extern "C" __attribute__((visibility("hidden"), used)) COOPVK_TSAN_FIBER_ROOT void coopvk_fiber_main(
    coopvk::jit::FiberScheduler* s) {
  s->fiber_main();
}
#endif

extern "C" void coopvk_jit_workgroup_barrier(coopvk::jit::WorkgroupState* ws) {
  auto* im = static_cast<coopvk::jit::FiberScheduler*>(ws->scheduler);
  if (im->live == 0) return;  // not running as fibers: only one subgroup, or no barriers
  im->switch_to_next();
}

extern "C" void coopvk_jit_subgroup_yield(coopvk::jit::WorkgroupState* ws) {
  auto* im = static_cast<coopvk::jit::FiberScheduler*>(ws->scheduler);
  if (im->live == 0) return;  // one subgroup, or not running as fibers
  im->switch_to_next();
}
