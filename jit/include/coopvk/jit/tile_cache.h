// Packed cooperative-matrix tiles shared by every workgroup of one dispatch.
//
// A tiled GEMM packs each A and B tile for the multiply-add kernel (widened, interleaved
// for vpdpbusd, sign fix-ups) in every workgroup that loads it: with 2048 columns, each B
// tile is packed by all 32 workgroups of a column, from rows that a power-of-two stride
// crowds into a few cache sets. When no write of the dispatch can reach the buffer a tile
// comes from, its packed form is the same in every workgroup, so the first to load it packs
// it here and the others read it in place (jit/src/coopmat/lower_tile_cache.cpp decides when; the
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

// One tile-load site of a compiled shader, in its frame (each subgroup its own): what it
// loads, set by the compiled code at function entry, and how its requests go, which starts
// zeroed.
//
// A site in a K loop asks for tiles one step apart. Once a step has repeated, the cache
// packs a run of the next tiles along it side by side, and a walk remembers the run, so that
// the site's next requests are answered from the walk, without a lookup. A loop over a
// register block's tiles that LLVM leaves rolled makes one site alternate between several
// such streams, each its own walk: the step is found over 1, 2 or 4 requests.
//
// Compiled code writes the description and reads and advances the walks itself (the test
// get() starts with, lower_tile_cache.cpp), so this layout is part of the runtime ABI
// (runtime_symbols.h).
struct TileSite {
  TilePackFn pack;
  const uint8_t* lo;   // the binding's bound bytes [lo, hi): a run packs ahead only within them
  const uint8_t* hi;
  uint32_t bytes;      // of a packed tile
  uint32_t rows;       // the packer reads `rows` rows of `row_bytes` bytes, ld elements of
  uint32_t row_bytes;  // `esz` bytes apart
  uint32_t esz;
  struct Walk {
    const uint8_t* next;  // where the stream goes on, packed at data
    const uint8_t* data;
    int64_t step;
    uint64_t left;  // tiles of the run still ahead (0: next is where the run ended)
  } walk[4];
  const uint8_t* seen[8];  // the sources of the last requests a walk did not answer
  uint32_t count;          // of those, in all
  uint32_t recent;         // the walk that answered last
};

class TileCache {
 public:
  TileCache();
  ~TileCache();
  TileCache(const TileCache&) = delete;
  TileCache& operator=(const TileCache&) = delete;

  // Starts a dispatch: nonzero, different from every earlier one (DispatchState's serial).
  // Not concurrent with get().
  void begin(uint64_t serial);

  // The tile at src (rows ld elements apart) as site.pack packs it: a cache entry, packed
  // now if this is the dispatch's first request for it; or, where the cache cannot hold it
  // (full, or its slots taken by other tiles or being packed by another thread), packed
  // into `local` (site.bytes, 64-byte aligned) and `local` returned. Thread-safe for
  // different sites.
  const void* get(TileSite& site, const void* src, uint64_t ld, void* local);

  // Entries are looked up among this many slots from the key's hash. The hash is of the
  // source's 64-byte line, and tiles starting in one line take neighbouring slots.
  static constexpr uint32_t kProbes = 8;
  static constexpr uint32_t kSlots = 1u << 17;
  // Tiles a run packs at most: kRun where a repeating step starts one, kRunLong where a
  // walk's run ended at the request (the loop is longer than a run). A walk looks up one
  // tile per run, and each lookup costs a call, the slots' lines and a jump in the arena
  // (measured on Zen 5, s8 512^3 to 4096^3: runs of 16 then 32 were 1.04-1.15x as fast as 8;
  // 32 then 64 no faster). Tiles past the end of a K loop (still inside the binding) are
  // packed for nothing: at most kRunLong - 1 per stream.
  static constexpr uint32_t kRun = 16;
  static constexpr uint32_t kRunLong = 32;
  static_assert(kRun <= kRunLong, "pack_run holds at most kRunLong slots");
  // Packed tiles go to one arena of this size, in the order they are first requested
  // (the order the workgroups read them in), a run's side by side.
  static constexpr size_t kArenaBytes = size_t(128) << 20;
  // Bytes from one tile of a run to the next: its packed size on whole cache lines (the
  // compiled code steps a walk's data by this too).
  static constexpr size_t run_stride(uint32_t bytes) { return (size_t(bytes) + 63) & ~size_t(63); }

 private:
  struct Found {
    const uint8_t* data;
    int64_t step;  // of the run it is in, and its tiles after it
    uint64_t left;
  };
  // Zero pages until used (the slots and the arena are reserved, not committed, at
  // construction, on huge-page boundaries).
  struct alignas(64) Slot {
    uint64_t state;  // (atomic_ref) 2 * serial while being packed, 2 * serial + 1 once ready; else free
    const void* src;
    uint32_t ld;
    uint32_t pack;  // the packer's address, low half: unique among the driver's functions
    const uint8_t* data;
    int64_t step;  // the run: its next tile is at src + step, packed at data + the tile's
    uint64_t left;  // arena size, and so on for `left` tiles
  };
  enum class Claim { kFound, kClaimed, kBusy };
  // Looks src up: its entry (kFound, *slot it), a slot claimed for it (kClaimed), or
  // neither (kBusy: being packed by another thread, or no room).
  Claim claim(const void* src, uint32_t ld, uint32_t pack, Slot** slot);
  // A run of up to max_run (<= kRunLong) tiles from src, step apart (0: src alone), within
  // [lo, hi), packed into the arena, first's slot already claimed; or {nullptr} where the
  // arena is full.
  Found pack_run(Slot* first, const TileSite& site, const uint8_t* src, uint32_t ld, int64_t step, uint32_t max_run);
  // The entry for src, {nullptr} where it must be packed locally; step and max_run: of the
  // run to pack.
  Found lookup(const TileSite& site, const uint8_t* src, uint64_t ld, int64_t step, uint32_t max_run);
  void prefetch(const void* src, uint64_t ld, uint32_t pack) const;

  Slot* slots_ = nullptr;
  uint8_t* arena_ = nullptr;
  std::atomic<size_t> used_{0};
  uint64_t serial_ = 0;
};

}  // namespace coopvk::jit

// Called by compiled code: TileCache::get(). Declared here for runtime_symbols.cpp.
extern "C" const void* coopvk_rt_tile_cache_get(coopvk::jit::TileCache* cache, coopvk::jit::TileSite* site,
                                                const void* src, uint64_t ld, void* local);
