// add_perf_map_listing: see perf_map.h.
#include "perf_map.h"

#include <llvm/ExecutionEngine/JITLink/JITLink.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ObjectLinkingLayer.h>

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <mutex>
#include <utility>
#include <vector>

namespace coopvk::jit {

namespace {

bool enabled() {
  static const bool on = [] {
    const char* env = std::getenv("COOPVK_PERF_MAP");
    return env && *env && std::strcmp(env, "0") != 0;
  }();
  return on;
}

// One line per defined function: "START SIZE NAME" in hex, perf's format
// (tools/perf/Documentation/jit-interface.txt). Names get the link's number, since every
// shader has a coopvk_subgroup_main.
class PerfMapPlugin : public llvm::orc::ObjectLinkingLayer::Plugin {
 public:
  void modifyPassConfig(llvm::orc::MaterializationResponsibility&, llvm::jitlink::LinkGraph&,
                        llvm::jitlink::PassConfiguration& config) override {
    config.PostFixupPasses.push_back([](llvm::jitlink::LinkGraph& g) {
      static std::atomic<unsigned> links{0};
      static std::mutex file_mutex;
      const unsigned n = links++;
      std::lock_guard<std::mutex> lock(file_mutex);
      char path[64];
      std::snprintf(path, sizeof(path), "/tmp/perf-%d.map", int(getpid()));
      if (FILE* f = std::fopen(path, "a")) {
        // Every named function, and the code between them under the section's name: the
        // shader's internal functions reach the linker without symbols of their own.
        for (llvm::jitlink::Section& sec : g.sections()) {
          if ((unsigned(sec.getMemProt()) & unsigned(llvm::orc::MemProt::Exec)) == 0) continue;
          std::vector<std::pair<uint64_t, uint64_t>> named;  // start, size
          for (llvm::jitlink::Symbol* s : sec.symbols())
            if (s->isDefined() && s->getSize() && s->hasName()) {
              named.push_back({s->getAddress().getValue(), s->getSize()});
              std::fprintf(f, "%llx %llx coopvk#%u:%s\n", (unsigned long long)named.back().first,
                           (unsigned long long)named.back().second, n, s->getName().str().c_str());
            }
          std::sort(named.begin(), named.end());
          for (llvm::jitlink::Block* blk : sec.blocks()) {
            uint64_t at = blk->getAddress().getValue(), end = at + blk->getSize();
            for (const auto& [s, size] : named) {
              if (s + size <= at || s >= end) continue;
              if (s > at)
                std::fprintf(f, "%llx %llx coopvk#%u:internal\n", (unsigned long long)at,
                             (unsigned long long)(s - at), n);
              at = std::max(at, s + size);
            }
            if (end > at)
              std::fprintf(f, "%llx %llx coopvk#%u:internal\n", (unsigned long long)at, (unsigned long long)(end - at), n);
          }
        }
        std::fclose(f);
      }
      return llvm::Error::success();
    });
  }
  llvm::Error notifyFailed(llvm::orc::MaterializationResponsibility&) override { return llvm::Error::success(); }
  llvm::Error notifyRemovingResources(llvm::orc::JITDylib&, llvm::orc::ResourceKey) override {
    return llvm::Error::success();
  }
  void notifyTransferringResources(llvm::orc::JITDylib&, llvm::orc::ResourceKey, llvm::orc::ResourceKey) override {}
};

}  // namespace

void add_perf_map_listing(llvm::orc::LLJIT& jit) {
  if (!enabled()) return;
  if (auto* oll = llvm::dyn_cast<llvm::orc::ObjectLinkingLayer>(&jit.getObjLinkingLayer()))
    oll->addPlugin(std::make_unique<PerfMapPlugin>());
  else
    std::fprintf(stderr, "coopvk: COOPVK_PERF_MAP: this JIT does not link with JITLink; no map written\n");
}

}  // namespace coopvk::jit
