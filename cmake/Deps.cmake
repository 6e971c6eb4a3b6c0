# Dependencies: system packages first (scripts/setup.sh installs them), then the copies staged in
# .deps/ (what the GPU machine, which has no registry, builds against).
set(GPSM_DEPS_DIR ${PROJECT_SOURCE_DIR}/.deps)

find_package(nlohmann_json 3.10 QUIET)
if(NOT nlohmann_json_FOUND)
  if(NOT EXISTS ${GPSM_DEPS_DIR}/json/include/nlohmann/json.hpp)
    message(FATAL_ERROR "gpsm: nlohmann-json not found; run scripts/setup.sh")
  endif()
  add_library(nlohmann_json INTERFACE)
  target_include_directories(nlohmann_json SYSTEM INTERFACE ${GPSM_DEPS_DIR}/json/include)
  add_library(nlohmann_json::nlohmann_json ALIAS nlohmann_json)
endif()

find_package(CLI11 QUIET CONFIG)
if(NOT CLI11_FOUND)
  if(NOT EXISTS ${GPSM_DEPS_DIR}/cli11/include/CLI/CLI.hpp)
    message(FATAL_ERROR "gpsm: CLI11 not found; run scripts/setup.sh")
  endif()
  add_library(gpsm_cli11 INTERFACE)
  target_include_directories(gpsm_cli11 SYSTEM INTERFACE ${GPSM_DEPS_DIR}/cli11/include)
  add_library(CLI11::CLI11 ALIAS gpsm_cli11)
endif()

# fmt from its headers alone (no library to find on the GPU machine). fmt 9 (Debian 12's): its
# implementation compiled once, in gpsm_common (src/common/fmt_impl.cpp), which every layer links;
# header-only mode compiled it again in each of ~70 files. Any other version: header-only.
find_path(GPSM_FMT_INCLUDE fmt/format.h HINTS ${GPSM_DEPS_DIR}/fmt/include)
if(NOT GPSM_FMT_INCLUDE)
  message(FATAL_ERROR "gpsm: fmt not found; run scripts/setup.sh")
endif()
file(STRINGS ${GPSM_FMT_INCLUDE}/fmt/core.h GPSM_FMT_VERSION_LINE REGEX "^#define FMT_VERSION [0-9]+")
string(REGEX MATCH "[0-9]+" GPSM_FMT_VERSION "${GPSM_FMT_VERSION_LINE}")
add_library(gpsm_fmt INTERFACE)
target_include_directories(gpsm_fmt SYSTEM INTERFACE ${GPSM_FMT_INCLUDE})
if(NOT (GPSM_FMT_VERSION GREATER_EQUAL 90000 AND GPSM_FMT_VERSION LESS 100000))
  target_compile_definitions(gpsm_fmt INTERFACE FMT_HEADER_ONLY=1)
endif()

# stb_image / stb_image_write (PNG for image filtering, src/apps/filter/png_io.cpp): headers only,
# Debian's libstb-dev (/usr/include/stb) or its staged copy.
find_path(GPSM_STB_INCLUDE stb/stb_image.h HINTS ${GPSM_DEPS_DIR}/stb/include)
if(NOT GPSM_STB_INCLUDE OR NOT EXISTS ${GPSM_STB_INCLUDE}/stb/stb_image_write.h)
  message(FATAL_ERROR "gpsm: stb_image.h / stb_image_write.h not found (Debian libstb-dev); run scripts/setup.sh")
endif()

# NVML: header only at build time; libnvidia-ml.so.1 is dlopen'ed at run time so gpsm starts on
# machines with no driver (CI) and says so instead of failing to load.
find_path(GPSM_NVML_INCLUDE nvml.h HINTS ${GPSM_DEPS_DIR}/nvml/include ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include)
if(NOT GPSM_NVML_INCLUDE)
  message(FATAL_ERROR "gpsm: nvml.h not found; run scripts/setup.sh")
endif()

# gpsm_python_package_dir(nvidia.nccl VAR): the directory of a python3 package (the GPU machine's
# image carries NCCL and NVSHMEM as python3's nvidia/* packages); VAR is empty when python3 or the
# package is missing.
function(gpsm_python_package_dir module var)
  set(dir "")
  find_program(GPSM_PYTHON3 python3)
  if(GPSM_PYTHON3)
    execute_process(COMMAND ${GPSM_PYTHON3} -c
                    "import importlib.util as u; s = u.find_spec('${module}'); print(list(s.submodule_search_locations)[0])"
                    OUTPUT_VARIABLE dir OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  endif()
  set(${var} "${dir}" PARENT_SCOPE)
endfunction()
