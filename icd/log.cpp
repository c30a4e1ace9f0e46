#include "log.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace coopvk {
namespace {

LogLevel read_level() {
  const char* env = std::getenv("COOPVK_LOG");
  if (!env) return LogLevel::Error;
  static const struct { const char* name; LogLevel level; } kNames[] = {
      {"none", LogLevel::None}, {"error", LogLevel::Error}, {"warn", LogLevel::Warn},
      {"info", LogLevel::Info}, {"debug", LogLevel::Debug}};
  for (const auto& n : kNames)
    if (std::strcmp(env, n.name) == 0) return n.level;
  std::fprintf(stderr, "coopvk: COOPVK_LOG=%s is not one of none|error|warn|info|debug\n", env);
  return LogLevel::Error;
}

LogLevel current_level() {
  static const LogLevel level = read_level();
  return level;
}

}  // namespace

bool log_enabled(LogLevel level) { return level <= current_level(); }

void log_message(LogLevel level, const char* fmt, ...) {
  if (!log_enabled(level)) return;
  static const char* const kTags[] = {"", "error", "warn", "info", "debug"};
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  static std::mutex mutex;  // keep lines from different threads whole
  std::lock_guard<std::mutex> lock(mutex);
  std::fprintf(stderr, "coopvk %s: %s\n", kTags[static_cast<int>(level)], buf);
}

}  // namespace coopvk
