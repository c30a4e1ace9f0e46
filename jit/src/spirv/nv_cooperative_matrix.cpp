// rewrite_nv_cooperative_matrix: see nv_cooperative_matrix.h.
#include "spirv/nv_cooperative_matrix.h"

#include <spirv/unified1/spirv.hpp11>

#include <utility>

namespace coopvk::jit {

namespace {
using Op = spv::Op;

// Whether `value`'s type is a cooperative matrix whose component is a signed integer.
bool signed_components(const Module& m, Id value) {
  const Instruction* d = m.def(value);
  const Instruction* t = d ? m.global(d->result_type) : nullptr;
  if (!t || t->opcode != uint16_t(Op::OpTypeCooperativeMatrixNV) || t->operands.empty()) return false;
  const Instruction* c = m.global(t->operands[0]);
  return c && c->opcode == uint16_t(Op::OpTypeInt) && c->operands.size() >= 2 && c->operands[1] == 1;
}
}  // namespace

uint32_t rewrite_nv_cooperative_matrix(Module& m) {
  uint32_t rewritten = 0;
  for (Function& f : m.functions)
    for (Block& b : f.blocks)
      for (Instruction& in : b.body) {
        auto& o = in.operands;
        switch (static_cast<Op>(in.opcode)) {
          case Op::OpCooperativeMatrixLoadNV:
            if (o.size() < 3) continue;
            std::swap(o[1], o[2]);  // (Pointer, ColumnMajor, Stride, ...): both ids
            in.opcode = uint16_t(Op::OpCooperativeMatrixLoadKHR);
            break;
          case Op::OpCooperativeMatrixStoreNV:
            if (o.size() < 4) continue;
            std::swap(o[2], o[3]);
            in.opcode = uint16_t(Op::OpCooperativeMatrixStoreKHR);
            break;
          case Op::OpCooperativeMatrixMulAddNV: {
            if (o.size() != 3) continue;
            using M = spv::CooperativeMatrixOperandsMask;
            uint32_t flags = 0;
            if (signed_components(m, o[0])) flags |= uint32_t(M::MatrixASignedComponentsKHR);
            if (signed_components(m, o[1])) flags |= uint32_t(M::MatrixBSignedComponentsKHR);
            if (signed_components(m, o[2])) flags |= uint32_t(M::MatrixCSignedComponentsKHR);
            if (signed_components(m, in.result)) flags |= uint32_t(M::MatrixResultSignedComponentsKHR);
            o.push_back(flags);  // a literal: id_operands stay {0, 1, 2}
            in.opcode = uint16_t(Op::OpCooperativeMatrixMulAddKHR);
            break;
          }
          case Op::OpCooperativeMatrixLengthNV:
            in.opcode = uint16_t(Op::OpCooperativeMatrixLengthKHR);
            break;
          default:
            continue;
        }
        ++rewritten;
      }
  return rewritten;
}

}  // namespace coopvk::jit
