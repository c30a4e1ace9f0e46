// The on-disk shader cache (disk_cache.h says what it keeps, where, and how it is bounded).
#include "disk_cache.h"

#include "log.h"

#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

namespace coopvk {
namespace {

constexpr char kCounterName[] = "size-counter";
constexpr uint64_t kCounterMagic = 0x31544e4344564b43ull;  // "CKVDCNT1"
constexpr size_t kNameHexDigits = 64;
constexpr char kTempInfix[] = ".tmp";
// A temporary file this old belongs to a process that died while writing it.
constexpr time_t kStaleTempSeconds = 600;

std::string hex(const uint8_t* p, size_t n) {
  static const char kDigits[] = "0123456789abcdef";
  std::string s(2 * n, '0');
  for (size_t i = 0; i < n; ++i) {
    s[2 * i] = kDigits[p[i] >> 4];
    s[2 * i + 1] = kDigits[p[i] & 15];
  }
  return s;
}

bool is_hex_prefix(const char* name) {
  for (size_t i = 0; i < kNameHexDigits; ++i)
    if (!((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'f'))) return false;
  return true;
}
// An entry: exactly 64 lowercase hex digits.
bool is_entry_name(const char* name) {
  return std::strlen(name) == kNameHexDigits && is_hex_prefix(name);
}
// A temporary file store() writes: an entry name, ".tmp", then the writer's pid and a number.
bool is_temp_name(const char* name) {
  return std::strlen(name) > kNameHexDigits + sizeof(kTempInfix) - 1 && is_hex_prefix(name) &&
         std::strncmp(name + kNameHexDigits, kTempInfix, sizeof(kTempInfix) - 1) == 0;
}

// Reads or writes all of n bytes at offset; false on an error or end of file.
bool pread_all(int fd, void* buf, size_t n, off_t at) {
  auto* p = static_cast<uint8_t*>(buf);
  while (n) {
    ssize_t r = ::pread(fd, p, n, at);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= size_t(r);
    at += r;
  }
  return true;
}
bool write_all(int fd, const void* buf, size_t n) {
  auto* p = static_cast<const uint8_t*>(buf);
  while (n) {
    ssize_t r = ::write(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      if (r == 0) errno = EIO;
      return false;
    }
    p += r;
    n -= size_t(r);
  }
  return true;
}

// mkdir -p with mode 0700 for what it creates (entries are native code this user will run).
bool make_directories(const std::string& dir) {
  for (size_t at = 1; at <= dir.size(); ++at) {
    if (at < dir.size() && dir[at] != '/') continue;
    std::string part = dir.substr(0, at);
    if (::mkdir(part.c_str(), 0700) != 0 && errno != EEXIST) return false;
  }
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) return false;
  if (!S_ISDIR(st.st_mode)) {
    errno = ENOTDIR;
    return false;
  }
  return true;
}

// Environment problems are reported once per process, not at every device.
void report_env_once(std::atomic<bool>& done, const char* fmt, const char* value) {
  if (!done.exchange(true)) std::fprintf(stderr, fmt, value);
}

struct Counter {
  uint64_t magic;
  uint64_t bytes;
};

// Serializes the shared size counter between processes (flock) for the lifetime of a scope.
struct FileLock {
  int fd;
  explicit FileLock(int f) : fd(f) {
    if (fd >= 0)
      while (::flock(fd, LOCK_EX) != 0 && errno == EINTR) {
      }
  }
  ~FileLock() {
    if (fd >= 0) ::flock(fd, LOCK_UN);
  }
};

// ---- the driver build ----------------------------------------------------------------------

struct BuildIdSearch {
  uintptr_t address;  // an address inside this library
  std::string id;     // hex of its NT_GNU_BUILD_ID note
};

int find_build_id(dl_phdr_info* info, size_t, void* data) {
  auto* s = static_cast<BuildIdSearch*>(data);
  bool mine = false;
  for (int i = 0; i < info->dlpi_phnum && !mine; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
    mine = ph.p_type == PT_LOAD && s->address >= begin && s->address < begin + ph.p_memsz;
  }
  if (!mine) return 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    auto* p = reinterpret_cast<const uint8_t*>(info->dlpi_addr + ph.p_vaddr);
    size_t left = ph.p_memsz;
    while (left >= sizeof(ElfW(Nhdr))) {
      ElfW(Nhdr) n;
      std::memcpy(&n, p, sizeof(n));
      size_t name_bytes = (n.n_namesz + 3) & ~size_t(3), desc_bytes = (n.n_descsz + 3) & ~size_t(3);
      if (sizeof(n) + name_bytes + desc_bytes > left) break;
      const uint8_t* name = p + sizeof(n);
      if (n.n_type == NT_GNU_BUILD_ID && n.n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0 && n.n_descsz) {
        s->id = hex(name + name_bytes, n.n_descsz);
        return 1;
      }
      p += sizeof(n) + name_bytes + desc_bytes;
      left -= sizeof(n) + name_bytes + desc_bytes;
    }
  }
  return 1;  // this library, without a build-id
}

}  // namespace

