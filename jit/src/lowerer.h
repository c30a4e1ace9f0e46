// SPIR-V -> LLVM IR for one compute entry point, in the subgroup-as-SIMD model of
// DESIGN.md: one LLVM function runs one subgroup; each SPIR-V value of an invocation is
// one lane of an LLVM vector (structure of arrays).
//
// Representations ("reps") of SPIR-V values:
//   scalar T          <N x T>            (bool: <N x i1>)
//   vector of M       [M x <N x T>]
//   matrix / array    [K x rep(element)]
//   struct            { rep(member)... }
//   pointer           <N x ptr>          one address per lane
// Memory is byte-addressed with the SPIR-V layout of the storage class (explicit Offset/
// ArrayStride decorations for buffers, natural C layout otherwise), and every scalar
// access is a masked gather/scatter over the lane addresses, so Function, Private,
// Workgroup, StorageBuffer, Uniform, PushConstant and PhysicalStorageBuffer memory are
// one mechanism. Function/Private variables give each lane its own copy.
//
// Control flow (lower_control_flow.cpp): blocks run in a reverse post-order of the CFG
// in which every construct precedes its merge block; each block has an execution mask,
// runs only when some lane is active, and hands its lanes to its successors. A back edge
// jumps back to the loop header while any lane took it. Values used outside their block
// live in per-function slots updated under the mask, so lanes that left a loop early
// keep their own values.
#pragma once

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "coopvk/jit/compiler.h"
#include "coopvk/jit/spirv_module.h"

namespace coopvk::jit {

// Thrown for anything the lowering does not support or finds malformed; compile_compute
// turns it into a CompileResult error (pipeline creation fails, nothing runs).
struct LowerError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct TypeInfo {
  uint16_t op = 0;           // spv::Op of the type declaration
  uint32_t width = 0;        // bits, for int/float scalars
  bool is_signed = false;
  uint32_t float_encoding = 0;  // 0 IEEE; else spv::FPEncoding (bfloat16, fp8)
  Id elem = 0;               // component / element / column / pointee type
  uint32_t count = 0;        // components, columns, array length (0: runtime array)
  std::vector<Id> members;   // struct members
  uint32_t storage = 0;      // pointer storage class
};

// Byte layout of a type in memory.
struct MemLayout {
  uint64_t size = 0;
  uint32_t align = 1;
};

class Lowerer {
 public:
  Lowerer(const Module& m, const CompileOptions& opts, llvm::LLVMContext& ctx);

  // Builds the kernel function (name kKernelName) in a new LLVM module.
  std::unique_ptr<llvm::Module> lower();

  static constexpr const char* kKernelName = "coopvk_subgroup_main";

  uint32_t local_size[3] = {1, 1, 1};
  uint32_t shared_memory_bytes = 0;
  bool uses_barrier = false;

  // ---- shared helpers (defined across lower_*.cpp) ---------------------------------
  const Module& m;
  const CompileOptions& opts;
  llvm::LLVMContext& C;
  std::unique_ptr<llvm::Module> M;
  llvm::IRBuilder<> B;
  uint32_t N;  // lanes per subgroup

  [[noreturn]] void fail(const std::string& what, const Instruction* at = nullptr) const;

  // Types
  const TypeInfo& type(Id id) const;
  llvm::Type* scalar_type(Id id) const;    // the LLVM scalar of a scalar SPIR-V type
  llvm::Type* rep_type(Id id);              // rep of a value of this type
  llvm::VectorType* lanes(llvm::Type* scalar) const;
  bool is_scalar(Id t) const;
  Id scalar_of(Id t) const;                 // the scalar type of a scalar or vector type
  MemLayout layout(Id type) const;          // size/alignment in memory
  uint64_t member_offset(Id struct_type, uint32_t member) const;
  uint64_t array_stride(Id array_type) const;
  uint64_t matrix_stride(Id struct_type, uint32_t member) const;

