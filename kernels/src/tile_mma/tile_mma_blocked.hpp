// The blocked tile multiply-add driver shared by every SIMD path, written once and compiled in
// each arch's translation unit with that unit's flags (it contains no intrinsics itself).
//
// Shape of the work: D's columns are cut into blocks of kNB, rows into blocks of kMB, K into
// chunks of kKC. For each (column block, row block) the accumulators live either in D itself
// ("direct": the accumulator is D's own format and the columns fill whole vectors) or in a
// padded scratch tile; each K chunk packs the A rows and B columns it needs into the layout
// the micro-kernel wants (or uses them where they lie when they already have it), then the
// micro-kernels run over register-sized sub-tiles. For the tiles the JIT uses (up to 32 x 32,
// K up to 64) that is one block and one chunk: each element of A and B is converted once.
//
// Every name here is inside the inline namespace COOPVK_MMA_ISA, which the including
// translation unit defines (avx2, avx512, ...): the same template compiled with different
// instruction-set flags must not become one symbol, or the linker could hand an AVX-512
// copy to an AVX2 CPU.
//
// A policy P says how one combination is computed:
//   Acc, Unit         accumulator element (float / int32_t; double for the portable f64) and
//                     packed unit (one k group: KG consecutive k values of one row of A or
//                     column of B, 4 bytes; 8 for f64)
//   Ops               the micro-kernel's vector operations (see micro() below), and
//                     kMaxRows1 / kMaxRows2, the rows whose accumulators fit in registers
//                     with one or two vectors of columns
//   L, KG             accumulator lanes per vector (columns are padded to L), k per unit
//   kSizeA..kSizeD    element sizes of A, B, C, D in bytes
//   kDirect           accumulators may live in D (same bits as Acc, no saturation step)
//   kMaxK             largest k the exact integer accumulation covers (else `fallback`)
//   pack_a(a, lda, mb, kc, buf, &ld)        -> units of A, ld units per row
//   pack_b(b, ldb, kc, nb, nbpad, buf, &ld, corr, &corr_out)
//                     -> units of B, ld units per k group; corr_out: per-column values to
//                     add to the accumulators once for this chunk (sign fix-ups), or null
//   load_c(c, ldc, mb, nb, nbpad, acc)      C block -> accumulator scratch (padded)
//   store_d(acc, ldacc, c, d, ldd, mb, nb)  accumulator scratch -> D block (c for saturation)
//   fallback          the kernel to run when k > kMaxK
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

#include "tile_mma/tile_mma_arch.h"

#ifndef COOPVK_MMA_ISA
#error "define COOPVK_MMA_ISA (the translation unit's instruction set) before including"
#endif

