# Progress into a file or pipe is one plain line per step: `gpsm sim` (no GPU needed) runs with
# stderr captured (a pipe, not a terminal); the capture must hold each step on a line of its own
# and no carriage return or erase-line escape (the redraws that fill a log with one long line).
# cmake -DGPSM=<gpsm binary> -P progress_plain.cmake
execute_process(COMMAND ${GPSM} sim --app jacobi2d --size 256 --gpus 1,2 --paradigm memcpy,infinite --iters 2
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gpsm sim exited ${rc}:\n${err}")
endif()
string(ASCII 13 cr)
string(ASCII 27 esc)
string(FIND "${err}" "${cr}" at_cr)
string(FIND "${err}" "${esc}[K" at_esc)
if(NOT at_cr EQUAL -1 OR NOT at_esc EQUAL -1)
  message(FATAL_ERROR "progress on a pipe has carriage returns or erase-line escapes:\n${err}")
endif()
# 4 runs (2 paradigms x 2 GPU counts), each step a line: [k/4] ... simulating (elapsed), and from
# the second on an estimate of the time left
foreach(k 1 2 3 4)
  if(k EQUAL 1)
    set(eta "")
  else()
    set(eta ", ~[0-9]+(m[0-9][0-9]s| s) left")
  endif()
  if(NOT err MATCHES "(^|\n)\\[${k}/4\\] jacobi2d 256x256 [a-z]+ on [12] GPUs?: simulating \\([0-9]+ s${eta}\\)\n")
    message(FATAL_ERROR "step ${k} of 4 is not a line of its own on a pipe (with the time left from step 2):\n${err}")
  endif()
endforeach()
message(STATUS "progress on a pipe: plain lines, no redraws")
