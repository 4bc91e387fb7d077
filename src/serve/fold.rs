//! A list for one log line that a peer cannot grow without bound: the first few distinct
//! entries in the order they came, each with how often it came, and a count of the rest. The
//! commands a connection ran and the login attempts it had refused are logged this way.

#[derive(Debug)]
pub struct Fold {
    cap: usize,
    first: Vec<(String, usize)>,
    more: usize,
}

impl Fold {
    /// Keeps up to `cap` distinct entries.
    pub const fn new(cap: usize) -> Self {
        Self {
            cap,
            first: Vec::new(),
            more: 0,
        }
    }

    pub fn push(&mut self, entry: String) {
        if let Some((_, n)) = self.first.iter_mut().find(|(e, _)| *e == entry) {
            *n += 1;
        } else if self.first.len() < self.cap {
            self.first.push((entry, 1));
        } else {
            self.more += 1;
        }
    }

    /// Entries pushed, repeats included.
    pub fn total(&self) -> usize {
        self.first.iter().map(|(_, n)| n).sum::<usize>() + self.more
    }

    /// `a; b (3 times); and 2 more`.
    pub fn text(&self) -> String {
        let mut parts: Vec<String> = self
            .first
            .iter()
            .map(|(e, n)| match n {
                1 => e.clone(),
                n => format!("{e} ({n} times)"),
            })
            .collect();
        if self.more > 0 {
            parts.push(format!("and {} more", self.more));
        }
        parts.join("; ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_first_distinct_entries_and_counts_the_rest() {
        let mut f = Fold::new(8);
        f.push("\"sink\" exit 0".into());
        assert_eq!(f.text(), "\"sink\" exit 0");
        for i in 0..10_000 {
            f.push(format!("\"source {i}\" exit 0"));
        }
        assert_eq!(f.first.len(), 8);
        assert_eq!(f.total(), 10_001);
        assert!(f.text().ends_with("; and 9993 more"), "{}", f.text());
        assert!(f.text().starts_with("\"sink\" exit 0; \"source 0\" exit 0"));
    }

    #[test]
    fn repeats_are_counted_not_listed() {
        let mut f = Fold::new(2);
        for e in ["a", "b", "a", "c", "a", "d"] {
            f.push(e.into());
        }
        assert_eq!(f.text(), "a (3 times); b; and 2 more");
        assert_eq!(f.total(), 6);
    }
}