namespace coopvk::kernels::detail::mma {
inline namespace COOPVK_MMA_ISA {

constexpr uint32_t kMB = 32, kNB = 32, kKC = 64;

constexpr uint32_t round_up(uint32_t x, uint32_t to) { return (x + to - 1) / to * to; }

// ---- micro-kernel ----

// The strides and depth of a micro-kernel call known when it is compiled (0: given at run
// time). With MR rows of A at a run-time stride the compiler needs MR row addresses live in
// the loop and, short of general registers, parks them in vector registers and moves one back
// before every broadcast: an extra uop per FMA, which held the 16-row f32 kernel near half of
// the FMA rate. Known strides make every broadcast one base plus a displacement, and a known
// depth unrolls the k loop.
struct Fixed {
  size_t lda = 0, ldb = 0;
  uint32_t groups = 0;
};

// MR rows x NV vectors of accumulators held in registers over `groups` k groups: for each
// group, NV vectors of B units are loaded once and each row's A unit is broadcast against
// them. Ops supplies V (the vector), Acc, Unit, L and load / store / bload / bcast / mac / add.
template <class Ops, int MR, int NV, Fixed X = Fixed{}>
void micro(const typename Ops::Unit* ap, size_t lda, const typename Ops::Unit* bp, size_t ldb,
           uint32_t groups, const typename Ops::Acc* corr, const typename Ops::Acc* cin,
           size_t ldcin, typename Ops::Acc* cout, size_t ldcout) {
  using V = typename Ops::V;
  constexpr int L = Ops::L;
  if constexpr (X.lda != 0) lda = X.lda;
  if constexpr (X.ldb != 0) ldb = X.ldb;
  if constexpr (X.groups != 0) groups = X.groups;
  V acc[MR][NV];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[r][v] = Ops::load(cin + r * ldcin + v * L);
  if (corr != nullptr) {
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      const V cv = Ops::load(corr + v * L);
#pragma GCC unroll 16
      for (int r = 0; r < MR; ++r) acc[r][v] = Ops::add(acc[r][v], cv);
    }
  }
#pragma GCC unroll 64
  for (uint32_t g = 0; g < groups; ++g) {
    V b[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) b[v] = Ops::bload(bp + g * ldb + v * L);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const V a = Ops::bcast(ap + r * lda + g);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[r][v] = Ops::mac(acc[r][v], a, b[v]);
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) Ops::store(cout + r * ldcout + v * L, acc[r][v]);
}

// micro() for two tiles that share A: MR rows x one vector of columns of each, B's vectors
// from b0 and b1, so each broadcast of A feeds two multiply-adds (a tile of one vector's
// width broadcasts once per multiply-add, and the call's fixed costs are shared too). Each
// accumulator sees the same operations in the same order as in micro().
template <class Ops, int MR, Fixed X>
[[gnu::always_inline]] inline void micro_pair(const typename Ops::Unit* ap, const typename Ops::Unit* b0,
                                              const typename Ops::Unit* b1, const typename Ops::Acc* corr0,
                                              const typename Ops::Acc* corr1, const typename Ops::Acc* c0,
                                              typename Ops::Acc* d0, const typename Ops::Acc* c1,
                                              typename Ops::Acc* d1, size_t ldc) {
  using V = typename Ops::V;
  static_assert(X.lda != 0 && X.ldb != 0 && X.groups != 0);
  V acc[MR][2];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
    acc[r][0] = Ops::load(c0 + r * ldc);
    acc[r][1] = Ops::load(c1 + r * ldc);
  }
  if (corr0 != nullptr) {
    const V k0 = Ops::load(corr0), k1 = Ops::load(corr1);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      acc[r][0] = Ops::add(acc[r][0], k0);
      acc[r][1] = Ops::add(acc[r][1], k1);
    }
  }
#pragma GCC unroll 64
  for (uint32_t g = 0; g < X.groups; ++g) {
    const V x0 = Ops::bload(b0 + g * X.ldb), x1 = Ops::bload(b1 + g * X.ldb);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const V a = Ops::bcast(ap + r * X.lda + g);
      acc[r][0] = Ops::mac(acc[r][0], a, x0);
      acc[r][1] = Ops::mac(acc[r][1], a, x1);
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
    Ops::store(d0 + r * ldc, acc[r][0]);
    Ops::store(d1 + r * ldc, acc[r][1]);
  }
}

template <class Ops>
using MicroFn = void (*)(const typename Ops::Unit*, size_t, const typename Ops::Unit*, size_t,
                         uint32_t, const typename Ops::Acc*, const typename Ops::Acc*, size_t,
                         typename Ops::Acc*, size_t);

// Row counts a micro-kernel is instantiated for; other counts are split into these.
constexpr int kRowSizes[] = {1, 2, 3, 4, 6, 8, 12, 16};

template <class Ops, int NV, Fixed X, size_t... I>
constexpr std::array<MicroFn<Ops>, sizeof...(I)> micro_table(std::index_sequence<I...>) {
  return {&micro<Ops, kRowSizes[I], NV, X>...};
}

// Index into kRowSizes of the next row block for `rows` remaining rows, at most `max` per
// block: full blocks while at least two remain, then two halves rather than a full block and
// a sliver (a sliver has too few independent accumulators to hide the FMA latency).
constexpr int next_rows(uint32_t rows, int max) {
  uint32_t want = rows;
  if (rows > uint32_t(max)) want = rows >= 2u * max ? uint32_t(max) : (rows + 1) / 2;
  int best = 0;
  for (int i = 0; i < int(std::size(kRowSizes)); ++i)
    if (kRowSizes[i] <= max && uint32_t(kRowSizes[i]) <= want) best = i;
  return best;
}