const std::string& driver_build_id() {
  static const std::string id = [] {
    std::string s = "coopvk " COOPVK_VERSION_STRING;
    BuildIdSearch search{reinterpret_cast<uintptr_t>(&driver_build_id), {}};
    dl_iterate_phdr(find_build_id, &search);
    if (!search.id.empty()) return s + " build-id " + search.id;
    // Linked without --build-id: the library file itself stands for the build.
    Dl_info info;
    struct stat st;
    if (dladdr(reinterpret_cast<void*>(&driver_build_id), &info) && info.dli_fname &&
        ::stat(info.dli_fname, &st) == 0)
      return s + " file " + info.dli_fname + " " + std::to_string(st.st_size) + " " +
             std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
    return std::string();  // unknown: the disk cache stays off
  }();
  return id;
}

bool parse_byte_size(const char* text, uint64_t* bytes) {
  if (!text || !(*text >= '0' && *text <= '9')) return false;
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(text, &end, 10);
  if (errno) return false;
  unsigned shift = 0;
  switch (*end) {
    case '\0': break;
    case 'k': case 'K': shift = 10; ++end; break;
    case 'm': case 'M': shift = 20; ++end; break;
    case 'g': case 'G': shift = 30; ++end; break;
    default: return false;
  }
  if (*end != '\0' || v == 0 || v > (~0ull >> shift)) return false;
  *bytes = uint64_t(v) << shift;
  return true;
}

std::shared_ptr<DiskCache> DiskCache::from_environment() {
  static std::atomic<bool> bad_switch{false}, bad_size{false};
  if (const char* on = std::getenv("COOPVK_CACHE")) {
    if (std::strcmp(on, "0") == 0) return nullptr;
    if (std::strcmp(on, "1") != 0)
      report_env_once(bad_switch, "coopvk: COOPVK_CACHE=%s is not 0 or 1; the disk cache stays on\n", on);
  }
  if (driver_build_id().empty()) {
    COOPVK_INFO("disk cache: this driver's build cannot be identified (no build-id, no library file); off");
    return nullptr;
  }
  std::string dir;
  const char* env_dir = std::getenv("COOPVK_CACHE_DIR");
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  if (env_dir && *env_dir) dir = env_dir;
  else if (xdg && xdg[0] == '/') dir = std::string(xdg) + "/coopvk/shaders";  // relative: invalid (XDG)
  else if (home && *home) dir = std::string(home) + "/.cache/coopvk/shaders";
  else {
    COOPVK_INFO("disk cache: neither COOPVK_CACHE_DIR, XDG_CACHE_HOME nor HOME is set; off");
    return nullptr;
  }
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  uint64_t max = kDiskCacheDefaultMaxBytes;
  if (const char* size = std::getenv("COOPVK_CACHE_MAX_SIZE"); size && !parse_byte_size(size, &max)) {
    max = kDiskCacheDefaultMaxBytes;
    report_env_once(bad_size,
                    "coopvk: COOPVK_CACHE_MAX_SIZE=%s is not a size in bytes (or with K, M, G); "
                    "using 1G\n", size);
  }
  return std::make_shared<DiskCache>(std::move(dir), max);
}

DiskCache::DiskCache(std::string dir, uint64_t max_bytes) : dir_(std::move(dir)), max_bytes_(max_bytes) {}

DiskCache::~DiskCache() {
  if (counter_fd_ >= 0) ::close(counter_fd_);
}

Hash256 DiskCache::entry_key(const Hash256& pipeline_key, const std::string& code_signature) {
  Sha256 h;
  const char tag[] = "coopvk disk cache entry v1";
  h.update(tag, sizeof(tag));
  h.update(pipeline_key.data(), pipeline_key.size());
  const std::string& build = driver_build_id();
  h.update(build.c_str(), build.size() + 1);
  h.update(code_signature.c_str(), code_signature.size() + 1);
  return h.finish();
}

std::string DiskCache::file_name(const Hash256& key) { return hex(key.data(), key.size()); }

