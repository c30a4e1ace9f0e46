// The little Vulkan scaffolding the benchmarks share: an instance and a device on whatever
// driver the loader finds (VK_DRIVER_FILES picks it; a CPU-type device is preferred, else
// the first), host-visible buffers, a compute pipeline over N storage buffers plus push
// constants, one-shot submission, and a clock. Header-only so each bench stays one file.
// Failures print the call and exit: a benchmark has nothing sensible to do after one.
#pragma once

#include <vulkan/vulkan.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#ifndef COOPVK_BENCH_SHADER_DIR
#error "COOPVK_BENCH_SHADER_DIR must name the directory of the compiled .spv files"
#endif

namespace bench {

#define BENCH_VK(expr)                                                                 \
  do {                                                                                 \
    VkResult bench_vk_r = (expr);                                                      \
    if (bench_vk_r != VK_SUCCESS) {                                                    \
      std::fprintf(stderr, "%s:%d: %s failed: VkResult %d\n", __FILE__, __LINE__, #expr, \
                   int(bench_vk_r));                                                   \
      std::exit(1);                                                                    \
    }                                                                                  \
  } while (0)

// A crash in a bench is almost always the driver's (its JIT-compiled code runs in this
// process): say so, with the step and the shader last loaded, instead of dying with a bare
// "Segmentation fault". Compute::create and Context::submit_and_wait set the step,
// load_spv the shader; `report_crashes` (called first thing in main) installs the handler.
struct CrashInfo {
  const char* program = "bench";
  const char* step = "setup";
  char shader[256] = "none";
};
inline CrashInfo& crash_info() {
  static CrashInfo info;
  return info;
}
inline void report_crashes(const char* program) {
  crash_info().program = program;
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // what was printed before a crash survives it
  auto handler = [](int sig) {
    // several worker threads may fault at once: the first one reports, the others wait
    static std::atomic<bool> reported{false};
    if (reported.exchange(true))
      for (;;) pause();
    const CrashInfo& c = crash_info();
    const char* name = sig == SIGSEGV ? "SIGSEGV" : sig == SIGBUS ? "SIGBUS" : sig == SIGILL ? "SIGILL" : "SIGFPE";
    const char* parts[] = {c.program, ": CRASHED (", name, ") during ", c.step, " of ", c.shader,
                           ".spv: a bug in the driver under test\n"};
    char line[512];
    size_t len = 0;
    for (const char* p : parts)
      for (; *p && len < sizeof(line); ++p) line[len++] = *p;
    (void)!write(2, line, len);  // one async-signal-safe write
    _exit(128 + sig);
  };
  for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE}) signal(sig, handler);
}

inline double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

inline double minimum(const std::vector<double>& v) {
  return v.empty() ? 0.0 : *std::min_element(v.begin(), v.end());
}

inline std::vector<uint32_t> load_spv(const std::string& name) {
  std::snprintf(crash_info().shader, sizeof(crash_info().shader), "%s", name.c_str());
  const std::string path = std::string(COOPVK_BENCH_SHADER_DIR) + "/" + name + ".spv";
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    std::fprintf(stderr, "cannot open %s\n", path.c_str());
    std::exit(1);
  }
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::vector<uint32_t> words(bytes.size() / 4);
  std::memcpy(words.data(), bytes.data(), words.size() * 4);
  return words;
}

struct Buffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkDeviceSize size = 0;
  void* mapped = nullptr;
};

// An instance, the chosen physical device, a device with one compute queue and a
// command pool. Several may live side by side (bench_pipeline_create makes fresh ones).
struct Context {
  VkInstance instance = VK_NULL_HANDLE;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkPhysicalDeviceProperties props{};
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  uint32_t family = 0;
  VkCommandPool pool = VK_NULL_HANDLE;
  uint32_t memory_type = 0;

