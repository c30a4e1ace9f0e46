// compile_compute: lowering -> LLVM optimization -> ORC LLJIT for the host CPU, and the
// (de)serialization of compiled shaders for VkPipelineCache.
#include "coopvk/jit/compiler.h"

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/ExecutionEngine/Orc/ObjectTransformLayer.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/TargetParser/Host.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/raw_ostream.h>

#include "coopvk/kernels/cpu_dispatch.h"
#include "lower/expand_divisions.h"
#include "lower/lowerer.h"
#include "coopmat/pair_muladds.h"
#include "runtime/runtime_symbols.h"
#include "spirv/spirv_enums.h"
#include "perf_map.h"
#include "spirv/loop_close.h"
#include "spirv/nv_cooperative_matrix.h"
#include "spirv/inline_calls.h"
#include "spirv/simplify_cfg.h"
#include "spirv/ssa_promote.h"
#include "width/subgroup_width.h"

namespace coopvk::jit {

namespace {

void init_llvm() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    // Large cooperative matrices are long runs of vector loads and stores in one block, and
    // the machine scheduler's dependence maps grow quadratically in a region's memory
    // operations past this bound (LLVM's default 1000): a 256x256x256 multiply-add spent
    // three quarters of its 39 s compile building them. 400 keeps ordinary loop bodies
    // whole and cut that compile to 13 s (llc-19 on the dumped IR, Zen 5).
    auto& opts = llvm::cl::getRegisteredOptions();
    if (auto it = opts.find("dag-maps-huge-region"); it != opts.end())
      if (auto* o = static_cast<llvm::cl::opt<unsigned>*>(it->second); o->getNumOccurrences() == 0) o->setValue(400);
  });
}

}  // namespace

std::string host_code_signature() {
  // LLVM's part is fixed for the process; the kernels' arch and features may be changed by
  // tests (force_kernel_arch, restrict_cpu_features), so they are read every time.
  static const std::string llvm_part = [] {
    std::string sig = "llvm " LLVM_VERSION_STRING ";" + llvm::sys::getHostCPUName().str();
    for (const auto& f : llvm::sys::getHostCPUFeatures())
      if (f.second) sig += "," + f.first().str();
    return sig;
  }();
  return llvm_part + ";kernels=" + std::to_string(int(kernels::active_kernel_arch())) + "/" +
         std::to_string(kernels::active_cpu_features()) + ";abi=" + std::to_string(kRuntimeAbi);
}

namespace {

// Defines the runtime symbols (runtime_symbols.h) a module asks for, by name.
class RuntimeSymbolGenerator : public llvm::orc::DefinitionGenerator {
 public:
  llvm::Error tryToGenerate(llvm::orc::LookupState&, llvm::orc::LookupKind, llvm::orc::JITDylib& jd,
                            llvm::orc::JITDylibLookupFlags, const llvm::orc::SymbolLookupSet& symbols) override {
    llvm::orc::SymbolMap found;
    for (const auto& [name, flags] : symbols) {
      (void)flags;
      if (void* addr = runtime_symbol_address((*name).str()))
        found[name] = {llvm::orc::ExecutorAddr::fromPtr(addr), llvm::JITSymbolFlags::Exported};
    }
    if (found.empty()) return llvm::Error::success();
    return jd.define(llvm::orc::absoluteSymbols(std::move(found)));
  }
};

struct JitHolder {
  std::unique_ptr<llvm::orc::LLJIT> jit;
};

llvm::Expected<std::unique_ptr<llvm::orc::LLJIT>> make_jit(std::vector<uint8_t>* object_out) {
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb) return jtmb.takeError();
  jtmb->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  auto j = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(*jtmb)).create();
  if (!j) return j.takeError();
  llvm::orc::LLJIT& J = **j;
  // Runtime entry points the generated code calls (runtime_symbols.h); they are hidden in
  // this library, so they are defined by address, resolved by name at link time.
  J.getMainJITDylib().addGenerator(std::make_unique<RuntimeSymbolGenerator>());
  // libm for math intrinsics that become calls (sinf, powf, ...).
  auto gen = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(J.getDataLayout().getGlobalPrefix());
  if (!gen) return gen.takeError();
  J.getMainJITDylib().addGenerator(std::move(*gen));
  add_perf_map_listing(J);
  if (object_out) {
    J.getObjTransformLayer().setTransform(
        [object_out](std::unique_ptr<llvm::MemoryBuffer> obj) -> llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> {
          object_out->assign(obj->getBufferStart(), obj->getBufferEnd());
          return obj;
        });
  }
  return j;
}

