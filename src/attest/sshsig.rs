//! The in-process fast path of signature verification (SPEC §20): a narrow, exact subset of
//! `ssh-keygen -Y verify -n NAMESPACE -I PRINCIPAL -f allowed_signers`, so that the common case,
//! a good attestation by a plain ed25519 key, starts no process.
//!
//! It can only accept. It accepts when the armored signature is an SSHSIG (OpenSSH's
//! PROTOCOL.sshsig: magic `SSHSIG`, version 1) by a plain `ssh-ed25519` key (no `sk-` key, no
//! certificate), in exactly `namespace`, hashed with sha512 or sha256, with an empty reserved
//! field and no trailing bytes, whose ed25519 signature verifies over the signed-data blob; and
//! when `allowed_signers`, read line by line as ssh-keygen reads it (`sshsig_check_allowed_keys`),
//! reaches a line that lists `principal` with exactly that key and options it understands before
//! any line it does not. Options understood: none, or one `namespaces="…"` without escapes.
//! Principal and namespace lists are matched by a port of OpenSSH's `match_pattern_list`
//! (`*`, `?`, `!`, commas). Anything else — `cert-authority`, `valid-after`, `valid-before`, an
//! unknown option, a quote in a principal list, another key type on a line that lists the
//! principal, a CR, a NUL, a malformed key — and every rejection is "not decided here": the
//! caller then asks ssh-keygen, whose decision and reason stand.

use ed25519_dalek::{Signature, VerifyingKey};
use sha2::{Digest, Sha256, Sha512};

const MAGIC: &[u8] = b"SSHSIG";
const BEGIN: &str = "-----BEGIN SSH SIGNATURE-----\n";
const END: &str = "\n-----END SSH SIGNATURE-----";
const ED25519: &[u8] = b"ssh-ed25519";

/// An SSHSIG by a plain ed25519 key, as far as the fast path reads one.
#[derive(Debug, PartialEq, Eq)]
pub struct SshSig {
    pub key: [u8; 32],
    pub namespace: Vec<u8>,
    pub sha512: bool,
    pub signature: [u8; 64],
}

/// Whether `principal`'s key in `allowed` made `armored` over `message` in `namespace`, decided
/// in process: `true` only where `ssh-keygen -Y verify` accepts too; `false` means "ask
/// ssh-keygen", never "rejected".
pub fn accepts(
    allowed: &[u8],
    namespace: &str,
    message: &[u8],
    armored: &str,
    principal: &str,
) -> bool {
    let Some(sig) = parse(armored) else {
        return false;
    };
    sig.namespace == namespace.as_bytes()
        && sig.verifies(message)
        && allowed_signer(allowed, &sig.key, principal, namespace) == Some(true)
}

/// The armored signature, when it is an SSHSIG by a plain ed25519 key laid out exactly as
/// ssh-keygen writes one; `None` for anything else.
pub fn parse(armored: &str) -> Option<SshSig> {
    let body = armored.strip_prefix(BEGIN)?;
    let end = body.find(END)?;
    if !matches!(&body[end + END.len()..], "" | "\n") {
        return None;
    }
    let b64: String = body[..end].split('\n').collect();
    let blob = base64(b64.as_bytes())?;
    let mut r = Reader(&blob);
    if r.take(MAGIC.len())? != MAGIC || r.u32()? != 1 {
        return None;
    }
    let key = public_key(r.string()?)?;
    let namespace = r.string()?.to_vec();
    let reserved = r.string()?;
    let sha512 = match r.string()? {
        b"sha512" => true,
        b"sha256" => false,
        _ => return None,
    };
    let mut s = Reader(r.string()?);
    if !reserved.is_empty() || !r.0.is_empty() || s.string()? != ED25519 {
        return None;
    }
    let signature = s.string()?.try_into().ok()?;
    if !s.0.is_empty() || namespace.contains(&0) {
        return None;
    }
    Some(SshSig {
        key,
        namespace,
        sha512,
        signature,
    })
}

