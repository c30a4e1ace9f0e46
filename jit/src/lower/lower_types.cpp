// Types, memory layouts, constants and value helpers of the lowering.
#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>

#include <cstring>

#include "lower/lowerer.h"
#include "spirv/spirv_enums.h"

namespace coopvk::jit {

void Lowerer::fail(const std::string& what, const Instruction* at) const {
  if (at)
    throw LowerError("offset " + std::to_string(at->offset) + " (" + spv_op_name(at->opcode) +
                     "): " + what);
  throw LowerError(what);
}

void Lowerer::collect_types() {
  for (const Instruction& in : m.globals) {
    TypeInfo t;
    t.op = in.opcode;
    const auto& o = in.operands;
    auto need = [&](size_t n) {
      if (o.size() < n) fail("too few operands", &in);
    };
    switch (static_cast<spv::Op>(in.opcode)) {
      case spv::Op::OpTypeVoid:
      case spv::Op::OpTypeBool:
        break;
      case spv::Op::OpTypeInt:
        need(2);
        t.width = o[0];
        t.is_signed = o[1] != 0;
        if (t.width != 8 && t.width != 16 && t.width != 32 && t.width != 64)
          fail("integer width " + std::to_string(t.width) + " is not supported", &in);
        break;
      case spv::Op::OpTypeFloat:
        need(1);
        t.width = o[0];
        if (o.size() > 1) {
          switch (static_cast<spv::FPEncoding>(o[1])) {
            case spv::FPEncoding::BFloat16KHR: t.fkind = TypeInfo::FloatKind::BFloat16; break;
            case spv::FPEncoding::Float8E4M3EXT: t.fkind = TypeInfo::FloatKind::E4M3; break;
            case spv::FPEncoding::Float8E5M2EXT: t.fkind = TypeInfo::FloatKind::E5M2; break;
            default: fail("floating-point encoding " + std::to_string(o[1]) + " is not supported", &in);
          }
          uint32_t want = t.fkind == TypeInfo::FloatKind::BFloat16 ? 16 : 8;
          if (t.width != want) fail("float encoding " + std::to_string(o[1]) + " needs width " + std::to_string(want), &in);
          break;
        }
        if (t.width != 16 && t.width != 32 && t.width != 64)
          fail("float width " + std::to_string(t.width) + " is not supported", &in);
        break;
      case spv::Op::OpTypeVector:
      case spv::Op::OpTypeMatrix: {
        need(2);
        t.elem = o[0];
        t.count = o[1];
        auto e = types_.find(t.elem);
        if (e == types_.end() || t.count < 2 || t.count > 16) fail("malformed vector or matrix type", &in);
        uint16_t eop = e->second.op;
        bool ok = in.opcode == uint16_t(spv::Op::OpTypeVector)
                      ? (eop == uint16_t(spv::Op::OpTypeInt) || eop == uint16_t(spv::Op::OpTypeFloat) ||
                         eop == uint16_t(spv::Op::OpTypeBool))
                      : eop == uint16_t(spv::Op::OpTypeVector) &&
                            types_[e->second.elem].op == uint16_t(spv::Op::OpTypeFloat);
        if (!ok) fail("vector or matrix of an unsuitable component type", &in);
        break;
      }
      case spv::Op::OpTypeArray:
        need(2);
        t.elem = o[0];
        if (!types_.count(t.elem) || types_[t.elem].op == uint16_t(spv::Op::OpTypeVoid))
          fail("array of an unsuitable element type", &in);
        t.count = uint32_t(constant_u64(o[1]));
        if (t.count == 0) fail("array of length 0", &in);
        break;
      case spv::Op::OpTypeRuntimeArray:
        need(1);
        t.elem = o[0];
        if (holds_coopvec(t.elem)) fail("runtime arrays of cooperative vectors are not supported", &in);
        t.count = 0;
        break;
      case spv::Op::OpTypeStruct:
        t.members = o;
        for (Id mem : o)
          if (!types_.count(mem) || types_[mem].op == uint16_t(spv::Op::OpTypeVoid) ||
              types_[mem].op == uint16_t(spv::Op::OpTypeFunction))
            fail("struct member of an unsuitable type", &in);
        break;
      case spv::Op::OpTypePointer:
      case spv::Op::OpTypeUntypedPointerKHR:
        need(1);
        t.storage = o[0];
        t.elem = o.size() > 1 ? o[1] : 0;
        break;
      case spv::Op::OpTypeFunction:
        t.elem = o.empty() ? 0 : o[0];
        t.members.assign(o.begin() + (o.empty() ? 0 : 1), o.end());
        break;
      case spv::Op::OpTypeCooperativeMatrixKHR:
      case spv::Op::OpTypeCooperativeMatrixNV: {
        // (component type, scope, rows, columns[, use]): constant instructions, possibly
        // specialization constants, fixed by now. The NV type has no use: it becomes a KHR
        // matrix of use kUseNV (nv_cooperative_matrix.h), the same rep and operations.
        const bool nv = in.opcode == uint16_t(spv::Op::OpTypeCooperativeMatrixNV);
        need(nv ? 4 : 5);
        t.op = uint16_t(spv::Op::OpTypeCooperativeMatrixKHR);
        t.elem = o[0];
        auto e = types_.find(t.elem);
        if (e == types_.end() || (e->second.op != uint16_t(spv::Op::OpTypeInt) &&
                                   e->second.op != uint16_t(spv::Op::OpTypeFloat)))
          fail("cooperative matrix of a non-numeric component type", &in);
        t.scope = uint32_t(constant_u64(o[1]));
        t.rows = uint32_t(constant_u64(o[2]));
        t.cols = uint32_t(constant_u64(o[3]));
        t.use = nv ? TypeInfo::kUseNV : uint32_t(constant_u64(o[4]));
        check_coopmat_type(t, &in);
        break;
      }
      case spv::Op::OpTypeTensorLayoutNV:
      case spv::Op::OpTypeTensorViewNV: {
        // (Dim, ClampMode) / (Dim, HasDimensions, p0 ...): constant instructions. The value
        // is its state as u32 words (runtime/tensor_addressing.h), of Dim's integer type.
        const bool layout = in.opcode == uint16_t(spv::Op::OpTypeTensorLayoutNV);
        need(2);
        const Instruction* dim_def = m.global(o[0]);
        if (!dim_def) fail("a tensor type's Dim must be a constant", &in);
        t.elem = dim_def->result_type;
        const TypeInfo* et = types_.count(t.elem) ? &types_[t.elem] : nullptr;
        if (!et || et->op != uint16_t(spv::Op::OpTypeInt) || et->width != 32)
          fail("a tensor type's Dim must be a 32-bit integer constant", &in);
        const uint64_t dims = constant_u64(o[0]);
        if (dims < 1 || dims > 5) fail("a tensor layout or view has 1 to 5 dimensions", &in);
        t.tensor = {uint32_t(dims), uint32_t(constant_u64(o[1]))};
        if (layout) {
          if (t.tensor[1] > 4) fail("tensor clamp mode " + std::to_string(t.tensor[1]) + " is not valid", &in);
          t.count = 26;
        } else {
          if (o.size() != 2 + dims) fail("a tensor view type needs one permutation entry per dimension", &in);
          uint32_t seen = 0;
          for (uint64_t i = 0; i < dims; ++i) {
            const uint64_t p = constant_u64(o[2 + i]);
            if (p >= dims || (seen >> p & 1)) fail("a tensor view's p0 ... must be a permutation of its dimensions", &in);
            seen |= 1u << p;
            t.tensor.push_back(uint32_t(p));
          }
          t.count = 14;
        }
        break;
      }
      case spv::Op::OpTypeCooperativeVectorNV: {
        // Also OpTypeVectorIdEXT (SPV_EXT_long_vector): the same opcode, and glslang's
        // spelling of coopvecNV. Component type, then a constant component count.
        need(2);
        t.elem = o[0];
        auto e = types_.find(t.elem);
        if (e == types_.end() || (e->second.op != uint16_t(spv::Op::OpTypeInt) &&
                                   e->second.op != uint16_t(spv::Op::OpTypeFloat)))
          fail("cooperative vector of a non-numeric component type", &in);
        if (e->second.fkind == TypeInfo::FloatKind::BFloat16)
          fail("cooperative vectors of bfloat16 are not supported", &in);
        if (e->second.width == 64) fail("cooperative vectors of 64-bit components are not supported", &in);
        uint64_t count = constant_u64(o[1]);
        if (count == 0 || count > kMaxCoopVecComponents)
          fail("cooperative vector of " + std::to_string(count) + " components (1.." +
                   std::to_string(kMaxCoopVecComponents) + " are supported)",
               &in);
        t.count = uint32_t(count);
        check_coopvec_type_advertised(t.elem, t.count, in);
        break;
      }
      case spv::Op::OpTypeForwardPointer:
        // Declares a pointer type defined later: known as a pointer from here on, so
        // structs may hold it before its OpTypePointer arrives.
        need(2);
        types_[o[0]].op = uint16_t(spv::Op::OpTypePointer);
        types_[o[0]].storage = o[1];
        continue;
      default:
        if (in.result && in.result_type == 0 && spv_op_is_type(in.opcode))
          fail("type is not supported", &in);
        continue;  // constants and variables: handled elsewhere
    }
    types_[in.result] = std::move(t);
    if (holds_coopvec(in.result) && holds_matrix(in.result))
      fail("aggregates holding both cooperative matrices and cooperative vectors are not supported", &in);
  }
}

const TypeInfo& Lowerer::type(Id id) const {
  auto it = types_.find(id);
  if (it == types_.end()) fail("id " + std::to_string(id) + " is not a type");
  return it->second;
}

bool Lowerer::is_scalar(Id t) const {
  auto op = static_cast<spv::Op>(type(t).op);
  return op == spv::Op::OpTypeInt || op == spv::Op::OpTypeFloat || op == spv::Op::OpTypeBool;
}

Id Lowerer::scalar_of(Id t) const {
  return static_cast<spv::Op>(type(t).op) == spv::Op::OpTypeVector ? type(t).elem : t;
}

llvm::Type* Lowerer::scalar_type(Id id) const {
  const TypeInfo& t = type(id);
  switch (static_cast<spv::Op>(t.op)) {
    case spv::Op::OpTypeBool:
      return llvm::Type::getInt1Ty(C);
    case spv::Op::OpTypeInt:
      return llvm::Type::getIntNTy(C, t.width);
    case spv::Op::OpTypeFloat:
      if (t.fkind != TypeInfo::FloatKind::Ieee) return llvm::Type::getIntNTy(C, t.width);  // the bits
      return t.width == 16 ? llvm::Type::getHalfTy(C)
             : t.width == 32 ? llvm::Type::getFloatTy(C)
                             : llvm::Type::getDoubleTy(C);
    case spv::Op::OpTypePointer:
      return llvm::PointerType::get(C, 0);
    default:
      fail("type id " + std::to_string(id) + " is not a scalar");
  }
}

llvm::Type* Lowerer::lanes(llvm::Type* scalar) const {
  return scalar_mode ? scalar : llvm::FixedVectorType::get(scalar, N);
}

llvm::Type* Lowerer::rep_type(Id id) { return scalar_mode ? urep_type(id) : lane_rep_type(id); }

namespace {
// The rep structure of a type, with `leaf` giving the leaf of a scalar or pointer type.
template <typename Leaf, typename Self>
llvm::Type* rep_of(Lowerer& L, Id id, Leaf leaf, Self self) {
  const TypeInfo& t = L.type(id);
  if (L.holds_coopvec(id)) return llvm::PointerType::get(L.C, 0);  // a frame buffer (lowerer.h)
  switch (static_cast<spv::Op>(t.op)) {
    case spv::Op::OpTypeBool:
    case spv::Op::OpTypeInt:
    case spv::Op::OpTypeFloat:
    case spv::Op::OpTypePointer:
      return leaf(L.scalar_type(id));
    case spv::Op::OpTypeVector:
    case spv::Op::OpTypeMatrix:
    case spv::Op::OpTypeArray:
    case spv::Op::OpTypeTensorLayoutNV:  // its state words (lowerer.h)
    case spv::Op::OpTypeTensorViewNV:
      return llvm::ArrayType::get(self(t.elem), t.count);
    case spv::Op::OpTypeStruct: {
      std::vector<llvm::Type*> members;
      for (Id mem : t.members) members.push_back(self(mem));
      return llvm::StructType::get(L.C, members);
    }
    case spv::Op::OpTypeVoid:
      return llvm::Type::getVoidTy(L.C);
    case spv::Op::OpTypeCooperativeMatrixKHR:
      return L.matrix_type(id);  // one rep for the whole subgroup, whatever the mode
    default:
      L.fail("values of type id " + std::to_string(id) + " (" + spv_op_name(t.op) + ") are not supported");
  }
}
}  // namespace

llvm::Type* Lowerer::lane_rep_type(Id id) {
  if (auto it = rep_cache_.find(id); it != rep_cache_.end()) return it->second;
  llvm::Type* r = rep_of(*this, id, [&](llvm::Type* s) -> llvm::Type* { return llvm::FixedVectorType::get(s, N); },
                         [&](Id e) { return lane_rep_type(e); });
  rep_cache_[id] = r;
  return r;
}

llvm::Type* Lowerer::urep_type(Id id) {
  if (auto it = urep_cache_.find(id); it != urep_cache_.end()) return it->second;
  llvm::Type* r = rep_of(*this, id, [](llvm::Type* s) { return s; }, [&](Id e) { return urep_type(e); });
  urep_cache_[id] = r;
  return r;
}

// ---- memory layout --------------------------------------------------------------------

uint64_t Lowerer::array_stride(Id array_type) const {
  const Decoration* d = nullptr;
  if (m.has_decoration(array_type, uint32_t(spv::Decoration::ArrayStride), &d) && !d->args.empty())
    return d->args[0];
  MemLayout e = layout(type(array_type).elem);
  return (e.size + e.align - 1) / e.align * e.align;
}

uint64_t Lowerer::member_offset(Id struct_type, uint32_t member) const {
  auto it = m.decorations.find(struct_type);
  if (it != m.decorations.end())
    for (const Decoration& d : it->second)
      if (d.member == int32_t(member) && d.decoration == uint32_t(spv::Decoration::Offset) && !d.args.empty())
        return d.args[0];
  // Natural layout: members in order, each at its alignment.
  const TypeInfo& t = type(struct_type);
  uint64_t off = 0;
  for (uint32_t i = 0; i <= member && i < t.members.size(); ++i) {
    MemLayout l = layout(t.members[i]);
    off = (off + l.align - 1) / l.align * l.align;
    if (i == member) return off;
    off += l.size;
  }
  fail("struct member index out of range");
}

uint64_t Lowerer::matrix_stride(Id struct_type, uint32_t member) const {
  auto it = m.decorations.find(struct_type);
  if (it != m.decorations.end())
    for (const Decoration& d : it->second)
      if (d.member == int32_t(member)) {
        if (d.decoration == uint32_t(spv::Decoration::RowMajor))
          fail("row-major matrices in memory are not supported yet");
        if (d.decoration == uint32_t(spv::Decoration::MatrixStride) && !d.args.empty()) return d.args[0];
      }
  return 0;
}

MemLayout Lowerer::layout(Id id) const {
  const TypeInfo& t = type(id);
  switch (static_cast<spv::Op>(t.op)) {
    case spv::Op::OpTypeBool:
      return {1, 1};
    case spv::Op::OpTypeInt:
    case spv::Op::OpTypeFloat:
      return {t.width / 8u, t.width / 8u};
    case spv::Op::OpTypePointer:
      return {8, 8};
    case spv::Op::OpTypeVector: {
      MemLayout e = layout(t.elem);
      return {e.size * t.count, e.align};
    }
    case spv::Op::OpTypeTensorLayoutNV:  // opaque: held in memory (a Function variable) as its words
    case spv::Op::OpTypeTensorViewNV:
      return {4u * t.count, 4};
    case spv::Op::OpTypeMatrix: {
      MemLayout c = layout(t.elem);
      return {c.size * t.count, c.align};
    }
    case spv::Op::OpTypeArray: {
      MemLayout e = layout(t.elem);
      return {array_stride(id) * t.count, e.align};
    }
    case spv::Op::OpTypeRuntimeArray:
      return {0, layout(t.elem).align};
    case spv::Op::OpTypeStruct: {
      uint64_t end = 0;
      uint32_t align = 1;
      for (uint32_t i = 0; i < t.members.size(); ++i) {
        MemLayout l = layout(t.members[i]);
        align = std::max(align, l.align);
        end = std::max(end, member_offset(id, i) + l.size);
      }
      return {(end + align - 1) / align * align, align};
    }
    default:
      fail("type id " + std::to_string(id) + " has no memory layout");
  }
}

// ---- constants ------------------------------------------------------------------------

bool Lowerer::is_constant(Id id) const {
  const Instruction* g = m.global(id);
  return g && spv_op_is_constant(g->opcode);
}

uint64_t Lowerer::constant_u64(Id id) {
  const Instruction* g = m.global(id);
  if (!g) fail("id " + std::to_string(id) + " is not a constant");
  llvm::Value* v = constant(id);
  auto* c = llvm::dyn_cast<llvm::Constant>(v);
  if (!c) fail("id " + std::to_string(id) + " does not fold to a constant", g);
  if (auto* splat_c = c->getSplatValue()) c = splat_c;
  if (auto* ci = llvm::dyn_cast<llvm::ConstantInt>(c)) return ci->getZExtValue();
  fail("id " + std::to_string(id) + " is not an integer constant", g);
}

llvm::Value* Lowerer::constant(Id id) {
  auto& cache = scalar_mode ? uconst_cache_ : const_cache_;
  if (auto it = cache.find(id); it != cache.end()) return it->second;
  const Instruction* g = m.global(id);
  if (!g) fail("id " + std::to_string(id) + " is not a module-scope constant");
  auto op = static_cast<spv::Op>(g->opcode);
  llvm::Value* r = nullptr;
  // Specialization: a SpecId-decorated constant takes the application's value.
  const std::vector<uint8_t>* spec = nullptr;
  if (auto it = spec_values_.find(id); it != spec_values_.end()) spec = &it->second;
  if (holds_coopvec(g->result_type)) {
    r = coopvec_constant(*g);  // the same read-only buffer in both modes
    cache[id] = r;
    return r;
  }
  switch (op) {
    case spv::Op::OpConstantTrue:
    case spv::Op::OpConstantFalse:
    case spv::Op::OpSpecConstantTrue:
    case spv::Op::OpSpecConstantFalse: {
      bool v = op == spv::Op::OpConstantTrue || op == spv::Op::OpSpecConstantTrue;
      if (spec) {
        uint32_t b = 0;
        std::memcpy(&b, spec->data(), std::min<size_t>(4, spec->size()));
        v = b != 0;
      }
      llvm::Constant* c = llvm::ConstantInt::get(llvm::Type::getInt1Ty(C), v);
      r = scalar_mode ? c : llvm::ConstantVector::getSplat(llvm::ElementCount::getFixed(N), c);
      break;
    }
    case spv::Op::OpConstant:
    case spv::Op::OpSpecConstant: {
      const TypeInfo& t = type(g->result_type);
      uint64_t bits = 0;
      if (spec) {
        std::memcpy(&bits, spec->data(), std::min<size_t>(8, spec->size()));
      } else {
        if (g->operands.empty()) fail("constant without a value", g);
        bits = g->operands[0];
        if (t.width == 64 && g->operands.size() > 1) bits |= uint64_t(g->operands[1]) << 32;
      }
      llvm::Type* st = scalar_type(g->result_type);
      llvm::Constant* c;
      if (t.op == uint16_t(spv::Op::OpTypeFloat) && t.fkind == TypeInfo::FloatKind::Ieee) {
        llvm::APInt ai(t.width, bits);
        c = llvm::ConstantFP::get(st, llvm::APFloat(st->getFltSemantics(), ai));
      } else {
        c = llvm::ConstantInt::get(st, llvm::APInt(t.width, bits));
      }
      r = scalar_mode ? c : llvm::ConstantVector::getSplat(llvm::ElementCount::getFixed(N), c);
      break;
    }
    case spv::Op::OpConstantComposite:
    case spv::Op::OpSpecConstantComposite: {
      if (is_matrix(g->result_type)) {
        // One constituent: every element (SPV_KHR_cooperative_matrix, OpConstantComposite).
        if (g->operands.size() != 1) fail("a cooperative matrix constant has exactly one constituent", g);
        bool saved = scalar_mode;
        scalar_mode = true;
        auto* c = llvm::dyn_cast<llvm::Constant>(constant(g->operands[0]));
        scalar_mode = saved;
        if (!c) fail("cooperative matrix constant of a non-constant", g);
        r = matrix_constant(g->result_type, c);
        break;
      }
      llvm::Type* rt = rep_type(g->result_type);
      std::vector<llvm::Constant*> parts;
      unsigned expected = rt->isArrayTy() ? unsigned(rt->getArrayNumElements())
                          : rt->isStructTy() ? rt->getStructNumElements() : 0;
      if (g->operands.size() != expected) fail("composite constant with the wrong number of parts", g);
      for (size_t k = 0; k < g->operands.size(); ++k) {
        auto* c = llvm::dyn_cast<llvm::Constant>(constant(g->operands[k]));
        llvm::Type* want = rt->isArrayTy() ? rt->getArrayElementType() : rt->getStructElementType(unsigned(k));
        if (!c || c->getType() != want) fail("composite constant part of the wrong type", g);
        parts.push_back(c);
      }
      if (auto* at = llvm::dyn_cast<llvm::ArrayType>(rt)) r = llvm::ConstantArray::get(at, parts);
      else if (auto* st = llvm::dyn_cast<llvm::StructType>(rt)) r = llvm::ConstantStruct::get(st, parts);
      else fail("composite constant of a non-composite type", g);
      break;
    }
    case spv::Op::OpConstantNull:
    case spv::Op::OpUndef:
      r = llvm::Constant::getNullValue(rep_type(g->result_type));
      break;
    case spv::Op::OpSpecConstantOp: {
      if (g->operands.empty()) fail("OpSpecConstantOp without an opcode", g);
      Instruction in;
      in.opcode = uint16_t(g->operands[0]);
      in.result_type = g->result_type;
      in.result = g->result;
      in.operands.assign(g->operands.begin() + 1, g->operands.end());
      in.offset = g->offset;
      if (in.opcode == uint16_t(spv::Op::OpCooperativeMatrixLengthNV) ||
          in.opcode == uint16_t(spv::Op::OpCooperativeMatrixLengthKHR)) {
        // SPV_NV_cooperative_matrix, "Constant-Creation Instructions": the length of a
        // matrix type is a specialization constant operation.
        if (in.operands.size() != 1 || !is_matrix(in.operands[0]))
          fail("OpSpecConstantOp CooperativeMatrixLength needs a cooperative matrix type", g);
        llvm::Constant* len = B.getInt32(matrix_length(type(in.operands[0])));
        r = scalar_mode ? len : llvm::ConstantVector::getSplat(llvm::ElementCount::getFixed(N), len);
        break;
      }
      check_types(in);
      // The operands are constants, so the IRBuilder folds the result to a constant.
      // Nested OpSpecConstantOps come through here too: restore, do not reset.
      bool saved_raw = raw_define;
      raw_define = true;
      bool ok = lower_arith(in) || lower_composite(in) || lower_conversion(in);
      raw_define = saved_raw;
      if (!ok) fail("OpSpecConstantOp with opcode " + std::string(spv_op_name(in.opcode)) + " is not supported", g);
      r = F.values.at(id).v;
      F.values.erase(id);
      break;
    }
    default:
      fail("id " + std::to_string(id) + " is not a constant", g);
  }
  cache[id] = r;
  return r;
}

// ---- values -----------------------------------------------------------------------------

llvm::Value* Lowerer::splat(llvm::Value* scalar) { return scalar_mode ? scalar : B.CreateVectorSplat(N, scalar); }

llvm::Value* Lowerer::lane_index() {
  std::vector<llvm::Constant*> idx;
  for (uint32_t i = 0; i < N; ++i) idx.push_back(B.getInt32(i));
  return llvm::ConstantVector::get(idx);
}

llvm::Value* Lowerer::any(llvm::Value* mask_v) { return B.CreateOrReduce(mask_v); }

llvm::Value* Lowerer::first_active_lane(llvm::Value* mask_v) {
  llvm::Value* bits = B.CreateBitCast(mask_v, B.getIntNTy(N));
  return B.CreateZExtOrTrunc(B.CreateBinaryIntrinsic(llvm::Intrinsic::cttz, bits, B.getTrue()), B.getInt32Ty());
}

llvm::Value* Lowerer::zero_rep(Id t) { return llvm::Constant::getNullValue(rep_type(t)); }

llvm::Value* Lowerer::map_leaves(llvm::Value* a, const std::function<llvm::Value*(llvm::Value*)>& f) {
  llvm::Type* t = a->getType();
  if (is_leaf(t)) return f(a);
  unsigned n = t->isArrayTy() ? t->getArrayNumElements() : t->getStructNumElements();
  llvm::Value* out = nullptr;
  std::vector<llvm::Value*> parts;
  for (unsigned i = 0; i < n; ++i) parts.push_back(map_leaves(B.CreateExtractValue(a, i), f));
  // The result may have a different leaf type (comparisons, conversions).
  std::vector<llvm::Type*> pts;
  for (auto* p : parts) pts.push_back(p->getType());
  llvm::Type* rt = t->isArrayTy() ? static_cast<llvm::Type*>(llvm::ArrayType::get(pts[0], n))
                                  : static_cast<llvm::Type*>(llvm::StructType::get(C, pts));
  out = llvm::PoisonValue::get(rt);
  for (unsigned i = 0; i < n; ++i) out = B.CreateInsertValue(out, parts[i], i);
  return out;
}

llvm::Value* Lowerer::map_leaves2(llvm::Value* a, llvm::Value* b,
                                  const std::function<llvm::Value*(llvm::Value*, llvm::Value*)>& f) {
  llvm::Type* t = a->getType();
  if (is_leaf(t)) return f(a, b);
  unsigned n = t->isArrayTy() ? t->getArrayNumElements() : t->getStructNumElements();
  std::vector<llvm::Value*> parts;
  for (unsigned i = 0; i < n; ++i)
    parts.push_back(map_leaves2(B.CreateExtractValue(a, i), B.CreateExtractValue(b, i), f));
  std::vector<llvm::Type*> pts;
  for (auto* p : parts) pts.push_back(p->getType());
  llvm::Type* rt = t->isArrayTy() ? static_cast<llvm::Type*>(llvm::ArrayType::get(pts[0], n))
                                  : static_cast<llvm::Type*>(llvm::StructType::get(C, pts));
  llvm::Value* out = llvm::PoisonValue::get(rt);
  for (unsigned i = 0; i < n; ++i) out = B.CreateInsertValue(out, parts[i], i);
  return out;
}

llvm::Value* Lowerer::map_leaves3(
    llvm::Value* a, llvm::Value* b, llvm::Value* c,
    const std::function<llvm::Value*(llvm::Value*, llvm::Value*, llvm::Value*)>& f) {
  llvm::Type* t = a->getType();
  if (is_leaf(t)) return f(a, b, c);
  unsigned n = t->isArrayTy() ? t->getArrayNumElements() : t->getStructNumElements();
  std::vector<llvm::Value*> parts;
  for (unsigned i = 0; i < n; ++i)
    parts.push_back(map_leaves3(B.CreateExtractValue(a, i), B.CreateExtractValue(b, i),
                                B.CreateExtractValue(c, i), f));
  std::vector<llvm::Type*> pts;
  for (auto* p : parts) pts.push_back(p->getType());
  llvm::Type* rt = t->isArrayTy() ? static_cast<llvm::Type*>(llvm::ArrayType::get(pts[0], n))
                                  : static_cast<llvm::Type*>(llvm::StructType::get(C, pts));
  llvm::Value* out = llvm::PoisonValue::get(rt);
  for (unsigned i = 0; i < n; ++i) out = B.CreateInsertValue(out, parts[i], i);
  return out;
}

llvm::Value* Lowerer::select_rep(llvm::Value* cond, llvm::Value* t, llvm::Value* f) {
  return map_leaves2(t, f, [&](llvm::Value* x, llvm::Value* y) { return B.CreateSelect(cond, x, y); });
}

llvm::Value* Lowerer::merge_rep(Id type_id, llvm::Value* cond, llvm::Value* t, llvm::Value* f) {
  // A cooperative vector's buffer is written under the mask already (lowerer.h).
  if (holds_coopvec(type_id)) return t;
  if (!holds_matrix(type_id)) return select_rep(cond, t, f);
  const TypeInfo& ti = type(type_id);
  if (is_matrix(type_id)) {
    // A matrix is the whole scope's (SPV_KHR_cooperative_matrix requires every
    // invocation of the scope to run an instruction on it, in uniform control flow):
    // a per-lane mask selects nothing in it. A uniform condition still picks one.
    return cond->getType()->isVectorTy() ? t : B.CreateSelect(cond, t, f);
  }
  bool array = ti.op == uint16_t(spv::Op::OpTypeArray);
  unsigned n = array ? ti.count : unsigned(ti.members.size());
  llvm::Value* out = t;
  for (unsigned i = 0; i < n; ++i)
    out = B.CreateInsertValue(out, merge_rep(array ? ti.elem : ti.members[i], cond, B.CreateExtractValue(t, i),
                                             B.CreateExtractValue(f, i)), i);
  return out;
}

}  // namespace coopvk::jit
