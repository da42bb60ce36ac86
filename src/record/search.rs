//! Searching the audit log's bytes without asking the CPU what it has. memchr's default
//! searchers choose AVX2 at run time, and that first question (CPUID, through `std_detect`)
//! cost about 60 µs in a virtual machine: as much as reading the log, on the stop hook's answer
//! to a question (issue 38, docs/agents.md "What a stop costs"). SSE2 is part of x86-64 itself,
//! so its searchers need no question; other targets keep memchr's own choice.

/// A substring searcher for one needle.
pub struct Finder<'n> {
    #[cfg(target_arch = "x86_64")]
    needle: &'n [u8],
    #[cfg(target_arch = "x86_64")]
    simd: Option<memchr::arch::x86_64::sse2::packedpair::Finder>,
    #[cfg(target_arch = "x86_64")]
    scalar: memchr::arch::all::twoway::Finder,
    #[cfg(not(target_arch = "x86_64"))]
    any: memchr::memmem::Finder<'n>,
}

impl<'n> Finder<'n> {
    pub fn new(needle: &'n [u8]) -> Finder<'n> {
        Finder {
            #[cfg(target_arch = "x86_64")]
            needle,
            #[cfg(target_arch = "x86_64")]
            simd: memchr::arch::x86_64::sse2::packedpair::Finder::new(needle),
            #[cfg(target_arch = "x86_64")]
            scalar: memchr::arch::all::twoway::Finder::new(needle),
            #[cfg(not(target_arch = "x86_64"))]
            any: memchr::memmem::Finder::new(needle),
        }
    }

    /// Where the needle first occurs in `haystack`.
    #[cfg(target_arch = "x86_64")]
    pub fn find(&self, haystack: &[u8]) -> Option<usize> {
        match &self.simd {
            // The vector search needs a haystack of some length (it panics below it).
            Some(simd) if haystack.len() >= simd.min_haystack_len() => {
                simd.find(haystack, self.needle)
            }
            _ => self.scalar.find(haystack, self.needle),
        }
    }

    /// Where the needle first occurs in `haystack`.
    #[cfg(not(target_arch = "x86_64"))]
    pub fn find(&self, haystack: &[u8]) -> Option<usize> {
        self.any.find(haystack)
    }
}

/// Where `byte` first occurs in `haystack`.
pub fn memchr(byte: u8, haystack: &[u8]) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    {
        let one = memchr::arch::x86_64::sse2::memchr::One::new(byte);
        one.map_or_else(
            || haystack.iter().position(|b| *b == byte),
            |o| o.find(haystack),
        )
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        memchr::memchr(byte, haystack)
    }
}

/// Where `byte` last occurs in `haystack`.
pub fn memrchr(byte: u8, haystack: &[u8]) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    {
        let one = memchr::arch::x86_64::sse2::memchr::One::new(byte);
        one.map_or_else(
            || haystack.iter().rposition(|b| *b == byte),
            |o| o.rfind(haystack),
        )
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        memchr::memrchr(byte, haystack)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every position memchr's own searchers report, over needles and haystacks of every length
    /// around the vector searcher's minimum (below it the scalar search answers).
    #[test]
    fn agrees_with_memchr_at_every_length() {
        let text: Vec<u8> = (0..200u32)
            .map(|i| b"ab\nc0d"[(i * 7 % 6) as usize])
            .collect();
        for needle_len in 1..6 {
            for start in 0..20 {
                let needle = &text[start..start + needle_len];
                let finder = Finder::new(needle);
                for end in 0..text.len() {
                    let hay = &text[..end];
                    assert_eq!(finder.find(hay), memchr::memmem::find(hay, needle));
                }
            }
        }
        for end in 0..text.len() {
            let hay = &text[..end];
            for byte in [b'\n', b'a', b'z'] {
                assert_eq!(memchr(byte, hay), memchr::memchr(byte, hay));
                assert_eq!(memrchr(byte, hay), memchr::memrchr(byte, hay));
            }
        }
    }
}
