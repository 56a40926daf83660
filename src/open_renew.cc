// Opening for writing after a failed directory fsync in an earlier process
// (a failed fsync is final, FORMAT.md's device model): no sync makes the
// names it covered durable, so open changes them again (log.cc calls these
// from load_segments).
#include <algorithm>

#include "log_impl.h"
#include "file_cache.h"

namespace alog {

using namespace detail;
using namespace format;

Status LogImpl::renew_dir_entry(const std::string& parent) {
  auto slash = dir_.find_last_of('/');
  const std::string base = slash == std::string::npos ? dir_ : dir_.substr(slash + 1);
  if (base.empty() || base == "." || base == "..") return fs_->sync_dir(parent);
  // A name of its own: a crash between the renames leaves an empty directory
  // there, and the log is made afresh at its name.
  const std::string away = dir_ + ".alog-renew-" + std::to_string(now_ms());
  // A directory that cannot be renamed (a mount point, a parent this user
  // may not write): the sync is all that can be done.
  if (!fs_->rename(dir_, away).is_ok()) return fs_->sync_dir(parent);
  ALOG_TRY(fs_->rename(away, dir_));
  return fs_->sync_dir(parent);
}

std::optional<uint64_t> LogImpl::leftover_origin(const std::string& name) {
  // The segment name this file had before a truncate_before (NAME.seg.del)
  // or a recycle (NEW.seg.tmp, the old header still there) renamed it.
  if (name.ends_with(kDelSuffix)) return parse_segment_name(name.substr(0, name.size() - 4));
  auto f = open_shedding(*fs_, path_join(dir_, name), OpenMode::read);
  if (!f.is_ok()) return std::nullopt;
  uint8_t hdr[kFixedSize];
  SegmentHeader h;
  auto got = (*f)->pread(hdr, sizeof hdr, 0);
  if (!got.is_ok() || *got != sizeof hdr || decode_segment_header(hdr, &h) != HeaderError::none)
    return std::nullopt;
  return h.start_sequence;
}

Status LogImpl::remove_older_leftover(const std::string& name, uint64_t was, uint64_t oldest) {
  // The rename that made this file may be undurable (its directory sync
  // failed, and a failed fsync is final, FORMAT.md): a power cut could bring
  // the old segment back, in front of a gap once the segment after it is
  // removed too. So the old name is changed again: a tombstone segment (its
  // start sequence, an empty range at the oldest segment's start, so it
  // chains to it) is written and synced, renamed to the old name and
  // unlinked there, then the directory is synced. Until that sync a crash
  // leaves the name absent, the tombstone (harmless), or the old segment
  // only if its removal was never made durable (a failed removal).
  const std::string seg = path_join(dir_, segment_name(was));
  const std::string tmp = seg + ".tmp";
  if (path_join(dir_, name) != tmp) ALOG_TRY(fs_->unlink(path_join(dir_, name)));  // else replaced below
  uint8_t buf[kEmptySegmentSize];
  encode_new_segment(SegmentHeader{was, 0, 1}, buf);
  Slot a = new_segment_slot(was);
  a.first_sequence = a.synced_sequence = oldest;
  encode_slot(a, buf + kFixedSize);
  ALOG_ASSIGN(auto f, open_shedding(*fs_, tmp, OpenMode::create_trunc));
  ALOG_TRY(f->pwrite(buf, sizeof buf, 0));
  ALOG_TRY(f->datasync());
  ALOG_TRY(fs_->rename(tmp, seg));
  ALOG_TRY(fs_->unlink(seg));
  return fs_->sync_dir(dir_);
}

Result<bool> LogImpl::reuse_removed_next() {
  if (renew_del_.empty()) return false;
  const std::string del = path_join(dir_, renew_del_);
  const uint64_t start = *parse_segment_name(renew_del_.substr(0, renew_del_.size() - 4));
  renew_del_.clear();
  auto v = view();
  // A truncate_after renames the segments after the cut to .seg.del, newest
  // first, syncing the directory after each; when that sync failed, the
  // rename may not be durable (a failed fsync is final, FORMAT.md), and a
  // power cut could bring NAME.seg back after records this process appends
  // in its place. When it starts where the active segment ends, it is made
  // the next segment instead, as a recycle would (its records are gone
  // either way): rename it to NAME.seg.tmp, write an empty segment, sync,
  // rename to NAME.seg, sync the directory. Otherwise the cut after the
  // renames was reached, so they were synced: it is deleted.
  if (start != tail_.seq || opt_.max_segments == 1) {
    ALOG_TRY(fs_->unlink(del));
    ALOG_TRY(fs_->sync_dir(dir_));
    return false;
  }
  ALOG_TRY(sync_active(/*sync_slot=*/true, /*seal=*/true));
  const std::string tmp = path_join(dir_, segment_name(start) + ".tmp");
  ALOG_TRY(fs_->rename(del, tmp));
  ALOG_ASSIGN(auto f, open_shedding(*fs_, tmp, OpenMode::read_write));
  ALOG_TRY(f->truncate(0));  // no stale frames: a fresh file of generation 1
  uint64_t created = std::max(now_ms(), v->back()->header().created_at_ms);
  SegmentPtr seg;
  ALOG_TRY(install_segment(std::move(f), SegmentHeader{start, created, 1}, kEmptySegmentSize, &seg));
  SegmentList next(v->begin(), v->end());
  next.push_back(std::move(seg));
  set_view(std::move(next));
  tail_ = WalkState{kHeaderSize, start, 0, 0, false};
  slot_written_ = true;  // the new segment's slot A, synced
  return true;
}

Status LogImpl::renew_empty_active() {
  // An active segment with no frame yet may have been installed by a roll, a
  // recycle or the log's creation whose directory fsync failed in an earlier
  // process. A failed fsync is final (FORMAT.md, device model): no sync of
  // ours makes its name durable, and records appended here would depend on
  // it. It holds nothing: install it again (a new NAME.seg.tmp renamed over
  // it, then the directory synced), a change that a sync does make durable.
  auto v = view();
  const SegmentPtr& seg = v->back();
  if (tail_.offset != kHeaderSize) return {};
  // A new incarnation of the file, told apart from the old one by readers
  // that compare headers (Segment::header_unchanged, a refresh's "same
  // file"): `created at` one millisecond later. Not the time of this open:
  // age retention dates the sealed segment before by this one's `created
  // at`, and an open that appends nothing must not make its records younger.
  SegmentHeader h = seg->header();
  h.created_at_ms += 1;
  ALOG_ASSIGN(auto f, open_shedding(*fs_, path_join(dir_, segment_name(h.start_sequence) + ".tmp"), OpenMode::create_trunc));
  SegmentPtr fresh;
  ALOG_TRY(install_segment(std::move(f), h, kEmptySegmentSize, &fresh));
  SegmentList list(v->begin(), v->end());
  list.back() = std::move(fresh);
  set_view(list);
  tail_ = WalkState{kHeaderSize, h.start_sequence, 0, 0, false};
  return {};
}

}  // namespace alog
