// SPIR-V -> LLVM IR for one compute entry point, in the subgroup-as-SIMD model of
// DESIGN.md: one LLVM function runs one subgroup; each SPIR-V value of an invocation is
// one lane of an LLVM vector (structure of arrays), unless the uniformity analysis
// (uniformity.h) proves it the same in every lane: then it is one scalar.
//
// Representations ("reps") of SPIR-V values, per lane / uniform ("urep"):
//   scalar T          <N x T>            T          (bool: <N x i1> / i1)
//   vector of M       [M x <N x T>]      [M x T]
//   matrix / array    [K x rep(element)] [K x urep(element)]
//   struct            { rep(member)... } { urep(member)... }
//   pointer           <N x ptr>          ptr        (one address per lane / one for all)
// A uniform value is splatted only where a per-lane operation consumes it
// (lower_values.cpp). Instructions whose result is uniform are emitted in "scalar mode":
// the same code as the per-lane case, with lanes() and splat() returning scalars.
//
// Memory is byte-addressed with the SPIR-V layout of the storage class (explicit Offset/
// ArrayStride decorations for buffers, natural C layout otherwise). An access through a
// uniform pointer is one scalar load or store; through per-lane pointers it is a vector
// access when the addresses are consecutive (known statically or checked at run time)
// and a masked gather/scatter otherwise. Function and Private variables whose accesses
// all use uniform indices are kept "in rep layout": an alloca of the variable's rep, so
// a uniform pointer into it reaches one lane vector and LLVM promotes it to registers;
// the others give each lane its own copy in memory.
//
// Cooperative vectors (SPV_NV_cooperative_vector, lower_coopvec*.cpp) are per-invocation
// vectors of up to kMaxCoopVecComponents components, far longer than an OpTypeVector, so
// they are not aggregates of lane vectors in SSA form: a cooperative vector value lives in
// a frame buffer [length x <N x T>] (component i of every lane is one lane vector at byte
// i * N * sizeof(T)), one buffer per result id and function, and its rep - in both modes -
// is the pointer to that buffer. Element-wise instructions are LLVM loops over the
// components, each iteration running the instruction's scalar lowering on one lane
// vector; a result is written under the execution mask, so lanes that are not running
// keep their old components, which is what the masked slots of temporal values need.
// Values are never written after their definition except by that definition, so a
// pointer to the buffer is as good as the value in every block the definition dominates;
// where SPIR-V moves a value (OpPhi, OpReturnValue, stores into variables) the components
// are copied. Constants are read-only globals in the same layout. Function and Private
// variables holding one are buffers of the same layout (always "rep layout"); an access
// chain to one component gives per-lane pointers into it.
// Arrays and structs holding cooperative vectors (lower_coopvec_aggregate.cpp) are
// buffers too, nesting the vectors' buffers in place: [K x buffer(element)] and
// { buffer(member)... }, a member without a vector inside in its lane rep. A pointer to
// such an aggregate (or to a vector) is uniform when every lane reaches the same one and
// otherwise one address per lane, each at the start of that lane's object, whose lane l
// is read l elements into every lane vector.
//
// Control flow (lower_control_flow.cpp): blocks are emitted in the structured order of
// cfg.h. Branches the analysis proves uniform, and loops all of whose exits are uniform,
// become plain LLVM branches and loops; divergent constructs run their blocks under
// execution masks (a block runs when some lane is waiting for it and hands its lanes to
// its successors; a back edge jumps back to the header while any lane took it). Values
// used outside their block live in per-function slots; only values defined in a
// divergent loop and used after it are stored under the mask, so lanes that left the
// loop early keep their own values.
#pragma once

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "spirv/cfg.h"
#include "coopvk/kernels/number_formats.h"
#include "coopvk/kernels/tile_mma.h"
#include "coopvk/jit/compiler.h"
#include "coopvk/jit/spirv_module.h"
#include "spirv/uniformity.h"

namespace coopvk::kernels {
struct CoopVecMatMulDesc;  // coopvec_ops.h
}

namespace coopvk::jit {

// Whether an instruction may write memory (stores, copies, calls, barriers, atomics, the
// cooperative-matrix stores and the operations that call kernels): what lowering must not
// move a load across.
bool writes_memory(const Instruction& in);

// Thrown for anything the lowering does not support or finds malformed; compile_compute
// turns it into a CompileResult error (pipeline creation fails, nothing runs).
struct LowerError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct TypeInfo {
  uint16_t op = 0;           // spv::Op of the type declaration
  uint32_t width = 0;        // bits, for int/float scalars
  bool is_signed = false;
  // Floats other than IEEE binary16/32/64 (SPV_KHR_bfloat16, SPV_EXT_float8). Their
  // LLVM scalar is an integer of the same width holding the bits: no LLVM arithmetic
  // applies to them by accident, and conversions go through kernels/ (lower_convert.cpp).
  enum class FloatKind : uint8_t { Ieee, BFloat16, E4M3, E5M2 } fkind = FloatKind::Ieee;
  // OpTypeCooperativeMatrixKHR: rows x cols of `elem`, its use and scope.
  // OpTypeCooperativeMatrixNV becomes such a matrix of use kUseNV, which every operand
  // position of the KHR instructions accepts.
  uint32_t rows = 0, cols = 0, use = 0, scope = 0;
  // A workgroup-scope matrix split over several subgroups (lower_coopmat_workgroup.cpp):
  // its full row count; `rows` is then each subgroup's share. 0 for any other matrix.
  uint32_t full_rows = 0;
  // OpTypeTensorLayoutNV: {Dim, ClampMode}; OpTypeTensorViewNV: {Dim, HasDimensions,
  // p0 .. p<Dim-1>}. Their values are `count` u32 words of state (runtime/tensor_addressing.h).
  std::vector<uint32_t> tensor;
  static constexpr uint32_t kUseNV = 0x4E56;
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

// A lowered value and which of the two reps it is in.
struct Val {
  llvm::Value* v = nullptr;
  bool uniform = false;
};

class Lowerer {
 public:
  Lowerer(const Module& m, const CompileOptions& opts, llvm::LLVMContext& ctx);

