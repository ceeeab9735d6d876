//! The releases a release calls, as its Knative Service declares them in the annotation
//! `scaling-facts.io/depends-on: <release>,<release>` (ADR 0041, open question 3), and
//! which of them to wake when it starts waking.
//!
//! Pure: the caller says which releases exist and which are at zero; this decides. A
//! declaration is read as written and never trusted: a release naming itself, a release
//! the cluster does not have, and a cycle of declarations are each reported, and none of
//! them makes anything wake twice. A cycle needs no special stop here: a release in it is
//! woken only while it is at zero, so the wake that comes back round finds it waking.

use std::collections::{BTreeMap, BTreeSet};

/// The annotation on a Knative Service that lists the releases it calls.
pub const ANNOTATION: &str = "scaling-facts.io/depends-on";

/// A release's declared dependencies, parsed from the annotation's value: comma-separated
/// release keys, spaces around them ignored, duplicates kept once, in the written order.
pub fn parse(value: &str) -> Vec<String> {
    let mut seen = BTreeSet::new();
    value
        .split(',')
        .map(str::trim)
        .filter(|k| !k.is_empty() && seen.insert(*k))
        .map(str::to_owned)
        .collect()
}

/// What a release's wake asks of its dependencies.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Targets {
    /// Dependencies at zero: one request each wakes them.
    pub wake: Vec<String>,
    /// Dependencies already up or waking: nothing to do.
    pub awake: Vec<String>,
    /// Declared, but no release has this key.
    pub unknown: Vec<String>,
    /// The release names itself.
    pub itself: bool,
}

/// What waking `release`, which declares `declared`, asks for, given which releases exist
/// and which are at zero.
pub fn targets(
    release: &str,
    declared: &[String],
    exists: impl Fn(&str) -> bool,
    at_zero: impl Fn(&str) -> bool,
) -> Targets {
    let mut t = Targets::default();
    for dep in declared {
        if dep == release {
            t.itself = true;
        } else if !exists(dep) {
            t.unknown.push(dep.clone());
        } else if at_zero(dep) {
            t.wake.push(dep.clone());
        } else {
            t.awake.push(dep.clone());
        }
    }
    t
}

/// Every release's declarations.
#[derive(Debug, Default, Clone)]
pub struct Graph {
    declared: BTreeMap<String, Vec<String>>,
}

impl Graph {
    /// Sets (or, with an empty list, clears) what `release` declares.
    pub fn declare(&mut self, release: &str, depends_on: Vec<String>) {
        if depends_on.is_empty() {
            self.declared.remove(release);
        } else {
            self.declared.insert(release.to_owned(), depends_on);
        }
    }

    pub fn forget(&mut self, release: &str) {
        self.declared.remove(release);
    }

    pub fn declared(&self, release: &str) -> &[String] {
        self.declared.get(release).map_or(&[], Vec::as_slice)
    }

    /// What waking `release` asks for, given which releases exist and which are at zero.
    pub fn targets(
        &self,
        release: &str,
        exists: impl Fn(&str) -> bool,
        at_zero: impl Fn(&str) -> bool,
    ) -> Targets {
        targets(release, self.declared(release), exists, at_zero)
    }

    /// Every cycle of declarations, each once, as the releases along it starting from its
    /// smallest key (`a -> b -> a` is `[a, b]`). A release naming itself is not listed
    /// here; [`Targets::itself`] reports it.
    pub fn cycles(&self) -> Vec<Vec<String>> {
        let mut found = BTreeSet::new();
        for start in self.declared.keys() {
            let mut path = vec![start.clone()];
            self.walk(start, &mut path, &mut found);
        }
        found.into_iter().collect()
    }

    /// Depth-first from the last release of `path`, noting each return to its first.
    /// Only paths whose first release is their smallest are followed to the end, so each
    /// cycle is found from one place.
    fn walk(&self, at: &str, path: &mut Vec<String>, found: &mut BTreeSet<Vec<String>>) {
        for next in self.declared(at) {
            if next == at {
                continue;
            }
            if *next == path[0] {
                found.insert(path.clone());
            } else if next > &path[0] && !path.contains(next) {
                path.push(next.clone());
                self.walk(next, path, found);
                path.pop();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(edges: &[(&str, &str)]) -> Graph {
        let mut g = Graph::default();
        let mut by: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        for (from, to) in edges {
            by.entry(from).or_default().push((*to).to_owned());
        }
        for (from, to) in by {
            g.declare(from, to);
        }
        g
    }

    #[test]
    fn the_annotation_is_a_list_of_keys() {
        assert_eq!(
            parse(" cart.prod, pay.prod ,,cart.prod"),
            ["cart.prod", "pay.prod"]
        );
        assert!(parse("").is_empty());
        assert!(parse(" , ").is_empty());
    }

    #[test]
    fn only_dependencies_at_zero_are_woken() {
        let g = graph(&[
            ("web", "cart"),
            ("web", "pay"),
            ("web", "ghost"),
            ("web", "web"),
        ]);
        let t = g.targets("web", |r| r != "ghost", |r| r == "cart");
        assert_eq!(t.wake, ["cart"]);
        assert_eq!(t.awake, ["pay"]);
        assert_eq!(t.unknown, ["ghost"]);
        assert!(t.itself);
        assert_eq!(g.targets("cart", |_| true, |_| true), Targets::default());
    }

    #[test]
    fn every_cycle_once() {
        let g = graph(&[
            ("a", "b"),
            ("b", "a"),
            ("b", "c"),
            ("c", "d"),
            ("d", "b"),
            ("e", "e"),
            ("f", "a"),
        ]);
        assert_eq!(
            g.cycles(),
            vec![
                vec!["a".to_owned(), "b".to_owned()],
                vec!["b".to_owned(), "c".to_owned(), "d".to_owned()],
            ]
        );
        assert!(graph(&[("a", "b"), ("b", "c")]).cycles().is_empty());
    }

    #[test]
    fn a_cleared_declaration_is_gone() {
        let mut g = graph(&[("a", "b")]);
        g.declare("a", Vec::new());
        assert!(g.declared("a").is_empty());
        g.declare("a", vec!["b".into()]);
        g.forget("a");
        assert!(g.declared("a").is_empty());
    }
}
