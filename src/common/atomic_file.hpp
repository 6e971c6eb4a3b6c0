#pragma once
// Every file gpsm writes goes through here, so a write that fails part way (disk full, a killed
// process, an exception while producing the bytes) never leaves a fragment where the previous
// results, machine model or cache were: the bytes go to a temporary file in the target's folder,
// are flushed and fsync'ed, and only then renamed over the target (rename within one file system
// is atomic on POSIX). On any failure the temporary is removed and the old file is untouched.
//
// The output checks run before a command does any work, so a bad output path fails in a second
// rather than after an hour of measurement, and an output that is one of the command's inputs
// (`gpsm sim --system m.json --json m.json`) is refused instead of overwriting it.
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpsm {

// Writes `path` whole or not at all. `fill` writes the content into the stream it is given;
// if it throws, or the stream fails (write error, disk full), or fsync/rename fail, the temporary
// is removed and gpsm::Error names the path and the system's reason (the folder must exist) (an exception thrown by
// `fill` itself propagates unchanged). A symbolic link is followed: its target is replaced. An
// existing target that is not a regular file (a pipe, /dev/stdout, a character device) is written
// in place, as such files cannot be renamed over. A new file gets mode 0666 minus the umask, a
// replaced one keeps its mode.
void write_file_atomic(const std::string& path, const std::function<void(std::ostream&)>& fill);
void write_file_atomic(const std::string& path, std::string_view bytes);

// An output a command will write, named as the user named it (e.g. "--json").
struct OutputPath {
  std::string option;  // "--json", "--out DIR's results.json", ...
  std::string path;
};
// An input the command reads (a model, a cache, a graph file).
struct InputPath {
  std::string option;
  std::string path;
};

// Whether a and b name the same existing file (same device and inode; false if either is missing).
bool same_file(const std::string& a, const std::string& b);

// Checks, before any work, that each output can be written: its folder exists and accepts a new
// file (probed by creating and removing one, which catches read-only mounts that access(2)
// misses); the path itself is not
// a folder; and it is none of `inputs` (same file, after links). Throws std::invalid_argument
// (the CLI's usage/input exit code, 2) with a `gpsm: <option> <path>: <why>; <what to do>` line.
// Empty paths are skipped.
void check_outputs(const std::vector<OutputPath>& outputs, const std::vector<InputPath>& inputs);

// The same check for an output folder (`gpsm scope --out DIR`, `gpsm report --out DIR`): DIR is a
// folder or can be created (its nearest existing ancestor is a writable folder; the command
// creates it), and accepts new files; then each of `files` inside it is checked
// against `inputs` as above.
void check_output_dir(const std::string& option, const std::string& dir, const std::vector<std::string>& files,
                      const std::vector<InputPath>& inputs);

}  // namespace gpsm
