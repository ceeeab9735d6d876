//! The keys a watcher has seen, so that a relist can report what was deleted meanwhile:
//! the API server's list shows what exists, not what went away while the watch was down.
//!
//! Each key carries the number of the last list that had it (a streamed key gets the
//! current one), so a list's end finds the keys it did not have without a second set of
//! keys: a watcher of 10,000 revisions keeps 10,000 UIDs and a number each.

use std::collections::HashMap;

#[derive(Debug, Default)]
pub struct Seen {
    keys: HashMap<Box<str>, u64>,
    /// The number of the list underway or last completed.
    list: u64,
    listing: bool,
}

impl Seen {
    /// A list begins.
    pub fn listing(&mut self) {
        self.list += 1;
        self.listing = true;
    }

    /// A key was listed or streamed; an empty key is none.
    pub fn saw(&mut self, key: Option<String>) {
        let Some(k) = key.filter(|k| !k.is_empty()) else {
            return;
        };
        match self.keys.get_mut(k.as_str()) {
            Some(seen) => *seen = self.list,
            None => {
                self.keys.insert(k.into_boxed_str(), self.list);
            }
        }
    }

    pub fn deleted(&mut self, key: &str) {
        self.keys.remove(key);
    }

    /// A list is complete: the keys it did not have are forgotten and passed to `gone`.
    /// Without a list underway, nothing is gone.
    pub fn listed(&mut self, mut gone: impl FnMut(&str)) {
        if !std::mem::take(&mut self.listing) {
            return;
        }
        let list = self.list;
        self.keys.retain(|key, seen| {
            let kept = *seen == list;
            if !kept {
                gone(key);
            }
            kept
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(seen: &mut Seen) -> Vec<String> {
        let mut gone = Vec::new();
        seen.listed(|k| gone.push(k.to_owned()));
        gone.sort();
        gone
    }

    #[test]
    fn a_relist_reports_what_it_no_longer_has() {
        let mut seen = Seen::default();
        seen.listing();
        for k in ["a", "b", "c"] {
            seen.saw(Some(k.into()));
        }
        assert!(listed(&mut seen).is_empty());
        // Streamed after the list, then deleted while the watch was down.
        seen.saw(Some("d".into()));
        seen.listing();
        seen.saw(Some("a".into()));
        seen.saw(Some("e".into()));
        assert_eq!(listed(&mut seen), ["b", "c", "d"]);
        // Forgotten: the next relist without them reports nothing again.
        seen.listing();
        seen.saw(Some("a".into()));
        seen.saw(Some("e".into()));
        assert!(listed(&mut seen).is_empty());
    }

    #[test]
    fn a_deleted_key_is_not_reported_again_and_empty_keys_are_not_kept() {
        let mut seen = Seen::default();
        seen.listing();
        seen.saw(Some("a".into()));
        seen.saw(Some(String::new()));
        seen.saw(None);
        listed(&mut seen);
        seen.deleted("a");
        seen.listing();
        assert!(listed(&mut seen).is_empty());
    }

    #[test]
    fn the_end_of_no_list_reports_nothing() {
        let mut seen = Seen::default();
        seen.saw(Some("a".into()));
        seen.listing();
        listed(&mut seen);
        // A second end without a list between (as after an error): nothing is gone.
        assert!(listed(&mut seen).is_empty());
        assert_eq!(seen.keys.len(), 0, "the first list had no key");
    }
}
