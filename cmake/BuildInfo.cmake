# Writes build_info.hpp (cmake -P, at every build): the commit a binary is built from. Done at
# configure time only, an incremental build after new commits kept naming the configure-time
# commit in every results file (seen: a session's binaries all said the session's first commit).
# A tree with uncommitted changes to tracked files gets "-dirty". An explicit GPSM_COMMIT wins: the
# GPU machine's copy of the tree may carry a stale .git. configure_file rewrites the header only
# when its text changes, so an unchanged commit rebuilds nothing.
# In: SRC_DIR, IN, OUT, PROJECT_VERSION, CMAKE_CUDA_ARCHITECTURES, CMAKE_BUILD_TYPE.
if(DEFINED ENV{GPSM_COMMIT} AND NOT "$ENV{GPSM_COMMIT}" STREQUAL "")
  set(GPSM_GIT_COMMIT "$ENV{GPSM_COMMIT}")
else()
  execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY ${SRC_DIR}
                  OUTPUT_VARIABLE GPSM_GIT_COMMIT OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(GPSM_GIT_COMMIT)
    execute_process(COMMAND git status --porcelain --untracked-files=no WORKING_DIRECTORY ${SRC_DIR}
                    OUTPUT_VARIABLE changes OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(changes)
      string(APPEND GPSM_GIT_COMMIT "-dirty")
    endif()
  endif()
endif()
if(NOT GPSM_GIT_COMMIT)
  set(GPSM_GIT_COMMIT "unknown")
endif()
string(REPLACE "," ";" CMAKE_CUDA_ARCHITECTURES "${CMAKE_CUDA_ARCHITECTURES}")  # passed with commas
configure_file(${IN} ${OUT} @ONLY)
