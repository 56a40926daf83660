// lost+found/ (see lost_found.h).
#include "lost_found.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <random>

#include "alog/format.h"
#include "file_cache.h"

namespace alog::detail {
namespace {

// Room a manifest and the directory entries take, on top of the saved bytes.
constexpr uint64_t kManifestRoom = 64 << 10;

std::string json_str(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      o += '\\';
      o += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char b[8];
      std::snprintf(b, sizeof b, "\\u%04x", c);
      o += b;
    } else {
      o += c;
    }
  }
  return o + "\"";
}

std::string lost_found(const std::string& dir) {
  return path_join(dir, std::string(format::kLostFoundName));
}

Status ensure_dir(Fs& fs, const std::string& dir) {
  ALOG_ASSIGN(bool exists, check_lost_found(fs, dir));
  if (exists) return {};
  const std::string lf = lost_found(dir);
  ALOG_TRY(fs.mkdir(lf));
  return fs.sync_dir(dir);
}

// A suffix nobody can predict, so no name in lost+found/ can be planted in advance.
std::string random_suffix() {
  std::random_device rd;
  uint64_t v = (uint64_t(rd()) << 32) ^ rd();
  char b[17];
  std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(v));
  return b;
}

// A new file in lost+found/, created with O_EXCL (never replacing a name);
// sets *stem to "BASE.RANDOM".
Result<std::unique_ptr<File>> create_new(Fs& fs, const std::string& dir, const std::string& base,
                                         const std::string& ext, std::string* stem) {
  Status last;
  for (int tries = 0; tries < 8; tries++) {
    *stem = base + "." + random_suffix();
    auto f = open_shedding(fs, path_join(lost_found(dir), *stem + ext), OpenMode::create_excl);
    if (f.is_ok() || f.status().sys_errno() != EEXIST) return f;
    last = f.status();
  }
  return last;
}

// Writes the manifest STEM.json: created with O_EXCL by `create_new` (when
// `f` is given) or here; removed again if it cannot be written and synced.
Status write_manifest(Fs& fs, const std::string& dir, const std::string& stem,
                      const std::string& source, uint64_t offset, uint64_t length,
                      std::optional<uint16_t> generation, const std::string& reason,
                      const SalvageManifest& salvage, const std::string& data, uint64_t now_ms,
                      std::unique_ptr<File> f = nullptr) {
  std::string runs, unkept, unreadable;
  if (salvage.unreadable)
    for (const ByteRange& r : *salvage.unreadable)
      unreadable += std::string(unreadable.empty() ? "" : ",") + "{\"offset\":" + std::to_string(r.offset) +
                    ",\"end_offset\":" + std::to_string(r.end) + "}";
  for (const SavedRun& r : salvage.lost)
    runs += std::string(runs.empty() ? "" : ",") + "{\"first_seq\":" + std::to_string(r.first_seq) +
            ",\"last_seq\":" + std::to_string(r.last_seq) + ",\"reason\":" + json_str(r.reason) + "}";
  for (const UnkeptRun& r : salvage.not_kept)
    unkept += std::string(unkept.empty() ? "" : ",") + "{\"offset\":" + std::to_string(r.offset) +
              ",\"end_offset\":" + std::to_string(r.end_offset) + ",\"frames\":" + std::to_string(r.frames) +
              ",\"first_seq\":" + (r.first_seq ? std::to_string(*r.first_seq) : std::string("null")) +
              ",\"reason\":" + json_str(r.reason) + "}";
  std::string m = "{\"source\":" + json_str(source) + ",\"offset\":" + std::to_string(offset) +
                  ",\"length\":" + std::to_string(length) + ",\"generation\":" +
                  (generation ? std::to_string(*generation) : std::string("null")) +
                  ",\"reason\":" + json_str(reason) + ",\"lost\":[" + runs + "],\"not_kept\":[" + unkept + "]" +
                  ",\"unreadable\":[" + unreadable + "]" +
                  ",\"saved_at_ms\":" + std::to_string(now_ms) + ",\"data\":" + json_str(data) +
                  "}\n";
  const std::string path = path_join(lost_found(dir), stem + ".json");
  if (!f) {
    ALOG_ASSIGN(f, open_shedding(fs, path, OpenMode::create_excl));
  }
  Status st = f->pwrite(m.data(), m.size(), 0);
  if (st.is_ok()) st = f->datasync();
  if (!st.is_ok()) (void)fs.unlink(path);
  return st;
}

