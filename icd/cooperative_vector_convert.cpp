// vkConvertCooperativeVectorMatrixNV (host) and vkCmdConvertCooperativeVectorMatrixNV
// (queue execution on device addresses) of VK_NV_cooperative_vector.
//
// Both map the Vulkan struct onto kernels::MatrixDesc and call kernels::convert_matrix,
// which owns the layouts and the element conversion (round to nearest even). This file
// owns what is Vulkan-specific: the struct and its enums, the return codes, and for the
// command-buffer form the rules that can only be checked against all conversions of one
// command (alignment of device addresses, non-overlap), checked at record time so that
// execution never meets an invalid conversion.
//
// Errors: every broken valid-usage rule returns VK_ERROR_VALIDATION_FAILED_EXT (one of
// the failure codes vkConvertCooperativeVectorMatrixNV declares: OUT_OF_HOST_MEMORY,
// UNKNOWN, VALIDATION_FAILED) with a log line, and nothing is written -- neither the
// destination nor *pDstSize. The command-buffer form returns void, so a bad info makes
// the command buffer fail and vkEndCommandBuffer returns VK_ERROR_VALIDATION_FAILED_EXT.
//
// Synchronization: the command is "synchronized using
// VK_PIPELINE_STAGE_2_CONVERT_COOPERATIVE_VECTOR_MATRIX_BIT_NV". A queue runs its
// commands one after another on one thread (command_buffer.h), so a barrier naming that
// stage already holds; the stage needs no code of its own.
#include "command_buffer.h"
#include "cooperative_caps.h"
#include "log.h"
#include "vk_entrypoints.h"

#include <coopvk/kernels/coopvec_layout.h>
#include <coopvk/kernels/number_formats.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

using namespace coopvk;
namespace k = coopvk::kernels;

