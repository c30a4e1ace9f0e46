// SPV_NV_tensor_addressing and the tensor-addressed loads and stores of
// SPV_NV_cooperative_matrix2 (VK_NV_cooperative_matrix2's cooperativeMatrixTensorAddressing).
//
// A tensor layout or view value is its logical state (the SPIR-V text's tensorLayoutNV /
// tensorViewNV structs) as an array of u32 words, in either rep: the layout and view
// instructions are element-wise integer arithmetic on it, uniform or per lane as their
// operands are. The static parts (dimensions, clamp mode, permutation) come from the type.
// OpCooperativeMatrixLoadTensorNV / StoreTensorNV take the state of the first active lane
// (their operands must be uniform in the scope) and run the text's addressing functions
// element by element in the runtime (runtime/tensor_addressing.cpp), on a dense row-major
// copy of the matrix, or of this subgroup's rows of a workgroup-scope one.
#include <llvm/IR/Constants.h>

#include "lower/lowerer.h"
#include "runtime/runtime_symbols.h"
#include "runtime/tensor_addressing.h"
#include "spirv/spirv_enums.h"

namespace coopvk::jit {

namespace {
using Op = spv::Op;

bool is_tensor_layout(const TypeInfo& t) { return t.op == uint16_t(Op::OpTypeTensorLayoutNV); }
bool is_tensor_view(const TypeInfo& t) { return t.op == uint16_t(Op::OpTypeTensorViewNV); }
}  // namespace

bool Lowerer::lower_tensor(const Instruction& in) {
  const auto op = static_cast<Op>(in.opcode);
  switch (op) {
    case Op::OpCooperativeMatrixLoadTensorNV:
    case Op::OpCooperativeMatrixStoreTensorNV:
      if (!opts.nv2.tensor_addressing)
        fail("tensor-addressed cooperative matrix loads and stores need VK_NV_cooperative_matrix2's "
             "cooperativeMatrixTensorAddressing feature",
             &in);
      lower_tensor_load_store(in, op == Op::OpCooperativeMatrixLoadTensorNV);
      return true;
    case Op::OpCreateTensorLayoutNV: case Op::OpTensorLayoutSetDimensionNV: case Op::OpTensorLayoutSetStrideNV:
    case Op::OpTensorLayoutSliceNV: case Op::OpTensorLayoutSetClampValueNV: case Op::OpTensorLayoutSetBlockSizeNV:
    case Op::OpCreateTensorViewNV: case Op::OpTensorViewSetDimensionNV: case Op::OpTensorViewSetStrideNV:
    case Op::OpTensorViewSetClipNV:
      break;
    default:
      return false;
  }
  if (!opts.nv2.tensor_addressing)
    fail("tensor layouts and views need VK_NV_cooperative_matrix2's cooperativeMatrixTensorAddressing feature", &in);
  const TypeInfo& rt = type(in.result_type);
  const bool layout_op = op == Op::OpCreateTensorLayoutNV || (op >= Op::OpTensorLayoutSetDimensionNV && op <= Op::OpTensorLayoutSetClampValueNV) ||
                         op == Op::OpTensorLayoutSetBlockSizeNV;
  if (layout_op ? !is_tensor_layout(rt) : !is_tensor_view(rt))
    fail(std::string("the result type of ") + spv_op_name(in.opcode) + " must be a tensor " +
             (layout_op ? "layout" : "view"),
         &in);
  const auto& o = in.operands;
  const uint32_t dims = rt.tensor.at(0);
  auto word = [&](uint32_t v) { return splat(B.getInt32(v)); };
  if (op == Op::OpCreateTensorLayoutNV || op == Op::OpCreateTensorViewNV) {
    // Layout: dimensions, strides, spans and offsets 0, block sizes 1, clamp value 0. View:
    // dimensions and strides 0, clip offsets 0 and spans 0xFFFFFFFF.
    llvm::Value* s = llvm::PoisonValue::get(rep_type(in.result_type));
    for (uint32_t i = 0; i < rt.count; ++i) {
      uint32_t v = 0;
      if (layout_op && i < kTlDim) v = 1;
      if (!layout_op && (i == kTvClipRowSpan || i == kTvClipColSpan)) v = 0xFFFFFFFFu;
      s = B.CreateInsertValue(s, word(v), i);
    }
    define(in.result, s);
    return true;
  }
  if (o.empty() || type_of(o[0]) != in.result_type)
    fail(std::string(spv_op_name(in.opcode)) + "'s operand must have the result's type", &in);
  auto operand = [&](size_t k) {
    if (k >= o.size()) fail(std::string(spv_op_name(in.opcode)) + " has too few operands", &in);
    const TypeInfo& it = type(type_of(o[k]));
    if (it.op != uint16_t(Op::OpTypeInt) || it.width != 32)
      fail(std::string(spv_op_name(in.opcode)) + "'s operands must be 32-bit integers", &in);
    return value(o[k]);
  };
  auto per_dim = [&](size_t count) {
    if (o.size() != 1 + count)
      fail(std::string(spv_op_name(in.opcode)) + " needs " + std::to_string(count) + " operands after the " +
               (layout_op ? "layout" : "view"),
           &in);
  };
  llvm::Value* s = value(o[0]);
  auto get = [&](uint32_t i) { return B.CreateExtractValue(s, i); };
  auto set = [&](uint32_t i, llvm::Value* v) { s = B.CreateInsertValue(s, v, i); };
  switch (op) {
    case Op::OpTensorLayoutSetDimensionNV: {
      // dimension and span Dim<i>, offsets 0, stride[L-1] = 1 and
      // stride[i] = stride[i+1] * ceil(Dim<i+1> / blockSize[i+1]).
      per_dim(dims);
      std::vector<llvm::Value*> d;
      for (uint32_t i = 0; i < dims; ++i) d.push_back(operand(1 + i));
      llvm::Value* stride = word(1);
      for (int i = int(dims) - 1; i >= 0; --i) {
        set(kTlDim + i, d[i]);
        set(kTlSpan + i, d[i]);
        set(kTlOffset + i, word(0));
        if (i < int(dims) - 1) {
          llvm::Value* block = get(kTlBlock + i + 1);
          // ceil(d / block); a zero block size leaves 0 (no division by zero)
          llvm::Value* safe = B.CreateSelect(B.CreateICmpEQ(block, word(0)), word(1), block);
          llvm::Value* blocks = B.CreateUDiv(B.CreateAdd(d[i + 1], B.CreateSub(safe, word(1))), safe);
          stride = B.CreateMul(stride, blocks);
        }
        set(kTlStride + i, stride);
      }
      break;
    }
    case Op::OpTensorLayoutSetStrideNV:
      per_dim(dims);
      for (uint32_t i = 0; i < dims; ++i) set(kTlStride + i, operand(1 + i));
      break;
    case Op::OpTensorLayoutSliceNV:
      per_dim(2 * dims);
      for (uint32_t i = 0; i < dims; ++i) {
        set(kTlOffset + i, B.CreateAdd(get(kTlOffset + i), operand(1 + 2 * i)));
        set(kTlSpan + i, operand(2 + 2 * i));
      }
      break;
    case Op::OpTensorLayoutSetClampValueNV:
      per_dim(1);
      set(kTlClampValue, operand(1));
      break;
    case Op::OpTensorLayoutSetBlockSizeNV:
      per_dim(dims);
      for (uint32_t i = 0; i < dims; ++i) set(kTlBlock + i, operand(1 + i));
      break;
    case Op::OpTensorViewSetDimensionNV: {
      // viewStride[V-1] = 1, viewStride[i] = the product of Dim<i+1> .. Dim<V-1>.
      per_dim(dims);
      llvm::Value* stride = word(1);
      for (int i = int(dims) - 1; i >= 0; --i) {
        llvm::Value* d = operand(1 + i);
        set(kTvDim + i, d);
        set(kTvStride + i, stride);
        stride = B.CreateMul(stride, d);
      }
      break;
    }
    case Op::OpTensorViewSetStrideNV:
      per_dim(dims);
      for (uint32_t i = 0; i < dims; ++i) set(kTvStride + i, operand(1 + i));
      break;
    case Op::OpTensorViewSetClipNV:
      per_dim(4);
      for (uint32_t i = 0; i < 4; ++i) set(kTvClipRowOffset + i, operand(1 + i));
      break;
    default:
      break;
  }
  define(in.result, s);
  return true;
}

void Lowerer::lower_tensor_load_store(const Instruction& in, bool load) {
  // Load: (Pointer, Object, TensorLayout, memory operands, tensor addressing operands);
  // store: the same without a result.
  const auto& o = in.operands;
  const char* name = load ? "OpCooperativeMatrixLoadTensorNV" : "OpCooperativeMatrixStoreTensorNV";
  if (o.size() < 5) fail(std::string(name) + " has too few operands", &in);
  const Id pointer = o[0], object = o[1], layout_id = o[2];
  const Id mat_t = load ? in.result_type : type_of(object);
  if (!is_matrix(mat_t) || type_of(object) != mat_t)
    fail(std::string(name) + ": the object must be a cooperative matrix" + (load ? " of the result type" : ""), &in);
  if (type(type_of(pointer)).op != uint16_t(Op::OpTypePointer)) fail(std::string(name) + " needs a pointer", &in);
  if (F.rep_ptrs.count(pointer) || rep_globals.count(pointer))
    fail(std::string(name) + " through a Function or Private variable is not supported", &in);
  const TypeInfo& lt = type(type_of(layout_id));
  if (!is_tensor_layout(lt)) fail(std::string(name) + "'s TensorLayout operand is not a tensor layout", &in);
  // Memory operands: a mask, then the literals and ids its bits ask for, in bit order.
  size_t k = 3;
  const uint32_t mem = o[k++];
  using MO = spv::MemoryAccessMask;
  for (uint32_t bit : {uint32_t(MO::Aligned), uint32_t(MO::MakePointerAvailable), uint32_t(MO::MakePointerVisible),
                       uint32_t(MO::AliasScopeINTELMask), uint32_t(MO::NoAliasINTELMask)})
    if (mem & bit) ++k;
  if (k >= o.size()) fail(std::string(name) + " lacks its tensor addressing operands", &in);
  const uint32_t tao = o[k++];
  Id view_id = 0;
  if (tao & 0x1u) {
    if (k >= o.size()) fail(std::string(name) + ": TensorView is set but no view follows", &in);
    view_id = o[k++];
  }
  Id decode = 0;
  if (tao & 0x2u) {
    if (!load) fail("OpCooperativeMatrixStoreTensorNV takes no DecodeFunc", &in);
    if (!opts.nv2.block_loads)
      fail(std::string(name) + " with a DecodeFunc needs VK_NV_cooperative_matrix2's cooperativeMatrixBlockLoads feature",
           &in);
    if (k >= o.size()) fail(std::string(name) + ": DecodeFunc is set but no function follows", &in);
    decode = o[k++];
  }
  if (tao & ~0x3u) fail(std::string(name) + ": unknown tensor addressing operand bits", &in);
  if (view_id && !is_tensor_view(type(type_of(view_id))))
    fail(std::string(name) + "'s TensorView operand is not a tensor view", &in);
  const TypeInfo& t = type(mat_t);
  const uint64_t esz = layout(t.elem).size;

  // The uniform state words in frame memory, and what the types fix.
  auto state_in_memory = [&](Id id, uint32_t words) {
    Val v = value_v(id);
    llvm::Value* u = v.uniform ? v.v : to_uniform(v.v);
    llvm::AllocaInst* buf = entry_alloca(B.getInt32Ty(), words, 16);
    B.CreateStore(u, buf);
    return buf;
  };
  llvm::Value* layout_words = state_in_memory(layout_id, kTlWords);
  llvm::Value* view_words = view_id ? static_cast<llvm::Value*>(state_in_memory(view_id, kTvWords))
                                    : llvm::ConstantPointerNull::get(B.getPtrTy());
  const TypeInfo* vt = view_id ? &type(type_of(view_id)) : nullptr;
  if (vt && !vt->tensor.at(1) && vt->tensor[0] != lt.tensor[0])
    fail(std::string(name) + ": a view without its own dimensions must have the layout's dimension count", &in);
  llvm::StructType* acc_t = llvm::StructType::get(
      C, {B.getInt32Ty(), B.getInt32Ty(), B.getInt32Ty(), B.getInt32Ty(), llvm::ArrayType::get(B.getInt32Ty(), 5),
          B.getInt32Ty(), B.getInt32Ty(), B.getInt32Ty(), B.getInt32Ty(), B.getInt32Ty(), B.getInt64Ty(), B.getInt64Ty()});
  llvm::AllocaInst* acc = entry_alloca(acc_t, 1, 16);
  auto put = [&](std::initializer_list<unsigned> path, llvm::Value* v) {
    std::vector<llvm::Value*> idx{B.getInt32(0)};
    for (unsigned p : path) idx.push_back(B.getInt32(p));
    B.CreateStore(v, B.CreateInBoundsGEP(acc_t, acc, idx));
  };
  put({0}, B.getInt32(lt.tensor.at(0)));
  put({1}, B.getInt32(lt.tensor.at(1)));
  put({2}, B.getInt32(vt ? vt->tensor.at(0) : 0));
  put({3}, B.getInt32(vt ? vt->tensor.at(1) : 0));
  for (uint32_t i = 0; i < 5; ++i) put({4, i}, B.getInt32(vt && i < vt->tensor[0] ? vt->tensor[2 + i] : 0));
  // A decode function's pointer steps by its pointee (SPV_NV_cooperative_matrix2: "the
  // index ... multiplied by the size of the pointee type"); plain loads by the component.
  uint64_t step = esz;
  if (decode) {
    const Instruction* def = m.def(decode);
    if (!def || def->opcode != uint16_t(Op::OpFunction)) fail(std::string(name) + ": DecodeFunc is not a function", &in);
    const TypeInfo& ft = type(def->operands.at(1));
    if (def->result_type != t.elem) fail("a DecodeFunc must return the matrix's component type", &in);
    if (ft.members.size() != 3) fail("a DecodeFunc takes a pointer and two arrays", &in);
    const TypeInfo& pt = type(ft.members[0]);
    if (pt.op != uint16_t(Op::OpTypePointer) || pt.storage != uint32_t(spv::StorageClass::PhysicalStorageBuffer))
      fail("a DecodeFunc's first parameter must be a PhysicalStorageBuffer pointer", &in);
    for (int i = 1; i < 3; ++i) {
      const TypeInfo& at = type(ft.members[i]);
      if (at.op != uint16_t(Op::OpTypeArray) || at.count != lt.tensor[0] || type(at.elem).op != uint16_t(Op::OpTypeInt) ||
          type(at.elem).width != 32)
        fail("a DecodeFunc's second and third parameters are arrays of 32-bit integers, one per tensor dimension", &in);
    }
    step = layout(pt.elem).size;
    if (step == 0) fail("a DecodeFunc's pointer points to a type of no size", &in);
  }
  put({5}, B.getInt32(uint32_t(step)));
  put({6}, B.getInt32(split_matrix(t) ? t.full_rows : t.rows));
  put({7}, B.getInt32(t.cols));
  put({8}, split_matrix(t) ? wg_row0(t) : B.getInt32(0));
  put({9}, B.getInt32(t.rows));
  // Robust buffer access: the bound range; otherwise no bound.
  Val base_v = value_v(pointer);
  llvm::Value* base = base_v.uniform ? base_v.v : to_uniform(base_v.v);
  llvm::Value* lo = B.getInt64(0);
  llvm::Value* range = B.getInt64(~uint64_t(0));
  if (std::optional<Bounds> bd = bounds_of(pointer, true)) {
    lo = B.CreatePtrToInt(bd->base.uniform ? bd->base.v : to_uniform(bd->base.v), B.getInt64Ty());
    range = bd->range.uniform ? bd->range.v : to_uniform(bd->range.v);
    range = B.CreateZExtOrTrunc(range, B.getInt64Ty());
  }
  put({10}, lo);
  put({11}, range);
  llvm::Type* ptr = B.getPtrTy();
  llvm::FunctionType* ft = llvm::FunctionType::get(B.getVoidTy(), {ptr, ptr, ptr, ptr, ptr}, false);
  if (decode) {
    lower_tensor_decode(in, decode, mat_t, base, layout_words, view_words, acc);
    return;
  }
  if (load) {
    // Clipped elements keep the Object operand's values.
    llvm::Value* dense = matrix_to_memory(value_v(object).v, t);
    B.CreateCall(M_get_function(kTensorLoadSymbol, ft, {2, 3, 4}), {dense, base, layout_words, view_words, acc});
    define_v(in.result, {matrix_from_memory(dense, mat_t), true});
  } else {
    llvm::Value* dense = matrix_to_memory(value_v(object).v, t);
    B.CreateCall(M_get_function(kTensorStoreSymbol, ft, {0, 2, 3, 4}), {dense, base, layout_words, view_words, acc});
  }
}

void Lowerer::lower_tensor_decode(const Instruction& in, Id decode, Id mat_t, llvm::Value* base,
                                  llvm::Value* layout_words, llvm::Value* view_words, llvm::Value* access) {
  // The runtime works out every element's status, pointer and coordinates
  // (coopvk_rt_tensor_plan); then a loop calls the decode function on N elements at a time,
  // as N invocations' calls, and LLVM inlines it there. Elements out of bounds under the
  // Constant mode take the clamp value; skipped ones keep the Object operand's.
  const TypeInfo& t = type(mat_t);
  const TypeInfo& lt = type(type_of(in.operands[2]));
  const uint32_t dims = lt.tensor[0];
  const uint64_t esz = layout(t.elem).size;
  const uint64_t n = uint64_t(t.rows) * t.cols, chunks = (n + N - 1) / N, padded = chunks * N;
  llvm::AllocaInst* status = entry_alloca(B.getInt32Ty(), padded, 64);
  llvm::AllocaInst* addrs = entry_alloca(B.getInt64Ty(), padded, 64);
  llvm::AllocaInst* coords = entry_alloca(B.getInt32Ty(), 2 * dims * padded, 64);
  llvm::AllocaInst* dense = entry_alloca(B.getInt8Ty(), padded * esz, 64);
  B.CreateMemSet(status, B.getInt8(0), B.getInt64(padded * 4), llvm::Align(64));
  B.CreateMemSet(coords, B.getInt8(0), B.getInt64(2 * dims * padded * 4), llvm::Align(64));
  B.CreateMemSet(addrs, B.getInt8(0), B.getInt64(padded * 8), llvm::Align(64));
  llvm::Value* obj = matrix_to_memory(value_v(in.operands[1]).v, t);
  B.CreateMemCpy(dense, llvm::Align(64), obj, llvm::Align(64), B.getInt64(n * esz));
  llvm::Type* ptr = B.getPtrTy();
  llvm::FunctionCallee plan = M_get_function(
      kTensorPlanSymbol,
      llvm::FunctionType::get(B.getVoidTy(), {ptr, ptr, ptr, B.getInt64Ty(), ptr, ptr, ptr, ptr}, false), {5, 6, 7});
  B.CreateCall(plan, {status, addrs, coords, B.getInt64(padded), base, layout_words, view_words, access});
  // The clamp value's low bits as a component.
  llvm::Type* et = scalar_type(t.elem);
  llvm::Value* clamp = B.CreateLoad(B.getInt32Ty(), B.CreateConstGEP1_64(B.getInt32Ty(), layout_words, kTlClampValue));
  llvm::Type* bits_t = B.getIntNTy(unsigned(esz * 8));
  llvm::Value* clamp_v = B.CreateBitCast(B.CreateZExtOrTrunc(clamp, bits_t), et);
  llvm::Type* lane_t = lanes(et);
  llvm::Type* i32v = lanes(B.getInt32Ty());
  llvm::Type* arr_t = llvm::ArrayType::get(i32v, dims);

  llvm::Function* f = B.GetInsertBlock()->getParent();
  llvm::BasicBlock* pre = B.GetInsertBlock();
  auto* loop = llvm::BasicBlock::Create(C, "decode", f);
  auto* done = llvm::BasicBlock::Create(C, "decode.done", f);
  B.CreateBr(loop);
  B.SetInsertPoint(loop);
  llvm::PHINode* j = B.CreatePHI(B.getInt64Ty(), 2);
  j->addIncoming(B.getInt64(0), pre);
  llvm::Value* first = B.CreateMul(j, B.getInt64(N));
  llvm::Value* st = B.CreateAlignedLoad(i32v, B.CreateGEP(B.getInt32Ty(), status, first), llvm::Align(4));
  llvm::Value* decode_mask = B.CreateICmpEQ(st, B.CreateVectorSplat(N, B.getInt32(2)));
  llvm::Value* a = B.CreateAlignedLoad(lanes(B.getInt64Ty()), B.CreateGEP(B.getInt64Ty(), addrs, first), llvm::Align(8));
  llvm::Value* pointers = B.CreateIntToPtr(a, lanes(B.getPtrTy()));
  auto coord_array = [&](uint32_t which) {
    llvm::Value* arr = llvm::PoisonValue::get(arr_t);
    for (uint32_t d = 0; d < dims; ++d) {
      llvm::Value* at = B.CreateAdd(first, B.getInt64(uint64_t(which * dims + d) * padded));
      arr = B.CreateInsertValue(arr, B.CreateAlignedLoad(i32v, B.CreateGEP(B.getInt32Ty(), coords, at), llvm::Align(4)), d);
    }
    return arr;
  };
  llvm::Value* decoded = call_matrix_callback(decode, {pointers, coord_array(0), coord_array(1)}, decode_mask, lane_t, in);
  llvm::Value* slot = B.CreateGEP(B.getInt8Ty(), dense, B.CreateMul(first, B.getInt64(esz)));
  llvm::Value* cur = B.CreateAlignedLoad(lane_t, slot, llvm::Align(esz));
  llvm::Value* clamped = B.CreateICmpEQ(st, B.CreateVectorSplat(N, B.getInt32(1)));
  llvm::Value* v = B.CreateSelect(decode_mask, decoded, B.CreateSelect(clamped, B.CreateVectorSplat(N, clamp_v), cur));
  B.CreateAlignedStore(v, slot, llvm::Align(esz));
  llvm::Value* next = B.CreateAdd(j, B.getInt64(1));
  j->addIncoming(next, B.GetInsertBlock());
  B.CreateCondBr(B.CreateICmpULT(next, B.getInt64(chunks)), loop, done);
  B.SetInsertPoint(done);
  define_v(in.result, {matrix_from_memory(dense, mat_t), true});
}

}  // namespace coopvk::jit
