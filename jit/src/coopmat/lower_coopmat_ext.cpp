// SPV_EXT_cooperative_matrix_maintenance1 at subgroup scope, on the matrix rep of
// lower_coopmat.cpp ([rows x <cols x T>], row-major, one value for the whole subgroup):
// use conversions and transposes, reductions, per-element operations and the coordinate
// of a component.
//
// The callbacks of OpCooperativeMatrixReduceEXT and OpCooperativeMatrixPerElementOpEXT
// are ordinary lowered SPIR-V functions, which take one lane vector per parameter. So the
// tile is processed N elements at a time: a call gets N elements side by side as if they
// were N invocations' values (and their rows, columns or partners likewise), and LLVM
// inlines the callback into vector code over the tile. Padding lanes (past the last
// element) run with their mask bit off and hold a copy of a real element, so a callback
// that divides never sees a value the matrix does not have. The calls are unordered and
// may repeat (the SPIR-V text of both instructions), which this relies on.
//
// Element order within a call follows the per-invocation rule of lower_coopmat.cpp
// (invocation l owns elements j * N + l): a per-element callback's extra non-matrix
// operands are each invocation's own values, passed for the elements it owns.
#include <llvm/IR/Constants.h>
#include <llvm/Support/raw_ostream.h>

#include "lower/lowerer.h"
#include "spirv/spirv_enums.h"

