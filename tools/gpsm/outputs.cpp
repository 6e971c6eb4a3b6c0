// The inputs the output checks compare against that the commands name only inside other options.
#include <sys/stat.h>

#include <string>
#include <vector>

#include "commands.hpp"

namespace gpsm::cli {

namespace {
bool regular_file(const std::string& p) {
  struct stat st {};
  return !p.empty() && ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}
}  // namespace

std::vector<gpsm::InputPath> size_file_inputs(const std::vector<std::string>& sizes) {
  std::vector<gpsm::InputPath> in;
  for (const std::string& s : sizes) {
    // A file may be followed by '@' options (pagerank's @nnz, cg's @tol=X); a file name may hold
    // '@' itself, so every prefix ending before an '@' is a candidate.
    std::vector<std::string> cands{s};
    for (std::size_t at = s.find('@'); at != std::string::npos; at = s.find('@', at + 1)) cands.push_back(s.substr(0, at));
    for (const std::string& c : cands)
      if (regular_file(c)) {
        in.push_back({"--size", c});
        in.push_back({"--size " + c + "'s graph cache", c + ".gpsmcsr"});  // read and rewritten by the loader
      }
  }
  return in;
}

}  // namespace gpsm::cli
