#include "apps/harness/reference_cache.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

namespace gpsm::apps {
namespace {

constexpr const char* kHeader = "gpsm.reference/1";
constexpr std::uint64_t kEndMark = 0x646e652e666572ULL;  // "ref.end" as little-endian bytes

// FNV-1a, 64 bits: a file name for any key. Two keys behind one hash are told apart by the key
// line in the file, so a collision costs a recomputation, never a wrong reference.
std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
  return h;
}

}  // namespace

void RefFields::text(std::string& s) {
  std::uint64_t n = s.size();
  value(n);
  if (reading()) {
    if (n > left_) throw gpsm::Error("a text of " + std::to_string(n) + " bytes runs past the entry's end");
    s.resize(n);
  }
  raw(s.data(), n);
}

void RefFields::raw(void* p, std::size_t n) {
  if (!reading()) {
    os_->write(static_cast<const char*>(p), static_cast<std::streamsize>(n));
    bytes_ += n;
    return;
  }
  if (n > left_) throw gpsm::Error("the entry ends " + std::to_string(n - left_) + " byte(s) early");
  is_->read(static_cast<char*>(p), static_cast<std::streamsize>(n));
  if (static_cast<std::size_t>(is_->gcount()) != n) throw gpsm::Error("the file ends inside the entry");
  left_ -= n;
}

std::string ReferenceCache::path_of(const std::string& key) const {
  return fmt::format("{}/ref-{:016x}.bin", dir_, fnv1a(key));
}

bool ReferenceCache::load(const std::string& key, const std::function<void(RefFields&)>& fields,
                          std::string* why) const {
  if (why != nullptr) why->clear();
  const std::string path = path_of(key);
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;  // not there yet: the usual first time
  auto bad = [&](const std::string& w) {
    if (why != nullptr) *why = w;
    return false;
  };
  std::string header, stored_key;
  if (!std::getline(f, header) || header != kHeader) return bad("not a gpsm reference file");
  if (!std::getline(f, stored_key)) return bad("no key line");
  if (stored_key != key) return bad("it holds another key, \"" + stored_key + "\", behind the same hash");
  // The fields end where the end mark begins: the file's size minus the mark's 16 bytes.
  const std::streamoff start = f.tellg();
  f.seekg(0, std::ios::end);
  const std::streamoff end = f.tellg();
  if (start < 0 || end < start + 16) return bad("shorter than its end mark");
  const std::uint64_t size = static_cast<std::uint64_t>(end - start - 16);
  f.seekg(start);
  try {
    RefFields r(f, size);
    fields(r);
    if (r.left() != 0) return bad(std::to_string(r.left()) + " byte(s) left unread after the fields");
    std::uint64_t mark = 0, count = 0;
    f.read(reinterpret_cast<char*>(&mark), sizeof(mark));
    f.read(reinterpret_cast<char*>(&count), sizeof(count));
    if (!f || mark != kEndMark || count != size) return bad("its end mark is missing or counts other bytes");
  } catch (const gpsm::Error& e) {
    return bad(e.what());
  }
  return true;
}

void ReferenceCache::store(const std::string& key, const std::function<void(RefFields&)>& fields) const {
  if (key.find('\n') != std::string::npos) throw gpsm::Error("gpsm: a reference key holds a line break: " + key);
  const std::string path = path_of(key);
  const std::string tmp = fmt::format("{}.tmp{}", path, static_cast<long>(getpid()));
  auto fail = [&](const std::string& what) {
    std::error_code ec;
    std::filesystem::remove(tmp, ec);
    return gpsm::Error(fmt::format("gpsm: cannot write the shared reference {}: {}", tmp, what));
  };
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw fail(std::strerror(errno));
    f << kHeader << '\n' << key << '\n';
    RefFields w(f);
    try {
      fields(w);
    } catch (...) {
      f.close();
      std::error_code ec;
      std::filesystem::remove(tmp, ec);
      throw;
    }
    const std::uint64_t mark = kEndMark, count = w.bytes();
    f.write(reinterpret_cast<const char*>(&mark), sizeof(mark));
    f.write(reinterpret_cast<const char*>(&count), sizeof(count));
    f.flush();
    if (!f) throw fail(errno != 0 ? std::strerror(errno) : "write error");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw fail("rename to " + path + ": " + ec.message());
}

}  // namespace gpsm::apps