std::vector<uint8_t> DiskCache::load(const Hash256& key) {
  const std::string name = file_name(key);
  const std::string path = dir_ + "/" + name;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return {};  // a miss (or unreadable, which is the same to the caller)
  std::vector<uint8_t> payload;
  const char* why = nullptr;
  bool removable = true;
  struct stat st;
  DiskCacheHeader h;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    why = "not a regular file";
    removable = false;
  } else if (st.st_uid != ::geteuid() && st.st_uid != 0) {
    // Not trusted: native code another user could have planted in a shared directory.
    // Root's are (root can change this user's files anyway), so an image's cache prepared
    // by root serves its users.
    why = "written by another user";
    removable = false;
  } else if (uint64_t(st.st_size) > max_bytes_) {
    why = "larger than the cache's bound";  // never written so: not read into memory either
  } else if (uint64_t(st.st_size) < sizeof(h) || !pread_all(fd, &h, sizeof(h), 0)) {
    why = "shorter than its header";
  } else if (std::memcmp(h.magic, kDiskCacheMagic, sizeof(h.magic)) != 0) {
    why = "not a coopvk cache entry";
  } else if (h.format != kDiskCacheFormat || h.header_bytes != sizeof(h)) {
    why = "another entry format";
  } else if (std::memcmp(h.key, key.data(), key.size()) != 0) {
    why = "the key in its header is another";
  } else if (h.payload_bytes != uint64_t(st.st_size) - sizeof(h)) {
    why = "truncated or padded (the size in its header disagrees)";
  } else {
    payload.resize(h.payload_bytes);
    if (!pread_all(fd, payload.data(), payload.size(), sizeof(h))) {
      why = "unreadable";
      removable = false;
    } else {
      Sha256 sum;
      sum.update(payload.data(), payload.size());
      if (std::memcmp(sum.finish().data(), h.payload_sha256, 32) != 0) why = "its checksum does not match";
    }
  }
  if (why) {
    ::close(fd);
    COOPVK_INFO("disk cache: ignoring entry %s in %s: %s; compiling instead", name.c_str(), dir_.c_str(), why);
    if (removable && ::unlink(path.c_str()) == 0) add_bytes(-int64_t(st.st_size));
    return {};
  }
  ::futimens(fd, nullptr);  // recently used: evicted last
  ::close(fd);
  return payload;
}

void DiskCache::remove(const Hash256& key) {
  const std::string path = dir_ + "/" + file_name(key);
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == ::geteuid() &&
      ::unlink(path.c_str()) == 0)
    add_bytes(-int64_t(st.st_size));
}

void DiskCache::write_failed(const char* what, int err) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (warned_) return;
  warned_ = true;
  COOPVK_WARN("disk cache: %s in %s: %s; compiled pipelines are not kept on disk", what, dir_.c_str(),
              std::strerror(err));
}

bool DiskCache::prepare_for_writing() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (prepared_) return writable_;
  prepared_ = true;
  if (!make_directories(dir_)) {
    int err = errno;
    lock.unlock();
    write_failed("cannot create the directory", err);
    return false;
  }
  writable_ = true;
  const std::string path = dir_ + "/" + kCounterName;
  counter_fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (counter_fd_ < 0) {
    // No shared counter (a file of that name that is not ours?): count this process's writes
    // on top of what is there now.
    local_bytes_ = scan(false);
    return true;
  }
  FileLock file_lock(counter_fd_);
  Counter c{};
  if (!pread_all(counter_fd_, &c, sizeof(c), 0) || c.magic != kCounterMagic) {
    // A new directory, or one whose counter was lost: start from the truth.
    c = {kCounterMagic, scan(false)};
    if (::pwrite(counter_fd_, &c, sizeof(c), 0) != ssize_t(sizeof(c))) {
      ::close(counter_fd_);
      counter_fd_ = -1;
      local_bytes_ = c.bytes;
    }
  }
  return true;
}

void DiskCache::add_bytes(int64_t delta) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!prepared_ || !writable_) return;  // nothing written by this process yet: no counter
  FileLock file_lock(counter_fd_);  // held through an eviction: one process evicts at a time
  uint64_t now;
  if (counter_fd_ < 0) {
    local_bytes_ = delta < 0 && uint64_t(-delta) > local_bytes_ ? 0 : local_bytes_ + delta;
    now = local_bytes_;
  } else {
    Counter c{};
    if (!pread_all(counter_fd_, &c, sizeof(c), 0) || c.magic != kCounterMagic) c = {kCounterMagic, scan(false)};
    else c.bytes = delta < 0 && uint64_t(-delta) > c.bytes ? 0 : c.bytes + delta;
    now = c.bytes;
    (void)!::pwrite(counter_fd_, &c, sizeof(c), 0);
  }
  if (delta > 0 && now > max_bytes_) evict();
}

