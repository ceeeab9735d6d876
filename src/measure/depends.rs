//! The releases a release calls, as its Knative Service declares them in the annotation
//! `scaling-facts.io/depends-on: <release>,<release>` (ADR 0041, open question 3), and
//! which of them to wake when it starts waking.
//!
//! Pure: the caller says what each release declares, which releases exist and which are
//! at zero; this decides. A
//! declaration is read as written and never trusted: a release naming itself, a release
//! the cluster does not have, and a cycle of declarations are each reported, and none of
//! them makes anything wake twice. A cycle needs no special stop here: a release in it is
//! woken only while it is at zero, so the wake that comes back round finds it waking.

use std::collections::BTreeSet;

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

/// Every cycle of declarations through `start`, each once, as the releases along it
/// from `start` (`a -> b -> a` is `[a, b]`), following `declared` from `start` only: what
/// the rest of the fleet declares is never read. A release naming itself is not listed
/// here; [`Targets::itself`] reports it.
pub fn cycles_through<'a>(
    start: &str,
    declared: impl Fn(&str) -> &'a [String],
) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let mut path = vec![start.to_owned()];
    walk(&declared, &mut path, &mut found);
    found
}

/// Depth-first from the last release of `path`, noting each return to its first.
fn walk<'a>(
    declared: &impl Fn(&str) -> &'a [String],
    path: &mut Vec<String>,
    found: &mut Vec<Vec<String>>,
) {
    let at = path.last().expect("a path starts with its release").clone();
    for next in declared(&at) {
        if *next == at {
            continue;
        }
        if *next == path[0] {
            found.push(path.clone());
        } else if !path.contains(next) {
            path.push(next.clone());
            walk(declared, path, found);
            path.pop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn graph(edges: &[(&str, &str)]) -> BTreeMap<String, Vec<String>> {
        let mut by: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (from, to) in edges {
            by.entry((*from).to_owned())
                .or_default()
                .push((*to).to_owned());
        }
        by
    }

    fn declared<'a>(g: &'a BTreeMap<String, Vec<String>>) -> impl Fn(&str) -> &'a [String] {
        move |r| g.get(r).map_or(&[], Vec::as_slice)
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
        let t = targets(
            "web",
            declared(&g)("web"),
            |r| r != "ghost",
            |r| r == "cart",
        );
        assert_eq!(t.wake, ["cart"]);
        assert_eq!(t.awake, ["pay"]);
        assert_eq!(t.unknown, ["ghost"]);
        assert!(t.itself);
        assert_eq!(targets("cart", &[], |_| true, |_| true), Targets::default());
    }

    #[test]
    fn every_cycle_through_a_release_once() {
        let g = graph(&[
            ("a", "b"),
            ("b", "a"),
            ("b", "c"),
            ("c", "d"),
            ("d", "b"),
            ("e", "e"),
            ("f", "a"),
        ]);
        let through = |r: &str| cycles_through(r, declared(&g));
        assert_eq!(through("a"), vec![vec!["a".to_owned(), "b".to_owned()]]);
        assert_eq!(
            through("b"),
            vec![
                vec!["b".to_owned(), "a".to_owned()],
                vec!["b".to_owned(), "c".to_owned(), "d".to_owned()],
            ]
        );
        assert!(through("e").is_empty(), "naming itself is not a cycle here");
        assert!(
            through("f").is_empty(),
            "f leads into a cycle but is not on one"
        );
        assert!(cycles_through("a", declared(&graph(&[("a", "b"), ("b", "c")]))).is_empty());
    }
}