  // `features`: a VkPhysicalDevice*Features chain for VkDeviceCreateInfo::pNext (the
  // bench enables what its shaders declare); `extensions`: device extensions to enable.
  explicit Context(const void* features = nullptr, std::vector<const char*> extensions = {}) {
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "coopvk-bench";
    app.apiVersion = VK_API_VERSION_1_3;
    VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    ici.pApplicationInfo = &app;
    BENCH_VK(vkCreateInstance(&ici, nullptr, &instance));
    uint32_t n = 0;
    BENCH_VK(vkEnumeratePhysicalDevices(instance, &n, nullptr));
    if (n == 0) {
      std::fprintf(stderr, "no Vulkan physical device (is VK_DRIVER_FILES set?)\n");
      std::exit(1);
    }
    std::vector<VkPhysicalDevice> pds(n);
    BENCH_VK(vkEnumeratePhysicalDevices(instance, &n, pds.data()));
    physical = pds[0];
    for (VkPhysicalDevice pd : pds) {
      VkPhysicalDeviceProperties p;
      vkGetPhysicalDeviceProperties(pd, &p);
      if (p.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU) {
        physical = pd;
        break;
      }
    }
    vkGetPhysicalDeviceProperties(physical, &props);

    uint32_t qn = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(physical, &qn, nullptr);
    std::vector<VkQueueFamilyProperties> qf(qn);
    vkGetPhysicalDeviceQueueFamilyProperties(physical, &qn, qf.data());
    family = qn;
    for (uint32_t i = 0; i < qn; ++i)
      if (qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT) {
        family = i;
        break;
      }
    if (family == qn) {
      std::fprintf(stderr, "%s has no compute queue\n", props.deviceName);
      std::exit(1);
    }
    const float prio = 1.0f;
    VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    qci.queueFamilyIndex = family;
    qci.queueCount = 1;
    qci.pQueuePriorities = &prio;
    VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    dci.pNext = features;
    dci.enabledExtensionCount = uint32_t(extensions.size());
    dci.ppEnabledExtensionNames = extensions.data();
    dci.queueCreateInfoCount = 1;
    dci.pQueueCreateInfos = &qci;
    BENCH_VK(vkCreateDevice(physical, &dci, nullptr, &device));
    vkGetDeviceQueue(device, family, 0, &queue);
    VkCommandPoolCreateInfo cpci{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    cpci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    cpci.queueFamilyIndex = family;
    BENCH_VK(vkCreateCommandPool(device, &cpci, nullptr, &pool));

    VkPhysicalDeviceMemoryProperties mp;
    vkGetPhysicalDeviceMemoryProperties(physical, &mp);
    const VkMemoryPropertyFlags want =
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    memory_type = mp.memoryTypeCount;
    for (uint32_t i = 0; i < mp.memoryTypeCount; ++i)
      if ((mp.memoryTypes[i].propertyFlags & want) == want) {
        memory_type = i;
        break;
      }
    if (memory_type == mp.memoryTypeCount) {
      std::fprintf(stderr, "%s has no host-visible coherent memory\n", props.deviceName);
      std::exit(1);
    }
  }
  ~Context() {
    vkDestroyCommandPool(device, pool, nullptr);
    vkDestroyDevice(device, nullptr);
    vkDestroyInstance(instance, nullptr);
  }
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  Buffer buffer(VkDeviceSize size) {
    Buffer b;
    b.size = size;
    VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bci.size = size;
    bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    BENCH_VK(vkCreateBuffer(device, &bci, nullptr, &b.buffer));
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(device, b.buffer, &req);
    if (!(req.memoryTypeBits & (1u << memory_type))) {
      std::fprintf(stderr, "buffer cannot live in the host-visible memory type\n");
      std::exit(1);
    }
    VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    mai.allocationSize = req.size;
    mai.memoryTypeIndex = memory_type;
    BENCH_VK(vkAllocateMemory(device, &mai, nullptr, &b.memory));
    BENCH_VK(vkBindBufferMemory(device, b.buffer, b.memory, 0));
    BENCH_VK(vkMapMemory(device, b.memory, 0, VK_WHOLE_SIZE, 0, &b.mapped));
    return b;
  }
  void destroy(Buffer& b) {
    vkDestroyBuffer(device, b.buffer, nullptr);
    vkFreeMemory(device, b.memory, nullptr);
    b = {};
  }

  VkCommandBuffer begin() {
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = pool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    VkCommandBuffer cb;
    BENCH_VK(vkAllocateCommandBuffers(device, &ai, &cb));
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    BENCH_VK(vkBeginCommandBuffer(cb, &bi));
    return cb;
  }
  // Submits a recorded (ended) command buffer and waits; returns the seconds that took.
  double submit_and_wait(VkCommandBuffer cb) {
    VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence fence;
    BENCH_VK(vkCreateFence(device, &fci, nullptr, &fence));
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cb;
    crash_info().step = "a dispatch";
    const double t0 = now_s();
    BENCH_VK(vkQueueSubmit(queue, 1, &si, fence));
    BENCH_VK(vkWaitForFences(device, 1, &fence, VK_TRUE, UINT64_MAX));
    const double t = now_s() - t0;
    vkDestroyFence(device, fence, nullptr);
    return t;
  }
};

// A compute pipeline whose set 0 holds `buffers` storage buffers at bindings 0..n-1, with
// `push` bytes of push constants, and one descriptor set bound to given buffers.
struct Compute {
  VkDevice device = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
  VkDescriptorPool pool = VK_NULL_HANDLE;
  VkDescriptorSet set = VK_NULL_HANDLE;

