#pragma once
// The references of one `gpsm bench --isolate` command, computed once and shared by its children.
// Each child is a fresh gpsm (isolated_run.hpp), so without this every run recomputed its app's
// CPU reference (jacobi2d 16384², 1000 iterations: 51 s on 16 cores), its one-GPU reference run
// (fd3d at 768³, ct), its generated graph (rmat:23: ~18 s) or CT's scan (14 s at the seed's size):
// a 10-run command paid it 10 times.
// The parent makes a private folder (TempDir) for the command and passes it to each child; the
// first child to need a reference computes it and leaves it there, the later ones read it. The
// folder goes with the parent, so an entry lives for one command of one gpsm binary: its key
// needs only what the app's own in-process cache keys on, plus the app's name.
//
// An entry is one file: a header line "gpsm.reference/1", the key on its own line, the fields
// as the app wrote them (values raw, arrays and texts with their length first), then an end
// mark holding the byte count of the fields. A file is written to a temporary name and renamed,
// so a child killed while writing leaves no entry; an entry that does not read back (another
// key behind the same hash, a short file, a length past the file's end) is computed again, the
// reason said through the run's progress. Plain C++, CPU-tested.
#include <cstdint>
#include <cstring>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "gpsm/error.hpp"

namespace gpsm::apps {

// The fields of one entry, in order, in either direction: a type lists its fields once, in
//   void ref_fields(RefFields& f, T& t) { f.array(t.grid); f.value(t.iterations); f.object(t.sub); }
// found beside T (ADL), and the same list writes the entry and reads it back, so the two
// directions cannot disagree. Reading, every step checks it stays inside the entry's fields:
// a damaged entry throws gpsm::Error instead of allocating a length read from garbage.
class RefFields {
 public:
  explicit RefFields(std::ostream& os) : os_(&os) {}
  RefFields(std::istream& is, std::uint64_t limit) : is_(&is), left_(limit) {}
  bool reading() const { return is_ != nullptr; }
  template <class T>
  void value(T& v) {
    static_assert(std::is_trivially_copyable_v<T>, "RefFields::value: a plain value");
    raw(&v, sizeof(T));
  }
  template <class T>
  void array(std::vector<T>& v) {
    static_assert(std::is_trivially_copyable_v<T>, "RefFields::array: a vector of plain values");
    std::uint64_t n = v.size();
    value(n);
    if (reading()) {
      if (n > left_ / sizeof(T))
        throw gpsm::Error("an array of " + std::to_string(n) + " entries runs past the entry's end");
      v.resize(n);
    }
    if (n > 0) raw(v.data(), n * sizeof(T));
  }
  void text(std::string& s);
  // Another type's fields, through its own ref_fields.
  template <class T>
  void object(T& t) {
    ref_fields(*this, t);
  }
  std::uint64_t bytes() const { return bytes_; }  // written so far
  std::uint64_t left() const { return left_; }    // left to read

 private:
  void raw(void* p, std::size_t n);
  std::ostream* os_ = nullptr;
  std::istream* is_ = nullptr;
  std::uint64_t bytes_ = 0, left_ = 0;
};

class ReferenceCache {
 public:
  // dir: an existing folder (the parent's TempDir).
  explicit ReferenceCache(std::string dir) : dir_(std::move(dir)) {}
  // The entry's file: the folder, then a hash of the key (a key may hold any character).
  std::string path_of(const std::string& key) const;
  // Reads key's entry through `fields` and returns true; false when there is none. An entry that
  // does not read back whole gives false with the reason in *why (empty when simply absent).
  bool load(const std::string& key, const std::function<void(RefFields&)>& fields, std::string* why) const;
  // Writes key's entry through `fields` (temporary file, then rename). Throws gpsm::Error naming
  // the file when it cannot be written whole (disk full); no entry is left then.
  void store(const std::string& key, const std::function<void(RefFields&)>& fields) const;

 private:
  std::string dir_;
};

// The two halves of sharing, through T's ref_fields. Neither ever fails the run: a damaged entry
// reads as none and one that cannot be stored stays unshared, `note` hearing why. Without a
// cache (a run in the bench's own process) there is nothing to read and nothing is stored.
// load_shared: key's entry, or nothing (absent, or unreadable: it is made again).
template <class T>
std::optional<T> load_shared(const ReferenceCache* cache, const std::string& key,
                             const std::function<void(const std::string&)>& note) {
  if (cache == nullptr) return std::nullopt;
  T got{};
  std::string why;
  if (cache->load(key, [&](RefFields& f) { ref_fields(f, got); }, &why)) return got;
  if (!why.empty() && note) note("the shared reference " + key + " is unreadable (" + why + "): computing it");
  return std::nullopt;
}
// share: t stored under key for the next runs.
template <class T>
void share(const ReferenceCache* cache, const std::string& key, const T& t,
           const std::function<void(const std::string&)>& note) {
  if (cache == nullptr) return;
  try {
    // A writing RefFields only reads its fields (they are writable for reading back).
    cache->store(key, [&](RefFields& f) { ref_fields(f, const_cast<T&>(t)); });
  } catch (const gpsm::Error& e) {
    if (note) note(std::string("not shared with the next runs: ") + e.what());
  }
}

// The reference under `key`: read from `cache` when it holds it, else `compute()`d and shared.
template <class T, class Compute>
T cached_reference(const ReferenceCache* cache, const std::string& key, Compute&& compute,
                   const std::function<void(const std::string&)>& note) {
  if (std::optional<T> got = load_shared<T>(cache, key, note)) return std::move(*got);
  T made = compute();
  share(cache, key, made, note);
  return made;
}

// A plain vector as a whole reference (the 3D apps' results).
template <class T>
void ref_fields(RefFields& f, std::vector<T>& v) {
  f.array(v);
}

}  // namespace gpsm::apps
