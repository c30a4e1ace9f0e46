// Scalar C++ references for the test shaders in conformance/shaders/compute, shared by
// the JIT unit tests and the end-to-end tests so both check the same rules.
#pragma once

#include <algorithm>
#include <cstdint>

namespace coopvk::test {

// subgroup_ops.comp: lane values are v(k) = 3k + 1; odd lanes skip the arithmetic.
struct SubgroupOpsExpected {
  uint32_t sum = 0, incl = 0, excl = 0, max = 0, ballot_count = 0, first = 0, shuffle_xor1 = 0;
  bool elect = false;
};
inline SubgroupOpsExpected subgroup_ops_expected(uint32_t lane, uint32_t subgroup_size) {
  SubgroupOpsExpected e;
  uint32_t base = lane / subgroup_size * subgroup_size;
  for (uint32_t k = base; k < base + subgroup_size; ++k) {
    uint32_t v = k * 3 + 1;
    e.ballot_count += k % 3 == 0;
    if (k & 1) continue;
    e.sum += v;
    e.max = std::max(e.max, v);
    if (k <= lane) e.incl += v;
    if (k < lane) e.excl += v;
  }
  e.elect = lane == base;
  e.first = base * 3 + 1;
  e.shuffle_xor1 = (lane ^ 1u) * 3 + 1;
  return e;
}

// Compares subgroup_ops.comp's output (9 arrays of 64 uint, field f of lane l read by
// `field(f, l)`) with the reference; returns the first mismatching lane, or -1.
template <typename Field>
int first_subgroup_ops_mismatch(uint32_t subgroup_size, Field field) {
  for (uint32_t l = 0; l < 64; ++l) {
    SubgroupOpsExpected e = subgroup_ops_expected(l, subgroup_size);
    bool ok = field(8, l) == subgroup_size && field(3, l) == e.ballot_count && field(4, l) == e.first &&
              field(5, l) == e.shuffle_xor1;
    if ((l & 1) == 0)  // odd lanes sit out the arithmetic
      ok = ok && field(0, l) == e.sum && field(1, l) == e.incl && field(2, l) == e.excl &&
           field(6, l) == e.max && field(7, l) == (e.elect ? 1u : 0u);
    if (!ok) return int(l);
  }
  return -1;
}

// control_flow.comp: Collatz steps of i + 1 (capped at 200), then classify().
inline uint32_t collatz_steps(uint32_t i) {
  uint32_t v = i + 1, s = 0;
  while (v != 1 && s < 200) {
    ++s;
    v = (v & 1) ? 3 * v + 1 : v >> 1;
  }
  return s;
}
inline uint32_t collatz_kind(uint32_t s) { return s % 4 == 0 ? 10 : s % 4 == 1 ? 20 : s % 4 == 3 ? 40 : 30; }

// dot_bda.comp: packed 4x8-bit dot products of a and b.
struct DotExpected {
  int32_t sdot;
  uint32_t udot;
  int32_t sdot_acc_sat;  // sdot + 2147483000, saturated to int32
};
inline DotExpected dot_expected(uint32_t a, uint32_t b) {
  int64_t sdot = 0, udot = 0;
  for (int k = 0; k < 4; ++k) {
    sdot += int64_t(int8_t(a >> (8 * k))) * int8_t(b >> (8 * k));
    udot += int64_t(uint8_t(a >> (8 * k))) * uint8_t(b >> (8 * k));
  }
  int64_t acc = std::min<int64_t>(std::max<int64_t>(sdot + 2147483000ll, INT32_MIN), INT32_MAX);
  return {int32_t(sdot), uint32_t(udot), int32_t(acc)};
}

// mixed_control_flow.comp: the five outputs of invocation `lid` (0..63) of a workgroup,
// for push constants n and flag (out[k] is the value at index base + 64 * k).
struct MixedControlFlowExpected {
  int32_t out[5];
};
inline MixedControlFlowExpected mixed_control_flow_expected(int32_t lid, int32_t n, int32_t flag) {
  MixedControlFlowExpected e{};
  int32_t a = 0;
  for (int32_t i = 0; i < n; ++i) a += (lid + i) % 3 == 0 ? i : -1;
  e.out[0] = a;
  int32_t b = -5;
  if (lid % 2 == 1) b = (flag != 0 ? lid * 2 : 7) + 0 + 1 + 2 + 3;
  e.out[1] = b;
  int32_t c = 0, i = 0;
  for (; i < 16 && i <= lid % 16; ++i) c += i;
  e.out[2] = c * 100 + i;
  if (lid >= 48) {
    e.out[3] = e.out[4] = -1;
    return e;
  }
  int32_t ring[48];
  int32_t d[48];
  for (int32_t l = 0; l < 48; ++l) d[l] = l;
  for (int32_t k = 0; k < 4; ++k) {
    for (int32_t l = 0; l < 48; ++l) ring[l] = d[l];
    for (int32_t l = 0; l < 48; ++l) d[l] = ring[(l + 1) % 48] + k;
  }
  e.out[3] = d[lid];
  e.out[4] = n + flag;
  return e;
}

}  // namespace coopvk::test