// With mutex_ held (and the counter's file lock, when there is one).
void DiskCache::evict() {
  uint64_t total = scan(true);
  if (counter_fd_ < 0) {
    local_bytes_ = total;
  } else {
    Counter c{kCounterMagic, total};
    (void)!::pwrite(counter_fd_, &c, sizeof(c), 0);
  }
}

// Sums the sizes of the entries (and of temporary files still being written), removing
// temporary files of dead writers. Evicting, and over the bound: removes the least recently
// used entries until the total is at most 90% of the bound. Returns the total left.
uint64_t DiskCache::scan(bool evicting) {
  DIR* d = ::opendir(dir_.c_str());
  if (!d) return 0;
  struct Entry {
    timespec mtime;
    uint64_t bytes;
    std::string name;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  const time_t now = ::time(nullptr);
  const int dfd = ::dirfd(d);
  while (dirent* e = ::readdir(d)) {
    const bool entry = is_entry_name(e->d_name);
    if (!entry && !is_temp_name(e->d_name)) continue;  // not ours: never touched
    struct stat st;
    if (::fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
    if (!entry && now - st.st_mtim.tv_sec > kStaleTempSeconds) {
      ::unlinkat(dfd, e->d_name, 0);
      continue;
    }
    total += uint64_t(st.st_size);
    if (entry) entries.push_back({st.st_mtim, uint64_t(st.st_size), e->d_name});
  }
  if (evicting && total > max_bytes_) {
    std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
      return a.mtime.tv_sec != b.mtime.tv_sec ? a.mtime.tv_sec < b.mtime.tv_sec : a.mtime.tv_nsec < b.mtime.tv_nsec;
    });
    const uint64_t target = max_bytes_ / 10 * 9, before = total;
    size_t removed = 0;
    for (const Entry& e : entries) {
      if (total <= target) break;
      if (::unlinkat(dfd, e.name.c_str(), 0) == 0 || errno == ENOENT) {
        total -= e.bytes;
        ++removed;
      }
    }
    COOPVK_INFO("disk cache: over %llu bytes; evicted %zu least recently used entries (%llu bytes), %llu left in %s",
                static_cast<unsigned long long>(max_bytes_), removed,
                static_cast<unsigned long long>(before - total), static_cast<unsigned long long>(total),
                dir_.c_str());
  }
  ::closedir(d);
  return total;
}

void DiskCache::store(const Hash256& key, const std::vector<uint8_t>& payload) {
  // An entry larger than the bound would only evict everything, itself last.
  if (payload.empty() || sizeof(DiskCacheHeader) + payload.size() > max_bytes_ || !prepare_for_writing()) return;
  DiskCacheHeader h{};
  std::memcpy(h.magic, kDiskCacheMagic, sizeof(h.magic));
  h.format = kDiskCacheFormat;
  h.header_bytes = sizeof(h);
  std::memcpy(h.key, key.data(), key.size());
  h.payload_bytes = payload.size();
  Sha256 sum;
  sum.update(payload.data(), payload.size());
  const Hash256 digest = sum.finish();
  std::memcpy(h.payload_sha256, digest.data(), digest.size());

  // A name no other writer uses (pid, and a number unique in this process), in the same
  // directory, so the rename is atomic: readers see the old file, the new one or none.
  static std::atomic<uint64_t> sequence{0};
  const std::string name = file_name(key);
  const std::string path = dir_ + "/" + name;
  const std::string temp = path + kTempInfix + std::to_string(::getpid()) + "." + std::to_string(sequence++);
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    write_failed("cannot create an entry", errno);
    return;
  }
  bool ok = write_all(fd, &h, sizeof(h)) && write_all(fd, payload.data(), payload.size());
  int err = errno;
  if (::close(fd) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (ok && ::rename(temp.c_str(), path.c_str()) != 0) {
    ok = false;
    err = errno;
  }
  if (!ok) {
    ::unlink(temp.c_str());
    write_failed("cannot write an entry", err);
    return;
  }
  COOPVK_DEBUG("disk cache: stored %s (%zu bytes)", name.c_str(), payload.size());
  add_bytes(int64_t(sizeof(h) + payload.size()));
}

}  // namespace coopvk