  // Builds the kernel function (name kKernelName) in a new LLVM module.
  std::unique_ptr<llvm::Module> lower();

  static constexpr const char* kKernelName = "coopvk_subgroup_main";
  static constexpr const char* kRangeName = "coopvk_workgroup_range";

  uint32_t local_size[3] = {1, 1, 1};
  uint32_t shared_memory_bytes = 0;
  bool uses_barrier = false;
  bool interleaves_subgroups = false;  // CompiledShader::interleaves_subgroups
  bool walks_tile_cache = false;       // CompiledShader::walks_tile_cache
  uint32_t pack_sites = 0;             // CompiledShader::pack_sites

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
  llvm::Type* rep_type(Id id);              // rep of a value of this type (urep in scalar mode)
  llvm::Type* lane_rep_type(Id id);         // always the per-lane rep
  llvm::Type* urep_type(Id id);             // always the uniform rep
  llvm::Type* lanes(llvm::Type* scalar) const;  // <N x scalar>; the scalar itself in scalar mode
  // A leaf of a rep: what map_leaves applies its function to (anything but an array or
  // struct: a lane vector, or a scalar in a urep).
  static bool is_leaf(llvm::Type* t) { return !t->isArrayTy() && !t->isStructTy(); }
  bool is_scalar(Id t) const;
  Id scalar_of(Id t) const;                 // the scalar type of a scalar or vector type
  MemLayout layout(Id type) const;          // size/alignment in memory
  uint64_t member_offset(Id struct_type, uint32_t member) const;
  uint64_t array_stride(Id array_type) const;
  // A constant's bytes in the memory layout of its type (layout(), member_offset(),
  // array_stride()), written at out.
  void constant_bytes(llvm::Constant* c, Id type_id, uint8_t* out);
  bool constant_table_var(const Instruction& var);
  uint64_t matrix_stride(Id struct_type, uint32_t member) const;

  // Constants (module scope): rep of a constant id, built once per mode.
  llvm::Value* constant(Id id);
  bool is_constant(Id id) const;
  uint64_t constant_u64(Id id);  // a scalar integer constant (for literal-like operands)

  // Values (lower_values.cpp)
  // The id in the current block: its urep in scalar mode, else its per-lane rep (a
  // uniform value is splatted, once per block).
  llvm::Value* value(Id id);
  Val value_v(Id id);         // as it is, uniform or per-lane
  // Records a result computed in the current mode; it is converted to what the analysis
  // says the id is, so every later use sees one consistent rep.
  void define(Id id, llvm::Value* v);
  void define_v(Id id, Val v);
  bool is_uniform(Id id) const;  // per the analysis (constants and globals: yes)
  llvm::Value* to_lanes(llvm::Value* urep);       // splat every leaf
  llvm::Value* to_uniform(llvm::Value* lane_rep);  // every leaf at the first active lane
  llvm::Value* splat(llvm::Value* scalar);  // the scalar itself in scalar mode
  llvm::Value* lane_index();  // <N x i32> 0..N-1
  llvm::Value* any(llvm::Value* mask);
  llvm::Value* first_active_lane(llvm::Value* mask);  // i32 index of the lowest set lane
  // Runs body(lane) (an i32) for every lane set in lanes_mask, in lane order, as an LLVM loop.
  void for_active_lanes(llvm::Value* lanes_mask, const std::function<void(llvm::Value*)>& body);
  llvm::Value* zero_rep(Id type);
  // Applies f to each scalar leaf of reps a (and b, c) of the same shape.
  llvm::Value* map_leaves(llvm::Value* a, const std::function<llvm::Value*(llvm::Value*)>& f);
  llvm::Value* map_leaves2(llvm::Value* a, llvm::Value* b,
                           const std::function<llvm::Value*(llvm::Value*, llvm::Value*)>& f);
  llvm::Value* map_leaves3(llvm::Value* a, llvm::Value* b, llvm::Value* c,
                           const std::function<llvm::Value*(llvm::Value*, llvm::Value*, llvm::Value*)>& f);
  llvm::Value* select_rep(llvm::Value* cond, llvm::Value* t, llvm::Value* f);  // cond <N x i1>
  // select_rep for a value of SPIR-V type type_id: matrices inside take t under a lane mask.
  llvm::Value* merge_rep(Id type_id, llvm::Value* cond, llvm::Value* t, llvm::Value* f);

