# coopvk_add_spirv(<target> OUTPUT_DIR <dir> SOURCES <files...>
#                  [TARGET_ENV <env>] [VAL_ARGS <args...>] [GLSL_ARGS <args...>])
#
# Builds test shaders at build time: `.spvasm` files are assembled with spirv-as, GLSL
# compute shaders (`.comp`) compiled with glslangValidator, both for TARGET_ENV
# (default vulkan1.3). Every result then goes through `spirv-val --target-env <env>`
# before it is renamed into place, so a shader that fails validation fails the build
# and never leaves a stale .spv behind. Outputs are <dir>/<name without extension>.spv;
# the list is in the target's SPIRV_OUTPUTS property. The target is part of ALL, so every
# listed shader is validated by a plain build. The tools are sid's, unpacked by
# scripts/setup.sh into third_party/sid-root/bin.
set(COOPVK_SPIRV_TOOLS_DIR "${CMAKE_SOURCE_DIR}/third_party/sid-root/bin"
    CACHE PATH "Where spirv-as, spirv-val and glslangValidator live")

function(coopvk_add_spirv target)
  cmake_parse_arguments(S "" "OUTPUT_DIR;TARGET_ENV" "SOURCES;VAL_ARGS;GLSL_ARGS" ${ARGN})
  if(NOT S_OUTPUT_DIR)
    message(FATAL_ERROR "coopvk_add_spirv(${target}): OUTPUT_DIR is required")
  endif()
  if(NOT S_TARGET_ENV)
    set(S_TARGET_ENV vulkan1.3)
  endif()
  foreach(tool spirv-as spirv-val glslangValidator)
    if(NOT EXISTS "${COOPVK_SPIRV_TOOLS_DIR}/${tool}")
      message(FATAL_ERROR "${COOPVK_SPIRV_TOOLS_DIR}/${tool} not found; run scripts/setup.sh")
    endif()
  endforeach()
  set(spirv_as "${COOPVK_SPIRV_TOOLS_DIR}/spirv-as")
  set(spirv_val "${COOPVK_SPIRV_TOOLS_DIR}/spirv-val")
  set(glslang "${COOPVK_SPIRV_TOOLS_DIR}/glslangValidator")

  set(outputs "")
  foreach(src ${S_SOURCES})
    get_filename_component(abs "${src}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    get_filename_component(name "${abs}" NAME)
    get_filename_component(ext "${abs}" LAST_EXT)
    get_filename_component(stem "${abs}" NAME_WLE)
    set(out "${S_OUTPUT_DIR}/${stem}.spv")
    set(tmp "${out}.unvalidated")
    if(ext STREQUAL ".spvasm")
      set(build_cmd "${spirv_as}" --target-env ${S_TARGET_ENV} -o "${tmp}" "${abs}")
      set(what "Assembling")
    elseif(ext STREQUAL ".comp")
      set(build_cmd "${glslang}" --target-env ${S_TARGET_ENV} ${S_GLSL_ARGS} -o "${tmp}" "${abs}")
      set(what "Compiling")
    else()
      message(FATAL_ERROR "coopvk_add_spirv(${target}): ${src}: expected .spvasm or .comp")
    endif()
    add_custom_command(
      OUTPUT "${out}"
      COMMAND ${CMAKE_COMMAND} -E make_directory "${S_OUTPUT_DIR}"
      COMMAND ${build_cmd}
      COMMAND "${spirv_val}" --target-env ${S_TARGET_ENV} ${S_VAL_ARGS} "${tmp}"
      COMMAND ${CMAKE_COMMAND} -E rename "${tmp}" "${out}"
      DEPENDS "${abs}"
      COMMENT "${what} and validating ${name} (${S_TARGET_ENV})"
      VERBATIM)
    list(APPEND outputs "${out}")
  endforeach()
  add_custom_target(${target} ALL DEPENDS ${outputs})
  set_property(TARGET ${target} PROPERTY SPIRV_OUTPUTS "${outputs}")
endfunction()
