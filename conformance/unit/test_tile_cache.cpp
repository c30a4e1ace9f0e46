// TileCache (coopvk/jit/tile_cache.h) with stand-in packers: each tile is packed once per
// dispatch and then read in place, keyed by source, stride and packer; a new dispatch
// packs afresh; what the cache cannot hold is packed into the caller's buffer; a site
// walking a K loop gets runs of tiles packed side by side, which never read outside the
// binding, for one or two streams, and which later walkers find; and threads asking for the
// same tiles at once all get correct packed tiles.
#include <sys/mman.h>
#include <unistd.h>

#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "coopvk/jit/tile_cache.h"

using coopvk::jit::TileCache;
using coopvk::jit::TilePackFn;
using coopvk::jit::TileSite;

namespace {

std::atomic<int> packs{0};

// "Packs" 64 bytes: each source byte plus ld (so the stride shows in the result).
void pack_plus(const void* src, size_t ld, void* out) {
  packs.fetch_add(1, std::memory_order_relaxed);
  const auto* s = static_cast<const uint8_t*>(src);
  auto* o = static_cast<uint8_t*>(out);
  for (int i = 0; i < 64; ++i) o[i] = uint8_t(s[i] + ld);
}
// Another packer: the same source and stride must not share its entries.
void pack_minus(const void* src, size_t ld, void* out) {
  packs.fetch_add(1, std::memory_order_relaxed);
  const auto* s = static_cast<const uint8_t*>(src);
  auto* o = static_cast<uint8_t*>(out);
  for (int i = 0; i < 64; ++i) o[i] = uint8_t(s[i] - ld);
}

// pack_plus, slowly, its second half only after other threads have had a turn: a
// reader that takes a tile before its packing ends sees the first half only.
void pack_plus_slowly(const void* src, size_t ld, void* out) {
  const auto* s = static_cast<const uint8_t*>(src);
  auto* o = static_cast<uint8_t*>(out);
  for (int i = 0; i < 32; ++i) o[i] = uint8_t(s[i] + ld);
  std::this_thread::yield();
  for (int i = 32; i < 64; ++i) o[i] = uint8_t(s[i] + ld);
}

bool packed_as(const void* got, const uint8_t* src, size_t ld, bool plus) {
  const auto* g = static_cast<const uint8_t*>(got);
  for (int i = 0; i < 64; ++i)
    if (g[i] != uint8_t(plus ? src[i] + ld : src[i] - ld)) return false;
  return true;
}

// A site whose packer reads one row of 64 bytes from a binding [lo, hi), as the compiled
// code describes it at function entry.
TileSite site_for(const uint8_t* lo, const uint8_t* hi, TilePackFn pack = pack_plus, uint32_t bytes = 64) {
  TileSite s{};
  s.pack = pack;
  s.lo = lo;
  s.hi = hi;
  s.bytes = bytes;
  s.rows = 1;
  s.row_bytes = 64;
  s.esz = 1;
  return s;
}

// Bytes followed by a page that faults when touched.
struct Guarded {
  explicit Guarded(size_t bytes) : size(bytes) {
    const size_t page = size_t(sysconf(_SC_PAGESIZE));
    map_bytes = (bytes + page - 1) / page * page + page;
    map = static_cast<uint8_t*>(mmap(nullptr, map_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    REQUIRE(map != MAP_FAILED);
    REQUIRE(mprotect(map + map_bytes - page, page, PROT_NONE) == 0);
    data = map + map_bytes - page - bytes;
    for (size_t i = 0; i < bytes; ++i) data[i] = uint8_t(i * 7 + 3);
  }
  ~Guarded() { munmap(map, map_bytes); }
  uint8_t* map;
  size_t map_bytes;
  uint8_t* data;
  size_t size;
};

}  // namespace

TEST_CASE("a tile is packed once per dispatch and read in place after") {
  TileCache cache;
  std::vector<uint8_t> buf(4096);
  for (size_t i = 0; i < buf.size(); ++i) buf[i] = uint8_t(i * 7);
  const uint8_t* end = buf.data() + buf.size();
  alignas(64) uint8_t local[64];
  cache.begin(1);
  packs = 0;
  TileSite plus = site_for(buf.data(), end), minus = site_for(buf.data(), end, pack_minus);
  const void* first = cache.get(plus, buf.data() + 64, 3, local);
  REQUIRE(first != local);
  REQUIRE(packed_as(first, buf.data() + 64, 3, true));
  REQUIRE(cache.get(plus, buf.data() + 64, 3, local) == first);
  REQUIRE(packs == 1);
  // Another stride, packer or source is another tile.
  const void* other_ld = cache.get(plus, buf.data() + 64, 4, local);
  const void* other_pack = cache.get(minus, buf.data() + 64, 3, local);
  const void* next = cache.get(plus, buf.data() + 80, 3, local);
  REQUIRE(packs == 4);
  REQUIRE(packed_as(other_ld, buf.data() + 64, 4, true));
  REQUIRE(packed_as(other_pack, buf.data() + 64, 3, false));
  REQUIRE(packed_as(next, buf.data() + 80, 3, true));
  REQUIRE(packed_as(first, buf.data() + 64, 3, true));  // untouched by the others
  // The next dispatch may find other bytes there: it packs again.
  buf[64] ^= 0xff;
  cache.begin(2);
  TileSite fresh = site_for(buf.data(), end);
  const void* again = cache.get(fresh, buf.data() + 64, 3, local);
  REQUIRE(packs == 5);
  REQUIRE(packed_as(again, buf.data() + 64, 3, true));
}

TEST_CASE("the tile cache packs into the caller's buffer what it cannot hold") {
  TileCache cache;
  std::vector<uint8_t> buf(256, 5);
  TileSite site = site_for(buf.data(), buf.data() + buf.size());
  alignas(64) uint8_t local[64];
  SECTION("no dispatch serial") {
    cache.begin(0);
    REQUIRE(cache.get(site, buf.data(), 1, local) == local);
    REQUIRE(packed_as(local, buf.data(), 1, true));
  }
  SECTION("a stride beyond 32 bits") {
    cache.begin(7);
    const uint64_t ld = uint64_t(1) << 33;
    REQUIRE(cache.get(site, buf.data(), ld, local) == local);
    REQUIRE(packed_as(local, buf.data(), size_t(ld), true));
  }
  SECTION("a full arena") {
    cache.begin(8);
    // Entries whose claimed size uses up the arena (their pages are never touched: the
    // stand-in packer writes 64 bytes of each).
    TileSite big = site_for(buf.data(), buf.data() + buf.size(), pack_plus, uint32_t(TileCache::kArenaBytes / 4));
    for (int i = 0; i < 4; ++i) REQUIRE(cache.get(big, buf.data() + i * 50, 1, local) != local);
    REQUIRE(cache.get(site, buf.data() + 4, 1, local) == local);
    REQUIRE(packed_as(local, buf.data() + 4, 1, true));
    // What it holds is still served.
    const void* held = cache.get(big, buf.data() + 100, 1, local);
    REQUIRE(held != local);
    REQUIRE(packed_as(held, buf.data() + 100, 1, true));
  }
}

TEST_CASE("a site walking a K loop gets runs of tiles packed side by side") {
  TileCache cache;
  constexpr int kSteps = 64, kStep = 96;
  std::vector<uint8_t> buf((kSteps - 1) * kStep + 64);
  for (size_t i = 0; i < buf.size(); ++i) buf[i] = uint8_t(i * 11 + 5);
  const uint8_t* end = buf.data() + buf.size();
  alignas(64) uint8_t local[64];
  cache.begin(4);
  packs = 0;
  TileSite site = site_for(buf.data(), end);
  std::vector<const uint8_t*> got;
  uint64_t first_run = 0, longest_run = 0;  // tiles ahead in a walk: of its first run, of any
  for (int k = 0; k < kSteps; ++k) {
    const uint8_t* src = buf.data() + k * kStep;
    got.push_back(static_cast<const uint8_t*>(cache.get(site, src, 2, local)));
    REQUIRE(got.back() != local);
    REQUIRE(packed_as(got.back(), src, 2, true));
    for (const TileSite::Walk& w : site.walk) {
      if (first_run == 0) first_run = w.left;
      longest_run = std::max(longest_run, w.left);
    }
  }
  REQUIRE(first_run == TileCache::kRun - 1);
  REQUIRE(longest_run == TileCache::kRunLong - 1);
  // Once the step has repeated (the third request), a run of kRun, and where the walk goes
  // on past it, runs of kRunLong: the tiles of one run lie a tile apart, and the walk packed
  // each tile once (none past the end: the binding ends with the last tile).
  REQUIRE(packs == kSteps);
  int adjacent = 0;
  for (int k = 1; k < kSteps; ++k) adjacent += got[k] == got[k - 1] + 64;
  REQUIRE(adjacent >= (kSteps - 2) * int(TileCache::kRun - 1) / int(TileCache::kRun) - 1);
  // Another site (the next workgroup) walking the same tiles finds them, runs and all.
  TileSite follower = site_for(buf.data(), end);
  for (int k = 0; k < kSteps; ++k) REQUIRE(cache.get(follower, buf.data() + k * kStep, 2, local) == got[k]);
  REQUIRE(packs == kSteps);
  // And one walking them backwards, or every other one, gets them right too.
  TileSite back = site_for(buf.data(), end), skip = site_for(buf.data(), end);
  for (int k = kSteps - 1; k >= 0; --k) REQUIRE(cache.get(back, buf.data() + k * kStep, 2, local) == got[k]);
  for (int k = 0; k < kSteps; k += 2) REQUIRE(cache.get(skip, buf.data() + k * kStep, 2, local) == got[k]);
  REQUIRE(packs == kSteps);
}

TEST_CASE("a run never reads outside the binding") {
  TileCache cache;
  constexpr int kStep = 128;
  Guarded g(16 * kStep + 64);  // the last tile ends at the guard page
  alignas(64) uint8_t local[64];
  cache.begin(5);
  SECTION("forwards, to the binding's end") {
    TileSite site = site_for(g.data, g.data + g.size);
    for (int k = 0; k <= 16; ++k) {
      const uint8_t* src = g.data + k * kStep;
      REQUIRE(packed_as(cache.get(site, src, 0, local), src, 0, true));
    }
  }
  SECTION("backwards, to its start") {
    TileSite site = site_for(g.data + 5 * kStep, g.data + g.size);
    for (int k = 16; k >= 5; --k) {
      const uint8_t* src = g.data + k * kStep;
      REQUIRE(packed_as(cache.get(site, src, 0, local), src, 0, true));
    }
    // The run going down stopped at lo: tiles below it were never packed, so a walk there
    // now (another binding's view of the same memory) packs them afresh.
    packs = 0;
    TileSite below = site_for(g.data, g.data + g.size);
    REQUIRE(packed_as(cache.get(below, g.data + 4 * kStep, 0, local), g.data + 4 * kStep, 0, true));
    REQUIRE(packs == 1);
  }
  SECTION("a stride that spans rows") {
    // Two rows 1000 elements of 2 bytes apart: a tile's extent is 2064 bytes.
    TileSite site = site_for(g.data, g.data + g.size);
    site.rows = 2;
    site.esz = 2;
    Guarded rows(40 * 64 + 2064);
    site.lo = rows.data;
    site.hi = rows.data + rows.size;
    for (int k = 0; k <= 40; ++k) {
      const uint8_t* src = rows.data + k * 64;
      REQUIRE(packed_as(cache.get(site, src, 1000, local), src, 1000, true));
    }
  }
}

TEST_CASE("a site alternating two streams gets runs for each") {
  TileCache cache;
  constexpr int kSteps = 48, kStep = 64, kApart = 8192;
  std::vector<uint8_t> buf(kApart + kSteps * kStep + 64);
  for (size_t i = 0; i < buf.size(); ++i) buf[i] = uint8_t(i * 5 + 1);
  alignas(64) uint8_t local[64];
  cache.begin(6);
  packs = 0;
  TileSite site = site_for(buf.data(), buf.data() + buf.size());
  const uint8_t* prev[2] = {nullptr, nullptr};
  int adjacent = 0;
  for (int k = 0; k < kSteps; ++k)
    for (int s = 0; s < 2; ++s) {
      const uint8_t* src = buf.data() + s * kApart + k * kStep;
      const auto* got = static_cast<const uint8_t*>(cache.get(site, src, 1, local));
      REQUIRE(got != local);
      REQUIRE(packed_as(got, src, 1, true));
      adjacent += got == prev[s] + 64;
      prev[s] = got;
    }
  // (The first stream's runs may go on past its end, into the second's part of the buffer.)
  REQUIRE(packs >= 2 * kSteps);
  REQUIRE(packs <= 2 * kSteps + 2 * (int(TileCache::kRunLong) - 1));
  REQUIRE(adjacent >= 2 * (kSteps - 3) * int(TileCache::kRun - 1) / int(TileCache::kRun) - 2);
}

TEST_CASE("threads asking for the same tiles at once all get them packed") {
  TileCache cache;
  constexpr int kTiles = 512;
  std::vector<uint8_t> buf(kTiles * 64 + 64);
  for (size_t i = 0; i < buf.size(); ++i) buf[i] = uint8_t(i * 13 + 1);
  cache.begin(3);
  std::atomic<int> wrong{0};
  auto worker = [&](int seed) {
    alignas(64) uint8_t local[64];
    TileSite scattered = site_for(buf.data(), buf.data() + buf.size());
    for (int round = 0; round < 20; ++round) {
      // Scattered requests, and walks (runs) in steps of 1 to 4 tiles from where they are.
      TileSite walk = site_for(buf.data(), buf.data() + buf.size(), pack_plus_slowly);
      const int step = 1 + (seed + round) % 4;
      for (int t = 0; t < kTiles; ++t) {
        const int tile = (t * 37 + seed * 101 + round) % kTiles;
        const uint8_t* src = buf.data() + tile * 64;
        if (!packed_as(cache.get(scattered, src, 2, local), src, 2, true)) wrong.fetch_add(1);
        const uint8_t* along = buf.data() + ((seed * 7 + t * step) % kTiles) * 64;
        if (!packed_as(cache.get(walk, along, 2, local), along, 2, true)) wrong.fetch_add(1);
      }
    }
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) threads.emplace_back(worker, i);
  for (auto& t : threads) t.join();
  REQUIRE(wrong == 0);
}