  // Memory (lower_memory.cpp). *_rep: per-lane pointers and values; *_urep: one
  // address, one value; *_through: an OpLoad / OpStore's pointer id, whatever it is.
  llvm::Value* load_rep(Id type, llvm::Value* ptrs, llvm::Value* mask, uint32_t align_hint);
  void store_rep(Id type, llvm::Value* ptrs, llvm::Value* v, llvm::Value* mask, uint32_t align_hint);
  llvm::Value* load_urep(Id type, llvm::Value* ptr, uint32_t align_hint);
  void store_urep(Id type, llvm::Value* ptr, llvm::Value* v, uint32_t align_hint);
  Val load_through(Id pointer, Id result_type, uint32_t align_hint);
  void store_through(Id pointer, Id value_type, Id value_id, uint32_t align_hint);
  void lower_access_chain(const Instruction& in);
  uint64_t rep_size_bound(Id type);  // bytes that hold a lane rep of the type in memory
  // Robust buffer access (lower_memory.cpp): the bounds the access being lowered checks,
  // and whether `size` bytes at addr (scalar or per lane) lie inside them.
  struct Bounds {
    Val base, range;
  };
  std::optional<Bounds> bounds_of(Id pointer, bool matrix = false);  // matrix: a cooperative matrix access
  const Bounds* checking = nullptr;
  // Checks the accesses through `pointer` against its bounds (when robust access applies)
  // while the scope lives.
  struct CheckingScope {
    Lowerer& L;
    std::optional<Bounds> bounds;
    CheckingScope(Lowerer& l, Id pointer) : L(l), bounds(l.bounds_of(pointer)) {
      if (bounds) L.checking = &*bounds;
    }
    ~CheckingScope() { L.checking = nullptr; }
    CheckingScope(const CheckingScope&) = delete;
    CheckingScope& operator=(const CheckingScope&) = delete;
  };
  // Reads through a buffer pointer (StorageBuffer, PhysicalStorageBuffer, Uniform): their
  // contiguous vector loads prefetch one page ahead (prefetch_ahead). Set by load_through.
  bool streaming = false;
  // Software prefetches of the lines kPrefetchAhead bytes past [p, p + bytes). Hardware prefetchers follow a
  // stream only within its 4 KiB page, so a shader that reads a few KiB per workgroup (ggml's
  // mat-vec: two 2 KiB rows) restarts them at every page and waits on memory; a prefetch one
  // page ahead of each contiguous buffer read has the next page's lines arrive in time
  // (llama-bench tg on the 52M F16 model: 64 -> 117 tokens/s). A prefetch never faults, so
  // it needs no bounds check.
  static constexpr int64_t kPrefetchAhead = 4096;
  void prefetch_ahead(llvm::Value* p, uint64_t bytes);
  llvm::Value* in_bounds(llvm::Value* addr, uint64_t size);
  // addr when no check applies or it is in bounds, else a frame slot of zeros (loads) or
  // a sink (stores).
  llvm::Value* safe_address(llvm::Value* addr, uint64_t size, bool store);
  void add_offset(Val& ptrs, Val index, uint64_t stride);
  bool lower_memory_op(const Instruction& in);
  llvm::Value* offset_ptrs(llvm::Value* ptrs, llvm::Value* byte_offsets);  // <N x i64>
  llvm::Value* offset_ptrs(llvm::Value* ptrs, uint64_t byte_offset);
  // Pointer rep of a StorageBuffer/Uniform/PushConstant variable (not a descriptor array).
  llvm::Value* buffer_variable_pointer(const Instruction& var);
  // The descriptor's base or range of a buffer variable; idx selects in a descriptor
  // array (null: not an array). Uniform unless the index is divergent.
  Val descriptor_field(const Instruction& var, const Val* idx, bool range);
  llvm::Value* index_to_i64(llvm::Value* idx_rep);
  // Lane-affine form of a vector value built by this lowering: lane l holds
  // base + l * stride (base a scalar int or pointer). Lets loads and stores of
  // consecutive or uniform addresses use vector or scalar accesses instead of
  // gathers (lower_memory_fast.cpp).
  // The form is a lane pattern: lane l holds base + off[l], off a compile-time vector
  // (lane 0's entry 0); stride is s when off[l] == s * l for every lane, else kIrregular
  // (a pattern such as 8 * (l / 4) + l % 4, which ggml's block indexing makes).
  struct Affine {
    static constexpr int64_t kIrregular = INT64_MIN;
    llvm::Value* base;
    int64_t stride;  // in units of the element (bytes for pointers)
    // A scalar i1 that is true when the form holds in every lane, for forms that hold only
    // if no lane's value wrapped, or the base is a multiple of a divisor (a division of a
    // lane-varying value); null: always holds.
    llvm::Value* exact = nullptr;
    std::vector<int64_t> off;  // N entries
    // A second, run-time term (affine_scaled() only): lane l adds coef[l] x scale, for a
    // uniform scale known only at run time (a row stride from push constants: lanes copying
    // a tile's rows). Null scale: none.
    llvm::Value* scale = nullptr;
    std::vector<int64_t> coef;  // N entries where scale is set
  };
  Affine make_affine(llvm::Value* base, std::vector<int64_t> off, llvm::Value* exact = nullptr) const;
  // base + off[l] in every lane l (see Affine), or nullopt.
  std::optional<Affine> affine(llvm::Value* v, int depth = 0);
  // The same, also base + off[l] + coef[l] x scale with a run-time uniform scale.
  std::optional<Affine> affine_scaled(llvm::Value* v, int depth = 0);
  // x / y or x % y (op: UDiv, URem) for a uniform y known only at run time.
  std::optional<Affine> divide_by_uniform(llvm::IRBuilder<>& b, unsigned op, const Affine& x, const Affine& y);
  // fast() where cond holds at run time, slow() where not; just fast() for a null cond.
  // Returns the value of the one that ran (null if fast() gives null).
  llvm::Value* if_else(llvm::Value* cond, const std::function<llvm::Value*()>& fast,
                       const std::function<llvm::Value*()>& slow);
  llvm::Value* if_exact(const Affine& a, const std::function<llvm::Value*()>& fast,
                        const std::function<llvm::Value*()>& slow) {
    return if_else(a.exact, fast, slow);
  }
  // A scalar or vector per lane at addresses of a lane pattern (Affine) within a page, a
  // vec4 per invocation or ggml's 8 * (l / 4) + l % 4, say: one wide load of the window
  // the lanes read and shuffles, instead of a gather per component. slow() where the
  // pattern does not hold at run time. Null (nothing emitted) for other addresses.
  llvm::Value* load_window(Id type, llvm::Value* ptrs, llvm::Value* mask, uint32_t align_hint,
                           const std::function<llvm::Value*()>& slow);
  // The same for a store of a scalar or vector per lane: each window register assembled
  // from the lanes' components and written under the mask of the elements active lanes
  // write. False (nothing emitted) for other addresses, or where two lanes write one element.
  bool store_window(Id type, llvm::Value* ptrs, llvm::Value* value, llvm::Value* mask, uint32_t align_hint,
                    const std::function<void()>& slow);
  void store_induction_form(const Instruction& phi, uint32_t to, llvm::Value* value);
  llvm::Value* window_start(const Affine& a, int64_t coef, int64_t lo);
  llvm::Value* pick_lanes(const std::vector<llvm::Value*>& regs, const std::vector<int>& pick, uint64_t esz);
  llvm::Value* load_parts(Id type, llvm::Value* ptrs, llvm::Value* mask, uint32_t align_hint);
  // For an OpLoad whose pointer is (an access chain into) a built-in Input variable, the
  // value computed directly, so index arithmetic on it stays analyzable; else null.
  llvm::Value* direct_builtin_load(Id pointer, Id result_type);
  // Gather/scatter that first checks at run time whether the active lanes' addresses are
  // all equal (one scalar access) or consecutive (one vector access).
  llvm::Value* load_lanes(llvm::Type* scalar, llvm::Value* ptrs, llvm::Align align, llvm::Value* m);
  void store_lanes(llvm::Value* v, llvm::Value* ptrs, llvm::Align align, llvm::Value* m);
  // One vector access at ptr for the active lanes (plain when all are active).
  llvm::Value* vector_load(llvm::Type* vt, llvm::Value* ptr, llvm::Align align, llvm::Value* m);
  void vector_store(llvm::Value* v, llvm::Value* ptr, llvm::Align align, llvm::Value* m);
  // Whether an Input built-in must be written to memory (some use is not a direct load).
  bool builtin_needs_memory(Id var) const;

