// TileCache: see tile_cache.h.
#include "coopvk/jit/tile_cache.h"

#include <sys/mman.h>

#include <cstdio>

namespace coopvk::jit {

namespace {

constexpr size_t kSlotBytes = size_t(TileCache::kSlots) * 32;

constexpr size_t kHugePage = size_t(2) << 20;

// `bytes` (a multiple of kHugePage) of address space aligned to a huge page, so that
// MADV_HUGEPAGE can back all of it with huge pages.
void* reserve(size_t bytes) {
  void* p = mmap(nullptr, bytes + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  const uintptr_t at = reinterpret_cast<uintptr_t>(p), aligned = (at + kHugePage - 1) & ~(kHugePage - 1);
  if (aligned > at) munmap(p, aligned - at);
  if (const size_t tail = at + bytes + kHugePage - (aligned + bytes)) munmap(reinterpret_cast<void*>(aligned + bytes), tail);
  return reinterpret_cast<void*>(aligned);
}

uint64_t first_slot(const void* src, uint64_t ld, uint32_t pack) {
  const uintptr_t at = reinterpret_cast<uintptr_t>(src);
  uint64_t h = (at >> 6) ^ (ld << 40) ^ (uint64_t(pack) << 17);
  h *= 0x9e3779b97f4a7c15ull;
  return ((h ^ (h >> 29)) & ~uint64_t(3)) | ((at >> 4) & 3);
}

}  // namespace

TileCache::TileCache() {
  static_assert(sizeof(Slot) == 32);
  slots_ = static_cast<Slot*>(reserve(kSlotBytes));
  arena_ = static_cast<uint8_t*>(reserve(kArenaBytes));
  if (slots_) madvise(slots_, kSlotBytes, MADV_HUGEPAGE);
  if (arena_) madvise(arena_, kArenaBytes, MADV_HUGEPAGE);
  if (!slots_ || !arena_)
    std::fprintf(stderr, "coopvk: no address space for the packed tile cache; every workgroup packs its own tiles\n");
}

TileCache::~TileCache() {
  if (slots_) munmap(slots_, kSlotBytes);
  if (arena_) munmap(arena_, kArenaBytes);
}

void TileCache::begin(uint64_t serial) {
  serial_ = serial;
  used_.store(0, std::memory_order_relaxed);
}

const void* TileCache::get(const void* src, uint64_t ld, TilePackFn pack, uint32_t bytes, void* local,
                           const void* next) {
  const auto pack_id = uint32_t(reinterpret_cast<uintptr_t>(pack));
  // (Once the arena is full, what it holds is still found; new tiles are packed locally.)
  if (slots_ && arena_ && serial_ && ld <= UINT32_MAX) {
    // The slots' lines are gone from L1 and L2 by the time a K loop's next tile is asked
    // for (the packed tiles between stream through), and without this the lookups cost a
    // third more (median GOP/s of the s8 GEMM).
    __builtin_prefetch(&slots_[first_slot(next, ld, pack_id) & (kSlots - 1)], 0, 3);
    const uint64_t packing = 2 * serial_, ready = packing + 1;
    const uint64_t h = first_slot(src, ld, pack_id);
    for (uint32_t p = 0; p < kProbes; ++p) {
      Slot& s = slots_[(h + p) & (kSlots - 1)];
      std::atomic_ref<uint64_t> state(s.state);
      uint64_t st = state.load(std::memory_order_acquire);
      // Free, or left from an earlier dispatch: claim it, while the arena has room. (A
      // failed claim reloads st.)
      if (st != ready && st != packing && used_.load(std::memory_order_relaxed) < kArenaBytes &&
          state.compare_exchange_strong(st, packing, std::memory_order_acquire, std::memory_order_acquire)) {
        const size_t need = (size_t(bytes) + 63) & ~size_t(63);
        const size_t at = used_.fetch_add(need, std::memory_order_relaxed);
        if (at + need > kArenaBytes) {  // full: give the slot back
          state.store(0, std::memory_order_release);
          break;
        }
        s.src = src;
        s.ld = uint32_t(ld);
        s.pack = pack_id;
        s.data = arena_ + at;
        pack(src, ld, s.data);
        state.store(ready, std::memory_order_release);
        return s.data;
      }
      if (st == packing) break;  // another thread is packing into it, maybe this very tile
      if (st == ready && s.src == src && s.ld == ld && s.pack == pack_id) return s.data;
    }
  }
  pack(src, ld, local);
  return local;
}

}  // namespace coopvk::jit

extern "C" const void* coopvk_rt_tile_cache_get(coopvk::jit::TileCache* cache, const void* src, uint64_t ld,
                                                coopvk::jit::TilePackFn pack, uint32_t bytes, void* local,
                                                const void* next) {
  return cache->get(src, ld, pack, bytes, local, next);
}
