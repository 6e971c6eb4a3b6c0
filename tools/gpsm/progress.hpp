#pragma once
// Progress lines on stderr. On a terminal one line is redrawn in place (carriage return, erase
// to end of line); into a file or pipe (a log, CI) each step is a plain line of its own, so the
// log reads as a list of steps instead of one line holding every redraw.
#include <unistd.h>

#include <iostream>
#include <string>

namespace gpsm::cli {

inline bool stderr_is_terminal() {
  static const bool tty = isatty(STDERR_FILENO) == 1;
  return tty;
}

// Shows one step: redrawn over the previous one on a terminal, a line of its own elsewhere.
inline void progress_show(const std::string& line) {
  if (stderr_is_terminal())
    std::cerr << "\r\033[K" << line << std::flush;
  else
    std::cerr << line << "\n" << std::flush;
}

// Erases the progress line before other output (nothing to erase off a terminal).
inline void progress_clear() {
  if (stderr_is_terminal()) std::cerr << "\r\033[K" << std::flush;
}

}  // namespace gpsm::cli