  // Cooperative matrices (lower_coopmat.cpp).
  bool is_matrix(Id type_id) const;
  bool holds_matrix(Id type_id);  // a matrix, or an array / struct with one inside
  bool is_object(Id value_id);    // its rep is a matrix's: the same in both modes
  bool rep_pointer_type(Id type_id);  // a Function / Private pointer to something holding a matrix
  llvm::Type* matrix_type(Id type_id);
  uint32_t matrix_length(const TypeInfo& t) const;
  void check_coopmat_type(const TypeInfo& t, const Instruction* at);
  void check_matrix_combination(const kernels::TileMmaDesc& d, uint32_t scope, const Instruction* at);
  llvm::Constant* matrix_constant(Id type_id, llvm::Constant* scalar);
  kernels::NumberFormat number_format(Id scalar_type_id, bool is_signed) const;
  llvm::Value* matrix_to_memory(llvm::Value* mat, const TypeInfo& t);
  llvm::Value* matrix_from_memory(llvm::Value* buf, Id type_id);
  // A matrix operand's memory when it can be read in place (a load of a matrix variable,
  // nothing written since), else null; whether a multiply-add's next memory access stores
  // its result back where C came from; structurally equal pointers.
  llvm::Value* matrix_in_memory(Id value, const Instruction& use);
  bool result_stored_back(const Instruction& muladd, Id c_value);
  bool same_pointer(Id p, Id q) const;
  llvm::Value* matrix_component(llvm::Value* mat, const TypeInfo& t, llvm::Value* j);
  llvm::Value* matrix_set_component(llvm::Value* mat, const TypeInfo& t, uint64_t j, llvm::Value* lanes_v);
  llvm::Value* matrix_splat(Id type_id, Val x);
  struct MatrixAddressing {
    llvm::Value* base = nullptr;    // uniform pointer
    llvm::Value* stride = nullptr;  // bytes between rows (row-major) or columns, i64
    bool column_major = false;
    std::optional<Bounds> bounds;   // robust access
  };
  MatrixAddressing matrix_addressing(Id pointer, Id layout_id, Id stride_id, const Instruction& in);
  void matrix_share_addressing(MatrixAddressing& a, const TypeInfo& t);  // a workgroup-scope share's first row
  llvm::Value* matrix_line_addresses(const MatrixAddressing& a, const TypeInfo& t, uint32_t r);
  llvm::Value* matrix_line_in_bounds(const MatrixAddressing& a, llvm::Value* addrs, uint64_t esz);
  void lower_matrix_load(const Instruction& in);
  void lower_matrix_store(const Instruction& in);
  void lower_matrix_muladd(const Instruction& in);
  // D = A x B + C on the tile kernel of d's combination, operands dense row-major in memory.
  void call_tile_mma(const kernels::TileMmaDesc& d, llvm::Value* a, llvm::Value* b, llvm::Value* c, llvm::Value* dst);
  // The kernel combination of a multiply-add (formats with their signedness, shape,
  // saturation), without checking its operands.
  kernels::TileMmaDesc muladd_desc(const Instruction& in);
  // Packed-operand caches (lower_coopmat_packed.cpp): matrix variables whose matrices are
  // the A (or B) operands of multiply-adds keep them packed for the kernel beside their
  // contents, packed by every store.
  void plan_packed_operands();
  // After a store of a value_type at `pointer` (into such a variable): packs what it wrote.
  void refresh_packed(Id pointer, Id value_type);
  // a, b: the operands' memory when matrix_in_memory() found it, else null.
  bool packed_muladd(const Instruction& in, const kernels::TileMmaDesc& d, llvm::Value* a, llvm::Value* b,
                     llvm::Value* c, llvm::Value* dst);
  llvm::Value* packed_slot(Id variable, llvm::Value* at);
  // The split kernel's packer of A (role 0) or B; packed_copy() (after FunctionState).
  llvm::FunctionCallee packer(const kernels::TileMmaDesc& d, const kernels::TileMmaPacked& parts, uint32_t role);
  // OpStore `store` of a matrix just loaded from a buffer into a variable whose contents only
  // its packed copies are read from: packs it from the buffer instead. False when the store
  // is not such a store (nothing emitted).
  bool store_packed_from_buffer(const Instruction& store);
  Id root_variable(Id pointer) const;
  bool tile_cache_off_ = true;
  std::vector<const Instruction*> writable_buffers_;
  // Interleaved subgroups (lower_interleave.cpp): which loops yield to the next subgroup
  // each iteration; the yield at the start of such a loop's continue target; the
  // pack_epoch bumps after what may write memory other invocations see, and at a
  // function's exit, where its packed copies are gone; marking the stores of the epoch
  // and the memo themselves, which are none of those.
  void plan_subgroup_interleaving();
  void emit_subgroup_yield(uint32_t block);
  void mark_shared_writes(llvm::Function& lf);
  void bump_pack_epoch(llvm::IRBuilder<>& b, llvm::Value* ws);
  void end_shared_packs();
  void bookkeeping(llvm::Instruction* store);
  std::vector<std::vector<bool>> yield_blocks_;  // [function index][block index]
  // read_only: the parameters through which the function only reads.
  llvm::FunctionCallee M_get_function(const std::string& name, llvm::FunctionType* ft,
                                      std::initializer_list<unsigned> read_only = {});
  bool lower_coopmat(const Instruction& in);
  // SPV_EXT_cooperative_matrix_maintenance1 (lower_coopmat_ext.cpp).
  bool lower_coopmat_ext(const Instruction& in);
  void lower_matrix_per_element(const Instruction& in);
  void lower_matrix_reduce(const Instruction& in);
  llvm::Value* reduce_matrix(const Instruction& in, llvm::Value* mat);  // checks, and the result rep
  void lower_matrix_convert_use(const Instruction& in);
  void lower_matrix_transpose_nv(const Instruction& in);
  bool conversions_enabled() const;  // either extension's cooperativeMatrixConversions
  void lower_matrix_coordinate(const Instruction& in);
  llvm::Value* matrix_transpose(llvm::Value* mat, const TypeInfo& t);
  // Lane l: element at[l] (row, column); lanes past at.size() repeat at[0].
  llvm::Value* matrix_lanes(llvm::Value* mat, const std::vector<std::pair<uint32_t, uint32_t>>& at);
  llvm::Value* matrix_from_chunks(const std::vector<llvm::Value*>& chunks, Id type_id);
  llvm::Value* lane_prefix_mask(uint32_t count);  // lanes [0, count) on
  llvm::Value* call_matrix_callback(Id func, const std::vector<llvm::Value*>& lane_args, llvm::Value* call_mask,
                                    llvm::Type* ret_t, const Instruction& in);
  void check_callback_signature(Id func, const std::vector<Id>& want_params, Id want_return, const Instruction& in);
  bool matrix_use_change_allowed(const TypeInfo& from, const TypeInfo& to) const;
  llvm::Value* matrix_reshaped_source(const Instruction& in, const TypeInfo& st, const TypeInfo& rt);
  // Workgroup-scope matrices (lower_coopmat_workgroup.cpp): subgroup s of the S in a
  // workgroup holds rows [s * P, s * P + P) of each (P = ceil(rows / S)).
  uint32_t wg_subgroups = 1;  // S
  // The shader's 64 KiB, and a gathered matrix of at most 256 x 256 8-byte components.
  static constexpr uint64_t kMaxSharedMemoryBytes = 65536 + 64 + 256 * 256 * 8;
  uint64_t wg_scratch_offset = 0, wg_scratch_bytes = 0;  // in shared memory, past the shader's own
  void plan_workgroup_matrices();
  static bool split_matrix(const TypeInfo& t) { return t.full_rows != 0; }
  llvm::Value* wg_row0(const TypeInfo& t);                   // i32: the first row this subgroup holds
  llvm::Value* wg_row_valid(const TypeInfo& t, uint32_t r);  // i1: its row r is a row of the matrix
  // The whole matrix in the shared scratch (dense, row-major), every subgroup's rows
  // written there; valid until the next gather.
  llvm::Value* wg_gather(llvm::Value* piece, const TypeInfo& t);
  llvm::Value* wg_whole(llvm::Value* piece, const TypeInfo& t);  // the same as a rows x <cols> rep
  llvm::Value* wg_slice(llvm::Value* whole, const TypeInfo& t);   // this subgroup's rows of a whole rep
  // While it lives, the named split matrix types have their full row count, so that code
  // written for whole matrices runs on gathered ones.
  struct WholeRows {
    Lowerer& L;
    std::vector<std::pair<Id, uint32_t>> saved;
    WholeRows(Lowerer& l, std::initializer_list<Id> ids);
    ~WholeRows();
    WholeRows(const WholeRows&) = delete;
    WholeRows& operator=(const WholeRows&) = delete;
  };
  // SPV_NV_tensor_addressing's layouts and views, and tensor-addressed matrix loads and
  // stores (lower_tensor.cpp).
  bool lower_tensor(const Instruction& in);
  void lower_tensor_load_store(const Instruction& in, bool load);
  void lower_tensor_decode(const Instruction& in, Id decode, Id mat_t, llvm::Value* base, llvm::Value* layout_words,
                           llvm::Value* view_words, llvm::Value* access);
  // The transposed matrix of value `src` (type src_t) as a rep of res_t, gathering and
  // slicing split ones.
  llvm::Value* transposed(Id src, Id src_t, Id res_t);
  // Cooperative vectors (lower_coopvec*.cpp; representation in the header comment).
  static constexpr uint32_t kMaxCoopVecComponents = 4096;
  bool is_coopvec(Id type_id) const;
  Id value_type_of(Id id) const;  // the type of a value id, 0 for anything else (types, imports, labels)
  bool holds_object(Id type_id);  // a matrix or cooperative vector, or an aggregate of them
  bool holds_coopvec(Id type_id);  // a cooperative vector, or an array / struct with one inside
  llvm::Type* coopvec_buffer_type(Id type_id);  // [count x <N x T>], or the aggregate's (lowerer.h)
  uint64_t coopvec_buffer_bytes(Id type_id);
  // The frame buffer holding the value (or variable) `id` of this function.
  llvm::Value* coopvec_buffer(Id id, Id type_id);
  llvm::Constant* coopvec_constant(const Instruction& g);
  // Pointer to component i (an i32) of a buffer: one lane vector.
  llvm::Value* coopvec_component(Id type_id, llvm::Value* buf, llvm::Value* i);
  // Copies src to dst; lanes_mask (<N x i1>) off: dst keeps its contents. A per-lane
  // (vector) dst or src is the lanes' own objects (lowerer.h): a scatter or a gather.
  void coopvec_copy(Id type_id, llvm::Value* dst, llvm::Value* src, llvm::Value* lanes_mask);
  // Calls leaf(lane vector type, byte offset (i64)) for every lane vector of a buffer of
  // coopvec_buffer_type(type_id), in LLVM loops over the components and array elements.
  void for_each_coopvec_leaf(Id type_id, const std::function<void(llvm::Type*, llvm::Value*)>& leaf);
  llvm::Constant* coopvec_initializer(const Instruction& g);  // of coopvec_buffer_type
  // Emits a loop i = 0 .. count-1 (i32) around body.
  void for_each_component(uint32_t count, const std::function<void(llvm::Value*)>& body);
  // Lane vector v stored at component i of buf, for the active lanes.
  void coopvec_store_component(Id type_id, llvm::Value* buf, llvm::Value* i, llvm::Value* v);
  // The scalar lowering of `sub` (whose result type is a component type) with operand
  // ids bound to lane vectors; returns the result's lane vector.
  llvm::Value* component_view(const Instruction& sub, const std::vector<std::pair<Id, Val>>& bound);
  bool lower_coopvec(const Instruction& in);
  void lower_coopvec_elementwise(const Instruction& in);
  bool lower_coopvec_composite(const Instruction& in);
  bool lower_coopvec_variable(const Instruction& in);
  bool lower_coopvec_memory(const Instruction& in);  // OpCooperativeVectorLoadNV / StoreNV
  // Arrays and structs holding cooperative vectors (lower_coopvec_aggregate.cpp).
  bool lower_coopvec_access_chain(const Instruction& in);
  bool lower_coopvec_aggregate(const Instruction& in);  // composite instructions on them
  // Where the constant index path `path` (of OpCompositeExtract / Insert) leads inside a
  // buffer of type_id: its address, and the type there (an index into a vector's
  // components ends at the component type, with `component` set).
  struct CoopVecPlace {
    llvm::Value* ptr;
    Id type;
    bool component = false;
  };
  CoopVecPlace coopvec_place(Id type_id, llvm::Value* buf, const std::vector<uint32_t>& path, const Instruction& in);
  // Writes the value `value_id` (of type `t`) at dst inside a buffer, under the mask.
  void coopvec_put(Id t, llvm::Value* dst, Id value_id, bool component);
  bool lower_coopvec_matmul(const Instruction& in);  // multiply(-add), training accumulations
  bool check_coopvec_types(const Instruction& in);   // true: a cooperative-vector instruction, checked
  // What the device advertises (CompileOptions::vector_combinations and
  // max_vector_components; lower_coopvec_caps.cpp): a cooperative vector type's component
  // type and count, and a multiply(-add)'s combination. Each fails naming what is missing.
  void check_coopvec_type_advertised(Id elem, uint32_t count, const Instruction& at);
  void check_coopvec_combination(const kernels::CoopVecMatMulDesc& d, const Instruction& at);
  uint64_t coopvec_frame_bytes = 0;  // a bound on the frame the buffers take, all functions
  // More than this and the shader runs on the workgroup runner's fiber stacks
  // (CompiledShader::needs_fiber_stack), not on whatever thread stack dispatches it.
  static constexpr uint64_t kThreadStackFrameBytes = 256u << 10;
  // Buffers of values used only in their own block live from their definition to their
  // last use there (LLVM lifetime markers), so stack colouring lets them share memory:
  // which values those are (per function), and per instruction of a block the ones whose
  // last use it is.
  void plan_coopvec_lifetimes();
  std::vector<std::vector<Id>> coopvec_block_ends(const Block& blk);
  void end_coopvec_lifetimes(const std::vector<Id>& ids);
  // Conversions (lower_convert.cpp): v's leaves from scalar type `from` to `to`, into a
  // rep of type result_t; count: elements in v (0: from its type).
  bool special_float(Id scalar_type_id) const;  // bfloat16 or float8
  llvm::Value* convert_leaves(const Instruction& in, llvm::Value* v, Id from, Id to, llvm::Type* result_t,
                              uint64_t count = 0);
  llvm::Value* convert_via_kernels(llvm::Value* v, kernels::NumberFormat from, kernels::NumberFormat to,
                                   uint64_t count, llvm::Type* result_t, bool saturate);

