// Packed cooperative-matrix tiles shared by every workgroup of one dispatch.
//
// A tiled GEMM packs each A and B tile for the multiply-add kernel (widened, interleaved
// for vpdpbusd, sign fix-ups) in every workgroup that loads it: with 2048 columns, each B
// tile is packed by all 32 workgroups of a column, from rows that a power-of-two stride
// crowds into a few cache sets. When no write of the dispatch can reach the buffer a tile
// comes from, its packed form is the same in every workgroup, so the first to load it packs
// it here and the others read it in place (jit/src/lower_tile_cache.cpp decides when; the
// condition is compiled into the shader as a test of the bound descriptors' ranges).
//
// One cache per worker pool, which runs one dispatch at a time: begin() at each dispatch
// makes everything from before stale (the memory may have changed in between). Entries are
// never replaced within a dispatch, so a pointer handed out stays valid to its end.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace coopvk::jit {

using TilePackFn = void (*)(const void* src, size_t ld, void* out);

class TileCache {
 public:
  TileCache();
  ~TileCache();
  TileCache(const TileCache&) = delete;
  TileCache& operator=(const TileCache&) = delete;

  // Starts a dispatch: nonzero, different from every earlier one (DispatchState's serial).
  // Not concurrent with get().
  void begin(uint64_t serial);

  // The tile at src (rows ld elements apart) as `pack` packs it into `bytes` bytes: a
  // cache entry, packed now if this is the dispatch's first request for it; or, where the
  // cache cannot hold it (full, or its slots taken by other tiles or being packed by another
  // thread), packed into `local` and `local` returned. Thread-safe.
  //
  // next: where the caller expects to ask next (its last two requests' step applied once
  // more: a K loop's next tile), whose slots are prefetched; any value is harmless.
  const void* get(const void* src, uint64_t ld, TilePackFn pack, uint32_t bytes, void* local, const void* next);

  // Entries are looked up among this many slots from the key's hash. The hash is of the
  // source's 64-byte line, and tiles starting in one line take neighbouring slots: the
  // tiles a subgroup loads together (B tiles side by side, A tiles of consecutive K steps)
  // then share the slots' cache lines, which the lookups otherwise miss.
  static constexpr uint32_t kProbes = 8;
  static constexpr uint32_t kSlots = 1u << 17;
  // Packed tiles go to one arena of this size, in the order they are first requested
  // (the order the workgroups read them in).
  static constexpr size_t kArenaBytes = size_t(128) << 20;

 private:
  // Zero pages until used (the slots and the arena are reserved, not committed, at
  // construction, on huge-page boundaries).
  struct Slot {
    uint64_t state;  // (atomic_ref) 2 * serial while being packed, 2 * serial + 1 once ready; else free
    const void* src;
    uint32_t ld;
    uint32_t pack;  // the packer's address, low half: unique among the driver's functions
    void* data;
  };
  Slot* slots_ = nullptr;
  uint8_t* arena_ = nullptr;
  std::atomic<size_t> used_{0};
  uint64_t serial_ = 0;
};

}  // namespace coopvk::jit

// Called by compiled code: TileCache::get(). Declared here for runtime_symbols.cpp.
extern "C" const void* coopvk_rt_tile_cache_get(coopvk::jit::TileCache* cache, const void* src, uint64_t ld,
                                                coopvk::jit::TilePackFn pack, uint32_t bytes, void* local,
                                                const void* next);