namespace {

// VkComponentTypeKHR -> element format of a cooperative-vector matrix, for the types
// the kernels can store as matrix elements (FLOAT32, FLOAT16, BFLOAT16, E4M3, E5M2,
// SINT8, UINT8). Which of those a conversion may use is decided by matrix_type_allowed.
bool to_number_format(VkComponentTypeKHR t, k::NumberFormat* out) {
  switch (t) {
    case VK_COMPONENT_TYPE_FLOAT32_KHR: *out = k::NumberFormat::F32; return true;
    case VK_COMPONENT_TYPE_FLOAT16_KHR: *out = k::NumberFormat::F16; return true;
    case VK_COMPONENT_TYPE_BFLOAT16_KHR: *out = k::NumberFormat::BF16; return true;
    case VK_COMPONENT_TYPE_FLOAT8_E4M3_EXT: *out = k::NumberFormat::E4M3; return true;  // == FLOAT_E4M3_NV
    case VK_COMPONENT_TYPE_FLOAT8_E5M2_EXT: *out = k::NumberFormat::E5M2; return true;  // == FLOAT_E5M2_NV
    case VK_COMPONENT_TYPE_SINT8_KHR: *out = k::NumberFormat::I8; return true;
    case VK_COMPONENT_TYPE_UINT8_KHR: *out = k::NumberFormat::U8; return true;
    // SINT8_PACKED/UINT8_PACKED "must not be used for members other than
    // inputInterpretation" (VkCooperativeVectorPropertiesNV); wider integers and float64
    // are never matrix elements.
    default: return false;
  }
}

// VUID-VkConvertCooperativeVectorMatrixInfoNV-srcComponentType-10079 / dstComponentType-
// 10080: a type that is not a matrixInterpretation reported by
// vkGetPhysicalDeviceCooperativeVectorPropertiesNV "must be FLOAT32". The capability
// table is what that query reports, so asking it keeps both in step (BFLOAT16 and UINT8,
// which the kernels could convert, are rejected until the table lists them). Which
// *pairs* may convert (10081) and fp8 layouts (10082) are the kernels' rules.
bool matrix_type_allowed(VkComponentTypeKHR t) {
  if (t == VK_COMPONENT_TYPE_FLOAT32_KHR) return true;
  for (const caps::VectorEntry& e : caps::vector_table())
    if (e.matrix_interpretation == t) return true;
  return false;
}

// The enum values equal kernels::MatrixLayout's ("All enum values match the
// corresponding SPIR-V value"); the range check keeps a garbage value out of the enum.
bool to_matrix_layout(VkCooperativeVectorMatrixLayoutNV l, k::MatrixLayout* out) {
  if (uint32_t(l) > uint32_t(VK_COOPERATIVE_VECTOR_MATRIX_LAYOUT_TRAINING_OPTIMAL_NV)) return false;
  *out = static_cast<k::MatrixLayout>(uint32_t(l));
  return true;
}

struct Descs {
  k::MatrixDesc src, dst;
};

// The checks both commands share on the struct itself (not the kernels' rules on the
// matrices, which convert_matrix makes). Returns why `info` is unusable, or nullptr.
const char* struct_error(const VkConvertCooperativeVectorMatrixInfoNV& info, Descs* d) {
  // VUID-VkConvertCooperativeVectorMatrixInfoNV-sType-sType. pNext must be NULL too
  // (...-pNext-pNext), but structures an implementation does not know are skipped, never
  // an error, so a non-null pNext is ignored.
  if (info.sType != VK_STRUCTURE_TYPE_CONVERT_COOPERATIVE_VECTOR_MATRIX_INFO_NV)
    return "sType is not VK_STRUCTURE_TYPE_CONVERT_COOPERATIVE_VECTOR_MATRIX_INFO_NV";
  if (!info.pDstSize) return "pDstSize is NULL";  // ...-pDstSize-parameter
  if (!matrix_type_allowed(info.srcComponentType) || !to_number_format(info.srcComponentType, &d->src.format))
    return "srcComponentType is neither FLOAT32 nor a reported matrixInterpretation (VUID-10079)";
  if (!matrix_type_allowed(info.dstComponentType) || !to_number_format(info.dstComponentType, &d->dst.format))
    return "dstComponentType is neither FLOAT32 nor a reported matrixInterpretation (VUID-10080)";
  if (!to_matrix_layout(info.srcLayout, &d->src.layout)) return "srcLayout is not a valid layout";
  if (!to_matrix_layout(info.dstLayout, &d->dst.layout)) return "dstLayout is not a valid layout";
  d->src.rows = d->dst.rows = info.numRows;
  d->src.cols = d->dst.cols = info.numColumns;
  // "if the layout is not either ROW_MAJOR or COLUMN_MAJOR, then the corresponding
  // stride parameter is ignored": the kernels ignore it for the optimal layouts.
  d->src.stride = info.srcStride;
  d->dst.stride = info.dstStride;
  return nullptr;
}

bool ranges_overlap(uintptr_t a, size_t an, uintptr_t b, size_t bn) {
  return a < b + bn && b < a + an;
}

// One validated conversion of a vkCmdConvertCooperativeVectorMatrixNV, copied out of the
// application's struct at record time.
struct Job {
  Descs descs;
  const void* src = nullptr;
  void* dst = nullptr;
  size_t src_size = 0;      // info.srcSize
  size_t dst_capacity = 0;  // *info.pDstSize as it was when recorded
  size_t src_bytes = 0;     // bytes read: layout_required_size(src)
  size_t dst_bytes = 0;     // bytes written: layout_required_size(dst)
};

constexpr uintptr_t kDeviceAddressAlignment = 64;  // VUID-...-pInfo-10084 / 10085

// Validates pInfos[i] for the command-buffer form. Returns the reason it is invalid
// (empty when valid) and fills `job`.
std::string validate_cmd_info(const VkConvertCooperativeVectorMatrixInfoNV& info, Job* job) {
  if (const char* e = struct_error(info, &job->descs)) return e;
  // VUID-vkCmdConvertCooperativeVectorMatrixNV-pInfo-10083 / 10895: valid device
  // addresses. In coopvk a device address is the host address of the buffer's memory
  // (coopvk_GetBufferDeviceAddress), so the closest check possible is "not zero";
  // there is no size query in this form.
  const VkDeviceAddress s = info.srcData.deviceAddress, d = info.dstData.deviceAddress;
  if (s == 0) return "srcData.deviceAddress is 0";
  if (d == 0) return "dstData.deviceAddress is 0";
  if (s % kDeviceAddressAlignment) return "srcData.deviceAddress is not 64-byte aligned (VUID-10084)";
  if (d % kDeviceAddressAlignment) return "dstData.deviceAddress is not 64-byte aligned (VUID-10085)";

  // All of the kernels' own rules (shapes, strides -- VUID-...-srcLayout-10077 /
  // dstLayout-10078 --, type pairs and fp8 layouts -- 10081 / 10082 --, srcSize --
  // VUID-vkCmdConvertCooperativeVectorMatrixNV-pInfo-10086),
  // checked by a size query that touches no memory: with dstData NULL convert_matrix
  // validates everything and only writes the required size into `required`.
  const char* why = nullptr;
  size_t required = 0;
  job->src = reinterpret_cast<const void*>(uintptr_t(s));
  job->dst = reinterpret_cast<void*>(uintptr_t(d));
  job->src_size = info.srcSize;
  if (k::convert_matrix(job->descs.src, job->src, info.srcSize, job->descs.dst, nullptr, &required,
                        &why) != k::ConvertStatus::Success)
    return why ? why : "invalid conversion";
  // The pair must also be one the bulk convert() implements (convert_matrix checks this
  // only when it converts); one scratch element answers without touching the matrices.
  if (job->descs.src.format != job->descs.dst.format) {
    alignas(8) unsigned char in[8] = {}, out[8] = {};
    if (!k::convert(job->descs.src.format, in, job->descs.dst.format, out, 1))
      return "component type pair is not implemented";
  }

  // pDstSize is read now, at record time, and never written. The command returns void and
  // the spec's ownership rule lets the application free or change *pDstSize as soon as
  // the vkCmd* call returns ("Ownership of such memory must be released back to the
  // application at the end of the duration of the command", Fundamentals, Object
  // Lifetime), so execution may not dereference it. And the value only matters through
  // VUID-vkCmdConvertCooperativeVectorMatrixNV-pInfo-10087 ("the value pointed to by
  // pDstSize must be large enough to contain the destination matrix"): too small is an
  // invalid command here, not the host command's VK_INCOMPLETE.
  job->dst_capacity = *info.pDstSize;
  job->src_bytes = k::layout_required_size(job->descs.src);
  job->dst_bytes = required;
  if (job->dst_capacity < job->dst_bytes)
    return "*pDstSize (" + std::to_string(job->dst_capacity) + ") is smaller than the " +
           std::to_string(job->dst_bytes) + " bytes of the destination matrix (VUID-10087)";
  return {};
}

// The request in a log line: what an application needs to find its bad argument.
std::string describe(const VkConvertCooperativeVectorMatrixInfoNV& i) {
  char buf[256];
  std::snprintf(buf, sizeof buf, " (%u x %u, component type %d -> %d, layout %d stride %zu -> layout %d stride %zu, srcSize %zu)",
                i.numRows, i.numColumns, int(i.srcComponentType), int(i.dstComponentType), int(i.srcLayout),
                i.srcStride, int(i.dstLayout), i.dstStride, i.srcSize);
  return buf;
}

}  // namespace