  // Instruction families; each returns false if the opcode is not theirs.
  bool lower_arith(const Instruction& in);
  bool lower_composite(const Instruction& in);
  bool lower_conversion(const Instruction& in);
  bool lower_glsl(const Instruction& in);
  bool lower_subgroup(const Instruction& in);
  bool lower_atomic(const Instruction& in);
  bool lower_barrier(const Instruction& in);
  void emit_workgroup_barrier();  // all of the workgroup's subgroups meet (lower_subgroup.cpp)
  bool lower_integer_dot(const Instruction& in);
  // Rejects ill-typed operands before lowering (lower_typecheck.cpp).
  void check_types(const Instruction& in);
  bool check_matrix_types(const Instruction& in);
  void check_special_float_use(const Instruction& in);  // SPV_KHR_bfloat16 / SPV_EXT_float8 rules  // true: a matrix instruction, checked
  Id type_of(Id value) const;       // SPIR-V type of a value id
  uint32_t components(Id t) const;  // 1 for scalars, n for vectors, 0 otherwise

  // Current-function state
  struct FunctionState {
    const Function* fn = nullptr;
    llvm::Function* llvm_fn = nullptr;
    llvm::Value* ctx = nullptr;        // pointer to the KernelCtx struct
    llvm::Value* dispatch_state = nullptr, *workgroup_state = nullptr;  // its fields, loaded at entry
    // The dispatch's tile cache and, per buffer variable, whether its tiles may come from
    // it (lower_tile_cache.cpp): computed in the entry block, once for every load.
    llvm::Value* tile_cache = nullptr;
    std::unordered_map<const Instruction*, llvm::Value*> tile_cache_usable;
    std::unordered_map<const Instruction*, std::pair<llvm::Value*, llvm::Value*>> binding_span;  // [lo, hi), i64
    llvm::BasicBlock* entry = nullptr;  // allocas go here
    const FunctionUniformity* fu = nullptr;  // analysis results and the CFG
    std::unordered_map<Id, Val> values;  // defined in the current block
    std::unordered_map<Id, llvm::Value*> splats;  // per-lane copies of uniform values, this block
    std::unordered_map<Id, llvm::AllocaInst*> slots;  // values used across blocks (rep per is_uniform)
    std::unordered_map<Id, llvm::AllocaInst*> phi_slots;
    // Loop-header phis whose form was looked at (store_induction_form), with or without one.
    std::unordered_set<Id> induction_candidates;
    std::unordered_map<Id, bool> masked_slot;  // slot stores keep inactive lanes (temporal values)
    // Slotted values that are lane-affine where they are defined (an index like
    // base + LocalInvocationId.x + 256 * k): their scalar base is stored beside the slot
    // and a reader in another block rebuilds base + lane * stride, so the address
    // analysis still sees one vector access there instead of a run-time test.
    struct AffineSlot {
      llvm::AllocaInst* base = nullptr;
      std::vector<int64_t> off;  // Affine::off
      // For a form that holds only when a run-time test passes (Affine::exact): where the
      // test's result is kept, and the value's own slot, read where it fails.
      llvm::AllocaInst* exact = nullptr;
      llvm::AllocaInst* value = nullptr;
    };
    std::unordered_map<Id, AffineSlot> affine_slots;
    // The entry block runs first, exactly once, with every lane the function was called
    // with, and its code dominates the rest: its values are used directly elsewhere
    // instead of through slots, which keeps them visible to the address analysis
    // (lower_memory_fast.cpp).
    std::unordered_map<Id, Val> entry_values;
    // Pointers into rep-layout Function variables (see the header comment).
    std::unordered_set<Id> rep_ptrs;
    // Function variables that only ever hold their constant initializer (lookup tables):
    // one read-only copy shared by every lane (lower_memory.cpp, constant_table_var).
    std::unordered_set<Id> constant_tables;
    // Robust buffer access: the buffer variable (and descriptor-array index id, or 0)
    // each buffer pointer derives from. A recipe, not values: a pointer made in one block
    // is used in others, and the descriptor loads it takes are cheap and invariant.
    std::unordered_map<Id, std::pair<const Instruction*, Id>> bounds;
    llvm::AllocaInst* zero_slot = nullptr;  // what an out-of-bounds load reads (never written)
    llvm::AllocaInst* sink_slot = nullptr;  // where an out-of-bounds store goes
    std::unordered_map<Id, uint32_t> block_of;  // result id -> block index
    std::unordered_map<Id, Id> value_types;     // result id -> SPIR-V type (locals, params)
    std::unordered_map<Id, uint32_t> block_index;  // label -> block index
    std::unordered_map<Id, llvm::Value*> params;
    llvm::AllocaInst* ret_slot = nullptr;
    uint32_t current_block = 0;
    // Control flow (lower_control_flow.cpp), per block unless noted.
    std::vector<llvm::AllocaInst*> mask_slots;  // lanes waiting to run the block
    std::vector<uint8_t> direct_only;           // entered by direct branches only: no check
    std::vector<llvm::BasicBlock*> body_bb;
    std::vector<llvm::BasicBlock*> check_bb;    // per position; null where direct_only
    llvm::BasicBlock* exit_bb = nullptr;
    // Divergent selections no lane leaves early: their merge block runs with exactly the
    // header's lanes, a value LLVM can see through (the OR of the branches it cannot).
    std::vector<llvm::AllocaInst*> header_mask;  // per construct, or null
    std::vector<int32_t> merge_of;               // block -> such a construct it merges, or -1
    // Packed-operand caches, by Function variable (lower_coopmat_packed.cpp).
    struct PackedCache {
      kernels::TileMmaDesc desc{};
      uint32_t role = 0;  // 0: the variable's matrices are A operands, 1: B operands
      kernels::TileMmaPacked parts;
      uint64_t matrix_bytes = 0;  // one matrix of the variable
      uint64_t matrices = 0;
      llvm::AllocaInst* packed = nullptr;  // matrices x the role's packed bytes, always current
      // Every load of the variable feeds such a multiply-add at once, so a matrix stored
      // there straight from a buffer load is packed from the buffer and not written to the
      // variable (store_packed_from_buffer()): the packed copy is then the only current one.
      bool direct = false;
      // Subgroups interleaved, a direct variable's packs are shared (emit_pack()): each
      // packed copy has a tag in front saying which tile it holds.
      bool shared = false;
      uint64_t stride = 0;  // bytes from one packed copy to the next
      // Direct variables: per matrix, where its packed form is (its packed copy, or an
      // entry of the dispatch's tile cache).
      llvm::AllocaInst* pointers = nullptr;
    };
    std::unordered_map<Id, PackedCache> packed_caches;
    // Cooperative vectors: the frame buffer of each value or variable id, and the
    // caller's result buffer of a function returning one (a hidden last parameter).
    std::unordered_map<Id, llvm::AllocaInst*> coopvec_buffers;
    llvm::Value* coopvec_ret = nullptr;
    std::unordered_set<Id> coopvec_local;  // used only in the defining block, not by its terminator
    uint64_t coopvec_block_bytes = 0, coopvec_peak_bytes = 0;  // local buffers: this block's, the most of any
  } F;
  // A packed-operand cache's copy number `slot` (lower_coopmat_packed.cpp).
  llvm::Value* packed_copy(const FunctionState::PackedCache& c, llvm::Value* slot);
  // Matrix `slot` of a direct variable packed from the buffer at src, ld elements apart,
  // or copied from another subgroup's copy when shared (lower_interleave.cpp); a copy
  // written otherwise has its tag cleared.
  void emit_pack(const FunctionState::PackedCache& c, llvm::Value* slot, llvm::Value* src, llvm::Value* ld);
  void clear_pack_tag(const FunctionState::PackedCache& c, llvm::Value* slot);
  // Where the packed form of a matrix variable's matrix `slot` is: its packed copy, or a
  // tile cache entry (pointers).
  llvm::Value* packed_operand(const FunctionState::PackedCache& c, llvm::Value* slot);
  void set_packed_operand(const FunctionState::PackedCache& c, llvm::Value* slot, llvm::Value* at);
  // The dispatch's tile cache (lower_tile_cache.cpp): which buffer bindings the shader may
  // write, and whether anything else might write buffers (then nothing is cached); the
  // binding a tile load's pointer reads, if it may be cached; the run-time test that no
  // writable binding's range overlaps it; a pack through the cache where that test passes
  // (the binding's, elements of esz bytes), which returns where the packed tile is.
  void plan_tile_cache();
  bool binding_writable(const Instruction& var) const;
  const Instruction* cacheable_binding(Id pointer) const;
  llvm::Value* binding_unwritten(const Instruction& var);
  llvm::Value* tile_cache_usable(const Instruction& var);
  llvm::Value* emit_cached_pack(const FunctionState::PackedCache& c, llvm::Value* slot, llvm::Value* src,
                                llvm::Value* ld, const Instruction& binding, uint64_t esz);
  llvm::Value* mask = nullptr;  // active lanes of the block being emitted
  bool scalar_mode = false;     // emitting an instruction whose result is uniform
  bool raw_define = false;      // define() keeps the rep as computed (OpSpecConstantOp)
  const Uniformity* uniformity = nullptr;

