// The machine's limits, measured with raw system calls and raw CRC loops
// (no alog code): each figure is divided by one of these, measured in the
// same run. limits_bench prints them all; the figure programs call them
// interleaved with the figure they bound.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif
#if defined(ALOG_HAVE_ISAL)
#include <isa-l/crc.h>
#endif

#include "harness.h"

namespace bench::limits {

// ---- raw CRC32C: one crc32 instruction per 8 bytes, and ISA-L itself ----

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) inline uint32_t crc_insn(uint32_t crc, const void* data,
                                                          size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  uint64_t c = ~crc;
  for (; n >= 8; n -= 8, p += 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    c = _mm_crc32_u64(c, v);
  }
  auto c32 = static_cast<uint32_t>(c);
  for (; n; n--) c32 = _mm_crc32_u8(c32, *p++);
  return ~c32;
}

// Three CRCs of n bytes each, extending c[0..2], as three chains of the
// instruction side by side: what a checksum of many short frames can reach.
__attribute__((target("sse4.2"))) inline void crc_insn_3(uint32_t c[3], const void* const d[3],
                                                        size_t n) {
  const auto* a = static_cast<const uint8_t*>(d[0]);
  const auto* b = static_cast<const uint8_t*>(d[1]);
  const auto* e = static_cast<const uint8_t*>(d[2]);
  uint64_t ca = ~c[0], cb = ~c[1], ce = ~c[2];
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t va, vb, ve;
    std::memcpy(&va, a + i, 8);
    std::memcpy(&vb, b + i, 8);
    std::memcpy(&ve, e + i, 8);
    ca = _mm_crc32_u64(ca, va);
    cb = _mm_crc32_u64(cb, vb);
    ce = _mm_crc32_u64(ce, ve);
  }
  c[0] = crc_insn(~static_cast<uint32_t>(ca), a + i, n - i);
  c[1] = crc_insn(~static_cast<uint32_t>(cb), b + i, n - i);
  c[2] = crc_insn(~static_cast<uint32_t>(ce), e + i, n - i);
}
#endif

inline bool have_isal() {
#if defined(ALOG_HAVE_ISAL)
  return true;
#else
  return false;
#endif
}
inline uint32_t crc_isal(uint32_t crc, const void* data, size_t n) {
#if defined(ALOG_HAVE_ISAL)
  return ~crc32_iscsi(static_cast<unsigned char*>(const_cast<void*>(data)), static_cast<int>(n),
                      ~crc);
#else
  return crc_insn(crc, data, n);
#endif
}
// The faster raw CRC for n bytes, as a limit for code that checksums n-byte pieces.
inline uint32_t crc_best(uint32_t crc, const void* data, size_t n) {
  return n >= 512 && have_isal() ? crc_isal(crc, data, n) : crc_insn(crc, data, n);
}

// ---- files ----

inline int open_fresh(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) die("open " + path + ": " + std::strerror(errno));
  return fd;
}
inline int open_rw(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) die("open " + path + ": " + std::strerror(errno));
  return fd;
}
inline void pwrite_all(int fd, const void* p, size_t n, uint64_t off) {
  ssize_t r = ::pwrite(fd, p, n, static_cast<off_t>(off));
  if (r != static_cast<ssize_t>(n)) die(std::string("pwrite: ") + std::strerror(errno));
}
// A file of `len` written bytes (not holes, not unwritten extents), synced:
// later overwrites change no metadata, so fdatasync writes data only.
inline void preallocate(const std::string& path, uint64_t len) {
  int fd = open_fresh(path);
  std::vector<char> z(1 << 20, 0);
  for (uint64_t off = 0; off < len; off += z.size())
    pwrite_all(fd, z.data(), std::min<uint64_t>(z.size(), len - off), off);
  if (::fsync(fd) != 0) die("fsync");
  ::close(fd);
}

// A file of `len` bytes first written in `piece`-byte writes, then synced.
// How a file was first written sets the size of its page-cache folios, and
// so what overwriting it later costs.
inline void fill_file(const std::string& path, uint64_t len, size_t piece) {
  int fd = open_fresh(path);
  std::vector<char> b(piece, 'f');
  for (uint64_t off = 0; off < len; off += piece)
    pwrite_all(fd, b.data(), std::min<uint64_t>(piece, len - off), off);
  if (::fsync(fd) != 0) die("fsync");
  ::close(fd);
}

