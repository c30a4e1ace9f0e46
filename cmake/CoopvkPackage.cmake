# The Debian package: `cpack` in the build directory (scripts/package.sh does setup, build
# and this) writes coopvk_<version>_<arch>.deb there. It holds exactly what
# `cmake --install` installs (the driver in the multiarch library directory, its loader
# manifest in /usr/share/vulkan/icd.d, coopvk-info in /usr/bin), laid out for the prefix
# /usr, so that after `apt install ./coopvk_*.deb` the system's Vulkan loader finds the
# driver with no environment variable. conformance/package/ tests it.

set(COOPVK_PACKAGE_MAINTAINER "coopvk maintainers <coopvk-maintainers@invalid>"
    CACHE STRING "Maintainer field of the Debian package (Name <email>)")

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME coopvk)
set(CPACK_PACKAGE_VENDOR coopvk)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "${COOPVK_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Vulkan compute driver for the CPU with cooperative matrices and vectors")
# The extended Debian description: CPack indents each line by one space and turns the
# empty line into " .".
set(CPACK_PACKAGE_DESCRIPTION
"coopvk is a software Vulkan driver (ICD) that runs compute work on the CPU,
compiling SPIR-V shaders with LLVM. It exposes VK_KHR_cooperative_matrix,
VK_NV_cooperative_matrix2, VK_EXT_cooperative_matrix_maintenance1 and
VK_NV_cooperative_vector, for GPU-less CI, as a reference driver and for the
Vulkan CTS cooperative groups. The Vulkan loader finds it through its manifest
in /usr/share/vulkan/icd.d like any other driver.

This package holds the driver and coopvk-info, a program that lists the
device's cooperative-matrix and cooperative-vector support and runs a small
round trip through the loader.")
# CPack's DEB generator installs with this prefix into a staging directory (as DESTDIR),
# so the install-time manifest names /usr/<libdir>/libcoopvk_icd.so.
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)   # coopvk_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION libs)    # as Debian's mesa-vulkan-drivers
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# libvulkan1 recommends "mesa-vulkan-drivers | vulkan-icd"; a driver package provides it.
set(CPACK_DEBIAN_PACKAGE_PROVIDES vulkan-icd)
# vulkaninfo, to see the driver; the loader itself comes with coopvk-info's dependencies.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS vulkan-tools)

# Dependencies: dpkg-shlibdeps reads them off the ELF files (libLLVM-19 -> libllvm19,
# libvulkan.so.1 -> libvulkan1, libc6, libstdc++6, libgcc-s1, with the minimum versions
# the symbols need). CPackDeb needs `file` and dpkg-shlibdeps (dpkg-dev) for it, both
# in scripts/setup.sh's list; without them the list is declared by hand instead of
# CPack silently writing a package without dependencies.
find_program(COOPVK_DPKG_SHLIBDEPS dpkg-shlibdeps)
find_program(COOPVK_FILE_PROGRAM file)
mark_as_advanced(COOPVK_DPKG_SHLIBDEPS COOPVK_FILE_PROGRAM)
if(COOPVK_DPKG_SHLIBDEPS AND COOPVK_FILE_PROGRAM)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
else()
  message(STATUS "coopvk package: dpkg-shlibdeps or file missing; declaring dependencies by hand")
  set(CPACK_DEBIAN_PACKAGE_DEPENDS
      "libc6 (>= 2.34), libgcc-s1 (>= 3.3.1), libllvm19, libstdc++6 (>= 12), libvulkan1")
endif()

# No source packages (`package_source` would tar up build trees and third_party/).
set(CPACK_SOURCE_GENERATOR "")
include(CPack)
