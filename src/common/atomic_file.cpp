// Whole-or-nothing file writes (temporary + fsync + rename) and the output checks made before work.
#include "common/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <ostream>
#include <stdexcept>
#include <streambuf>
#include <system_error>

#include "gpsm/error.hpp"

namespace gpsm {
namespace {

namespace fs = std::filesystem;

std::string errno_text(int e) { return std::strerror(e); }

// A stream buffer over a file descriptor that keeps the first write error's errno, so the message
// says "No space left on device" rather than a bare "write failed".
class FdBuf : public std::streambuf {
 public:
  explicit FdBuf(int fd) : fd_(fd) { setp(buf_, buf_ + sizeof(buf_)); }
  int error() const { return err_; }

 protected:
  int_type overflow(int_type c) override {
    if (!drain()) return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    // Large blocks (the graph cache's arrays) go straight to the file, not through the buffer.
    if (n >= static_cast<std::streamsize>(sizeof(buf_))) {
      if (!drain() || !write_all(s, static_cast<std::size_t>(n))) return 0;
      return n;
    }
    return std::streambuf::xsputn(s, n);
  }
  int sync() override { return drain() ? 0 : -1; }

 private:
  bool drain() {
    const std::size_t n = static_cast<std::size_t>(pptr() - pbase());
    const bool ok = write_all(pbase(), n);
    setp(buf_, buf_ + sizeof(buf_));
    return ok;
  }
  bool write_all(const char* p, std::size_t n) {
    if (err_ != 0) return false;
    while (n > 0) {
      const ssize_t w = ::write(fd_, p, n);
      if (w < 0) {
        if (errno == EINTR) continue;
        err_ = errno;
        return false;
      }
      p += w;
      n -= static_cast<std::size_t>(w);
    }
    return true;
  }
  int fd_;
  int err_ = 0;
  char buf_[1 << 16];
};

// The permission bits a new file gets from open(2) with 0666: the umask is read by setting it and
// putting it back (there is no call that only reads it).
mode_t default_file_mode() {
  const mode_t u = ::umask(0);
  ::umask(u);
  return static_cast<mode_t>(0666 & ~u);
}

[[noreturn]] void write_failed(const std::string& path, const std::string& why) {
  throw Error("gpsm: cannot write " + path + ": " + why + "; the previous file (if any) is unchanged");
}

// Streams fill's output into the open descriptor fd; returns the errno of the first failure or 0.
int fill_fd(int fd, const std::function<void(std::ostream&)>& fill) {
  FdBuf buf(fd);
  std::ostream os(&buf);
  fill(os);
  os.flush();
  if (buf.error() != 0) return buf.error();
  if (!os) return EIO;
  return 0;
}

// A pipe, a terminal, /dev/stdout: cannot be renamed over; written in place.
void write_in_place(const std::string& path, const std::function<void(std::ostream&)>& fill) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) write_failed(path, errno_text(errno));
  int e = 0;
  try {
    e = fill_fd(fd, fill);
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (::close(fd) != 0 && e == 0) e = errno;
  if (e != 0) write_failed(path, errno_text(e));
}

}  // namespace

void write_file_atomic(const std::string& path, const std::function<void(std::ostream&)>& fill) {
  if (path.empty()) throw Error("gpsm: cannot write a file with an empty name; name the output file");
  std::string target = path;
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    std::error_code ec;
    const fs::path real = fs::canonical(path, ec);  // a dangling link is replaced itself
    if (!ec) target = real.string();
  }
  const bool exists = ::stat(target.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) write_failed(path, "it is a folder; name a file");
  if (exists && !S_ISREG(st.st_mode)) return write_in_place(target, fill);
  const mode_t mode = exists ? static_cast<mode_t>(st.st_mode & 07777) : default_file_mode();

  fs::path dir = fs::path(target).parent_path();
  if (dir.empty()) dir = ".";
  // In the target's folder, so the rename stays on one file system; hidden, so a listing of the
  // folder during the write does not show a half-written results file.
  std::string tmp = (dir / ("." + fs::path(target).filename().string() + ".tmp-XXXXXX")).string();
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) write_failed(path, "cannot create a temporary file in " + dir.string() + " (" + errno_text(errno) + ")");
  bool fd_open = true;
  auto cleanup = [&] {
    if (fd_open) ::close(fd);
    fd_open = false;
    ::unlink(tmp.c_str());
  };
  try {
    if (::fchmod(fd, mode) != 0) write_failed(path, "cannot set the mode of " + tmp + " (" + errno_text(errno) + ")");
    if (const int e = fill_fd(fd, fill); e != 0) write_failed(path, errno_text(e));
    if (::fsync(fd) != 0) write_failed(path, "fsync: " + errno_text(errno));
    fd_open = false;
    if (::close(fd) != 0) write_failed(path, "close: " + errno_text(errno));
    if (::rename(tmp.c_str(), target.c_str()) != 0)
      write_failed(path, "cannot rename " + tmp + " over it (" + errno_text(errno) + ")");
  } catch (...) {
    cleanup();
    throw;
  }
  // The rename itself is durable once the folder is synced; best effort (some file systems refuse).
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    (void)::fsync(dfd);
    ::close(dfd);
  }
}

