# Compiles SOURCE with the include directories INCS (a ;-list) and succeeds only if the compiler
# fails because the header is not found: the build's include roots enforce the layers.
set(args -std=c++17 -fsyntax-only)
foreach(i ${INCS})
  list(APPEND args -I${i})
endforeach()
execute_process(COMMAND ${CXX} ${args} ${SOURCE} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "layers: ${SOURCE} compiled with the runtime's include path; a wrong-direction include resolved")
endif()
if(NOT err MATCHES "No such file or directory|file not found")
  message(FATAL_ERROR "layers: ${SOURCE} failed for another reason:\n${err}")
endif()
message(STATUS "layers: the runtime cannot see scope's headers, as it should")