// COOPVK_DUMP_IR=<dir>: write each compiled shader's LLVM IR before and after
// optimization (N.lowered.ll, N.optimized.ll) and the object file it linked (N.o, for
// llvm-objdump beside a COOPVK_PERF_MAP profile), for looking at what the JIT makes of it.
thread_local unsigned dump_id = 0;
std::string dump_path(const char* suffix) {
  const char* dir = std::getenv("COOPVK_DUMP_IR");
  if (!dir || !*dir) return {};
  return std::string(dir) + "/" + std::to_string(dump_id) + "." + suffix;
}
void dump_ir(const llvm::Module& mod, const char* stage) {
  static std::atomic<unsigned> counter{0};
  if (std::strcmp(stage, "lowered") == 0) dump_id = counter++;
  std::string path = dump_path((std::string(stage) + ".ll").c_str());
  if (path.empty()) return;
  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec, llvm::sys::fs::OF_Text);
  if (!ec) mod.print(out, nullptr);
}

// No sanitizer pass runs here, so under COOPVK_TSAN the shader code itself is not checked
// for races (README, "ThreadSanitizer"): LLVM's ThreadSanitizerPass instruments only plain
// loads and stores of 1 to 16 bytes, atomics and mem intrinsics, while most of this JIT's
// buffer and workgroup-memory accesses are llvm.masked.* loads, stores, gathers and
// scatters, or plain accesses to whole subgroup vectors wider than 16 bytes, all of which
// the pass leaves alone: it would check an arbitrary remainder (uniform scalar accesses).
void optimize(llvm::Module& mod, llvm::TargetMachine* tm) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2).run(mod, mam);
}

// Links the kernel (the lookup is what makes ORC compile) and packages the result.
// `object` is where make_jit's transform captured the object file, now filled.
CompileResult finish(std::unique_ptr<llvm::orc::LLJIT> j, CompiledShader meta,
                     std::vector<uint8_t>* object) {
  CompileResult out;
  auto sym = j->lookup(Lowerer::kKernelName);
  if (!sym) {
    out.error = "JIT link failed: " + llvm::toString(sym.takeError());
    return out;
  }
  if (object) {
    if (std::string path = dump_path("o"); !path.empty())
      if (FILE* f = std::fopen(path.c_str(), "wb")) {
        std::fwrite(object->data(), 1, object->size(), f);
        std::fclose(f);
      }
    meta.object_code = std::move(*object);
  }
  auto shader = std::make_unique<CompiledShader>(std::move(meta));
  shader->fn = sym->toPtr<SubgroupFn>();
  if (auto range = j->lookup(Lowerer::kRangeName)) shader->range_fn = range->toPtr<WorkgroupRangeFn>();
  else llvm::consumeError(range.takeError());  // a shader with barriers or workgroup memory has none
  auto holder = std::make_shared<JitHolder>();
  holder->jit = std::move(j);
  shader->keep_alive = holder;
  out.shader = std::move(shader);
  return out;
}

}  // namespace

bool subgroup_size_from_environment() {
  static const bool set = [] {
    const char* env = std::getenv("COOPVK_SUBGROUP_SIZE");
    return env && *env;
  }();
  return set;
}

uint32_t default_subgroup_size() {
  static const uint32_t size = [] {
    // COOPVK_SUBGROUP_SIZE: run (and report) another width, e.g. 16 or 32 on an AVX2
    // machine, to test code the way it runs on other hosts or GPUs.
    if (const char* env = std::getenv("COOPVK_SUBGROUP_SIZE")) {
      char* end = nullptr;
      unsigned long v = std::strtoul(env, &end, 10);
      if (end != env && *end == '\0' && v >= kMinSubgroupSize && v <= kMaxSubgroupSize && !(v & (v - 1)))
        return static_cast<uint32_t>(v);
      std::fprintf(stderr, "coopvk: COOPVK_SUBGROUP_SIZE=%s is not a power of two in [4, 64]; ignored\n", env);
    }
    // Not always the host's natural width (16 with AVX-512, 8 with AVX2, 4 with SSE):
    // code written for GPUs assumes a subgroup of 32 or more, or special-cases 8 (as
    // lavapipe reports on most CPUs), and some of it breaks in between. llama.cpp's
    // ggml-vulkan is one: its small matrix-multiply tiles at subgroup size 16 (or 4) give
    // two warps a workgroup's whole tile each, and the second writes into its neighbour's
    // output (see README). AVX-512 therefore runs 32 lanes (two registers per value),
    // everything else 8.
    auto f = llvm::sys::getHostCPUFeatures();
    if (f.lookup("avx512f")) return 32u;
    return 8u;
  }();
  return size;
}