  Compute(VkDevice dev, uint32_t buffers, uint32_t push) : device(dev) {
    std::vector<VkDescriptorSetLayoutBinding> b;
    for (uint32_t i = 0; i < buffers; ++i)
      b.push_back({i, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, nullptr});
    VkDescriptorSetLayoutCreateInfo lci{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    lci.bindingCount = buffers;
    lci.pBindings = b.data();
    BENCH_VK(vkCreateDescriptorSetLayout(device, &lci, nullptr, &set_layout));
    VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, push};
    VkPipelineLayoutCreateInfo pci{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    pci.setLayoutCount = 1;
    pci.pSetLayouts = &set_layout;
    pci.pushConstantRangeCount = push ? 1 : 0;
    pci.pPushConstantRanges = &range;
    BENCH_VK(vkCreatePipelineLayout(device, &pci, nullptr, &layout));
    VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, buffers};
    VkDescriptorPoolCreateInfo dpci{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    dpci.maxSets = 1;
    dpci.poolSizeCount = 1;
    dpci.pPoolSizes = &size;
    BENCH_VK(vkCreateDescriptorPool(device, &dpci, nullptr, &pool));
  }
  ~Compute() {
    if (pipeline) vkDestroyPipeline(device, pipeline, nullptr);
    vkDestroyDescriptorPool(device, pool, nullptr);
    vkDestroyPipelineLayout(device, layout, nullptr);
    vkDestroyDescriptorSetLayout(device, set_layout, nullptr);
  }
  Compute(const Compute&) = delete;
  Compute& operator=(const Compute&) = delete;

  // Module + pipeline from `words`, as an application does it (the module is destroyed
  // right after). Returns the pipeline; `this->pipeline` is left alone.
  VkPipeline create(const std::vector<uint32_t>& words, VkPipelineCache cache = VK_NULL_HANDLE,
                    const VkSpecializationInfo* specialization = nullptr) {
    VkResult r = VK_SUCCESS;
    VkPipeline p = try_create(words, cache, specialization, &r);
    if (r != VK_SUCCESS) {
      std::fprintf(stderr, "creating the pipeline of %s.spv failed: VkResult %d\n", crash_info().shader, int(r));
      std::exit(1);
    }
    return p;
  }
  // The same, but a failure returns VK_NULL_HANDLE and its VkResult in `*result` (for a
  // bench that reports a shader the driver cannot compile and goes on with the others).
  VkPipeline try_create(const std::vector<uint32_t>& words, VkPipelineCache cache,
                        const VkSpecializationInfo* specialization, VkResult* result) {
    VkShaderModuleCreateInfo smci{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    smci.codeSize = words.size() * 4;
    smci.pCode = words.data();
    VkShaderModule module;
    crash_info().step = "pipeline creation";
    *result = vkCreateShaderModule(device, &smci, nullptr, &module);
    if (*result != VK_SUCCESS) return VK_NULL_HANDLE;
    VkComputePipelineCreateInfo cci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    cci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    cci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    cci.stage.module = module;
    cci.stage.pName = "main";
    cci.stage.pSpecializationInfo = specialization;
    cci.layout = layout;
    VkPipeline p = VK_NULL_HANDLE;
    *result = vkCreateComputePipelines(device, cache, 1, &cci, nullptr, &p);
    vkDestroyShaderModule(device, module, nullptr);
    return *result == VK_SUCCESS ? p : VK_NULL_HANDLE;
  }

  void bind(const std::vector<const Buffer*>& buffers) {
    VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    ai.descriptorPool = pool;
    ai.descriptorSetCount = 1;
    ai.pSetLayouts = &set_layout;
    BENCH_VK(vkAllocateDescriptorSets(device, &ai, &set));
    std::vector<VkDescriptorBufferInfo> infos;
    for (const Buffer* b : buffers) infos.push_back({b->buffer, 0, VK_WHOLE_SIZE});
    std::vector<VkWriteDescriptorSet> w(infos.size());
    for (uint32_t i = 0; i < infos.size(); ++i) {
      w[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
      w[i].dstSet = set;
      w[i].dstBinding = i;
      w[i].descriptorCount = 1;
      w[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      w[i].pBufferInfo = &infos[i];
    }
    vkUpdateDescriptorSets(device, uint32_t(w.size()), w.data(), 0, nullptr);
  }

  // Records bind + push + dispatch into a new command buffer of `ctx` and ends it.
  VkCommandBuffer record(Context& ctx, const void* push, uint32_t push_size, uint32_t gx,
                         uint32_t gy = 1, uint32_t gz = 1) {
    VkCommandBuffer cb = ctx.begin();
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, &set, 0, nullptr);
    if (push_size) vkCmdPushConstants(cb, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, push_size, push);
    vkCmdDispatch(cb, gx, gy, gz);
    BENCH_VK(vkEndCommandBuffer(cb));
    return cb;
  }
};

// The features a shader with fp16 arithmetic on 16-bit storage buffers declares
// (shaderFloat16, storageBuffer16BitAccess; both core since Vulkan 1.2, so no extension
// strings). Pass `chain()` to Context; not copyable, the chain points into itself.
struct Fp16Features {
  VkPhysicalDeviceShaderFloat16Int8Features f16{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES};
  VkPhysicalDevice16BitStorageFeatures storage{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
  Fp16Features() {
    f16.shaderFloat16 = VK_TRUE;
    storage.storageBuffer16BitAccess = VK_TRUE;
    f16.pNext = &storage;
  }
  Fp16Features(const Fp16Features&) = delete;
  Fp16Features& operator=(const Fp16Features&) = delete;
  const void* chain() const { return &f16; }
};

inline void print_device(const Context& ctx) {
  std::printf("device %s (apiVersion %u.%u.%u)\n", ctx.props.deviceName,
              VK_API_VERSION_MAJOR(ctx.props.apiVersion), VK_API_VERSION_MINOR(ctx.props.apiVersion),
              VK_API_VERSION_PATCH(ctx.props.apiVersion));
}

}  // namespace bench