// All mb rows x nv vectors of one chunk: column groups of two vectors (one at the end when
// nv is odd), each cut into row blocks. X: what the caller knows at compile time of lda, ldb
// and groups (the values passed must then equal it).
template <class Ops, Fixed X = Fixed{}>
[[gnu::always_inline]] inline void compute(const typename Ops::Unit* ap, size_t lda, const typename Ops::Unit* bp, size_t ldb,
             uint32_t groups, const typename Ops::Acc* corr, const typename Ops::Acc* cin,
             size_t ldcin, typename Ops::Acc* cout, size_t ldcout, uint32_t mb, uint32_t nv) {
  constexpr size_t kSizes = std::size(kRowSizes);
  static constexpr auto one = micro_table<Ops, 1, X>(std::make_index_sequence<kSizes>());
  static constexpr auto two = micro_table<Ops, 2, X>(std::make_index_sequence<kSizes>());
  constexpr int L = Ops::L;
  for (uint32_t v0 = 0; v0 < nv;) {
    const bool pair = nv - v0 >= 2;
    const int max = pair ? Ops::kMaxRows2 : Ops::kMaxRows1;
    const auto& table = pair ? two : one;
    for (uint32_t r0 = 0; r0 < mb;) {
      const int idx = next_rows(mb - r0, max);
      const size_t col = size_t(v0) * L;
      table[idx](ap + r0 * lda, lda, bp + col, ldb, groups, corr ? corr + col : nullptr,
                 cin + r0 * ldcin + col, ldcin, cout + r0 * ldcout + col, ldcout);
      r0 += kRowSizes[idx];
    }
    v0 += pair ? 2 : 1;
  }
}

// ---- the driver ----

// Inlined into blocked_mma() and into fixed_mma(), whose constant shape folds the blocking
// away and turns the micro-kernel table lookups into direct calls.
// FN, FK: the n and k of a fixed copy (0 in the general one), for the micro-kernels' strides.
template <class P, uint32_t FN = 0, uint32_t FK = 0>
[[gnu::always_inline]] inline void mma_body(const void* a, const void* b, const void* c, void* d,
                                            uint32_t m, uint32_t n, uint32_t k) {
  using Acc = typename P::Acc;
  using Unit = typename P::Unit;
  using Ops = typename P::Ops;
  constexpr uint32_t L = P::L, KG = P::KG;
  static_assert(kKC % KG == 0 && kNB % L == 0);
  if (k > P::kMaxK) return P::fallback(a, b, c, d, m, n, k);
  alignas(64) Unit abuf[kMB * (kKC / KG)];
  alignas(64) Unit bbuf[(kKC / KG) * kNB];
  alignas(64) Acc accbuf[kMB * kNB];
  alignas(64) Acc corr[kNB];
  const auto* A = static_cast<const uint8_t*>(a);
  const auto* B = static_cast<const uint8_t*>(b);
  const auto* C = static_cast<const uint8_t*>(c);
  auto* D = static_cast<uint8_t*>(d);
  const bool direct = P::kDirect && n % L == 0 && k > 0;
  for (uint32_t n0 = 0; n0 < n; n0 += kNB) {
    const uint32_t nb = std::min(kNB, n - n0), nbpad = round_up(nb, L);
    for (uint32_t m0 = 0; m0 < m; m0 += kMB) {
      const uint32_t mb = std::min(kMB, m - m0);
      const size_t cd_off = size_t(m0) * n + n0;
      Acc* acc = accbuf;
      size_t ldacc = nbpad;
      const Acc* cin = accbuf;
      size_t ldcin = nbpad;
      if (direct) {
        acc = reinterpret_cast<Acc*>(D + cd_off * P::kSizeD);
        cin = reinterpret_cast<const Acc*>(C + cd_off * P::kSizeC);
        ldacc = ldcin = n;
      } else {
        P::load_c(C + cd_off * P::kSizeC, n, mb, nb, nbpad, accbuf);
      }
      for (uint32_t k0 = 0; k0 < k; k0 += kKC) {
        const uint32_t kc = std::min(kKC, k - k0);
        size_t lda = 0, ldb = 0;
        const Acc* cr = nullptr;
        const Unit* ap = P::pack_a(A + (size_t(m0) * k + k0) * P::kSizeA, k, mb, kc, abuf, lda);
        const Unit* bp =
            P::pack_b(B + (size_t(k0) * n + n0) * P::kSizeB, n, kc, nb, nbpad, bbuf, ldb, corr, cr);
        const uint32_t groups = (kc + KG - 1) / KG;
        // A fixed shape of one chunk packs (or finds) A with one unit row per row of A and B
        // padded to whole vectors: those strides are constants there.
        constexpr Fixed X{(FK + KG - 1) / KG, round_up(FN, L), (FK + KG - 1) / KG};
        if (FK != 0 && FK <= kKC && FN <= kNB && lda == X.lda && ldb == X.ldb && groups == X.groups)
          compute<Ops, X>(ap, lda, bp, ldb, groups, cr, cin, ldcin, acc, ldacc, mb, nbpad / L);
        else
          compute<Ops>(ap, lda, bp, ldb, groups, cr, cin, ldcin, acc, ldacc, mb, nbpad / L);
        cin = acc;
        ldcin = ldacc;
      }
      if (!direct) P::store_d(accbuf, nbpad, C + cd_off * P::kSizeC, D + cd_off * P::kSizeD, n, mb, nb);
    }
  }
}

