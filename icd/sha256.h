// SHA-256 (FIPS 180-4), used for pipeline-cache keys: a key collision would run the
// wrong code, so the key is a cryptographic hash of everything that affects compilation.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace coopvk {

using Hash256 = std::array<uint8_t, 32>;

class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t size);
  template <typename T>
  void update_value(const T& v) { update(&v, sizeof(v)); }
  Hash256 finish();

 private:
  void block(const uint8_t* p);
  uint32_t h_[8];
  uint8_t buf_[64];
  size_t buf_len_ = 0;
  uint64_t total_ = 0;
};

}  // namespace coopvk