void write_file_atomic(const std::string& path, std::string_view bytes) {
  write_file_atomic(path, [bytes](std::ostream& os) { os.write(bytes.data(), static_cast<std::streamsize>(bytes.size())); });
}

bool same_file(const std::string& a, const std::string& b) {
  if (a.empty() || b.empty()) return false;
  struct stat sa {}, sb {};
  if (::stat(a.c_str(), &sa) != 0 || ::stat(b.c_str(), &sb) != 0) return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

namespace {

[[noreturn]] void refuse(const std::string& option, const std::string& path, const std::string& why) {
  throw std::invalid_argument("gpsm: " + option + " " + path + ": " + why);
}

// Neither file exists yet, or one does: the same path after resolving what exists of it.
bool same_path(const std::string& a, const std::string& b) {
  if (same_file(a, b)) return true;
  std::error_code ea, eb;
  const fs::path x = fs::weakly_canonical(fs::absolute(a, ea), ea), y = fs::weakly_canonical(fs::absolute(b, eb), eb);
  return !ea && !eb && x == y;
}

// dir is (or can be created as) a folder that accepts new files: probed by creating and removing
// a file in it, or in its nearest existing ancestor when it is still to be created.
void check_dir_writable(const std::string& option, const std::string& shown, fs::path dir) {
  if (dir.empty()) dir = ".";
  fs::path have = dir;
  std::error_code ec;
  while (!fs::exists(have, ec)) {
    const fs::path up = have.parent_path();
    if (up.empty()) {  // a relative path's first component: the current folder holds it
      have = ".";
      break;
    }
    if (up == have) break;
    have = up;
  }
  if (!fs::is_directory(have, ec))
    refuse(option, shown, have.string() + " is not a folder; name a path inside a folder");
  std::string probe = (have / ".gpsm-write-probe-XXXXXX").string();
  const int fd = ::mkstemp(probe.data());
  if (fd < 0)
    refuse(option, shown,
           "cannot create files in " + have.string() + " (" + errno_text(errno) + "); choose a writable folder");
  ::close(fd);
  ::unlink(probe.c_str());
}

void check_against_inputs(const std::string& option, const std::string& path, const std::vector<InputPath>& inputs) {
  for (const InputPath& in : inputs) {
    if (in.path.empty()) continue;
    if (same_path(path, in.path))
      refuse(option, path,
             "is the same file as " + in.option + " " + in.path +
                 ", which this command reads; writing it would overwrite its own input. Name another output file");
  }
}

}  // namespace

void check_outputs(const std::vector<OutputPath>& outputs, const std::vector<InputPath>& inputs) {
  for (const OutputPath& o : outputs) {
    if (o.path.empty()) continue;
    struct stat st {};
    if (::stat(o.path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) refuse(o.option, o.path, "is a folder; name a file");
    const bool special = ::stat(o.path.c_str(), &st) == 0 && !S_ISREG(st.st_mode);
    if (special) {
      if (::access(o.path.c_str(), W_OK) != 0) refuse(o.option, o.path, "not writable (" + errno_text(errno) + ")");
    } else {
      // A file's folder must exist: gpsm creates the folders it is given (--out DIR), not those
      // implied by a file name, where a typo would plant a tree of folders.
      fs::path dir = fs::path(o.path).parent_path();
      if (dir.empty()) dir = ".";
      std::error_code ec;
      if (!fs::exists(dir, ec)) {
        fs::path have = dir;
        while (!have.empty() && !fs::exists(have, ec)) have = have.parent_path();
        if (!have.empty() && !fs::is_directory(have, ec))
          refuse(o.option, o.path, have.string() + " is not a folder; name a path inside a folder");
        refuse(o.option, o.path, "folder " + dir.string() + " does not exist; create it first or name another path");
      }
      check_dir_writable(o.option, o.path, dir);
    }
    check_against_inputs(o.option, o.path, inputs);
  }
}

void check_output_dir(const std::string& option, const std::string& dir, const std::vector<std::string>& files,
                      const std::vector<InputPath>& inputs) {
  if (dir.empty()) return;
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec)) refuse(option, dir, "is not a folder; name a folder");
  check_dir_writable(option, dir, dir);
  for (const std::string& f : files) {
    const std::string p = (fs::path(dir) / f).string();
    if (fs::is_directory(p, ec)) refuse(option, dir, p + " is a folder; gpsm writes a file there");
    check_against_inputs(option + " " + dir + "'s", p, inputs);
  }
}

}  // namespace gpsm
