// TileCache: see tile_cache.h.
#include "coopvk/jit/tile_cache.h"

#include <sys/mman.h>

#include <cstdio>
#include <type_traits>

namespace coopvk::jit {

namespace {

constexpr size_t kSlotBytes = size_t(TileCache::kSlots) * 64;

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

// The packer's key: its address, low half (unique among the driver's functions).
uint32_t pack_id(const TileSite& site) { return uint32_t(reinterpret_cast<uintptr_t>(site.pack)); }

// src moved by step bytes, as an address (it may leave the buffer: never dereferenced there).
// (Modular: a negative step is its two's complement.)
const uint8_t* advance(const void* src, uint64_t step) {
  return reinterpret_cast<const uint8_t*>(reinterpret_cast<uintptr_t>(src) + step);
}

}  // namespace

TileCache::TileCache() {
  static_assert(sizeof(Slot) == 64);
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

void TileCache::prefetch(const void* src, uint64_t ld, uint32_t pack) const {
  __builtin_prefetch(&slots_[first_slot(src, ld, pack) & (kSlots - 1)], 0, 2);
}

TileCache::Claim TileCache::claim(const void* src, uint32_t ld, uint32_t pack, Slot** slot) {
  const uint64_t packing = 2 * serial_, ready = packing + 1;
  const uint64_t h = first_slot(src, ld, pack);
  for (uint32_t p = 0; p < kProbes; ++p) {
    Slot& s = slots_[(h + p) & (kSlots - 1)];
    std::atomic_ref<uint64_t> state(s.state);
    uint64_t st = state.load(std::memory_order_acquire);
    // Free, or left from an earlier dispatch: claim it, while the arena has room (once it
    // is full, what it holds is still found). A failed claim reloads st.
    if (st != ready && st != packing && used_.load(std::memory_order_relaxed) < kArenaBytes &&
        state.compare_exchange_strong(st, packing, std::memory_order_acquire, std::memory_order_acquire)) {
      *slot = &s;
      return Claim::kClaimed;
    }
    if (st == packing) return Claim::kBusy;  // another thread is packing into it, maybe this very tile
    if (st == ready && s.src == src && s.ld == ld && s.pack == pack) {
      *slot = &s;
      return Claim::kFound;
    }
  }
  return Claim::kBusy;
}

TileCache::Found TileCache::pack_run(Slot* first, const TileSite& site, const uint8_t* src, uint32_t ld,
                                     int64_t step, uint32_t max_run) {
  const uint32_t pack = pack_id(site);
  Slot* members[kRunLong] = {first};
  uint32_t n = 1;
  // The packer reads [tile, tile + extent); the app vouches for the requested tile only.
  const uint64_t extent = (site.rows ? uint64_t(site.rows - 1) * ld * site.esz : 0) + site.row_bytes;
  const auto lo = reinterpret_cast<uintptr_t>(site.lo), hi = reinterpret_cast<uintptr_t>(site.hi);
  for (; step != 0 && n < max_run; ++n) {
    const uint8_t* tile = advance(src, uint64_t(step) * n);
    const auto t = reinterpret_cast<uintptr_t>(tile);
    if (t < lo || t > hi || hi - t < extent) break;
    if (claim(tile, ld, pack, &members[n]) != Claim::kClaimed) break;
  }
  const size_t stride = run_stride(site.bytes);
  const size_t need = stride * n;
  const size_t at = used_.fetch_add(need, std::memory_order_relaxed);
  if (at + need > kArenaBytes) {  // full: give the slots back
    for (uint32_t i = 0; i < n; ++i) std::atomic_ref<uint64_t>(members[i]->state).store(0, std::memory_order_release);
    return {nullptr, 0, 0};
  }
  for (uint32_t i = 0; i < n; ++i) {
    Slot& s = *members[i];
    s.src = advance(src, uint64_t(step) * i);
    s.ld = ld;
    s.pack = pack;
    s.data = arena_ + at + stride * i;
    s.step = step;
    s.left = n - 1 - i;
    site.pack(s.src, ld, const_cast<uint8_t*>(s.data));
  }
  // Each entry ready only once the whole run is packed: whoever finds one reads on to the
  // run's end without looking the others up.
  for (uint32_t i = 0; i < n; ++i)
    std::atomic_ref<uint64_t>(members[i]->state).store(2 * serial_ + 1, std::memory_order_release);
  return {arena_ + at, step, n - 1};
}

TileCache::Found TileCache::lookup(const TileSite& site, const uint8_t* src, uint64_t ld, int64_t step,
                                   uint32_t max_run) {
  if (!slots_ || !arena_ || !serial_ || ld > UINT32_MAX) return {nullptr, 0, 0};
  const uint32_t pack = pack_id(site);
  Slot* s = nullptr;
  switch (claim(src, uint32_t(ld), pack, &s)) {
    case Claim::kFound:
      return {s->data, s->step, s->left};
    case Claim::kClaimed:
      return pack_run(s, site, src, uint32_t(ld), step, max_run);
    case Claim::kBusy:
      break;
  }
  return {nullptr, 0, 0};
}

const void* TileCache::get(TileSite& site, const void* src, uint64_t ld, void* local) {
  const auto* p = static_cast<const uint8_t*>(src);
  const size_t stride = run_stride(site.bytes);
  constexpr uint32_t kWalks = std::extent_v<decltype(TileSite::walk)>;
  for (uint32_t i = 0; i < kWalks; ++i) {
    TileSite::Walk& w = site.walk[i];
    if (w.left != 0 && p == w.next) {  // the next tile of the walk's run
      const uint8_t* data = w.data;
      w.next = advance(p, w.step);
      w.data = data + stride;
      --w.left;
      site.recent = i;
      return data;
    }
  }
  // A lookup. Its step: that of a walk whose run ended here, or one that repeats over the
  // last 1, 2 or 4 requests (1, 2 or 4 streams alternating at the site).
  TileSite::Walk* walk = nullptr;
  int64_t step = 0;
  for (TileSite::Walk& w : site.walk)
    if (w.step != 0 && w.left == 0 && p == w.next) {
      walk = &w;
      step = w.step;
    }
  const auto seen = [&](uint32_t back) { return reinterpret_cast<uintptr_t>(site.seen[(site.count - back) & 7]); };
  const auto at = reinterpret_cast<uintptr_t>(p);
  for (uint32_t d = 1; !walk && step == 0 && d <= 4; d *= 2)
    if (site.count >= 2 * d && at - seen(d) == seen(d) - seen(2 * d) && at != seen(d)) step = int64_t(at - seen(d));
  site.seen[site.count++ & 7] = p;
  // A walk going on past its run is a loop longer than one run: the next run is long.
  const Found f = lookup(site, p, ld, step, walk ? kRunLong : kRun);
  if (walk) walk->next = advance(p, step);  // (a run, below, or the stream's next tile)
  if (!f.data) {
    site.pack(src, ld, local);
    return local;
  }
  if (f.left != 0) {
    // A run (whoever packed it: its next tile is a fact, whether asked for or not) for a
    // walk: the one that led here, or one with no run ahead, the one used longest ago.
    for (uint32_t k = 1; !walk && k <= kWalks; ++k)
      if (site.walk[(site.recent + k) % kWalks].left == 0) walk = &site.walk[(site.recent + k) % kWalks];
    if (!walk) walk = &site.walk[(site.recent + 1) % kWalks];
    *walk = {advance(p, f.step), f.data + stride, f.step, f.left};
    site.recent = uint32_t(walk - site.walk);
    // The lookup where the run ends misses its slot's line otherwise (the packed tiles
    // between stream through L1): fetched into L2 now, which keeps it that long.
    prefetch(advance(p, uint64_t(f.step) * (f.left + 1)), ld, pack_id(site));
  }
  return f.data;
}

}  // namespace coopvk::jit

extern "C" const void* coopvk_rt_tile_cache_get(coopvk::jit::TileCache* cache, coopvk::jit::TileSite* site,
                                                const void* src, uint64_t ld, void* local) {
  return cache->get(*site, src, ld, local);
}
