//! Lossless line parser.
//!
//! Every line keeps its exact bytes (indentation, keyword spelling, `=` or blanks, quotes,
//! trailing comment, line ending), so rendering an unedited document gives back the input
//! byte for byte and an edit touches only the line it changes. Tokenising follows OpenSSH's
//! own rules (`strdelim` for the keyword, `argv_split` for the arguments) so that what we read
//! is what sshd and ssh read.

use crate::directive::Directive;
use std::fmt;

/// One physical line, including its line ending (absent only on a final unterminated line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    pub raw: String,
    pub kind: LineKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineKind {
    /// Empty or whitespace only.
    Blank,
    /// A `#` comment line.
    Comment,
    Directive(Directive),
    /// A line OpenSSH would refuse (unbalanced quotes, keyword without argument); kept verbatim
    /// so nothing is lost, reported so the user hears about it before sshd does.
    Invalid(String),
}

/// A parsed file: its lines in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Document {
    pub lines: Vec<Line>,
}

impl Document {
    pub fn parse(text: &str) -> Self {
        let lines = text.split_inclusive('\n').map(parse_line).collect();
        Self { lines }
    }

    /// The document as text: the original bytes, with edited lines replaced.
    pub fn render(&self) -> String {
        self.lines.iter().map(|l| l.raw.as_str()).collect()
    }

    /// The directives in file order with their 0-based line index.
    pub fn directives(&self) -> impl Iterator<Item = (usize, &Directive)> {
        self.lines
            .iter()
            .enumerate()
            .filter_map(|(i, l)| match &l.kind {
                LineKind::Directive(d) => Some((i, d)),
                _ => None,
            })
    }

    /// Lines OpenSSH would reject, with their 0-based index and why.
    pub fn invalid_lines(&self) -> impl Iterator<Item = (usize, &str)> {
        self.lines
            .iter()
            .enumerate()
            .filter_map(|(i, l)| match &l.kind {
                LineKind::Invalid(why) => Some((i, why.as_str())),
                _ => None,
            })
    }
}

impl fmt::Display for Document {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render())
    }
}

fn is_blank(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n' | '\x0c')
}

/// Parses one physical line (with or without its line ending).
pub fn parse_line(raw: &str) -> Line {
    let kind = classify(raw);
    Line {
        raw: raw.to_string(),
        kind,
    }
}

fn classify(raw: &str) -> LineKind {
    // OpenSSH strips trailing whitespace (and form feeds) before anything else.
    let content = raw.trim_end_matches(is_blank);
    let indent_end = content.len() - content.trim_start_matches(is_blank).len();
    let rest = &content[indent_end..];
    if rest.is_empty() {
        return LineKind::Blank;
    }
    if rest.starts_with('#') {
        return LineKind::Comment;
    }
    // The keyword ends at a blank or at `=`; then blanks, at most one `=`, blanks.
    let kw_len = rest
        .find(|c: char| is_blank(c) || c == '=')
        .unwrap_or(rest.len());
    let keyword = &rest[..kw_len];
    let after_kw = &rest[kw_len..];
    let mut sep_len = after_kw.len() - after_kw.trim_start_matches(is_blank).len();
    if after_kw[sep_len..].starts_with('=') {
        sep_len += 1;
        let after_eq = &after_kw[sep_len..];
        sep_len += after_eq.len() - after_eq.trim_start_matches(is_blank).len();
    }
    let value_start = indent_end + kw_len + sep_len;
    if keyword.is_empty() {
        return LineKind::Invalid("a line may not start with '='".into());
    }
    let value = &content[value_start..];
    if value.is_empty() {
        return LineKind::Invalid(format!("no argument after keyword \"{keyword}\""));
    }
    match split_args(value) {
        Ok((args, used)) => LineKind::Directive(Directive {
            keyword: keyword.to_string(),
            args,
            keyword_start: indent_end,
            value_start,
            value_end: value_start + used,
        }),
        Err(e) => LineKind::Invalid(e),
    }
}

/// OpenSSH's `argv_split` with comment termination: blanks separate arguments, single or
/// double quotes group, a backslash escapes a quote, a backslash or (outside quotes) a space,
/// and an unquoted `#` at the start of an argument ends the line.
/// Returns the arguments and how many bytes of `s` they span (the rest is a trailing comment
/// or blanks).
pub fn split_args(s: &str) -> Result<(Vec<String>, usize), String> {
    let bytes: Vec<char> = s.chars().collect();
    let mut args = Vec::new();
    let mut i = 0;
    let mut end_byte = 0;
    let byte_at = |idx: usize| -> usize { bytes[..idx].iter().map(|c| c.len_utf8()).sum() };
    while i < bytes.len() {
        while i < bytes.len() && (bytes[i] == ' ' || bytes[i] == '\t') {
            i += 1;
        }
        if i >= bytes.len() || bytes[i] == '#' {
            break;
        }
        let mut arg = String::new();
        let mut quote: Option<char> = None;
        while i < bytes.len() {
            let c = bytes[i];
            if c == '\\' {
                let next = bytes.get(i + 1).copied();
                match next {
                    Some(n @ ('\'' | '"' | '\\')) => {
                        arg.push(n);
                        i += 2;
                        continue;
                    }
                    Some(' ') if quote.is_none() => {
                        arg.push(' ');
                        i += 2;
                        continue;
                    }
                    _ => arg.push(c),
                }
            } else if quote.is_none() && (c == ' ' || c == '\t') {
                break;
            } else if quote.is_none() && (c == '"' || c == '\'') {
                quote = Some(c);
            } else if quote == Some(c) {
                quote = None;
            } else {
                arg.push(c);
            }
            i += 1;
        }
        if quote.is_some() {
            return Err("unterminated quote".into());
        }
        args.push(arg);
        end_byte = byte_at(i);
    }
    Ok((args, end_byte))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn directive(s: &str) -> Directive {
        match parse_line(s).kind {
            LineKind::Directive(d) => d,
            other => panic!("{s:?} parsed as {other:?}"),
        }
    }

    #[test]
    fn keyword_forms() {
        for line in [
            "Ciphers aes128-ctr\n",
            "  ciphers=aes128-ctr",
            "CIPHERS = aes128-ctr\r\n",
            "\tCiphers\t\"aes128-ctr\" # trailing\n",
            "Ciphers= 'aes128-ctr'",
        ] {
            let d = directive(line);
            assert_eq!(d.key(), "ciphers", "{line:?}");
            assert_eq!(d.args, ["aes128-ctr"], "{line:?}");
        }
    }

    #[test]
    fn quoting_and_comments() {
        let d = directive("Banner \"/etc/my banner\" # note\n");
        assert_eq!(d.args, ["/etc/my banner"]);
        let d = directive(r"AuthorizedKeysFile a\ b 'c d' e#f");
        assert_eq!(d.args, ["a b", "c d", "e#f"]);
        assert!(matches!(parse_line("  # x\n").kind, LineKind::Comment));
        assert!(matches!(parse_line(" \t\r\n").kind, LineKind::Blank));
        assert!(matches!(
            parse_line("Ciphers \"aes\n").kind,
            LineKind::Invalid(_)
        ));
        assert!(matches!(parse_line("Ciphers\n").kind, LineKind::Invalid(_)));
    }

    #[test]
    fn round_trip_keeps_every_byte() {
        let text = "# c\r\n\nPort 22\n  Match User x\n\tX11Forwarding no # why\nno newline at end";
        assert_eq!(Document::parse(text).render(), text);
    }
}