namespace coopvk::jit {

namespace {
using Op = spv::Op;
constexpr uint32_t kUseB = 1, kUseAccumulator = 2;

llvm::Value* element(llvm::IRBuilder<>& B, llvm::Value* mat, uint32_t r, uint32_t c) {
  return B.CreateExtractElement(B.CreateExtractValue(mat, r), uint64_t(c));
}
}  // namespace

llvm::Value* Lowerer::matrix_transpose(llvm::Value* mat, const TypeInfo& t) {
  // Source rows x cols -> cols x rows: row c of the result holds column c of the source.
  llvm::Type* et = llvm::cast<llvm::ArrayType>(mat->getType())->getElementType()->getScalarType();
  auto* row_t = llvm::FixedVectorType::get(et, t.rows);
  llvm::Value* out = llvm::PoisonValue::get(llvm::ArrayType::get(row_t, t.cols));
  for (uint32_t c = 0; c < t.cols; ++c) {
    llvm::Value* row = llvm::PoisonValue::get(row_t);
    for (uint32_t r = 0; r < t.rows; ++r) row = B.CreateInsertElement(row, element(B, mat, r, c), uint64_t(r));
    out = B.CreateInsertValue(out, row, c);
  }
  return out;
}

llvm::Value* Lowerer::matrix_lanes(llvm::Value* mat, const std::vector<std::pair<uint32_t, uint32_t>>& at) {
  // Lane l gets element at[l]; lanes past at.size() repeat at[0] (padding, masked off).
  llvm::Type* et = llvm::cast<llvm::ArrayType>(mat->getType())->getElementType()->getScalarType();
  llvm::Value* v = llvm::PoisonValue::get(lanes(et));
  for (uint32_t l = 0; l < N; ++l) {
    auto [r, c] = at[l < at.size() ? l : 0];
    v = B.CreateInsertElement(v, element(B, mat, r, c), uint64_t(l));
  }
  return v;
}

llvm::Value* Lowerer::lane_prefix_mask(uint32_t count) {
  std::vector<llvm::Constant*> bits;
  for (uint32_t l = 0; l < N; ++l) bits.push_back(B.getInt1(l < count));
  return llvm::ConstantVector::get(bits);
}

llvm::Value* Lowerer::call_matrix_callback(Id func, const std::vector<llvm::Value*>& lane_args, llvm::Value* call_mask,
                                           llvm::Type* ret_t, const Instruction& in) {
  auto it = functions.find(func);
  if (it == functions.end()) fail("the callback is not a function of this module", &in);
  llvm::Function* f = it->second;
  std::vector<llvm::Value*> args{F.ctx, call_mask};
  args.insert(args.end(), lane_args.begin(), lane_args.end());
  llvm::FunctionType* ft = f->getFunctionType();
  if (ft->getNumParams() != args.size()) fail("the callback's parameter count does not match its operands", &in);
  auto type_name = [](llvm::Type* t) {
    std::string s;
    llvm::raw_string_ostream os(s);
    t->print(os);
    return os.str();
  };
  for (size_t i = 0; i < args.size(); ++i)
    if (ft->getParamType(unsigned(i)) != args[i]->getType())
      fail("callback parameter " + std::to_string(i) + " is " + type_name(ft->getParamType(unsigned(i))) +
               ", its operand " + type_name(args[i]->getType()),
           &in);
  if (ft->getReturnType() != ret_t)
    fail("the callback's return type does not match the matrix component type", &in);
  return B.CreateCall(f, args);
}

// Result of lane vectors per chunk of N consecutive row-major elements of `t`.
llvm::Value* Lowerer::matrix_from_chunks(const std::vector<llvm::Value*>& chunks, Id type_id) {
  const TypeInfo& t = type(type_id);
  llvm::Type* mt = matrix_type(type_id);
  auto* row_t = llvm::cast<llvm::FixedVectorType>(mt->getArrayElementType());
  llvm::Value* mat = llvm::PoisonValue::get(mt);
  for (uint32_t r = 0; r < t.rows; ++r) {
    llvm::Value* row = llvm::PoisonValue::get(row_t);
    for (uint32_t c = 0; c < t.cols; ++c) {
      uint64_t e = uint64_t(r) * t.cols + c;
      row = B.CreateInsertElement(row, B.CreateExtractElement(chunks[e / N], e % N), uint64_t(c));
    }
    mat = B.CreateInsertValue(mat, row, r);
  }
  return mat;
}

void Lowerer::check_callback_signature(Id func, const std::vector<Id>& want_params, Id want_return,
                                       const Instruction& in) {
  const Instruction* def = m.def(func);
  if (!def || def->opcode != uint16_t(Op::OpFunction)) fail("the callback operand is not a function", &in);
  if (def->result_type != want_return) fail("the callback's return type is not the matrix component type", &in);
  const TypeInfo& ft = type(def->operands.at(1));
  if (ft.members.size() != want_params.size()) fail("the callback's parameter count does not match its operands", &in);
  for (size_t i = 0; i < want_params.size(); ++i)
    if (ft.members[i] != want_params[i]) fail("a callback parameter's type does not match its operand", &in);
}

// ---- OpCooperativeMatrixPerElementOpEXT --------------------------------------------------

void Lowerer::lower_matrix_per_element(const Instruction& in) {
  const auto& o = in.operands;
  if (o.size() < 2) fail("OpCooperativeMatrixPerElementOpEXT needs a matrix and a function", &in);
  Id mat_t = type_of(o[0]);
  if (!is_matrix(mat_t) || mat_t != in.result_type) fail("the result type must be the matrix operand's type", &in);
  const TypeInfo& t = type(mat_t);
  Id u32 = 0;
  {
    const Instruction* def = m.def(o[1]);
    if (!def || def->opcode != uint16_t(Op::OpFunction)) fail("the callback operand is not a function", &in);
    const TypeInfo& ft = type(def->operands.at(1));
    if (ft.members.size() < 3) fail("the callback takes row, column and element first", &in);
    u32 = ft.members[0];
    const TypeInfo& it = type(u32);
    if (it.op != uint16_t(Op::OpTypeInt) || it.width != 32 || ft.members[1] != u32)
      fail("the callback's first two parameters must be one 32-bit integer type", &in);
  }
  std::vector<Id> want{u32, u32, t.elem};
  for (size_t k = 2; k < o.size(); ++k) {
    Id ot = type_of(o[k]);
    if (is_matrix(ot)) {
      if (ot != mat_t) fail("a matrix operand of the callback must have the matrix's type", &in);
      want.push_back(t.elem);
    } else {
      want.push_back(ot);
    }
  }
  check_callback_signature(o[1], want, t.elem, in);
  llvm::Value* mat = value_v(o[0]).v;
  std::vector<llvm::Value*> extra;  // per extra operand: a matrix rep, or a lane rep
  for (size_t k = 2; k < o.size(); ++k)
    extra.push_back(is_matrix(type_of(o[k])) ? value_v(o[k]).v
                                             : rep_pointer_type(type_of(o[k])) ? value_v(o[k]).v : value(o[k]));
  const uint32_t total = t.rows * t.cols;
  llvm::Type* elem_lanes = lanes(scalar_type(t.elem));
  // A workgroup-scope share's rows are its rows of the whole matrix, and its padding rows
  // (past the matrix) are not the callback's to see (lower_coopmat_workgroup.cpp).
  llvm::Value* row0 = split_matrix(t) ? B.CreateVectorSplat(N, wg_row0(t)) : nullptr;
  std::vector<llvm::Value*> chunks;
  for (uint32_t j = 0; j * N < total; ++j) {
    std::vector<std::pair<uint32_t, uint32_t>> at;
    std::vector<llvm::Constant*> rows, cols;
    for (uint32_t l = 0; l < N; ++l) {
      uint64_t e = uint64_t(j) * N + l;
      if (e < total) at.push_back({uint32_t(e / t.cols), uint32_t(e % t.cols)});
      auto [r, c] = at[l < at.size() ? l : 0];
      rows.push_back(B.getInt32(r));
      cols.push_back(B.getInt32(c));
    }
    llvm::Value* row_v = llvm::ConstantVector::get(rows);
    llvm::Value* call_mask = lane_prefix_mask(uint32_t(at.size()));
    if (row0) {
      row_v = B.CreateAdd(row_v, row0);
      call_mask = B.CreateAnd(call_mask, B.CreateICmpULT(row_v, B.CreateVectorSplat(N, B.getInt32(t.full_rows))));
    }
    std::vector<llvm::Value*> args{row_v, llvm::ConstantVector::get(cols), matrix_lanes(mat, at)};
    for (size_t k = 2; k < o.size(); ++k)
      args.push_back(is_matrix(type_of(o[k])) ? matrix_lanes(extra[k - 2], at) : extra[k - 2]);
    chunks.push_back(call_matrix_callback(o[1], args, call_mask, elem_lanes, in));
  }
  define_v(in.result, {matrix_from_chunks(chunks, in.result_type), true});
}

// ---- OpCooperativeMatrixReduceEXT ----------------------------------------------------------

void Lowerer::lower_matrix_reduce(const Instruction& in) {
  const auto& o = in.operands;
  if (o.size() != 3) fail("OpCooperativeMatrixReduceEXT takes a matrix, a mode and a function", &in);
  Id src_t = type_of(o[0]);
  if (!is_matrix(src_t) || !is_matrix(in.result_type)) fail("reduction of a non-matrix", &in);
  const TypeInfo &ts = type(src_t), &tr = type(in.result_type);
  if (ts.elem != tr.elem) fail("a reduction's result must have the matrix's component type", &in);
  if (ts.use != kUseAccumulator || tr.use != kUseAccumulator)
    fail("reductions take and give accumulator matrices (MatrixAccumulatorKHR)", &in);
  check_callback_signature(o[2], {ts.elem, ts.elem}, ts.elem, in);
  const uint32_t mode = o[1];
  const uint32_t row = uint32_t(spv::CooperativeMatrixReduceMask::Row);
  if (split_matrix(ts)) {
    // A row reduction keeps each row where it is; the others combine rows of several
    // subgroups: on the gathered matrix, keeping this subgroup's rows of the result.
    if (mode == row) {
      if (tr.full_rows != ts.full_rows) fail("a row reduction's result must have the matrix's row count", &in);
      define_v(in.result, {reduce_matrix(in, value_v(o[0]).v), true});
      return;
    }
    llvm::Value* whole = wg_whole(value_v(o[0]).v, ts);
    llvm::Value* r;
    {
      WholeRows full(*this, {src_t, in.result_type});
      r = reduce_matrix(in, whole);
    }
    define_v(in.result, {wg_slice(r, tr), true});
    return;
  }
  define_v(in.result, {reduce_matrix(in, value_v(o[0]).v), true});
}

llvm::Value* Lowerer::reduce_matrix(const Instruction& in, llvm::Value* mat) {
  const auto& o = in.operands;
  const TypeInfo &ts = type(type_of(o[0])), &tr = type(in.result_type);
  using R = spv::CooperativeMatrixReduceMask;
  const uint32_t mode = o[1];
  const uint32_t row = uint32_t(R::Row), col = uint32_t(R::Column), quad = uint32_t(R::CooperativeMatrixReduce2x2);
  llvm::Value* all = lane_prefix_mask(N);
  llvm::Type* elem_lanes = lanes(scalar_type(ts.elem));
  auto combine = [&](llvm::Value* a, llvm::Value* b, llvm::Value* msk) {
    return call_matrix_callback(o[2], {a, b}, msk, elem_lanes, in);
  };
  // Combine lines of elements: for `count` independent reductions (lanes), each over
  // `length` elements; at(i, k) is element k of reduction i. Returns, per chunk of N
  // reductions, the lane vector of their results.
  auto reduce_lines = [&](uint32_t count, uint32_t length, auto at) {
    std::vector<llvm::Value*> out;
    for (uint32_t i0 = 0; i0 < count; i0 += N) {
      uint32_t here = std::min(N, count - i0);
      auto line = [&](uint32_t k) {
        std::vector<std::pair<uint32_t, uint32_t>> pos;
        for (uint32_t i = 0; i < here; ++i) pos.push_back(at(i0 + i, k));
        return matrix_lanes(mat, pos);
      };
      llvm::Value* msk = lane_prefix_mask(here);
      // A balanced tree over k: depth log2(length), independent calls at each level.
      std::vector<llvm::Value*> level;
      for (uint32_t k = 0; k < length; ++k) level.push_back(line(k));
      while (level.size() > 1) {
        std::vector<llvm::Value*> next;
        for (size_t k = 0; k + 1 < level.size(); k += 2) next.push_back(combine(level[k], level[k + 1], msk));
        if (level.size() % 2) next.push_back(level.back());
        level.swap(next);
      }
      out.push_back(level[0]);
    }
    return out;
  };
  auto lane_of = [&](const std::vector<llvm::Value*>& chunks, uint32_t i) {
    return B.CreateExtractElement(chunks[i / N], uint64_t(i % N));
  };
  llvm::Type* mt = matrix_type(in.result_type);
  auto* row_t = llvm::cast<llvm::FixedVectorType>(mt->getArrayElementType());
  llvm::Value* result = llvm::PoisonValue::get(mt);
  if (mode == row || mode == col || mode == (row | col)) {
    if (mode == row && tr.rows != ts.rows) fail("a row reduction's result must have the matrix's row count", &in);
    if (mode == col && tr.cols != ts.cols) fail("a column reduction's result must have the matrix's column count", &in);
    std::vector<llvm::Value*> rows_v, cols_v;
    if (mode != col)
      rows_v = reduce_lines(ts.rows, ts.cols, [](uint32_t i, uint32_t k) { return std::pair{i, k}; });
    else
      cols_v = reduce_lines(ts.cols, ts.rows, [](uint32_t i, uint32_t k) { return std::pair{k, i}; });
    if (mode == (row | col)) {
      // The row results, combined across rows: lane 0 of a balanced tree of splats.
      std::vector<llvm::Value*> level;
      for (uint32_t r = 0; r < ts.rows; ++r) level.push_back(B.CreateVectorSplat(N, lane_of(rows_v, r)));
      while (level.size() > 1) {
        std::vector<llvm::Value*> next;
        for (size_t k = 0; k + 1 < level.size(); k += 2) next.push_back(combine(level[k], level[k + 1], all));
        if (level.size() % 2) next.push_back(level.back());
        level.swap(next);
      }
      llvm::Value* row = B.CreateVectorSplat(tr.cols, B.CreateExtractElement(level[0], uint64_t(0)));
      for (uint32_t r = 0; r < tr.rows; ++r) result = B.CreateInsertValue(result, row, r);
    } else if (mode == row) {
      for (uint32_t r = 0; r < tr.rows; ++r)
        result = B.CreateInsertValue(result, B.CreateVectorSplat(tr.cols, lane_of(rows_v, r)), r);
    } else {
      llvm::Value* row = llvm::PoisonValue::get(row_t);
      for (uint32_t c = 0; c < tr.cols; ++c) row = B.CreateInsertElement(row, lane_of(cols_v, c), uint64_t(c));
      for (uint32_t r = 0; r < tr.rows; ++r) result = B.CreateInsertValue(result, row, r);
    }
  } else if (mode == quad) {
    if (ts.rows != 2 * tr.rows || ts.cols != 2 * tr.cols)
      fail("a 2x2 reduction's result must have half the matrix's rows and columns", &in);
    // Result element (r, c) combines (2r, 2c), (2r+1, 2c), (2r, 2c+1), (2r+1, 2c+1).
    std::vector<llvm::Value*> chunks;
    const uint32_t total = tr.rows * tr.cols;
    for (uint32_t j = 0; j * N < total; ++j) {
      std::vector<std::pair<uint32_t, uint32_t>> p[4];
      for (uint32_t l = 0; l < N && uint64_t(j) * N + l < total; ++l) {
        uint32_t e = j * N + l, r = e / tr.cols, c = e % tr.cols;
        p[0].push_back({2 * r, 2 * c});
        p[1].push_back({2 * r + 1, 2 * c});
        p[2].push_back({2 * r, 2 * c + 1});
        p[3].push_back({2 * r + 1, 2 * c + 1});
      }
      llvm::Value* msk = lane_prefix_mask(uint32_t(p[0].size()));
      llvm::Value* a = combine(matrix_lanes(mat, p[0]), matrix_lanes(mat, p[1]), msk);
      llvm::Value* b = combine(matrix_lanes(mat, p[2]), matrix_lanes(mat, p[3]), msk);
      chunks.push_back(combine(a, b, msk));
    }
    result = matrix_from_chunks(chunks, in.result_type);
  } else {
    fail("reduce mode " + std::to_string(mode) + " is not Row, Column, Row|Column or 2x2", &in);
  }
  return result;
}

// ---- use conversions, transposes, coordinates -------------------------------------------

bool Lowerer::matrix_use_change_allowed(const TypeInfo& from, const TypeInfo& to) const {
  // SPV_EXT_cooperative_matrix_maintenance1, "Conversion Instructions": accumulator to A
  // or B, or A or B to accumulator.
  if (from.use == to.use) return true;
  return (from.use == kUseAccumulator) != (to.use == kUseAccumulator);
}

llvm::Value* Lowerer::matrix_reshaped_source(const Instruction& in, const TypeInfo& st, const TypeInfo& rt) {
  // The source of a conversion, transposed when the instruction says so, checked against
  // the result's shape and use.
  const bool transpose = m.has_decoration(in.result, uint32_t(spv::Decoration::CooperativeMatrixTransposeEXT));
  if (st.scope != rt.scope) fail("conversion between cooperative matrices of different scopes", &in);
  if ((st.use != rt.use || transpose) && !conversions_enabled())
    fail("changing a cooperative matrix's use or transposing it needs the cooperativeMatrixConversions feature of "
         "VK_EXT_cooperative_matrix_maintenance1 or VK_NV_cooperative_matrix2",
         &in);
  if (!matrix_use_change_allowed(st, rt))
    fail("conversion between cooperative matrix uses other than accumulator <-> A or B", &in);
  llvm::Value* src = value_v(in.operands.at(0)).v;
  if (transpose) {
    if (st.use != kUseAccumulator || rt.use == kUseAccumulator)
      fail("a transposing conversion goes from an accumulator to an A or B matrix", &in);
    auto whole = [](const TypeInfo& t) { return t.full_rows ? t.full_rows : t.rows; };
    if (whole(st) != rt.cols || st.cols != whole(rt))
      fail("a transposing conversion's result has the source's columns as rows", &in);
    return transposed(in.operands[0], type_of(in.operands[0]), in.result_type);
  }
  if (st.full_rows != rt.full_rows) fail("conversion between cooperative matrices of different shapes", &in);
  if (st.rows != rt.rows || st.cols != rt.cols) fail("conversion between cooperative matrices of different shapes", &in);
  return src;
}

void Lowerer::lower_matrix_convert_use(const Instruction& in) {
  Id src_t = type_of(in.operands.at(0));
  if (!is_matrix(src_t) || !is_matrix(in.result_type)) fail("OpCooperativeMatrixConvertUseEXT of a non-matrix", &in);
  const TypeInfo &st = type(src_t), &rt = type(in.result_type);
  const TypeInfo &se = type(st.elem), &re = type(rt.elem);
  bool same = st.elem == rt.elem || (se.op == uint16_t(Op::OpTypeInt) && re.op == uint16_t(Op::OpTypeInt) && se.width == re.width);
  if (!same) fail("OpCooperativeMatrixConvertUseEXT keeps the component type (up to integer signedness)", &in);
  if (st.use == rt.use) fail("OpCooperativeMatrixConvertUseEXT must change the use", &in);
  define_v(in.result, {matrix_reshaped_source(in, st, rt), true});
}

void Lowerer::lower_matrix_coordinate(const Instruction& in) {
  const auto& o = in.operands;
  if (o.size() != 2 || !is_matrix(type_of(o[0]))) fail("OpCooperativeMatrixGetCoordinateEXT takes a matrix and an index", &in);
  const TypeInfo& t = type(type_of(o[0]));
  const TypeInfo& rt = type(in.result_type);
  const TypeInfo& it = type(type_of(o[1]));
  if (rt.op != uint16_t(Op::OpTypeVector) || rt.count != 2 || type(rt.elem).op != uint16_t(Op::OpTypeInt) ||
      type(rt.elem).width != 32)
    fail("the coordinate is a vector of two 32-bit integers", &in);
  if (it.op != uint16_t(Op::OpTypeInt) || it.width != 32) fail("the component index is a 32-bit integer", &in);
  // Component j of invocation l is element e = j * N + l (lower_coopmat.cpp): (e / cols, e % cols).
  // An index past the end gives some coordinate (the result is undefined then).
  llvm::Value* j = value(o[1]);
  llvm::Value* e = B.CreateAdd(B.CreateMul(j, B.CreateVectorSplat(N, B.getInt32(N))), lane_index());
  llvm::Value* cols = B.CreateVectorSplat(N, B.getInt32(t.cols));
  llvm::Value* coord = llvm::PoisonValue::get(lane_rep_type(in.result_type));
  llvm::Value* r = B.CreateUDiv(e, cols);
  if (split_matrix(t)) r = B.CreateAdd(r, B.CreateVectorSplat(N, wg_row0(t)));  // the share's rows of the whole
  coord = B.CreateInsertValue(coord, r, 0);
  coord = B.CreateInsertValue(coord, B.CreateURem(e, cols), 1);
  define_v(in.result, {coord, false});
}

void Lowerer::lower_matrix_transpose_nv(const Instruction& in) {
  // SPV_NV_cooperative_matrix2, OpCooperativeMatrixTransposeNV: an accumulator to a B
  // matrix of the swapped shape. The component type may change too (the text does not
  // require it to match, and the CTS's transpose_acc_to_b cases change it): the
  // transposed value is then converted as OpFConvert / OpSConvert / OpUConvert would.
  Id src_t = type_of(in.operands.at(0));
  if (!is_matrix(src_t) || !is_matrix(in.result_type)) fail("OpCooperativeMatrixTransposeNV of a non-matrix", &in);
  const TypeInfo &st = type(src_t), &rt = type(in.result_type);
  if (st.scope != rt.scope) fail("OpCooperativeMatrixTransposeNV between cooperative matrices of different scopes", &in);
  if (st.use != kUseAccumulator || rt.use != kUseB)
    fail("OpCooperativeMatrixTransposeNV goes from an accumulator to a B matrix", &in);
  auto whole = [](const TypeInfo& t) { return t.full_rows ? t.full_rows : t.rows; };
  if (whole(st) != rt.cols || st.cols != whole(rt))
    fail("OpCooperativeMatrixTransposeNV's result has the source's columns as rows", &in);
  llvm::Value* transposed = this->transposed(in.operands[0], src_t, in.result_type);
  if (st.elem != rt.elem) {
    // The value conversion SPIR-V would spell for these component types.
    const TypeInfo &se = type(st.elem), &re = type(rt.elem);
    const bool fin = se.op == uint16_t(Op::OpTypeFloat), fout = re.op == uint16_t(Op::OpTypeFloat);
    Instruction conv = in;
    conv.opcode = uint16_t(fin && fout   ? Op::OpFConvert
                           : fin         ? (re.is_signed ? Op::OpConvertFToS : Op::OpConvertFToU)
                           : fout        ? (se.is_signed ? Op::OpConvertSToF : Op::OpConvertUToF)
                           : se.is_signed ? Op::OpSConvert
                                          : Op::OpUConvert);
    transposed = convert_leaves(conv, transposed, st.elem, rt.elem, matrix_type(in.result_type),
                                uint64_t(rt.rows) * rt.cols);
  }
  define_v(in.result, {transposed, true});
}

// The NV2 capabilities enable the same instructions as the EXT ones (same opcodes); either
// extension's feature allows them, and lower_module.cpp gates each capability on its own.
bool Lowerer::conversions_enabled() const { return opts.matrix_conversions || opts.nv2.conversions; }

bool Lowerer::lower_coopmat_ext(const Instruction& in) {
  static const char* const kEither = " feature of VK_EXT_cooperative_matrix_maintenance1 or VK_NV_cooperative_matrix2";
  switch (static_cast<Op>(in.opcode)) {
    case Op::OpCooperativeMatrixConvertUseEXT:  // = OpCooperativeMatrixConvertNV
      if (!conversions_enabled())
        fail(std::string("OpCooperativeMatrixConvertUseEXT needs the cooperativeMatrixConversions") + kEither, &in);
      lower_matrix_convert_use(in);
      return true;
    case Op::OpCooperativeMatrixTransposeNV:
      if (!opts.nv2.conversions)
        fail("OpCooperativeMatrixTransposeNV needs VK_NV_cooperative_matrix2's cooperativeMatrixConversions feature", &in);
      lower_matrix_transpose_nv(in);
      return true;
    case Op::OpCooperativeMatrixReduceEXT:  // = OpCooperativeMatrixReduceNV
      if (!opts.matrix_reductions && !opts.nv2.reductions)
        fail(std::string("OpCooperativeMatrixReduceEXT needs the cooperativeMatrixReductions") + kEither, &in);
      lower_matrix_reduce(in);
      return true;
    case Op::OpCooperativeMatrixPerElementOpEXT:  // = OpCooperativeMatrixPerElementOpNV
      if (!opts.matrix_per_element && !opts.nv2.per_element)
        fail(std::string("OpCooperativeMatrixPerElementOpEXT needs the cooperativeMatrixPerElementOperations") + kEither,
             &in);
      lower_matrix_per_element(in);
      return true;
    case Op::OpCooperativeMatrixGetCoordinateEXT:
      if (!opts.matrix_get_coordinate)
        fail("OpCooperativeMatrixGetCoordinateEXT needs VK_EXT_cooperative_matrix_maintenance1's "
             "cooperativeMatrixGetCoordinate feature", &in);
      lower_matrix_coordinate(in);
      return true;
    default:
      return false;
  }
}

}  // namespace coopvk::jit