VKAPI_ATTR VkResult VKAPI_CALL coopvk_ConvertCooperativeVectorMatrixNV(
    VkDevice, const VkConvertCooperativeVectorMatrixInfoNV* pInfo) {
  if (!pInfo) {  // VUID-vkConvertCooperativeVectorMatrixNV-pInfo-parameter
    COOPVK_ERROR("vkConvertCooperativeVectorMatrixNV: pInfo is NULL");
    return VK_ERROR_VALIDATION_FAILED_EXT;
  }
  Descs d;
  if (const char* e = struct_error(*pInfo, &d)) {
    COOPVK_ERROR("vkConvertCooperativeVectorMatrixNV: %s%s", e, describe(*pInfo).c_str());
    return VK_ERROR_VALIDATION_FAILED_EXT;
  }
  // convert_matrix implements the command's own text: NULL dstData is the size query
  // (srcData may be NULL then), *pDstSize too small is VK_INCOMPLETE with nothing written
  // and *pDstSize = 0 bytes written, and it checks 10073..10076 and the struct VUs.
  const char* why = nullptr;
  switch (k::convert_matrix(d.src, pInfo->srcData.hostAddress, pInfo->srcSize, d.dst,
                            pInfo->dstData.hostAddress, pInfo->pDstSize, &why)) {
    case k::ConvertStatus::Success: return VK_SUCCESS;
    case k::ConvertStatus::Incomplete: return VK_INCOMPLETE;
    case k::ConvertStatus::OutOfHostMemory:
      COOPVK_ERROR("vkConvertCooperativeVectorMatrixNV: %s", why ? why : "out of host memory");
      return VK_ERROR_OUT_OF_HOST_MEMORY;
    case k::ConvertStatus::InvalidArgument: break;
  }
  COOPVK_ERROR("vkConvertCooperativeVectorMatrixNV: %s%s", why ? why : "invalid argument", describe(*pInfo).c_str());
  return VK_ERROR_VALIDATION_FAILED_EXT;
}