// ns per pwrite of `rec` bytes appended to a fresh file, the i-th at
// i * stride (stride 0: rec, back to back).
inline double pwrite_append_ns(const std::string& path, size_t rec, uint64_t count,
                               size_t stride = 0) {
  std::vector<char> buf(rec, 'r');
  if (stride == 0) stride = rec;
  int fd = open_fresh(path);
  uint64_t t0 = now_ns();
  for (uint64_t i = 0; i < count; i++) pwrite_all(fd, buf.data(), rec, i * stride);
  uint64_t t = now_ns() - t0;
  ::close(fd);
  ::unlink(path.c_str());
  return static_cast<double>(t) / static_cast<double>(count);
}

// ns per batch: `n` frames (16-byte header + payload, CRC32C over header
// bytes 0-11 and the payload, three frames' CRCs side by side) encoded into
// one buffer, one pwrite per batch, appended to a fresh file.
inline double encode_pwrite_ns(const std::string& path, const std::string& payload, size_t n,
                               uint64_t batches) {
  std::vector<uint8_t> buf(n * (16 + payload.size()));
  int fd = open_fresh(path);
  uint64_t off = 0;
  uint64_t t0 = now_ns();
  for (uint64_t b = 0; b < batches; b++) {
    uint8_t* p = buf.data();
    for (size_t i = 0; i < n; i++) {
      uint32_t len = static_cast<uint32_t>(payload.size());
      p[0] = uint8_t(len >> 24), p[1] = uint8_t(len >> 16), p[2] = uint8_t(len >> 8),
      p[3] = uint8_t(len);
      p[4] = 0, p[5] = 1, p[6] = 0, p[7] = 0, p[8] = 0, p[9] = 1, p[10] = 0;
      p[11] = i + 1 == n ? 3 : 1;
      std::memcpy(p + 16, payload.data(), payload.size());
      p += 16 + payload.size();
    }
    // The CRCs, three frames at a time for short payloads (as a checksum of
    // many short frames can go), each over its 12 header bytes and payload.
    const size_t frame = 16 + payload.size();
    size_t i = 0;
    if (payload.size() < 512)
      for (; i + 3 <= n; i += 3) {
        uint8_t* f[3] = {&buf[i * frame], &buf[(i + 1) * frame], &buf[(i + 2) * frame]};
        uint32_t c[3] = {crc_insn(0, f[0], 12), crc_insn(0, f[1], 12), crc_insn(0, f[2], 12)};
        const void* d[3] = {f[0] + 16, f[1] + 16, f[2] + 16};
        crc_insn_3(c, d, payload.size());
        for (int k = 0; k < 3; k++) std::memcpy(f[k] + 12, &c[k], 4);
      }
    for (; i < n; i++) {
      uint8_t* f = &buf[i * frame];
      uint32_t c = crc_best(crc_insn(0, f, 12), f + 16, payload.size());
      std::memcpy(f + 12, &c, 4);
    }
    pwrite_all(fd, buf.data(), buf.size(), off);
    off += buf.size();
  }
  uint64_t t = now_ns() - t0;
  ::close(fd);
  ::unlink(path.c_str());
  return static_cast<double>(t) / static_cast<double>(batches);
}

// Per-write ns of `chunk`-byte pwrites cycling over [0, region) of a file
// whose pages are already in the page cache (warm buffered write).
inline std::vector<double> warm_write_ns(int fd, size_t chunk, uint64_t region, uint64_t count,
                                         const char* src) {
  std::vector<double> out;
  out.reserve(count);
  uint64_t off = 0;
  for (uint64_t i = 0; i < count; i++) {
    if (off + chunk > region) off = 0;
    uint64_t t0 = now_ns();
    pwrite_all(fd, src, chunk, off);
    out.push_back(static_cast<double>(now_ns() - t0));
    off += chunk;
  }
  return out;
}

// Per-op ns of: pwrite `n` bytes at sequential offsets from *off inside a
// preallocated file, then fdatasync. Wraps to 4096 at `len`.
inline std::vector<double> overwrite_sync_ns(int fd, size_t n, uint64_t count, uint64_t* off,
                                             uint64_t len) {
  std::vector<char> buf(n, 'd');
  std::vector<double> out;
  out.reserve(count);
  for (uint64_t i = 0; i < count; i++) {
    if (*off + n > len) *off = 4096;
    uint64_t t0 = now_ns();
    pwrite_all(fd, buf.data(), n, *off);
    if (::fdatasync(fd) != 0) die("fdatasync");
    out.push_back(static_cast<double>(now_ns() - t0));
    *off += n;
  }
  return out;
}

