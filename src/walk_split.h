// One segment's walk on several threads. After a checkpoint frame the walk's
// state is known but for the sequence (running CRC 0, pending count 0, no
// open batch), so a helper can walk a later part of the segment from a
// checkpoint found ahead, counting sequences from 0, while the main walk
// walks the part before it. When the main walk steps onto that checkpoint
// itself, the helper's walk is the walk it would have made from there: it
// takes the helper's place (Walker::adopt) and goes on from where the helper
// stopped (an EOF, damage, which it then meets again itself, or the next
// part's checkpoint, when it takes that part too).
//
// A checkpoint found ahead can be payload bytes that only look like one (a
// header of the right flags and generation with a matching CRC): the main
// walk then never steps onto it, the helpers are stopped and the main walk
// goes on alone. So the split changes how long a walk takes, never what it
// finds.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <thread>
#include <vector>

#include "frame_reader.h"

namespace alog::detail {

class SplitWalk {
 public:
  struct Setup {
    File* file;
    uint64_t limit;       // the window's limit (FrameWindow)
    uint16_t generation;  // the segment's
    uint64_t from;        // where the main walk starts
    uint64_t boundary;    // Walker::add_boundary's offset (0: none)
    bool read_payloads;
  };
  // Called on a helper's thread for the frames its walk accepts (part >= 1;
  // sequences in `walk` count from 0 at the part's start): `run` empty, for
  // the one frame walk.frame(); else for a run of data frames it took at
  // once (Walker::take_data; walk.frame() is the last). A run never passes
  // over Setup::boundary: some frame ends there if the walk reaches it.
  using OnFrame = std::function<void(size_t part, const Walker& walk, std::span<const RecordView> run)>;

  // Splits [from, limit) into at most `parts` parts of at least 8 MiB at
  // checkpoints found ahead, and starts a helper on each but the first.
  // With parts <= 1, or no checkpoint found, or no thread to be had, there
  // is nothing to join and next() is UINT64_MAX.
  SplitWalk(const Setup& s, size_t parts, OnFrame on_frame = {});
  ~SplitWalk();  // stops the helpers and waits for them
  SplitWalk(const SplitWalk&) = delete;
  SplitWalk& operator=(const SplitWalk&) = delete;

  // The offset of the checkpoint where the next part begins.
  uint64_t next() const { return next_; }
  // Call after each step of the main walk: when it has just stepped onto the
  // checkpoint at next(), it jumps over the parts walked from there
  // (waiting for their helpers) and true is returned; when it has gone past
  // next() without stepping there, the helpers are stopped. `accept(part,
  // seq_base)` is asked before each part is taken, with the sequence the
  // part's 0 stands for: false leaves the walk where it is (it walks that
  // part itself).
  bool join(Walker& walk, const std::function<bool(size_t part, uint64_t seq_base)>& accept) {
    return walk.state().offset > next_ && join_parts(walk, accept);  // inline: called per frame
  }
  // Helpers started (0: the walk is not split).
  size_t helpers() const { return parts_.size(); }

 private:
  struct Part {
    uint64_t start = 0;  // its checkpoint's offset
    uint64_t end = 0;    // the next part's checkpoint, or UINT64_MAX
    std::unique_ptr<FrameWindow> window;
    std::unique_ptr<Walker> walker;
    bool handed_off = false;  // its walk stepped onto the next part's checkpoint
    std::atomic<bool> stop{false};
    std::thread thread;
  };
  bool join_parts(Walker& walk, const std::function<bool(size_t part, uint64_t seq_base)>& accept);
  void run(size_t i);
  void stop_from(size_t i);  // stops and waits for parts i.. (by index in parts_)

  OnFrame on_frame_;
  uint64_t boundary_;  // Setup::boundary
  std::vector<std::unique_ptr<Part>> parts_;
  size_t joined_ = 0;  // parts_ before this one are taken or stopped
  uint64_t next_ = UINT64_MAX;
};

// Where a helper can begin at or after `from` and before `to`: the first
// offset holding a checkpoint frame valid on its own (flags 0x0004, the
// generation, reserved bytes 0, its CRC matching). nullopt when none, or a
// read fails.
std::optional<uint64_t> find_checkpoint(File& file, uint16_t generation, uint64_t from, uint64_t to);

}  // namespace alog::detail
