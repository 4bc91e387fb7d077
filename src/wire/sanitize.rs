//! One sanitiser for every string a peer controls (version line, DISCONNECT text, user name,
//! command): they reach our log and the user's terminal, so an escape sequence, a bidi override
//! or a megabyte of text from an unauthenticated client must not. Like OpenSSH's
//! `strnvis(…, VIS_SAFE | VIS_OCTAL)` before logging, but written here because the job is a
//! dozen lines and the escaping rules are ours to choose. Which characters are unsafe is read
//! from the Unicode general category (`unicode-properties`), not from a list kept by hand: a
//! hand-kept list of bidi controls missed U+061C.

use std::fmt::Write as _;
use unicode_properties::{GeneralCategory, GeneralCategoryGroup, UnicodeGeneralCategory};

/// How many characters of a peer string reach a log line by default.
pub const PEER_TEXT_MAX: usize = 120;

/// `bytes` as printable text: invalid UTF-8 as U+FFFD, control and format characters
/// (terminal escapes, bidi overrides, zero-width marks) as `\xNN` / `\u{…}`, cut to `max`
/// characters with a trailing `…`.
pub fn peer_text(bytes: &[u8], max: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::new();
    for (i, c) in text.chars().enumerate() {
        if i == max {
            out.push('…');
            break;
        }
        if is_unsafe(c) {
            if (c as u32) < 0x100 {
                let _ = write!(out, "\\x{:02x}", c as u32);
            } else {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// A whole log line made safe for a terminal: like `peer_text` but without a length cut and
/// leaving `\` alone, so the peer strings already escaped inside it read the same. The last
/// line of defence for a message that quotes a peer string nobody sanitised.
pub fn terminal_safe(line: &str) -> std::borrow::Cow<'_, str> {
    if !line.chars().any(|c| c != '\\' && is_unsafe(c)) {
        return line.into();
    }
    let mut out = String::with_capacity(line.len() + 16);
    for c in line.chars() {
        if c != '\\' && is_unsafe(c) {
            out.push_str(&peer_text(c.encode_utf8(&mut [0; 4]).as_bytes(), 1));
        } else {
            out.push(c);
        }
    }
    out.into()
}

/// Characters a terminal acts on, or that reorder, hide or break the text around them: the
/// backslash (our escape), every "other" character — controls (Cc), format characters (Cf:
/// all bidi controls U+061C, U+200E/F, U+202A–202E, U+2066–2069, the zero-width characters,
/// U+FEFF, tag characters), private-use and unassigned code points — and the line and
/// paragraph separators U+2028/U+2029.
fn is_unsafe(c: char) -> bool {
    c == '\\'
        || c.general_category_group() == GeneralCategoryGroup::Other
        || matches!(
            c.general_category(),
            GeneralCategory::LineSeparator | GeneralCategory::ParagraphSeparator
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_terminal_sequences_and_bidi() {
        assert_eq!(peer_text(b"\x1b[2Jroot", 50), "\\x1b[2Jroot");
        assert_eq!(peer_text("a\u{202e}b".as_bytes(), 50), "a\\u{202e}b");
        assert_eq!(peer_text(b"line\r\nnext", 50), "line\\x0d\\x0anext");
        assert_eq!(peer_text(b"back\\slash", 50), "back\\x5cslash");
    }

    /// U+061C (Arabic letter mark) used to pass: the whole bidi-control set is escaped, and
    /// the other invisible or reordering characters with it.
    #[test]
    fn every_bidi_control_and_invisible_character_is_escaped() {
        let bidi = [
            0x061c, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e,
        ];
        let isolates = [0x2066, 0x2067, 0x2068, 0x2069];
        let invisible = [
            0x00ad, 0x200b, 0x2028, 0x2029, 0x2060, 0xfeff, 0xe0041, 0xe000,
        ];
        let controls = [0x00, 0x07, 0x7f, 0x85, 0x9b];
        for c in bidi
            .iter()
            .chain(&isolates)
            .chain(&invisible)
            .chain(&controls)
        {
            let c = char::from_u32(*c).unwrap();
            let out = peer_text(c.encode_utf8(&mut [0; 4]).as_bytes(), 10);
            assert!(
                out.starts_with('\\') && out.is_ascii(),
                "U+{:04X} -> {out:?}",
                c as u32
            );
            assert_eq!(terminal_safe(&format!("a{c}b")), format!("a{out}b"));
        }
        for keep in ["café", "日本語", "Ünïcödé", "ssh-ed25519", "a b\u{a0}c"] {
            assert_eq!(peer_text(keep.as_bytes(), 50), keep);
        }
    }

    #[test]
    fn log_lines_keep_escapes_but_lose_control_characters() {
        assert_eq!(terminal_safe("a \\x1b b"), "a \\x1b b");
        assert_eq!(terminal_safe("key type \x1b[2J"), "key type \\x1b[2J");
        assert_eq!(terminal_safe("bidi \u{202e}"), "bidi \\u{202e}");
    }

    #[test]
    fn keeps_plain_text_and_cuts_long_text() {
        assert_eq!(
            peer_text(b"OpenSSH_9.2p1 Debian", 50),
            "OpenSSH_9.2p1 Debian"
        );
        assert_eq!(peer_text(&[b'a'; 10], 4), "aaaa…");
        assert_eq!(peer_text(b"\xff\xfe", 50), "\u{fffd}\u{fffd}");
    }
}
