#pragma once
// The references of one `gpsm bench --isolate` command, computed once and shared by its children.
// Each child is a fresh gpsm (isolated_run.hpp), so without this every run recomputed its app's
// CPU reference (jacobi2d 16384², 1000 iterations: most of a minute on 16 cores) or its one-GPU
// reference run (fd3d at 768³, ct): a 10-run command paid it 10 times. The parent makes a private
// folder (TempDir) for the command and passes it to each child; the first child to need a
// reference computes it and leaves it there, the later ones read it. The folder goes with the
// parent, so an entry lives for one command of one gpsm binary: its key needs only what the
// app's own in-process cache keys on, plus the app's name.
//
// An entry is one file: a header line "gpsm.reference/1", the key on its own line, the fields
// as the app wrote them (values raw, arrays and texts with their length first), then an end
// mark holding the byte count of the fields. A file is written to a temporary name and renamed,
// so a child killed while writing leaves no entry; an entry that does not read back (another
// key behind the same hash, a short file, a length past the file's end) is computed again, the
// reason said through the run's progress. Plain C++, CPU-tested.
#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <iosfwd>
#include <string>
#include <type_traits>
#include <vector>

#include "gpsm/error.hpp"

namespace gpsm::apps {

// The fields of one entry, in order.
class RefWriter {
 public:
  explicit RefWriter(std::ostream& os) : os_(os) {}
  template <class T>
  void value(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>, "RefWriter::value: a plain value");
    raw(&v, sizeof(T));
  }
  template <class T>
  void array(const std::vector<T>& v) {
    static_assert(std::is_trivially_copyable_v<T>, "RefWriter::array: a vector of plain values");
    value<std::uint64_t>(v.size());
    if (!v.empty()) raw(v.data(), v.size() * sizeof(T));
  }
  void text(const std::string& s);
  std::uint64_t bytes() const { return bytes_; }

 private:
  void raw(const void* p, std::size_t n);
  std::ostream& os_;
  std::uint64_t bytes_ = 0;
};

// Reads what a RefWriter wrote. Every read checks it stays inside the fields (`limit` bytes):
// a damaged entry throws gpsm::Error instead of allocating a length read from garbage.
class RefReader {
 public:
  RefReader(std::istream& is, std::uint64_t limit) : is_(is), left_(limit) {}
  template <class T>
  void value(T& v) {
    static_assert(std::is_trivially_copyable_v<T>, "RefReader::value: a plain value");
    raw(&v, sizeof(T));
  }
  template <class T>
  void array(std::vector<T>& v) {
    static_assert(std::is_trivially_copyable_v<T>, "RefReader::array: a vector of plain values");
    std::uint64_t n = 0;
    value(n);
    if (n > left_ / sizeof(T)) throw gpsm::Error("an array of " + std::to_string(n) + " entries runs past the entry's end");
    v.resize(n);
    if (n > 0) raw(v.data(), n * sizeof(T));
  }
  void text(std::string& s);
  std::uint64_t left() const { return left_; }

 private:
  void raw(void* p, std::size_t n);
  std::istream& is_;
  std::uint64_t left_;
};

class ReferenceCache {
 public:
  // dir: an existing folder (the parent's TempDir).
  explicit ReferenceCache(std::string dir) : dir_(std::move(dir)) {}
  const std::string& dir() const { return dir_; }
  // The entry's file: the folder, then a hash of the key (a key may hold any character).
  std::string path_of(const std::string& key) const;
  // Reads key's entry through `read` and returns true; false when there is none. An entry that
  // does not read back whole gives false with the reason in *why (empty when simply absent).
  bool load(const std::string& key, const std::function<void(RefReader&)>& read, std::string* why) const;
  // Writes key's entry (temporary file, then rename). Throws gpsm::Error naming the file when it
  // cannot be written whole (disk full); no entry is left then.
  void store(const std::string& key, const std::function<void(RefWriter&)>& write) const;

 private:
  std::string dir_;
};

// The reference under `key`: read from `cache` when it holds it, else `compute()`d and stored
// there. Reading and writing go through read_ref(RefReader&, T&) and write_ref(RefWriter&,
// const T&), found beside T. Without a cache (a run in the bench's own process) it computes. A
// damaged entry, or one that cannot be stored, never fails the run: `note` hears why and the
// reference is computed (and kept in memory only).
template <class T, class Compute>
T cached_reference(const ReferenceCache* cache, const std::string& key, Compute&& compute,
                   const std::function<void(const std::string&)>& note) {
  if (cache != nullptr) {
    T got{};
    std::string why;
    if (cache->load(key, [&](RefReader& r) { read_ref(r, got); }, &why)) return got;
    if (!why.empty() && note) note("the shared reference " + key + " is unreadable (" + why + "): computing it");
  }
  T made = compute();
  if (cache != nullptr) {
    try {
      cache->store(key, [&](RefWriter& w) { write_ref(w, made); });
    } catch (const gpsm::Error& e) {
      if (note) note(std::string("not shared with the next runs: ") + e.what());
    }
  }
  return made;
}

// A plain vector as a whole reference (the 3D apps' and the graph apps' results).
template <class T>
void write_ref(RefWriter& w, const std::vector<T>& v) {
  w.array(v);
}
template <class T>
void read_ref(RefReader& r, std::vector<T>& v) {
  r.array(v);
}

}  // namespace gpsm::apps
