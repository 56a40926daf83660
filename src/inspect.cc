// Frame-level access to one segment file (alog/inspect.h), on the walk of
// frame_reader.h.
#include "alog/inspect.h"

#include "frame_reader.h"
#include "file_cache.h"

namespace alog::inspect {

using namespace format;

Result<Segment> open_segment(const std::string& path, Fs* fs) {
  Fs& f = fs ? *fs : posix_fs();
  Segment s;
  s.path = path;
  ALOG_ASSIGN(auto file, detail::open_shedding(f, path, OpenMode::read));
  s.file = std::move(file);
  ALOG_ASSIGN(s.length, s.file->size());
  ALOG_ASSIGN(size_t got, s.file->pread(s.raw, kHeaderSize, 0));
  s.header_complete = got == kHeaderSize;
  if (got >= kFixedSize) s.header_error = decode_segment_header(s.raw, &s.header);
  if (s.header_complete && s.header_error == HeaderError::none)
    s.slots = choose_slot(s.raw, s.header.start_sequence);
  return s;
}

struct FrameWalker::Impl {
  Impl(const Segment& s, bool read_payloads)
      : window(s.file.get(), s.length),
        walk(&window, s.header.generation, detail::read_state(s.winner()), read_payloads),
        path(s.path) {}
  detail::FrameWindow window;
  detail::Walker walk;
  std::string path;
};

FrameWalker::FrameWalker(const Segment& segment, bool read_payloads)
    : impl_(std::make_unique<Impl>(segment, read_payloads)) {}

FrameWalker::~FrameWalker() = default;

Result<Frame> FrameWalker::next() {
  detail::Walker& w = impl_->walk;
  const uint64_t seq = w.state().seq;
  detail::Stop stop = w.step();
  if (stop == detail::Stop::io_error) {
    Status e = impl_->window.error();
    return e.at(impl_->path, w.state().offset);
  }
  const detail::FrameInfo& f = w.frame();
  Frame out;
  out.offset = f.offset;
  out.header = f.h;
  out.sequence = seq;
  out.computed_crc = f.computed_crc;
  if (f.payload) out.payload = std::string_view(reinterpret_cast<const char*>(f.payload), f.h.word);
  if (stop != detail::Stop::none && stop != detail::Stop::eof) {
    out.problem = detail::stop_kind(stop);
    out.message = detail::stop_text(stop);
    out.expected = w.expected();
    out.found = w.found();
  }
  return out;
}

uint64_t FrameWalker::offset() const { return impl_->walk.state().offset; }
uint64_t FrameWalker::sequence() const { return impl_->walk.state().seq; }
uint64_t FrameWalker::boundary_offset() const { return impl_->walk.boundary().offset; }
uint64_t FrameWalker::boundary_sequence() const { return impl_->walk.boundary().seq; }

Result<std::optional<uint64_t>> find_valid_data_frame(const Segment& segment, uint64_t from) {
  detail::FrameWindow w(segment.file.get(), segment.length);
  auto off = detail::find_valid_data_frame(w, segment.header.generation, from);
  if (!w.error().is_ok()) {
    Status e = w.error();
    return e.at(segment.path);
  }
  return off;
}

}  // namespace alog::inspect