  // Constants (module scope): rep of a constant id, built once.
  llvm::Value* constant(Id id);
  bool is_constant(Id id) const;
  uint64_t constant_u64(Id id);  // a scalar integer constant (for literal-like operands)

  // Values
  llvm::Value* value(Id id);  // rep of an id in the current block
  void define(Id id, llvm::Value* v);
  llvm::Value* splat(llvm::Value* scalar);
  llvm::Value* lane_index();  // <N x i32> 0..N-1
  llvm::Value* any(llvm::Value* mask);
  llvm::Value* first_active_lane(llvm::Value* mask);  // i32 index of the lowest set lane
  llvm::Value* zero_rep(Id type);
  // Applies f to each scalar leaf of reps a (and b, c) of the same shape.
  llvm::Value* map_leaves(llvm::Value* a, const std::function<llvm::Value*(llvm::Value*)>& f);
  llvm::Value* map_leaves2(llvm::Value* a, llvm::Value* b,
                           const std::function<llvm::Value*(llvm::Value*, llvm::Value*)>& f);
  llvm::Value* map_leaves3(llvm::Value* a, llvm::Value* b, llvm::Value* c,
                           const std::function<llvm::Value*(llvm::Value*, llvm::Value*, llvm::Value*)>& f);
  llvm::Value* select_rep(llvm::Value* cond, llvm::Value* t, llvm::Value* f);  // cond <N x i1>

  // Memory (lower_memory.cpp)
  llvm::Value* load_rep(Id type, llvm::Value* ptrs, llvm::Value* mask, uint32_t align_hint);
  void store_rep(Id type, llvm::Value* ptrs, llvm::Value* v, llvm::Value* mask, uint32_t align_hint);
  bool lower_memory_op(const Instruction& in);
  llvm::Value* offset_ptrs(llvm::Value* ptrs, llvm::Value* byte_offsets);  // <N x i64>
  llvm::Value* offset_ptrs(llvm::Value* ptrs, uint64_t byte_offset);
  // Pointer rep of a StorageBuffer/Uniform/PushConstant variable (not a descriptor array).
  llvm::Value* buffer_variable_pointer(const Instruction& var);
  // The descriptor (base, range) of a buffer variable; idx selects in a descriptor array.
  llvm::Value* descriptor_field(const Instruction& var, llvm::Value* idx, bool range);
  llvm::Value* index_to_i64(llvm::Value* idx_rep);
  // Lane-affine form of a vector value built by this lowering: lane l holds
  // base + l * stride (base a scalar int or pointer). Lets loads and stores of
  // consecutive or uniform addresses use vector or scalar accesses instead of
  // gathers (lower_memory_fast.cpp).
  struct Affine {
    llvm::Value* base;
    int64_t stride;  // in units of the element (bytes for pointers)
  };
  std::optional<Affine> affine(llvm::Value* v, int depth = 0);
  // For an OpLoad whose pointer is (an access chain into) a built-in Input variable, the
  // value computed directly, so index arithmetic on it stays analyzable; else null.
  llvm::Value* direct_builtin_load(Id pointer, Id result_type);
  // Gather/scatter that first checks at run time whether the active lanes' addresses are
  // all equal (one scalar access) or consecutive (one vector access).
  llvm::Value* load_lanes(llvm::Type* scalar, llvm::Value* ptrs, llvm::Align align, llvm::Value* m);
  void store_lanes(llvm::Value* v, llvm::Value* ptrs, llvm::Align align, llvm::Value* m);
  // Whether an Input built-in must be written to memory (some use is not a direct load).
  bool builtin_needs_memory(Id var) const;

  // Instruction families; each returns false if the opcode is not theirs.
  bool lower_arith(const Instruction& in);
  bool lower_composite(const Instruction& in);
  bool lower_conversion(const Instruction& in);
  bool lower_glsl(const Instruction& in);
  bool lower_subgroup(const Instruction& in);
  bool lower_atomic(const Instruction& in);
  bool lower_barrier(const Instruction& in);
  bool lower_integer_dot(const Instruction& in);
  // Rejects ill-typed operands before lowering (lower_typecheck.cpp).
  void check_types(const Instruction& in);
  Id type_of(Id value) const;       // SPIR-V type of a value id
  uint32_t components(Id t) const;  // 1 for scalars, n for vectors, 0 otherwise