// ns to pread files from the page cache in `chunk`-byte reads, optionally
// CRC32C-ing each chunk (ISA-L, the fastest raw CRC here); *bytes gets the total.
inline double pread_files_ns(const std::vector<std::string>& files, size_t chunk, bool crc,
                             uint64_t* bytes) {
  std::vector<uint8_t> buf(chunk);
  uint64_t total = 0;
  uint32_t c = 0;
  uint64_t t0 = now_ns();
  for (const auto& f : files) {
    int fd = ::open(f.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) die("open " + f);
    uint64_t off = 0;
    while (true) {
      ssize_t r = ::pread(fd, buf.data(), chunk, static_cast<off_t>(off));
      if (r <= 0) break;
      if (crc) c = crc_best(c, buf.data(), static_cast<size_t>(r));
      off += static_cast<uint64_t>(r);
    }
    total += off;
    ::close(fd);
  }
  uint64_t t = now_ns() - t0;
  keep(c);
  *bytes = total;
  return static_cast<double>(t);
}

// ns for the least a CRC-checked scan must do: pread segment files in 1 MiB
// windows, parse each 16-byte frame header and CRC32C each data frame (raw
// crc32 loop, header bytes 0-11 then the payload). *frames gets the count.
inline double walk_files_ns(const std::vector<std::string>& files, uint64_t* frames) {
  const size_t chunk = 1 << 20;
  std::vector<uint8_t> buf(chunk + (16 << 20));
  uint64_t n = 0, bad = 0;
  uint64_t t0 = now_ns();
  for (const auto& f : files) {
    int fd = ::open(f.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) die("open " + f);
    uint64_t base = 192, have = 0, off = 192;  // buf holds [base, base + have)
    while (true) {
      if (off + 16 > base + have) {
        base = off;
        ssize_t r = ::pread(fd, buf.data(), chunk, static_cast<off_t>(base));
        have = r > 0 ? static_cast<uint64_t>(r) : 0;
        if (have < 16) break;
      }
      const uint8_t* p = buf.data() + (off - base);
      uint32_t len = uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3];
      uint16_t flags = static_cast<uint16_t>(p[10] << 8 | p[11]);
      if (flags & 0x8) break;  // EOF
      if (flags & 0x4) {       // checkpoint
        off += 16;
        continue;
      }
      if (off + 16 + len > base + have) {
        base = off;
        ssize_t r = ::pread(fd, buf.data(), std::max<size_t>(chunk, 16 + len), static_cast<off_t>(base));
        have = r > 0 ? static_cast<uint64_t>(r) : 0;
        if (have < 16 + len) break;
        p = buf.data();
      }
      uint32_t c = crc_insn(0, p, 12);
      c = crc_best(c, p + 16, len);
      uint32_t stored = uint32_t(p[12]) << 24 | uint32_t(p[13]) << 16 | uint32_t(p[14]) << 8 | p[15];
      bad += c != stored;
      n++;
      off += 16 + len;
    }
    ::close(fd);
  }
  uint64_t t = now_ns() - t0;
  if (bad) die("walk_files_ns: " + std::to_string(bad) + " frames failed their CRC");
  *frames = n;
  return static_cast<double>(t);
}

// Mean ns of one pread of `n` bytes at random `n`-aligned offsets of a cached file.
// With aligned = false the offsets are any byte offset (a read then
// usually spans one page more).
inline double pread_random_ns(const std::string& file, size_t n, uint64_t count, uint32_t seed,
                              bool aligned = true) {
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) die("open " + file);
  struct stat st;
  ::fstat(fd, &st);
  uint64_t slots = static_cast<uint64_t>(st.st_size) / n;
  if (slots == 0) die("file too small for pread_random_ns");
  std::vector<uint8_t> buf(n);
  std::vector<uint64_t> offs(count);
  uint64_t x = seed;
  for (auto& o : offs) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    o = aligned ? ((x >> 17) % slots) * n : (x >> 17) % (static_cast<uint64_t>(st.st_size) - n + 1);
  }
  uint64_t t0 = now_ns();
  for (uint64_t o : offs)
    if (::pread(fd, buf.data(), n, static_cast<off_t>(o)) != static_cast<ssize_t>(n))
      die("pread_random_ns: short read");
  uint64_t t = now_ns() - t0;
  ::close(fd);
  return static_cast<double>(t) / static_cast<double>(count);
}

}  // namespace bench::limits
