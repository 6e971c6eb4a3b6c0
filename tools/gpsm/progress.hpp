#pragma once
// Progress lines on stderr. On a terminal one line is redrawn in place (carriage return, erase
// to end of line); into a file or pipe (a log, CI) each step is a plain line of its own, so the
// log reads as a list of steps instead of one line holding every redraw.
#include <unistd.h>

#include <algorithm>

#include <cmath>
#include <iostream>
#include <string>

#include <fmt/format.h>

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

// A duration as the progress lines show it: "42 s", "3m07s".
inline std::string elapsed_text(double s) {
  const long t = std::lround(std::max(0.0, s));
  return t < 60 ? fmt::format("{} s", t) : fmt::format("{}m{:02d}s", t / 60, int(t % 60));
}

// ", ~1m20s left": the runs still to come at the mean time of the `finished` ones so far (of
// `total`); "" before the first has finished or after the last. Runs of one command differ (a
// larger size, a slower paradigm), so it is an estimate that firms up as the runs go by.
inline std::string eta_suffix(double elapsed_s, int finished, int total) {
  if (finished <= 0 || finished >= total) return "";
  return ", ~" + elapsed_text(elapsed_s / finished * (total - finished)) + " left";
}

// Erases the progress line before other output (nothing to erase off a terminal).
inline void progress_clear() {
  if (stderr_is_terminal()) std::cerr << "\r\033[K" << std::flush;
}

}  // namespace gpsm::cli