// How a kernel family K runs a tile: by default the blocked driver with K as its policy;
// families that choose between policies (vector widths) or are not blocked at all specialize
// this. K's kernels are blocked_mma<K> (run) and its fixed_mma<K, ...> copies (run_fixed,
// where such a choice can be made at compile time).
template <class K>
struct Body {
  // The policy whose layouts a fixed shape with N columns uses (families that are not
  // blocked, without this, have no split form).
  static constexpr bool kHasPolicy = true;
  template <uint32_t N>
  using Policy = K;
  [[gnu::always_inline]] static void run(const void* a, const void* b, const void* c, void* d,
                                         uint32_t m, uint32_t n, uint32_t k) {
    mma_body<K>(a, b, c, d, m, n, k);
  }
  template <uint32_t M, uint32_t N, uint32_t K_>
  [[gnu::always_inline]] static void run_fixed(const void* a, const void* b, const void* c, void* d) {
    mma_body<K, N, K_>(a, b, c, d, M, N, K_);
  }
};

template <class K>
void blocked_mma(const void* a, const void* b, const void* c, void* d, uint32_t m, uint32_t n,
                 uint32_t k) {
  Body<K>::run(a, b, c, d, m, n, k);
}

// A copy of blocked_mma() for one shape, which still takes any other.
template <class K, uint32_t M, uint32_t N, uint32_t K_>
void fixed_mma(const void* a, const void* b, const void* c, void* d, uint32_t m, uint32_t n,
               uint32_t k) {
  if (m == M && n == N && k == K_) [[likely]]
    Body<K>::template run_fixed<M, N, K_>(a, b, c, d);
  else
    blocked_mma<K>(a, b, c, d, m, n, k);
}

// ---- the split form (tile_mma_packed()) ----

// Whether B's packing yields per-column fix-ups (the flipped VNNI forms of QuadsFor).
template <class P>
constexpr bool packs_corrections() {
  if constexpr (requires { P::kFlip; })
    return P::kFlip;
  else
    return false;
}

// One fixed shape's kernel in parts. The packed layouts are those mma_body() builds for its
// single block and chunk (A: M rows of UA units; B: UA k groups of N units, then N fix-ups),
// and mma() runs the same compute() over them with the accumulators in D, so the result is
// fixed_mma()'s to the bit. Only where fixed_mma() takes that direct path (kOk).
template <class P, uint32_t M, uint32_t N, uint32_t K>
struct PackedTile {
  using Unit = typename P::Unit;
  using Acc = typename P::Acc;
  static constexpr uint32_t UA = (K + P::KG - 1) / P::KG;
  static constexpr bool kCorr = packs_corrections<P>();
  static constexpr bool kOk =
      P::kDirect && N % P::L == 0 && M <= kMB && N <= kNB && K > 0 && K <= kKC && K <= P::kMaxK;
  static constexpr size_t kABytes = size_t(M) * UA * sizeof(Unit);
  static constexpr size_t kBBytes = size_t(UA) * N * sizeof(Unit) + (kCorr ? N * sizeof(Acc) : 0);

