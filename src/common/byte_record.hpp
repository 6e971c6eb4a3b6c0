#pragma once
// Field-by-field (de)serialization of the result files the NVSHMEM workers hand their parent
// (the stencils' and CG's): values appended at fixed offsets, no struct padding in the format,
// and the whole file read at once. The callers check sizes before they read.
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "gpsm/error.hpp"

namespace gpsm::byte_record {

template <class T>
void put(std::string& b, const T& v) {
  b.append(reinterpret_cast<const char*>(&v), sizeof(T));
}
template <class T>
void put_array(std::string& b, const std::vector<T>& v) {
  if (!v.empty()) b.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

struct Reader {
  const std::string& b;
  std::size_t at = 0;
  template <class T>
  T get() {
    T v;
    std::memcpy(&v, b.data() + at, sizeof(T));
    at += sizeof(T);
    return v;
  }
  template <class T>
  std::vector<T> get_array(std::size_t n) {
    std::vector<T> v(n);
    if (n > 0) std::memcpy(v.data(), b.data() + at, n * sizeof(T));
    at += n * sizeof(T);
    return v;
  }
};

// The file's bytes; `what` names it in the error ("gpsm: <what> <path>: cannot open (...)").
inline std::string read_all(const std::string& path, const std::string& what) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw gpsm::Error("gpsm: " + what + " " + path + ": cannot open (" + std::strerror(errno) + ")");
  std::string b((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (f.bad()) throw gpsm::Error("gpsm: " + what + " " + path + ": read error");
  return b;
}

}  // namespace gpsm::byte_record