  llvm::AllocaInst* entry_alloca(llvm::Type* t, uint64_t count = 1, uint32_t align = 16);
  // Slotted lane-affine values (FunctionState::affine_slots): store the base, rebuild it.
  void store_affine_base(Id id, const Val& v);
  llvm::Value* rebuild_affine(const FunctionState::AffineSlot& s);

  // Kernel context (one per subgroup invocation of the kernel), passed to every function.
  llvm::StructType* ctx_type = nullptr;
  enum CtxField {
    kCtxDispatch = 0, kCtxWorkgroup = 1, kCtxSubgroup = 2, kCtxPrivate = 3,
    kCtxWorkgroupX = 4, kCtxWorkgroupY = 5, kCtxWorkgroupZ = 6,  // WorkgroupId, i32 each
  };
  llvm::Value* ctx_field(CtxField f);
  // Marks a load of what stays the same for the whole dispatch (dispatch state,
  // descriptors, push constants), so LLVM may hoist it out of loops and merge copies.
  void invariant(llvm::Value* load);

  // Module-scope variables: Private/Input live in the per-lane private block,
  // Workgroup in shared memory.
  struct GlobalVar {
    uint32_t storage = 0;
    uint64_t offset = 0;  // within the private block (per-lane copies) or shared memory
    uint64_t lane_size = 0;
    bool rep_layout = false;  // Private, in rep layout at `offset` of the private block
  };
  std::unordered_map<Id, GlobalVar> global_vars;
  std::unordered_set<Id> rep_globals;  // Private variables in rep layout
  uint64_t private_block_bytes = 0;

