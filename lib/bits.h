/*
 * bits.h - the few tiny helpers that every layer needs, defined once:
 *
 *   cpu_relax()        the CPU's spin-wait hint, for every busy-wait loop
 *                      (x86 pause, arm64 yield; nothing elsewhere)
 *   put16/32/64()      little-endian stores to an unaligned byte address
 *   get16/32/64()      little-endian loads from one
 *   mix64()            splitmix64's output function: a bijection of 64-bit
 *                      words in which every input bit reaches every output
 *                      bit (Steele, Lea and Flood, OOPSLA 2014)
 *
 * The byte-order helpers are each one unaligned move on a little-endian
 * machine (a fixed-size memcpy compiles to one mov) and a byte swap first
 * on a big-endian one, so every format built with them (the wire format,
 * history records, verbs private data) is the same bytes on every host.
 * Byte loops cost about 8 instructions a byte on the per-request path
 * (bench/icount.sh), which is why nothing in the tree writes its own.
 */
#ifndef OQB_BITS_H
#define OQB_BITS_H

#include <stdint.h>
#include <string.h>

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define BITS_LE16(v) __builtin_bswap16(v)
#define BITS_LE32(v) __builtin_bswap32(v)
#define BITS_LE64(v) __builtin_bswap64(v)
#else
#define BITS_LE16(v) (v)
#define BITS_LE32(v) (v)
#define BITS_LE64(v) (v)
#endif

static inline void put16(uint8_t *p, uint16_t v)
{
	v = BITS_LE16(v);
	memcpy(p, &v, 2);
}

static inline void put32(uint8_t *p, uint32_t v)
{
	v = BITS_LE32(v);
	memcpy(p, &v, 4);
}

static inline void put64(uint8_t *p, uint64_t v)
{
	v = BITS_LE64(v);
	memcpy(p, &v, 8);
}

static inline uint16_t get16(const uint8_t *p)
{
	uint16_t v;
	memcpy(&v, p, 2);
	return BITS_LE16(v);
}

static inline uint32_t get32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return BITS_LE32(v);
}

static inline uint64_t get64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return BITS_LE64(v);
}

static inline uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

#endif