// Copies [from, len) of `file` to `out` at offset - from, skipping holes (the
// copy keeps them as holes); returns the bytes copied.
Result<uint64_t> copy_data(File& file, File& out, uint64_t from, uint64_t len) {
  std::string buf;
  uint64_t saved = 0;
  for (uint64_t off = from; off < len;) {
    ALOG_ASSIGN(auto ext, file.data_extent(off));
    if (ext.first >= len) break;
    uint64_t end = std::min(ext.second, len);
    for (off = ext.first; off < end;) {
      size_t n = static_cast<size_t>(std::min<uint64_t>(end - off, 4 << 20));
      buf.resize(n);
      ALOG_ASSIGN(size_t got, file.pread(buf.data(), n, off));
      if (got == 0) return saved;
      ALOG_TRY(out.pwrite(buf.data(), got, off - from));
      off += got;
      saved += got;
    }
  }
  return saved;
}

}  // namespace

Result<bool> check_lost_found(Fs& fs, const std::string& dir) {
  const std::string lf = lost_found(dir);
  ALOG_ASSIGN(FileStat st, fs.stat(lf));
  if (st.is_symlink || (st.exists && !st.is_dir))
    return Status(Errc::not_a_log, std::string(st.is_symlink ? "is a symbolic link" : "is not a directory") +
                                       "; refusing to save removed bytes there")
        .at(lf);
  return st.exists;
}

Result<std::string> save_tail(Fs& fs, const std::string& dir, File& file, const std::string& name,
                              uint64_t from, const std::string& reason, uint64_t now_ms,
                              const SalvageManifest& salvage) {
  ALOG_TRY(ensure_dir(fs, dir));
  ALOG_ASSIGN(uint64_t len, file.size());
  // The generation of the source's frames (dump-frames checks a cut piece's
  // frames against it), when its fixed header is sound.
  std::optional<uint16_t> generation;
  uint8_t fixed[format::kFixedSize];
  ALOG_ASSIGN(size_t got, file.pread(fixed, sizeof fixed, 0));
  format::SegmentHeader h;
  if (got == sizeof fixed && format::decode_segment_header(fixed, &h) == format::HeaderError::none)
    generation = h.generation;
  // Refuse before writing a byte when the copy (holes stay holes) and its
  // manifest cannot fit: a save must not fill the disk the log lives on.
  uint64_t data = 0;
  for (uint64_t off = from; off < len;) {
    ALOG_ASSIGN(auto ext, file.data_extent(off));
    if (ext.first >= len) break;
    if (ext.second <= off) break;
    data += std::min(ext.second, len) - ext.first;
    off = ext.second;
  }
  ALOG_ASSIGN(uint64_t free_bytes, fs.available(lost_found(dir)));
  const uint64_t need = data + kManifestRoom;
  if (need > free_bytes)
    return Status::io_error("saving " + std::to_string(data) + " bytes of " + name + " needs " +
                                std::to_string(need) + " bytes, " + std::to_string(free_bytes) + " are free",
                            lost_found(dir), ENOSPC);
  std::string stem;
  ALOG_ASSIGN(auto out, create_new(fs, dir, name + "@" + std::to_string(from) + "." + std::to_string(now_ms),
                                   ".bin", &stem));
  const std::string bin = path_join(lost_found(dir), stem + ".bin");
  // A failed save leaves nothing behind: no partial copy, no manifest without data.
  auto saved = [&]() -> Result<uint64_t> {
    ALOG_ASSIGN(uint64_t n, copy_data(file, *out, from, len));
    if (len > from) ALOG_TRY(out->truncate(len - from));  // trailing holes stay holes
    ALOG_TRY(out->datasync());
    return n;
  }();
  if (!saved.is_ok()) {
    (void)fs.unlink(bin);
    return saved.status();
  }
  uint64_t length = len > from ? len - from : 0;
  if (Status st = write_manifest(fs, dir, stem, name, from, length, generation, reason, salvage,
                                 stem + ".bin", now_ms);
      !st.is_ok()) {
    (void)fs.unlink(bin);
    return st;
  }
  ALOG_TRY(fs.sync_dir(lost_found(dir)));
  return std::string(format::kLostFoundName) + "/" + stem + ".bin";
}

}  // namespace alog::detail
