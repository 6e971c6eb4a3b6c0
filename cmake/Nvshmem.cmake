# NVSHMEM (the nvshmem paradigm of gpsm bench), optional (-DGPSM_WITH_NVSHMEM=OFF builds without
# it). Looked for, first found wins, in:
#   .deps-nvshmem            scripts/setup.sh unpacks the PyPI wheel nvidia-nvshmem-cu13 there
#                            (outside .deps, which is carried to the GPU machine and stays small);
#   python3's nvidia/nvshmem the same wheel installed for python3 (the GPU machine's image);
#   GPSM_NVSHMEM_HOME / NVSHMEM_HOME  an NVSHMEM install (include/, lib/).
# Each needs include/nvshmem.h, lib/libnvshmem_device.a and lib/libnvshmem_host.so(.3).
# Found: GPSM_NVSHMEM_FOUND, GPSM_NVSHMEM_INCLUDE_DIR and the imported targets gpsm_nvshmem_host
# and gpsm_nvshmem_device; only the worker (tools/gpsm-nvshmem-stencil) links them, so the rest of
# gpsm builds, links and runs the same with or without NVSHMEM.
option(GPSM_WITH_NVSHMEM "Build the nvshmem paradigm's worker when NVSHMEM is found" ON)
set(GPSM_NVSHMEM_FOUND OFF)
unset(GPSM_NVSHMEM_INCLUDE_DIR)
if(GPSM_WITH_NVSHMEM)
  set(GPSM_NVSHMEM_ROOTS ${PROJECT_SOURCE_DIR}/.deps-nvshmem)
  gpsm_python_package_dir(nvidia.nvshmem GPSM_PY_NVSHMEM)
  if(GPSM_PY_NVSHMEM)
    list(APPEND GPSM_NVSHMEM_ROOTS ${GPSM_PY_NVSHMEM})
  endif()
  foreach(v GPSM_NVSHMEM_HOME NVSHMEM_HOME)
    if(DEFINED ${v})
      list(APPEND GPSM_NVSHMEM_ROOTS ${${v}})
    elseif(DEFINED ENV{${v}})
      list(APPEND GPSM_NVSHMEM_ROOTS $ENV{${v}})
    endif()
  endforeach()
  foreach(root ${GPSM_NVSHMEM_ROOTS})
    if(NOT GPSM_NVSHMEM_FOUND AND EXISTS ${root}/include/nvshmem.h AND EXISTS ${root}/lib/libnvshmem_device.a)
      foreach(name libnvshmem_host.so libnvshmem_host.so.3)
        if(NOT GPSM_NVSHMEM_FOUND AND EXISTS ${root}/lib/${name})
          set(GPSM_NVSHMEM_FOUND ON)
          set(GPSM_NVSHMEM_INCLUDE_DIR ${root}/include)
          set(GPSM_NVSHMEM_HOST_LIB ${root}/lib/${name})
          set(GPSM_NVSHMEM_DEVICE_LIB ${root}/lib/libnvshmem_device.a)
          set(GPSM_NVSHMEM_LIB_DIR ${root}/lib)
        endif()
      endforeach()
    endif()
  endforeach()
endif()
if(GPSM_NVSHMEM_FOUND)
  message(STATUS "gpsm: NVSHMEM: ${GPSM_NVSHMEM_HOST_LIB}")
  add_library(gpsm_nvshmem_host SHARED IMPORTED)
  set_target_properties(gpsm_nvshmem_host PROPERTIES IMPORTED_LOCATION ${GPSM_NVSHMEM_HOST_LIB})
  add_library(gpsm_nvshmem_device STATIC IMPORTED)
  set_target_properties(gpsm_nvshmem_device PROPERTIES IMPORTED_LOCATION ${GPSM_NVSHMEM_DEVICE_LIB})
else()
  message(STATUS "gpsm: NVSHMEM not found or off (run scripts/setup.sh): the nvshmem paradigm reports unsupported")
endif()