namespace {

// One lowering of the prepared module at one subgroup width, with its metadata.
struct Lowered {
  // Declared first so that it goes last: a module must not outlive its context.
  std::unique_ptr<llvm::LLVMContext> ctx;
  std::unique_ptr<llvm::Module> mod;
  CompiledShader meta;
};

Lowered lower_at(const Module& prepared, const CompileOptions& options, uint32_t width) {
  Lowered l;
  l.ctx = std::make_unique<llvm::LLVMContext>();
  CompileOptions at = options;
  at.subgroup_size = width;
  Lowerer lowerer(prepared, at, *l.ctx);
  l.mod = lowerer.lower();
  expand_uniform_divisions(*l.mod);
  CompiledShader& meta = l.meta;
  for (int k = 0; k < 3; ++k) meta.local_size[k] = lowerer.local_size[k];
  meta.subgroup_size = lowerer.N;
  uint32_t inv = meta.local_size[0] * meta.local_size[1] * meta.local_size[2];
  meta.subgroups_per_workgroup = (inv + lowerer.N - 1) / lowerer.N;
  meta.shared_memory_bytes = lowerer.shared_memory_bytes;
  meta.uses_workgroup_barrier = lowerer.uses_barrier;
  meta.needs_fiber_stack = lowerer.coopvec_frame_bytes > Lowerer::kThreadStackFrameBytes;
  meta.interleaves_subgroups = lowerer.interleaves_subgroups;
  meta.walks_tile_cache = lowerer.walks_tile_cache;
  meta.pack_sites = lowerer.pack_sites;
  return l;
}

// The LLVM pipeline on a lowered module, for the host CPU.
void optimize_for_host(Lowered& l, llvm::TargetMachine* tm) {
  l.mod->setDataLayout(tm->createDataLayout());
  l.mod->setTargetTriple(tm->getTargetTriple().str());
  dump_ir(*l.mod, "lowered");
  optimize(*l.mod, tm);
  pair_muladds(*l.mod);
  dump_ir(*l.mod, "optimized");
}

}  // namespace

CompileResult compile_compute(const Module& module, const CompileOptions& options) {
  init_llvm();
  CompileResult out;
  uint32_t sg = options.subgroup_size ? options.subgroup_size : default_subgroup_size();
  if (sg < kMinSubgroupSize || sg > kMaxSubgroupSize || (sg & (sg - 1))) {
    out.error = "subgroup size " + std::to_string(sg) + " is not a power of two in [4, 64]";
    return out;
  }
  auto tmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  std::unique_ptr<llvm::TargetMachine> tm;
  if (tmb) {
    tmb->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
    if (auto m = tmb->createTargetMachine()) tm = std::move(*m);
    else llvm::consumeError(m.takeError());
  } else {
    llvm::consumeError(tmb.takeError());
  }
  Lowered l;
  try {
    // Passes on the module before lowering work on a copy: the application's module is
    // shared by every pipeline made from it.
    Module prepared = module;
    for (uint32_t cap : module.capabilities)
      if (cap == uint32_t(spv::Capability::CooperativeMatrixNV)) rewrite_nv_cooperative_matrix(prepared);
    for (const EntryPoint& e : module.entry_points)
      if (e.name == options.entry_point && e.execution_model == uint32_t(spv::ExecutionModel::GLCompute)) {
        inline_calls(prepared);
        promote_variables_to_ssa(prepared, e.function);
        simplify_cfg(prepared, options.specialization);
        close_loops(prepared);
      }
    l = lower_at(prepared, options, sg);
    if (tm) {
      optimize_for_host(l, tm.get());
      // A width the application did not ask for and the shader cannot observe: narrower
      // when the loops carry more than the registers hold (width/subgroup_width.h).
      // COOPVK_SUBGROUP_SIZE pins every pipeline's width.
      if (!options.subgroup_size && !subgroup_size_from_environment() && !subgroup_width_observable(module)) {
        uint32_t carried = loop_carried_vector_registers(*l.mod, natural_subgroup_width() * 32);
        if (uint32_t narrow = narrower_subgroup_width(sg, carried)) {
          l.mod.reset();  // before its context goes
          l = lower_at(prepared, options, narrow);
          optimize_for_host(l, tm.get());
        }
      }
    }
  } catch (const LowerError& e) {
    out.error = e.what();
    return out;
  } catch (const std::exception& e) {
    out.error = std::string("malformed module: ") + e.what();
    return out;
  }
  auto object = std::make_unique<std::vector<uint8_t>>();
  auto j = make_jit(object.get());
  if (!j) {
    out.error = "cannot create the JIT: " + llvm::toString(j.takeError());
    return out;
  }
  if (auto err = (*j)->addIRModule(llvm::orc::ThreadSafeModule(std::move(l.mod), std::move(l.ctx)))) {
    out.error = "JIT rejected the module: " + llvm::toString(std::move(err));
    return out;
  }
  return finish(std::move(*j), std::move(l.meta), object.get());
}