impl SshSig {
    /// Whether the signature verifies over PROTOCOL.sshsig's signed data for `message`: the
    /// magic, the namespace, an empty reserved string, the hash algorithm and H(message).
    pub fn verifies(&self, message: &[u8]) -> bool {
        let (alg, hash): (&[u8], Vec<u8>) = if self.sha512 {
            (b"sha512", Sha512::digest(message).to_vec())
        } else {
            (b"sha256", Sha256::digest(message).to_vec())
        };
        let mut signed = MAGIC.to_vec();
        for field in [&self.namespace[..], b"", alg, &hash] {
            signed.extend_from_slice(&(field.len() as u32).to_be_bytes());
            signed.extend_from_slice(field);
        }
        let Ok(key) = VerifyingKey::from_bytes(&self.key) else {
            return false;
        };
        key.verify_strict(&signed, &Signature::from_bytes(&self.signature))
            .is_ok()
    }
}

/// The 32 key bytes of a plain `ssh-ed25519` public key blob (nothing after them).
fn public_key(blob: &[u8]) -> Option<[u8; 32]> {
    let mut r = Reader(blob);
    if r.string()? != ED25519 {
        return None;
    }
    let key = r.string()?.try_into().ok()?;
    r.0.is_empty().then_some(key)
}

/// SSH wire format: big-endian u32 lengths before strings.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(head)
    }

    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_be_bytes(self.take(4)?.try_into().ok()?))
    }

    fn string(&mut self) -> Option<&'a [u8]> {
        let n = usize::try_from(self.u32()?).ok()?;
        self.take(n)
    }
}

/// Strict standard base64: only the alphabet, `=` padding to a multiple of four, zero pad bits
/// (OpenSSH's `b64_pton` rejects nonzero ones too).
pub fn base64(text: &[u8]) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(4) {
        return None;
    }
    let pad = text.iter().rev().take_while(|&&c| c == b'=').count();
    if pad > 2 {
        return None;
    }
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let (mut acc, mut bits) = (0u32, 0u32);
    for &c in &text[..text.len() - pad] {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    (acc == 0).then_some(out)
}

/// What one allowed-signers line says about `principal` and the signing key.
#[derive(Debug, PartialEq, Eq)]
enum Line {
    /// Blank, a comment, or a line whose principals do not match: ssh-keygen reads on.
    Skip,
    /// A line for `principal` with a plain ed25519 key and understood options: whether it is
    /// the signing key and allowed in the namespace.
    Key { accepts: bool },
    /// Anything the fast path does not understand exactly.
    Unsure,
}

/// Whether `allowed` lets `principal` sign in `namespace` with `key`: `Some(true)` when a
/// line accepts before any line the fast path does not understand; `None` otherwise.
pub fn allowed_signer(
    allowed: &[u8],
    key: &[u8; 32],
    principal: &str,
    namespace: &str,
) -> Option<bool> {
    let plain = |s: &str| !s.is_empty() && !s.bytes().any(|b| b == 0 || b.is_ascii_whitespace());
    if allowed.contains(&0) || !plain(principal) || !plain(namespace) {
        return None;
    }
    for line in allowed.split(|&b| b == b'\n') {
        match signer_line(line, key, principal.as_bytes(), namespace.as_bytes()) {
            Line::Skip | Line::Key { accepts: false } => continue,
            Line::Key { accepts: true } => return Some(true),
            Line::Unsure => return None,
        }
    }
    None
}