  // Current-function state
  struct FunctionState {
    const Function* fn = nullptr;
    llvm::Function* llvm_fn = nullptr;
    llvm::Value* ctx = nullptr;        // pointer to the KernelCtx struct
    llvm::BasicBlock* entry = nullptr;  // allocas go here
    std::unordered_map<Id, llvm::Value*> values;  // defined in the current block
    std::unordered_map<Id, llvm::AllocaInst*> slots;  // values used across blocks
    std::unordered_map<Id, llvm::AllocaInst*> phi_slots;
    // Function variables used only by whole-variable OpLoad/OpStore live in an alloca of
    // their rep (registers after LLVM's mem2reg) instead of per-lane memory.
    std::unordered_map<Id, llvm::AllocaInst*> promoted;
    // The entry block runs first, exactly once, with every lane the function was called
    // with, and its code dominates the rest: its values (and locals stored only there)
    // are used directly elsewhere instead of through slots, which keeps them visible to
    // the address analysis (lower_memory_fast.cpp).
    std::unordered_map<Id, llvm::Value*> entry_values;
    std::unordered_map<Id, Id> forwarded;  // promoted local -> the one value stored in it
    std::unordered_map<Id, uint32_t> block_of;  // result id -> block index
    std::unordered_map<Id, Id> value_types;     // result id -> SPIR-V type (locals, params)
    std::unordered_map<Id, uint32_t> block_index;  // label -> block index
    std::unordered_map<Id, llvm::Value*> params;
    llvm::AllocaInst* ret_slot = nullptr;
    uint32_t current_block = 0;
  } F;
  llvm::Value* mask = nullptr;  // active lanes of the block being emitted

  llvm::AllocaInst* entry_alloca(llvm::Type* t, uint64_t count = 1, uint32_t align = 16);

  // Kernel context (one per subgroup invocation of the kernel), passed to every function.
  llvm::StructType* ctx_type = nullptr;
  enum CtxField { kCtxDispatch = 0, kCtxWorkgroup = 1, kCtxSubgroup = 2, kCtxPrivate = 3 };
  llvm::Value* ctx_field(CtxField f);

  // Module-scope variables: Private/Input live in the per-lane private block,
  // Workgroup in shared memory.
  struct GlobalVar {
    uint32_t storage = 0;
    uint64_t offset = 0;  // within the private block (per-lane copies) or shared memory
    uint64_t lane_size = 0;
  };
  std::unordered_map<Id, GlobalVar> global_vars;
  uint64_t private_block_bytes = 0;

  std::unordered_map<Id, llvm::Function*> functions;

 private:
  void collect_types();
  void plan_globals();
  void lower_function(const Function& fn, bool is_entry);
  void emit_kernel(Id entry_fn);
  void emit_block(uint32_t index, const std::vector<uint32_t>& order,
                  std::vector<llvm::BasicBlock*>& check_bbs, std::vector<llvm::AllocaInst*>& masks,
                  std::vector<uint32_t>& position);
  void emit_instruction(const Instruction& in);
  void emit_terminator(const Instruction& in, std::vector<llvm::AllocaInst*>& masks);
  void store_phi_inputs(Id from_label, Id to_label, llvm::Value* edge_mask);
  std::vector<uint32_t> structured_order(const Function& fn) const;
  void materialize_builtins();
  llvm::Value* builtin_value(uint32_t builtin);

  std::unordered_map<Id, TypeInfo> types_;
  std::unordered_map<Id, llvm::Type*> rep_cache_;
  std::unordered_map<Id, llvm::Value*> const_cache_;
  std::unordered_map<Id, std::vector<uint8_t>> spec_values_;  // constant id -> bytes
};

}  // namespace coopvk::jit