  static const Acc* corrections(const void* bp) {
    return kCorr ? reinterpret_cast<const Acc*>(static_cast<const uint8_t*>(bp) + size_t(UA) * N * sizeof(Unit))
                 : nullptr;
  }
  static void pack_a(const void* a, size_t lda, void* out) {
    Unit* dst = static_cast<Unit*>(out);
    size_t ld = 0;
    const Unit* p = P::pack_a(static_cast<const uint8_t*>(a), lda, M, K, dst, ld);
    if (p != dst)  // A already had the layout and was left where it lies: copy it
      for (uint32_t r = 0; r < M; ++r) std::memcpy(dst + r * UA, p + r * ld, UA * sizeof(Unit));
  }
  static void pack_b(const void* b, size_t ldb, void* out) {
    Unit* dst = static_cast<Unit*>(out);
    Acc* corr = kCorr ? const_cast<Acc*>(corrections(out)) : nullptr;
    size_t ld = 0;
    const Acc* corr_out = nullptr;
    const Unit* p = P::pack_b(static_cast<const uint8_t*>(b), ldb, K, N, N, dst, ld, corr, corr_out);
    if (p != dst)
      for (uint32_t g = 0; g < UA; ++g) std::memcpy(dst + g * N, p + g * ld, N * sizeof(Unit));
  }
  // mma(ap, bp0, c0, d0) then mma(ap, bp1, c1, d1), to the bit. Where neither result can
  // be an operand of the other call (nor both one place) the two run fused, in row blocks
  // of micro_pair() over the column vectors; otherwise, one after the other.
  static void mma2(const void* ap, const void* bp0, const void* c0, void* d0, const void* bp1, const void* c1,
                   void* d1) {
    constexpr size_t kAccBytes = size_t(M) * N * sizeof(Acc);
    auto disjoint = [](const void* x, size_t xn, const void* y, size_t yn) {
      const auto px = reinterpret_cast<uintptr_t>(x), py = reinterpret_cast<uintptr_t>(y);
      return px + xn <= py || py + yn <= px;
    };
    // (A result in place of its own C is fine, as in mma(); partly over it is not, since the
    // fused blocks have fewer rows than mma()'s.)
    const bool fuse = (d0 == c0 || disjoint(d0, kAccBytes, c0, kAccBytes)) &&
                      (d1 == c1 || disjoint(d1, kAccBytes, c1, kAccBytes)) &&
                      disjoint(d0, kAccBytes, d1, kAccBytes) && disjoint(d0, kAccBytes, c1, kAccBytes) &&
                      disjoint(d0, kAccBytes, bp1, kBBytes) && disjoint(d0, kAccBytes, ap, kABytes) &&
                      disjoint(d1, kAccBytes, c0, kAccBytes) && disjoint(d1, kAccBytes, bp0, kBBytes) &&
                      disjoint(d1, kAccBytes, ap, kABytes);
    if (!fuse) {
      mma(ap, bp0, c0, d0);
      mma(ap, bp1, c1, d1);
      return;
    }
    using Ops = typename P::Ops;
    constexpr uint32_t L = P::L;
    constexpr Fixed X{UA, N, UA};
    // Two vectors per row and pair: the register budget of a two-vector micro-kernel.
    constexpr int kRows = kRowSizes[next_rows(M, Ops::kMaxRows2)];
    const auto* a = static_cast<const Unit*>(ap);
    const auto* b0 = static_cast<const Unit*>(bp0);
    const auto* b1 = static_cast<const Unit*>(bp1);
    const Acc* k0 = corrections(bp0);
    const Acc* k1 = corrections(bp1);
    const auto* ci0 = static_cast<const Acc*>(c0);
    const auto* ci1 = static_cast<const Acc*>(c1);
    auto* do0 = static_cast<Acc*>(d0);
    auto* do1 = static_cast<Acc*>(d1);
    for (uint32_t col = 0; col < N; col += L) {
      uint32_t r0 = 0;
      for (; r0 + kRows <= M; r0 += kRows)
        micro_pair<Ops, kRows, X>(a + r0 * UA, b0 + col, b1 + col, k0 ? k0 + col : nullptr, k1 ? k1 + col : nullptr,
                                  ci0 + r0 * N + col, do0 + r0 * N + col, ci1 + r0 * N + col, do1 + r0 * N + col, N);
      if (r0 < M) {  // rows left over: the single kernels' own blocks
        compute<Ops, X>(a + r0 * UA, UA, b0 + col, N, UA, k0 ? k0 + col : nullptr, ci0 + r0 * N + col, N,
                        do0 + r0 * N + col, N, M - r0, 1);
        compute<Ops, X>(a + r0 * UA, UA, b1 + col, N, UA, k1 ? k1 + col : nullptr, ci1 + r0 * N + col, N,
                        do1 + r0 * N + col, N, M - r0, 1);
      }
    }
  }
  static void mma(const void* ap, const void* bp, const void* c, void* d) {
    compute<typename P::Ops, Fixed{UA, N, UA}>(static_cast<const Unit*>(ap), UA, static_cast<const Unit*>(bp), N,
                                               UA, corrections(bp), static_cast<const Acc*>(c), N,
                                               static_cast<Acc*>(d), N, M, N / P::L);
  }
};