/// One line of `allowed_signers` (`principals [options] keytype base64 [comment]`), read as
/// ssh-keygen's `check_allowed_keys_line` reads it, as far as the fast path goes.
fn signer_line(line: &[u8], key: &[u8; 32], principal: &[u8], namespace: &[u8]) -> Line {
    if line.contains(&b'\r') {
        return Line::Unsure;
    }
    let line = skip(line, b" \t");
    if line.is_empty() || line[0] == b'#' {
        return Line::Skip;
    }
    let Some(end) = line.iter().position(|b| b" \t\"".contains(b)) else {
        return Line::Unsure; // one token only: an invalid line
    };
    if line[end] == b'"' {
        return Line::Unsure; // a quoted principal list
    }
    if match_pattern_list(principal, &line[..end]) != 1 {
        return Line::Skip;
    }
    let rest = skip(&line[end..], b" \t");
    let (options, rest) = match rest.strip_prefix(ED25519) {
        Some(after) if after.first().is_some_and(|b| b" \t".contains(b)) => (None, rest),
        _ => {
            let Some(end) = options_end(rest) else {
                return Line::Unsure;
            };
            (Some(&rest[..end]), skip(&rest[end..], b" \t"))
        }
    };
    let Some(found) = key_field(rest) else {
        return Line::Unsure;
    };
    let namespaces = match options.map(namespaces_option) {
        None => None,
        Some(Some(list)) => Some(list),
        Some(None) => return Line::Unsure,
    };
    let allowed_here = namespaces.is_none_or(|list| match_pattern_list(namespace, list) == 1);
    Line::Key {
        accepts: allowed_here && found == *key,
    }
}

fn skip<'a>(s: &'a [u8], set: &[u8]) -> &'a [u8] {
    let n = s.iter().take_while(|b| set.contains(b)).count();
    &s[n..]
}

/// Where the options field ends (`sshkey_advance_past_options`: at a blank outside quotes);
/// `None` for an escaped quote, an unterminated quote, or no key after the options.
fn options_end(s: &[u8]) -> Option<usize> {
    let mut quoted = false;
    for (i, &b) in s.iter().enumerate() {
        match b {
            b'\\' => return None,
            b'"' => quoted = !quoted,
            b' ' | b'\t' if !quoted => return (i > 0).then_some(i),
            _ => {}
        }
    }
    None
}

/// The options field when it is exactly one `namespaces="list"` (no escapes): the list.
fn namespaces_option(options: &[u8]) -> Option<&[u8]> {
    let list = options
        .strip_prefix(b"namespaces=\"")?
        .strip_suffix(b"\"")?;
    (!list.contains(&b'"')).then_some(list)
}

/// The key of `ssh-ed25519 BASE64 [comment]`, when the blob is a plain ed25519 public key.
fn key_field(s: &[u8]) -> Option<[u8; 32]> {
    let rest = s.strip_prefix(ED25519)?;
    if !rest.first().is_some_and(|b| b" \t".contains(b)) {
        return None;
    }
    let rest = skip(rest, b" \t");
    let end = rest
        .iter()
        .position(|b| b" \t".contains(b))
        .unwrap_or(rest.len());
    public_key(&base64(&rest[..end])?)
}

/// OpenSSH's `match_pattern_list` (match.c) without case folding: 1 when a pattern of the
/// comma-separated `list` matches `s` and none negated (`!`) does, -1 when a negated one does,
/// 0 otherwise (also for a subpattern of 1,023 bytes or more, as OpenSSH's buffer does).
pub fn match_pattern_list(s: &[u8], list: &[u8]) -> i32 {
    let mut positive = false;
    let mut i = 0;
    while i < list.len() {
        let negated = list[i] == b'!';
        if negated {
            i += 1;
        }
        let start = i;
        while i < list.len() && i - start < 1023 && list[i] != b',' {
            i += 1;
        }
        if i - start >= 1023 {
            return 0;
        }
        let sub = &list[start..i];
        if i < list.len() && list[i] == b',' {
            i += 1;
        }
        if match_pattern(s, sub) {
            if negated {
                return -1;
            }
            positive = true;
        }
    }
    i32::from(positive)
}

/// OpenSSH's `match_pattern`: `*` any run, `?` any one byte, everything else itself. Iterative
/// over literal bytes, so the depth is bounded by the pattern's stars, not by `s`.
fn match_pattern(mut s: &[u8], mut pattern: &[u8]) -> bool {
    loop {
        match pattern.split_first() {
            None => return s.is_empty(),
            Some((b'*', _)) => {
                let rest = skip(pattern, b"*");
                return rest.is_empty() || (0..s.len()).any(|i| match_pattern(&s[i..], rest));
            }
            Some((&p, rest)) => match s.split_first() {
                Some((&c, tail)) if p == b'?' || p == c => (s, pattern) = (tail, rest),
                _ => return false,
            },
        }
    }
}
