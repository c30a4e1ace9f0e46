// The device facts the cooperative queries are defined against (cooperative_caps.h),
// read from the driver's own feature and property queries so the two never disagree.
#pragma once

#include "cooperative_caps.h"

namespace coopvk {

caps::DeviceFacts cooperative_device_facts(VkPhysicalDevice physical_device);

}  // namespace coopvk
