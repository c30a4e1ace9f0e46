// The on-disk shader cache: compiled pipelines kept in files between runs, as Mesa's shader
// cache does, so a second run of an application (a CI job, a test suite, the CTS) links
// native code instead of compiling it again.
//
// Where: $COOPVK_CACHE_DIR, else $XDG_CACHE_HOME/coopvk/shaders, else
// $HOME/.cache/coopvk/shaders. COOPVK_CACHE=0 turns it off. COOPVK_CACHE_MAX_SIZE bounds it
// (bytes, or with a K, M or G suffix; default 1G). The environment is read when a device is
// created.
//
// One file per entry, named by the 64 hex digits of its key: the pipeline's cache key
// (pipeline_compute.cpp) hashed with the driver build (driver_build_id()) and the code
// signature (jit::host_code_signature(): CPU, LLVM, kernels' arch, runtime ABI), so a
// rebuilt driver or another CPU never looks at an entry it cannot use. The file is a
// DiskCacheHeader followed by the payload (jit::serialize() bytes). It is written to a
// temporary file in the same directory and renamed into place, so concurrent processes
// see a whole entry or none. An entry is used only if it is a regular file owned by this
// user (or root) whose header, key, size and SHA-256 all check out, and then only through
// jit::deserialize(), which validates it again; anything else is ignored, removed, and the
// pipeline compiled as if it were absent.
//
// Size: every process adds what it writes to a shared byte counter (the mapped file
// `size-counter` in the directory). When the counter passes the bound, one process scans
// the directory, deletes the least recently used entries (by modification time; a hit
// touches its entry) down to 90% of the bound and stores the true total. The scan also
// removes temporary files left behind by killed processes. Only file names of this cache's
// own forms are ever deleted.
#pragma once

#include "sha256.h"

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace coopvk {

// An entry file's header. Little-endian (the host's order: entries never leave the host).
struct DiskCacheHeader {
  char magic[8];           // kDiskCacheMagic
  uint32_t format;         // kDiskCacheFormat
  uint32_t header_bytes;   // sizeof(DiskCacheHeader)
  uint8_t key[32];         // the entry key; the file's name is its hex
  uint64_t payload_bytes;  // what follows the header: exactly the rest of the file
  uint8_t payload_sha256[32];
};
static_assert(sizeof(DiskCacheHeader) == 88);
constexpr char kDiskCacheMagic[8] = {'c', 'o', 'o', 'p', 'v', 'k', 'D', 'C'};
constexpr uint32_t kDiskCacheFormat = 1;
constexpr uint64_t kDiskCacheDefaultMaxBytes = 1ull << 30;

class DiskCache {
 public:
  // The cache the environment asks for now, or null when it is off (COOPVK_CACHE=0, or no
  // directory can be named). Creates nothing on disk: the directory is made at the first
  // store.
  static std::shared_ptr<DiskCache> from_environment();

  DiskCache(std::string dir, uint64_t max_bytes);
  ~DiskCache();
  DiskCache(const DiskCache&) = delete;
  DiskCache& operator=(const DiskCache&) = delete;

  // A pipeline's entry key: its cache key, the driver build and the code signature.
  static Hash256 entry_key(const Hash256& pipeline_key, const std::string& code_signature);
  // The entry's file name: 64 lowercase hex digits.
  static std::string file_name(const Hash256& key);

  // The payload stored under `key`: empty on a miss, and for an entry that fails a check
  // (which is logged at info level and removed). A hit refreshes the entry's time.
  std::vector<uint8_t> load(const Hash256& key);
  // Stores `payload` under `key`, whole or not at all. Errors (a read-only or full disk)
  // are logged once per cache at warn level and otherwise ignored.
  void store(const Hash256& key, const std::vector<uint8_t>& payload);
  // Removes an entry whose payload was refused after load() (by jit::deserialize).
  void remove(const Hash256& key);

  const std::string& dir() const { return dir_; }
  uint64_t max_bytes() const { return max_bytes_; }

 private:
  bool prepare_for_writing();  // mkdir, the size counter; false: cannot write
  void add_bytes(int64_t delta);
  void evict();
  uint64_t scan(bool evicting);
  void write_failed(const char* what, int err);

  std::string dir_;
  uint64_t max_bytes_;
  std::mutex mutex_;  // guards the fields below
  bool prepared_ = false, writable_ = false, warned_ = false;
  int counter_fd_ = -1;
  uint64_t* counter_ = nullptr;  // bytes in the directory: shared mapping, or local_bytes_
  uint64_t local_bytes_ = 0;
  void* counter_map_ = nullptr;
};

// The driver build: the GNU build-id of the loaded libcoopvk_icd.so, else its path, size and
// modification time; with the driver version. Different for every build that can make
// different code. Empty when neither can be found (the disk cache is then off).
const std::string& driver_build_id();

// "1048576", "64K", "512M", "1G" (binary units) -> bytes; false when malformed or zero.
bool parse_byte_size(const char* text, uint64_t* bytes);

}  // namespace coopvk
