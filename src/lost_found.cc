// lost+found/ (see lost_found.h).
#include "lost_found.h"

#include <algorithm>
#include <cstdio>

#include "alog/format.h"

namespace alog::detail {
namespace {

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
  ALOG_ASSIGN(FileStat st, fs.stat(lost_found(dir)));
  if (st.exists) return {};
  ALOG_TRY(fs.mkdir(lost_found(dir)));
  return fs.sync_dir(dir);
}

Status write_manifest(Fs& fs, const std::string& dir, const std::string& stem,
                      const std::string& source, uint64_t offset, uint64_t length,
                      const std::string& reason, const std::string& data, uint64_t now_ms) {
  std::string m = "{\"source\":" + json_str(source) + ",\"offset\":" + std::to_string(offset) +
                  ",\"length\":" + std::to_string(length) + ",\"reason\":" + json_str(reason) +
                  ",\"saved_at_ms\":" + std::to_string(now_ms) + ",\"data\":" + json_str(data) +
                  "}\n";
  ALOG_ASSIGN(auto f, fs.open(path_join(lost_found(dir), stem + ".json"), OpenMode::create_trunc));
  ALOG_TRY(f->pwrite(m.data(), m.size(), 0));
  return f->datasync();
}

}  // namespace

Result<std::string> save_tail(Fs& fs, const std::string& dir, File& file, const std::string& name,
                              uint64_t from, const std::string& reason, uint64_t now_ms) {
  ALOG_TRY(ensure_dir(fs, dir));
  ALOG_ASSIGN(uint64_t len, file.size());
  std::string stem = name + "@" + std::to_string(from) + "." + std::to_string(now_ms);
  ALOG_ASSIGN(auto out, fs.open(path_join(lost_found(dir), stem + ".bin"), OpenMode::create_trunc));
  std::string buf;
  uint64_t saved = 0;
  for (uint64_t off = from; off < len;) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(len - off, 4 << 20));
    buf.resize(n);
    ALOG_ASSIGN(size_t got, file.pread(buf.data(), n, off));
    if (got == 0) break;
    ALOG_TRY(out->pwrite(buf.data(), got, off - from));
    off += got;
    saved += got;
  }
  ALOG_TRY(out->datasync());
  ALOG_TRY(write_manifest(fs, dir, stem, name, from, saved, reason, stem + ".bin", now_ms));
  ALOG_TRY(fs.sync_dir(lost_found(dir)));
  return std::string(format::kLostFoundName) + "/" + stem + ".bin";
}

}  // namespace alog::detail