// The split form of fixed_mma<K, M, N, K_> into *out, or a cleared *out where it has none
// (families without a blocked policy, such as the AVX512-FP16 kernels, or no direct path).
template <class K, uint32_t M, uint32_t N, uint32_t K_>
void fill_packed(TileMmaPacked* out) {
  *out = {};
  if constexpr (requires { Body<K>::kHasPolicy; }) {
    using T = PackedTile<typename Body<K>::template Policy<N>, M, N, K_>;
    if constexpr (T::kOk)
      *out = {&T::pack_a, &T::pack_b, &T::mma, &T::mma2, uint32_t(T::kABytes), uint32_t(T::kBBytes)};
  }
}

// P's kernel for a shape: the copy specialized for it where it is one of S..., else the
// general one; with `packed`, also that kernel's split form (only fixed copies have one).
template <class P, TileShape... S>
TileMmaFn for_shape(const TileShape& t, TileMmaPacked* packed) {
  TileMmaFn fn = &blocked_mma<P>;
  if (packed) *packed = {};
  auto pick = [&]<TileShape X>() {
    fn = &fixed_mma<P, X.m, X.n, X.k>;
    if (packed) fill_packed<P, X.m, X.n, X.k>(packed);
  };
  ((t.m == S.m && t.n == S.n && t.k == S.k ? pick.template operator()<S>() : void()), ...);
  return fn;
}

// The shapes the JIT uses most (tile_mma.h) get fixed copies for the hot combinations.
#define COOPVK_MMA_FLOAT_SHAPES TileShape{16, 16, 16}, TileShape{16, 8, 16}, TileShape{16, 8, 8}, TileShape{8, 8, 8}
#define COOPVK_MMA_INT8_SHAPES TileShape{16, 16, 32}, TileShape{16, 8, 32}, TileShape{8, 8, 32}

template <class P>
TileMmaFn any_shape(const TileShape&, TileMmaPacked* packed) {
  if (packed) *packed = {};
  return &blocked_mma<P>;
}

// An arch's entry for one combination: the function that picks P's kernel for a shape (and,
// given `packed`, fills in its split form).
using SelectFn = TileMmaFn (*)(const TileShape&, TileMmaPacked*);
template <class P, MmaCombo T>
constexpr SelectFn select_for() {
  if constexpr (!is_hot(T))
    return &any_shape<P>;
  else if constexpr (is_int_format(T.d))
    return &for_shape<P, COOPVK_MMA_INT8_SHAPES>;
  else
    return &for_shape<P, COOPVK_MMA_FLOAT_SHAPES>;
}

// ---- per-arch kernel tables ----

// A table of one entry per kMmaCombos index, from E::template get<I>() (nullptr where the
// arch has no kernel of its own for that combination).
template <class E, class Fn, size_t... I>
constexpr auto entry_table(std::index_sequence<I...>) {
  return std::array<Fn, sizeof...(I)>{E::template get<I>()...};
}

// The kernel of an arch whose E::get<I>() gives SelectFn entries, or nullptr (then `packed`
// is left alone).
template <class E>
TileMmaFn select(int combo, const TileShape& shape, TileMmaPacked* packed) {
  static constexpr auto table = entry_table<E, SelectFn>(std::make_index_sequence<kMmaCombos.size()>());
  return table[combo] ? table[combo](shape, packed) : nullptr;
}

}  // namespace COOPVK_MMA_ISA
}  // namespace coopvk::kernels::detail::mma