  std::unordered_map<Id, llvm::Function*> functions;

 private:
  void collect_types();
  void plan_globals();
  void lower_function(const Function& fn, bool is_entry);
  void emit_kernel(Id entry_fn);
  llvm::Function* emit_subgroup_body(Id entry_fn);
  void emit_block(uint32_t position);
  void emit_instruction(const Instruction& in);
  static bool scalar_capable(uint16_t opcode);  // may run in scalar mode (lower_module.cpp)
  void emit_terminator(const Instruction& in);
  // Control-flow helpers (lower_control_flow.cpp).
  bool direct_edge(uint32_t from, uint32_t to) const;
  bool transfers_all_lanes(const Instruction& terminator) const;
  std::pair<uint32_t, uint32_t> safe_range(uint32_t block) const;
  void take_edge(uint32_t to);                    // all of `mask` goes to block `to`
  void send(uint32_t to, llvm::Value* lanes_mask);  // masked hand-over; the linear order runs it
  void finish_block(const std::vector<uint32_t>& sent_back);  // back-edge checks, then fall through
  llvm::BasicBlock* next_check(uint32_t position) const;
  void store_phi_inputs(uint32_t to, llvm::Value* edge_mask, bool direct);
  void materialize_builtins();
  llvm::Value* builtin_value(uint32_t builtin);

  Uniformity uniformity_data_;
  std::unordered_map<Id, TypeInfo> types_;
  std::unordered_map<Id, llvm::Type*> rep_cache_, urep_cache_;
  std::unordered_map<Id, bool> holds_matrix_, holds_coopvec_;
  std::unordered_map<Id, llvm::Value*> const_cache_, uconst_cache_;
  std::unordered_map<Id, std::vector<uint8_t>> spec_values_;  // constant id -> bytes
};

}  // namespace coopvk::jit