VKAPI_ATTR void VKAPI_CALL coopvk_CmdConvertCooperativeVectorMatrixNV(
    VkCommandBuffer commandBuffer, uint32_t infoCount,
    const VkConvertCooperativeVectorMatrixInfoNV* pInfos) {
  CommandBuffer* cb = to_cb(commandBuffer);
  const std::string fn = "vkCmdConvertCooperativeVectorMatrixNV: ";
  if (infoCount == 0 || !pInfos) {  // ...-infoCount-arraylength, ...-pInfos-parameter
    cb->fail(VK_ERROR_VALIDATION_FAILED_EXT, (fn + "infoCount is 0 or pInfos is NULL").c_str());
    return;
  }
  // The infos are copied now: the application may reuse pInfos when this returns.
  std::vector<Job> jobs(infoCount);
  for (uint32_t i = 0; i < infoCount; ++i) {
    std::string e = validate_cmd_info(pInfos[i], &jobs[i]);
    if (!e.empty()) {
      cb->fail(VK_ERROR_VALIDATION_FAILED_EXT, (fn + "pInfos[" + std::to_string(i) + "]: " + e).c_str());
      return;
    }
  }
  // VUID-vkCmdConvertCooperativeVectorMatrixNV-None-10088: "Memory accessed by the sources
  // and destinations of all of the conversions must not overlap". A destination may
  // overlap no source (its own included) and no other destination, since the order of
  // the conversions within the command is not defined. Sources may share memory: reading
  // one matrix into several formats in one command is the common case and nothing races.
  for (uint32_t i = 0; i < infoCount; ++i) {
    const uintptr_t di = uintptr_t(jobs[i].dst);
    for (uint32_t j = 0; j < infoCount; ++j) {
      const bool hits_src = ranges_overlap(di, jobs[i].dst_bytes, uintptr_t(jobs[j].src), jobs[j].src_bytes);
      const bool hits_dst = j > i && ranges_overlap(di, jobs[i].dst_bytes, uintptr_t(jobs[j].dst),
                                                    jobs[j].dst_bytes);
      if (hits_src || hits_dst) {
        cb->fail(VK_ERROR_VALIDATION_FAILED_EXT,
                 (fn + "the destination of pInfos[" + std::to_string(i) + "] overlaps the " +
                  (hits_src ? "source" : "destination") + " of pInfos[" + std::to_string(j) +
                  "] (VUID-10088)").c_str());
        return;
      }
    }
  }
  cb->record([jobs = std::move(jobs)](ExecContext&) {
    for (const Job& j : jobs) {
      // Validated when recorded, so only a failed scratch allocation can go wrong here;
      // a queue has no way to report it but the log.
      size_t capacity = j.dst_capacity;
      const char* why = nullptr;
      if (k::convert_matrix(j.descs.src, j.src, j.src_size, j.descs.dst, j.dst, &capacity, &why) !=
          k::ConvertStatus::Success)
        COOPVK_ERROR("vkCmdConvertCooperativeVectorMatrixNV (executing): %s",
                     why ? why : "conversion failed");
    }
  });
}