// ---- pipeline-cache form ------------------------------------------------------------------

namespace {
constexpr char kMagic[8] = {'c', 'o', 'o', 'p', 'v', 'k', 'S', '1'};

template <typename T>
void put(std::vector<uint8_t>& b, const T& v) {
  const auto* p = reinterpret_cast<const uint8_t*>(&v);
  b.insert(b.end(), p, p + sizeof(T));
}

struct Reader {
  const uint8_t* p;
  size_t left;
  template <typename T>
  bool get(T* v) {
    if (left < sizeof(T)) return false;
    std::memcpy(v, p, sizeof(T));
    p += sizeof(T);
    left -= sizeof(T);
    return true;
  }
};
}  // namespace

std::vector<uint8_t> serialize(const CompiledShader& s) {
  std::vector<uint8_t> b(kMagic, kMagic + 8);
  std::string sig = host_code_signature();
  put(b, uint32_t(sig.size()));
  b.insert(b.end(), sig.begin(), sig.end());
  for (int k = 0; k < 3; ++k) put(b, s.local_size[k]);
  put(b, s.subgroup_size);
  put(b, s.subgroups_per_workgroup);
  put(b, s.shared_memory_bytes);
  put(b, uint32_t(s.uses_workgroup_barrier));
  put(b, uint32_t(s.needs_fiber_stack));
  put(b, uint32_t(s.interleaves_subgroups));
  put(b, uint32_t(s.walks_tile_cache));
  put(b, s.pack_sites);
  put(b, uint64_t(s.object_code.size()));
  b.insert(b.end(), s.object_code.begin(), s.object_code.end());
  return b;
}

CompileResult deserialize(const uint8_t* data, size_t size) {
  init_llvm();
  CompileResult out;
  Reader r{data, size};
  char magic[8];
  uint32_t sig_len = 0;
  if (!data || size < 12 || (std::memcpy(magic, data, 8), std::memcmp(magic, kMagic, 8) != 0)) {
    out.error = "not a coopvk compiled shader";
    return out;
  }
  r.p += 8;
  r.left -= 8;
  if (!r.get(&sig_len) || sig_len > r.left) {
    out.error = "truncated compiled shader";
    return out;
  }
  std::string sig(reinterpret_cast<const char*>(r.p), sig_len);
  r.p += sig_len;
  r.left -= sig_len;
  if (sig != host_code_signature()) {
    out.error = "compiled for another CPU";
    return out;
  }
  CompiledShader meta;
  uint32_t barrier = 0, fiber_stack = 0, interleaves = 0, walks = 0;
  uint64_t obj_size = 0;
  bool ok = r.get(&meta.local_size[0]) && r.get(&meta.local_size[1]) && r.get(&meta.local_size[2]) &&
            r.get(&meta.subgroup_size) && r.get(&meta.subgroups_per_workgroup) &&
            r.get(&meta.shared_memory_bytes) && r.get(&barrier) && r.get(&fiber_stack) &&
            r.get(&interleaves) && r.get(&walks) && r.get(&meta.pack_sites) && r.get(&obj_size) && obj_size == r.left;
  if (!ok || obj_size == 0 || meta.subgroup_size < kMinSubgroupSize || meta.subgroup_size > kMaxSubgroupSize ||
      meta.subgroups_per_workgroup == 0 || meta.subgroups_per_workgroup > 1024 || meta.shared_memory_bytes > Lowerer::kMaxSharedMemoryBytes ||
      meta.pack_sites > kMaxPackSites) {
    out.error = "malformed compiled shader";
    return out;
  }
  meta.uses_workgroup_barrier = barrier != 0;
  meta.needs_fiber_stack = fiber_stack != 0;
  meta.interleaves_subgroups = interleaves != 0;
  meta.walks_tile_cache = walks != 0;
  meta.object_code.assign(r.p, r.p + obj_size);
  auto j = make_jit(nullptr);
  if (!j) {
    out.error = "cannot create the JIT: " + llvm::toString(j.takeError());
    return out;
  }
  auto buf = llvm::MemoryBuffer::getMemBufferCopy(
      llvm::StringRef(reinterpret_cast<const char*>(meta.object_code.data()), meta.object_code.size()));
  if (auto err = (*j)->addObjectFile(std::move(buf))) {
    out.error = "cached object rejected: " + llvm::toString(std::move(err));
    return out;
  }
  return finish(std::move(*j), std::move(meta), nullptr);
}

}  // namespace coopvk::jit
