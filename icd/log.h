// Driver log: errors always reach stderr (a failed call must say why); COOPVK_LOG raises
// the level (error, warn, info, debug) or silences it (none).
#pragma once

namespace coopvk {

enum class LogLevel { None = 0, Error = 1, Warn = 2, Info = 3, Debug = 4 };

bool log_enabled(LogLevel level);
void log_message(LogLevel level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

}  // namespace coopvk

#define COOPVK_ERROR(...) ::coopvk::log_message(::coopvk::LogLevel::Error, __VA_ARGS__)
#define COOPVK_WARN(...) ::coopvk::log_message(::coopvk::LogLevel::Warn, __VA_ARGS__)
#define COOPVK_INFO(...) ::coopvk::log_message(::coopvk::LogLevel::Info, __VA_ARGS__)
#define COOPVK_DEBUG(...) ::coopvk::log_message(::coopvk::LogLevel::Debug, __VA_ARGS__)
