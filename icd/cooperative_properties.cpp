// Property structs of the cooperative-matrix and cooperative-vector extensions in a
// VkPhysicalDeviceProperties2 chain. Filled from the capability table
// (cooperative_caps.h) once it exists; until then no such struct is recognised here.
#include "physical_device.h"

bool coopvk::fill_cooperative_properties(const PhysicalDevice*, VkBaseOutStructure*) { return false; }
