// Per-lane accesses at a lane pattern known when the shader is compiled (Lowerer::Affine
// with per-lane offsets) as whole 64-byte register accesses and lane permutes, instead of a
// gather or scatter per component: a vec4 per invocation, ggml's 8 * (l / 4) + l % 4, or a
// staging copy in which each row of a tile is a run of invocations copying 16 bytes each
// (vk_cooperative_matrix_perf's and ggml's global -> shared copies: 4 invocations per
// 64-byte row, rows a buffer stride apart).
//
// The lanes' bytes are grouped into windows: runs of nearby offsets, each at most a page
// (so every byte of a window's padding lies in the page of a byte some lane reads) and
// together at most sixteen times what the lanes access. A load reads each window whole
// (masked where lanes are inactive or the padding leaves the page) and picks every lane's
// components out of the registers; a store assembles each window register from the lanes'
// components and writes it under the mask of the elements some active lane writes, so
// nothing else in memory is touched.
#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include <llvm/IR/Constants.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/MDBuilder.h>

#include "lower/lowerer.h"
#include "spirv/spirv_enums.h"

namespace coopvk::jit {

namespace {

// Where each lane's components lie in the windows' registers, laid end to end.
struct WindowPlan {
  struct Window {
    int64_t coef = 0;    // the row: the run-time term's coefficient (Affine::coef), 0 without one
    int64_t lo = 0;      // byte offset of its first element, from the pattern's base (and row)
    uint64_t used = 0;   // elements from the first to the last one accessed
    uint64_t padded = 0; // used, rounded up to whole registers
    uint64_t first = 0;  // index of its first element in the registers
  };
  std::vector<Window> windows;
  uint64_t elements = 0;  // in all registers
  // element(l, i): lane l's component i.
  std::vector<uint64_t> lane_first;  // element of component 0 per lane
  uint64_t element(uint32_t l, uint64_t i) const { return lane_first[l] + i; }
};

// Lane l accesses c elements of esz bytes from off[l] (+ coef[l] x the run-time scale where
// coef is given: lanes of one coefficient form a row, each row its own windows).
std::optional<WindowPlan> plan_windows(const std::vector<int64_t>& off, const std::vector<int64_t>& coef,
                                       uint64_t esz, uint64_t c, uint32_t N) {
  if (esz == 0) return std::nullopt;
  const uint64_t piece = std::max<uint64_t>(1, 64 / esz);
  auto row = [&](uint32_t l) { return coef.empty() ? int64_t(0) : coef[l]; };
  // (row, offset) pairs, rows in the order lanes first reach them.
  std::vector<int64_t> rows;
  std::vector<std::pair<size_t, int64_t>> starts;
  for (uint32_t l = 0; l < N; ++l) {
    if (off[l] % int64_t(esz) != 0) return std::nullopt;
    auto it = std::find(rows.begin(), rows.end(), row(l));
    if (it == rows.end()) it = rows.insert(rows.end(), row(l));
    starts.emplace_back(size_t(it - rows.begin()), off[l]);
  }
  std::sort(starts.begin(), starts.end());
  starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
  const int64_t bytes = int64_t(c * esz);
  WindowPlan p;
  std::map<std::pair<size_t, int64_t>, size_t> window_of;
  int64_t end = 0;
  for (const auto& [r, o] : starts) {
    // Joined to the current window when in the same row, the gap is under a register and the
    // window stays within a page; otherwise a window of its own.
    if (!p.windows.empty() && p.windows.back().coef == rows[r] && o <= end + 64 &&
        std::max(end, o + bytes) - p.windows.back().lo <= 4096) {
      end = std::max(end, o + bytes);
    } else {
      p.windows.push_back({rows[r], o, 0, 0, 0});
      end = o + bytes;
    }
    p.windows.back().used = uint64_t(end - p.windows.back().lo) / esz;
    window_of[{r, o}] = p.windows.size() - 1;
  }
  for (auto& w : p.windows) {
    if (w.used * esz > 4096) return std::nullopt;
    w.padded = (w.used + piece - 1) / piece * piece;
    w.first = p.elements;
    p.elements += w.padded;
  }
  // At least a sixteenth of what is loaded is used: ggml's q8_0 words are 2 bytes of every
  // 8 of 34-byte blocks (a quarter); a gather of 8- and 16-bit values is a load and an
  // insert per lane, several times the window's loads and shuffles. And a bounded number
  // of registers.
  if (p.elements > 16 * c * N || p.elements / piece > 64) return std::nullopt;
  // Several windows pay a load and a permute per register where a gather pays per element:
  // worth it only while the registers are mostly what the lanes access (a 16-byte copy per
  // invocation, rows of a tile), not one register per lane (a column walked down).
  if (p.windows.size() > 1 && p.elements / piece > 2 * ((c * N * esz + 63) / 64)) return std::nullopt;
  p.lane_first.resize(N);
  for (uint32_t l = 0; l < N; ++l) {
    const size_t r = size_t(std::find(rows.begin(), rows.end(), row(l)) - rows.begin());
    const auto& w = p.windows[window_of.at({r, off[l]})];
    p.lane_first[l] = w.first + uint64_t(off[l] - w.lo) / esz;
  }
  return p;
}

// What a load and a store through windows both need: the element type, the lanes' pattern
// and its plan, or nothing where the access is not one windows can do.
struct WindowAccess {
  bool vector = false;
  Id elem = 0;
  uint64_t esz = 0, c = 0, R = 0;  // element bytes, components per lane, elements per register
  llvm::Type* scalar = nullptr;
  llvm::Align align;
  Lowerer::Affine a;
  WindowPlan plan;
};

std::optional<WindowAccess> window_access(Lowerer& L, Id t, llvm::Value* ptrs, uint32_t align_hint) {
  WindowAccess w;
  const TypeInfo& ti = L.type(t);
  w.vector = ti.op == uint16_t(spv::Op::OpTypeVector);
  w.elem = w.vector ? ti.elem : t;
  const TypeInfo& et = L.type(w.elem);
  if (et.op != uint16_t(spv::Op::OpTypeInt) && et.op != uint16_t(spv::Op::OpTypeFloat)) return std::nullopt;
  const MemLayout el = L.layout(w.elem);
  w.esz = el.size;
  w.c = w.vector ? ti.count : 1;
  auto a = L.affine_scaled(ptrs);
  if (!a || w.esz == 0 || a->stride == 0) return std::nullopt;
  auto plan = plan_windows(a->off, a->coef, w.esz, w.c, L.N);
  if (!plan) return std::nullopt;
  w.a = std::move(*a);
  w.plan = std::move(*plan);
  w.R = std::max<uint64_t>(1, 64 / w.esz);
  w.scalar = L.scalar_type(w.elem);
  w.align = llvm::Align(std::min<uint32_t>(el.align, align_hint ? align_hint : el.align));
  return w;
}

}  // namespace

// Where a window starts: the pattern's base, its row's run-time term and its offset.
llvm::Value* Lowerer::window_start(const Affine& a, int64_t coef, int64_t lo) {
  llvm::Value* p = a.base;
  if (a.scale && coef != 0) {
    llvm::Value* s = B.CreateSExtOrTrunc(a.scale, B.getInt64Ty());
    p = B.CreateGEP(B.getInt8Ty(), p, B.CreateMul(s, B.getInt64(uint64_t(coef))));
  }
  return B.CreateConstGEP1_64(B.getInt8Ty(), p, lo);
}

// The run-time condition for windows: the pattern's own test (Affine::exact) and, under
// robust access, every window in bounds (one at the end of the buffer takes the slow way).
static llvm::Value* window_condition(Lowerer& L, const WindowAccess& w) {
  llvm::Value* cond = w.a.exact;
  if (L.checking)
    for (const auto& win : w.plan.windows) {
      llvm::Value* ok = L.in_bounds(L.window_start(w.a, win.coef, win.lo), win.used * w.esz);
      if (ok->getType()->isVectorTy()) ok = L.B.CreateAndReduce(ok);
      cond = cond ? L.B.CreateAnd(cond, ok) : ok;
    }
  return cond;
}

llvm::Value* Lowerer::load_window(Id t, llvm::Value* ptrs, llvm::Value* m, uint32_t align_hint,
                                  const std::function<llvm::Value*()>& slow) {
  auto wa = window_access(*this, t, ptrs, align_hint);
  if (!wa) return nullptr;
  const bool vector = wa->vector;
  const uint64_t esz = wa->esz, c = wa->c, R = wa->R, E = wa->plan.elements;
  const WindowPlan* plan = &wa->plan;
  llvm::Type* st = wa->scalar;
  const llvm::Align align = wa->align;
  auto start = [&](const WindowPlan::Window& w) { return window_start(wa->a, w.coef, w.lo); };
  // Which lanes read element e: element e's mask is the OR of theirs (lanes of a pattern
  // such as 8 * (l / 4) share blocks' scales).
  std::vector<std::vector<int>> readers(E);
  for (uint32_t l = 0; l < N; ++l)
    for (uint64_t i = 0; i < c; ++i) readers[plan->element(l, i)].push_back(int(l));
  size_t share = 0;
  for (const auto& r : readers) share = std::max(share, r.size());
  auto element_mask = [&]() -> llvm::Value* {
    llvm::Value* none = llvm::Constant::getNullValue(m->getType());
    llvm::Value* em = nullptr;
    for (size_t r = 0; r < share; ++r) {
      std::vector<int> pick(E);
      for (uint64_t e = 0; e < E; ++e) pick[e] = r < readers[e].size() ? readers[e][r] : int(N);
      llvm::Value* s = B.CreateShuffleVector(m, none, pick);
      em = em ? B.CreateOr(em, s) : s;
    }
    return em;
  };
  // The windows as 64-byte registers (LLVM splits one load of an odd number of them into
  // 16-byte pieces and scatters their elements through the stack).
  auto* rt = llvm::FixedVectorType::get(st, unsigned(R));
  const uint64_t regs = E / R;
  auto wide_load = [&]() -> std::vector<llvm::Value*> {
    // A plain load is safe when every lane is active and each window's padding past its
    // last element read, if any, lies in the page of that element; else a masked load of
    // exactly what the active lanes read.
    llvm::Value* plain = B.CreateAndReduce(m);
    if (auto* cm = llvm::dyn_cast<llvm::Constant>(m); cm && cm->isAllOnesValue()) plain = B.getTrue();
    for (const auto& w : plan->windows) {
      if (w.padded == w.used) continue;
      llvm::Value* s = B.CreatePtrToInt(start(w), B.getInt64Ty());
      llvm::Value* last_read = B.CreateAdd(s, B.getInt64(w.used * esz - 1));
      llvm::Value* last = B.CreateAdd(s, B.getInt64(w.padded * esz - 1));
      plain = B.CreateAnd(plain, B.CreateICmpEQ(B.CreateLShr(last_read, 12), B.CreateLShr(last, 12)));
    }
    auto loads = [&](bool masked) {
      std::vector<llvm::Value*> out;
      llvm::Value* em = masked ? element_mask() : nullptr;
      for (const auto& w : plan->windows)
        for (uint64_t k = 0; k < w.padded / R; ++k) {
          llvm::Value* p = B.CreateConstGEP1_64(B.getInt8Ty(), start(w), k * 64);
          if (!masked) prefetch_ahead(p, 64);
          if (!masked) {
            out.push_back(B.CreateAlignedLoad(rt, p, align));
            continue;
          }
          std::vector<int> part(R);
          for (uint64_t e = 0; e < R; ++e) part[e] = int(w.first + k * R + e);
          out.push_back(B.CreateMaskedLoad(rt, p, align, B.CreateShuffleVector(em, part), llvm::PoisonValue::get(rt)));
        }
      return out;
    };
    if (auto* k = llvm::dyn_cast<llvm::ConstantInt>(plain); k && k->isOne()) return loads(false);
    llvm::Function* f = B.GetInsertBlock()->getParent();
    auto* plain_bb = llvm::BasicBlock::Create(C, "win.plain", f);
    auto* masked_bb = llvm::BasicBlock::Create(C, "win.masked", f);
    auto* join = llvm::BasicBlock::Create(C, "win.join", f);
    B.CreateCondBr(plain, plain_bb, masked_bb, llvm::MDBuilder(C).createLikelyBranchWeights());
    B.SetInsertPoint(plain_bb);
    std::vector<llvm::Value*> p = loads(false);
    plain_bb = B.GetInsertBlock();
    B.CreateBr(join);
    B.SetInsertPoint(masked_bb);
    std::vector<llvm::Value*> q = loads(true);
    masked_bb = B.GetInsertBlock();
    B.CreateBr(join);
    B.SetInsertPoint(join);
    std::vector<llvm::Value*> out;
    for (uint64_t k = 0; k < regs; ++k) {
      llvm::PHINode* phi = B.CreatePHI(rt, 2);
      phi->addIncoming(p[k], plain_bb);
      phi->addIncoming(q[k], masked_bb);
      out.push_back(phi);
    }
    return out;
  };
  return if_else(window_condition(*this, *wa), [&] {
    const std::vector<llvm::Value*> block = wide_load();
    std::vector<int> pick(N);
    auto component = [&](uint64_t i) {
      for (uint32_t l = 0; l < N; ++l) pick[l] = int(plan->element(l, i));
      return pick_lanes(block, pick, esz);
    };
    if (!vector) return component(0);
    llvm::Value* out = llvm::PoisonValue::get(lane_rep_type(t));
    for (uint64_t i = 0; i < c; ++i) out = B.CreateInsertValue(out, component(i), unsigned(i));
    return out;
  }, slow);
}

bool Lowerer::store_window(Id t, llvm::Value* ptrs, llvm::Value* v, llvm::Value* m, uint32_t align_hint,
                           const std::function<void()>& slow) {
  auto wa = window_access(*this, t, ptrs, align_hint);
  if (!wa) return false;
  const bool vector = wa->vector;
  const uint64_t esz = wa->esz, c = wa->c, R = wa->R, E = wa->plan.elements;
  const WindowPlan* plan = &wa->plan;
  // Each element written by at most one lane (which one's value lands is otherwise up to
  // the lanes' order, and only one lane's value can be picked into the register).
  std::vector<int> writer(E, -1);
  for (uint32_t l = 0; l < N; ++l)
    for (uint64_t i = 0; i < c; ++i) {
      int& w = writer[plan->element(l, i)];
      if (w >= 0) return false;
      w = int(i * N + l);
    }
  llvm::Type* st = wa->scalar;
  const llvm::Align align = wa->align;
  auto start = [&](const WindowPlan::Window& w) { return window_start(wa->a, w.coef, w.lo); };
  if_else(window_condition(*this, *wa), [&]() -> llvm::Value* {
    // The components as 64-byte registers, interleaved so that the registers a group of
    // lanes' components lie in are neighbours (component i of lanes [g R, g R + R) is
    // register g c + i): a window register of a vec4 per lane then draws on at most four.
    const uint64_t per = std::max<uint64_t>(1, (uint64_t(N) + R - 1) / R);  // registers per component
    std::vector<llvm::Value*> parts;
    auto* rt = llvm::FixedVectorType::get(st, unsigned(R));
    for (uint64_t g = 0; g < per; ++g)
      for (uint64_t i = 0; i < c; ++i) {
        llvm::Value* comp = vector ? B.CreateExtractValue(v, unsigned(i)) : v;
        std::vector<int> sel(R);
        for (uint64_t e = 0; e < R; ++e) sel[e] = g * R + e < N ? int(g * R + e) : -1;
        parts.push_back(B.CreateShuffleVector(comp, sel));
      }
    (void)rt;
    auto source = [&](int w) {  // w = i * N + l
      const uint64_t i = uint64_t(w) / N, l = uint64_t(w) % N;
      return int(((l / R) * c + i) * R + l % R);
    };
    llvm::Value* none = llvm::Constant::getNullValue(m->getType());
    for (const auto& win : plan->windows)
      for (uint64_t k = 0; k < win.padded / R; ++k) {
        std::vector<int> pick(R), mpick(R);
        bool any = false;
        for (uint64_t e = 0; e < R; ++e) {
          const int w = writer[win.first + k * R + e];
          any |= w >= 0;
          pick[e] = w >= 0 ? source(w) : 0;
          mpick[e] = w >= 0 ? int(uint64_t(w) % N) : int(N);
        }
        if (!any) continue;
        llvm::Value* reg = pick_lanes(parts, pick, esz);
        llvm::Value* em = B.CreateShuffleVector(m, none, mpick);
        B.CreateMaskedStore(reg, B.CreateConstGEP1_64(B.getInt8Ty(), start(win), k * 64), align, em);
      }
    return nullptr;
  }, [&]() -> llvm::Value* {
    slow();
    return nullptr;
  });
  return true;
}

}  // namespace coopvk::jit
