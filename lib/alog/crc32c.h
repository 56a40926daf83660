// CRC32C (Castagnoli): reflected polynomial 0x82F63B78, init and final XOR
// 0xFFFFFFFF. crc32c("123456789") == 0xE3069283, crc32c("") == 0.
#pragma once

#include <cstddef>
#include <cstdint>

namespace alog {

// CRC32C of n bytes.
uint32_t crc32c(const void* data, size_t n);
// Extends a CRC: crc32c_extend(crc32c(a), b) == crc32c(a || b).
uint32_t crc32c_extend(uint32_t crc, const void* data, size_t n);
// crc32c_extend over a, then b, with one dispatch (a frame's header bytes,
// then its payload).
uint32_t crc32c_extend2(uint32_t crc, const void* a, size_t na, const void* b, size_t nb);

// A data frame's CRC, crc32c_extend2(0, header, 12, payload, n), and the
// running CRC over its 16 header bytes, *running = crc32c_extend(*running,
// header, 16), at once: the two chains side by side (a walk needs both per
// frame).
uint32_t crc32c_frame(const uint8_t header[16], const void* payload, size_t n, uint32_t* running);
// crc32c_extend over `count` pieces of `len` bytes each, in order, in one
// call (a batch's frame headers).
uint32_t crc32c_extend_each(uint32_t crc, const uint8_t* const* pieces, size_t count, size_t len);
// Three crc32c_extends at once: crc[i] = crc32c_extend(crc[i], data[i], n[i]).
// For short buffers (frame payloads) the three run side by side in the CPU,
// in about the time of one.
void crc32c_extend_3(uint32_t crc[3], const void* const data[3], const size_t n[3]);
// Three data frames' own CRCs into crc[], each over header bytes 0-11 and
// then the payload that follows its 16-byte header in memory (payload
// length in bytes 0-3); the three chains side by side. With `running`, also
// the running CRC (FORMAT.md "Checkpoints") from running[0] over the three
// 16-byte headers in order: running[k + 1] after frame k.
void crc32c_frames_3(const uint8_t* const frames[3], uint32_t crc[3],
                     uint32_t running[4] = nullptr);
// A writer's side of it: three data frames whose bytes 0-11 and payloads
// are written get their CRCs (as crc32c_frames_3) stored in bytes 12-15,
// then *running is extended over the three finished 16-byte headers in
// order; the running chain overlaps the next frames' CRCs in the CPU.
void crc32c_seal_frames_3(uint8_t* const frames[3], uint32_t* running);
// The same for one frame.
void crc32c_seal_frame(uint8_t* frame, uint32_t* running);

// The implementations behind crc32c_extend, each usable on its own so tests
// and benchmarks can compare them. Each takes and returns a finished CRC
// (same contract as crc32c_extend). The dispatcher uses the SSE4.2 loop for
// short buffers, where its latency wins, and ISA-L from isal_threshold() on.
namespace crc {
// Where ISA-L starts to win depends on the CPU (bench/crc_bench measures it:
// 240..256 B on an AVX-512 Xeon, 192..208 B on an AMD EPYC), so it is chosen
// once per process, before main, by timing both routines at 128..256 B
// (about 40 us); 256 when either routine is missing. Every choice gives the
// same CRCs: only the speed of 128..255-byte buffers depends on it.
size_t isal_threshold();
uint32_t portable(uint32_t crc, const void* data, size_t n);  // slicing-by-8 tables
bool have_sse42();
uint32_t sse42(uint32_t crc, const void* data, size_t n);  // requires have_sse42()
bool have_isal();
uint32_t isal(uint32_t crc, const void* data, size_t n);  // requires have_isal()
// Name of what crc32c_extend uses for an n-byte buffer: "isal", "sse42" or "portable".
const char* dispatch_name(size_t n);
}  // namespace crc

}  // namespace alog
