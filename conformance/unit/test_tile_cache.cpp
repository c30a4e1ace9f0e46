// TileCache (coopvk/jit/tile_cache.h) with a stand-in packer: each tile is packed once per
// dispatch and then read in place, keyed by source, stride and packer; a new dispatch
// packs afresh; what the cache cannot hold is packed into the caller's buffer; and threads
// asking for the same tiles at once all get correct packed tiles.
#include <catch2/catch_test_macros.hpp>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "coopvk/jit/tile_cache.h"

using coopvk::jit::TileCache;

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

bool packed_as(const void* got, const uint8_t* src, size_t ld, bool plus) {
  const auto* g = static_cast<const uint8_t*>(got);
  for (int i = 0; i < 64; ++i)
    if (g[i] != uint8_t(plus ? src[i] + ld : src[i] - ld)) return false;
  return true;
}

}  // namespace

TEST_CASE("a tile is packed once per dispatch and read in place after") {
  TileCache cache;
  std::vector<uint8_t> buf(4096);
  for (size_t i = 0; i < buf.size(); ++i) buf[i] = uint8_t(i * 7);
  alignas(64) uint8_t local[64];
  cache.begin(1);
  packs = 0;
  const void* first = cache.get(buf.data() + 64, 3, pack_plus, 64, local, nullptr);
  REQUIRE(first != local);
  REQUIRE(packed_as(first, buf.data() + 64, 3, true));
  REQUIRE(cache.get(buf.data() + 64, 3, pack_plus, 64, local, nullptr) == first);
  REQUIRE(packs == 1);
  // Another stride, packer or source is another tile.
  const void* other_ld = cache.get(buf.data() + 64, 4, pack_plus, 64, local, nullptr);
  const void* other_pack = cache.get(buf.data() + 64, 3, pack_minus, 64, local, nullptr);
  const void* next = cache.get(buf.data() + 80, 3, pack_plus, 64, local, nullptr);
  REQUIRE(packs == 4);
  REQUIRE(packed_as(other_ld, buf.data() + 64, 4, true));
  REQUIRE(packed_as(other_pack, buf.data() + 64, 3, false));
  REQUIRE(packed_as(next, buf.data() + 80, 3, true));
  REQUIRE(packed_as(first, buf.data() + 64, 3, true));  // untouched by the others
  // The next dispatch may find other bytes there: it packs again.
  buf[64] ^= 0xff;
  cache.begin(2);
  const void* again = cache.get(buf.data() + 64, 3, pack_plus, 64, local, nullptr);
  REQUIRE(packs == 5);
  REQUIRE(packed_as(again, buf.data() + 64, 3, true));
}

TEST_CASE("the tile cache packs into the caller's buffer what it cannot hold") {
  TileCache cache;
  std::vector<uint8_t> buf(256, 5);
  alignas(64) uint8_t local[64];
  SECTION("no dispatch serial") {
    cache.begin(0);
    REQUIRE(cache.get(buf.data(), 1, pack_plus, 64, local, nullptr) == local);
    REQUIRE(packed_as(local, buf.data(), 1, true));
  }
  SECTION("a stride beyond 32 bits") {
    cache.begin(7);
    const uint64_t ld = uint64_t(1) << 33;
    REQUIRE(cache.get(buf.data(), ld, pack_plus, 64, local, nullptr) == local);
    REQUIRE(packed_as(local, buf.data(), size_t(ld), true));
  }
  SECTION("a full arena") {
    cache.begin(8);
    // Entries whose claimed size uses up the arena (their pages are never touched: the
    // stand-in packer writes 64 bytes of each).
    const uint32_t big = uint32_t(TileCache::kArenaBytes / 4);
    for (int i = 0; i < 4; ++i) REQUIRE(cache.get(buf.data() + i, 1, pack_plus, big, local, nullptr) != local);
    REQUIRE(cache.get(buf.data() + 4, 1, pack_plus, 64, local, nullptr) == local);
    REQUIRE(packed_as(local, buf.data() + 4, 1, true));
    // What it holds is still served.
    const void* held = cache.get(buf.data() + 2, 1, pack_plus, big, local, nullptr);
    REQUIRE(held != local);
    REQUIRE(packed_as(held, buf.data() + 2, 1, true));
  }
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
    for (int round = 0; round < 20; ++round)
      for (int t = 0; t < kTiles; ++t) {
        const int tile = (t * 37 + seed * 101 + round) % kTiles;
        const uint8_t* src = buf.data() + tile * 64;
        const void* got = cache.get(src, 2, pack_plus, 64, local, nullptr);
        if (!packed_as(got, src, 2, true)) wrong.fetch_add(1);
      }
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) threads.emplace_back(worker, i);
  for (auto& t : threads) t.join();
  REQUIRE(wrong == 0);
}
