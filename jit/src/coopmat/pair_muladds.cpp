// pair_muladds(): a shader that keeps a block of accumulator tiles multiplies each A tile
// with several B tiles in a row. On tiles one vector wide (16 x 16 f32 on AVX-512) the
// single-tile kernel broadcasts one element of A per multiply-add and pays the call's fixed
// costs (loading and storing the accumulators) for 16 k steps only; its two-tile form
// (TileMmaPacked::mma2) broadcasts once for two, which measured 72-80% against 88-91% of
// the FMA rate on Zen 5. The lowering emits one call per OpCooperativeMatrixMulAddKHR, and
// the pairs only become visible once LLVM has unrolled the loops, so this runs after
// optimization, on the calls themselves.
//
// Moving the first call of a pair down to the second is sound because nothing between them
// touches memory, or only reads the function's own stack where the first call does not
// write (the pointers to tiles packed in the dispatch's tile cache, lower_tile_cache.cpp,
// which a load loop LLVM does not unroll keeps in allocas); whether the two calls' own operands overlap (a chain through one
// accumulator) is checked by mma2 at run time, which then runs them in order.
#include "coopmat/pair_muladds.h"

#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>

#include <string>
#include <utility>
#include <vector>

namespace coopvk::jit {

namespace {

constexpr llvm::StringLiteral kSingle = "coopvk_mma_split.mma.";
constexpr llvm::StringLiteral kPair = "coopvk_mma_split.mma2.";

llvm::Function* single_muladd(llvm::Instruction& in) {
  auto* call = llvm::dyn_cast<llvm::CallInst>(&in);
  llvm::Function* callee = call ? call->getCalledFunction() : nullptr;
  return callee && call->arg_size() == 4 && callee->getName().starts_with(kSingle) ? callee : nullptr;
}

// Whether `in` only reads a stack slot that `call` (a single multiply-add) does not write.
bool reads_other_slot(const llvm::Instruction& in, const llvm::CallInst& call) {
  auto* ld = llvm::dyn_cast<llvm::LoadInst>(&in);
  if (!ld || !ld->isSimple()) return false;
  const llvm::Value* from = llvm::getUnderlyingObject(ld->getPointerOperand());
  return llvm::isa<llvm::AllocaInst>(from) && from != llvm::getUnderlyingObject(call.getArgOperand(3));
}

}  // namespace

unsigned pair_muladds(llvm::Module& mod) {
  std::vector<std::pair<llvm::CallInst*, llvm::CallInst*>> pairs;
  for (llvm::Function& fn : mod)
    for (llvm::BasicBlock& bb : fn) {
      llvm::CallInst* open = nullptr;  // a multiply-add still without a partner
      for (llvm::Instruction& in : bb) {
        if (llvm::Function* callee = single_muladd(in)) {
          auto* call = llvm::cast<llvm::CallInst>(&in);
          if (open && open->getCalledFunction() == callee && open->getArgOperand(0) == call->getArgOperand(0)) {
            pairs.emplace_back(open, call);
            open = nullptr;
          } else {
            open = call;
          }
        } else if ((in.mayReadOrWriteMemory() || in.mayHaveSideEffects()) && !(open && reads_other_slot(in, *open))) {
          open = nullptr;
        }
      }
    }
  llvm::LLVMContext& ctx = mod.getContext();
  llvm::Type* ptr = llvm::PointerType::get(ctx, 0);
  llvm::FunctionType* pair_type = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr, ptr, ptr, ptr, ptr, ptr, ptr}, false);
  for (auto [first, second] : pairs) {
    const std::string name = (kPair + first->getCalledFunction()->getName().substr(kSingle.size())).str();
    llvm::FunctionCallee pair = mod.getOrInsertFunction(name, pair_type);
    llvm::IRBuilder<> b(second);  // every operand of both calls is defined by here
    b.CreateCall(pair, {first->getArgOperand(0), first->getArgOperand(1), first->getArgOperand(2),
                        first->getArgOperand(3), second->getArgOperand(1), second->getArgOperand(2),
                        second->getArgOperand(3)});
    second->eraseFromParent();
    first->eraseFromParent();
  }
  return unsigned(pairs.size());
}

}  // namespace coopvk::jit
