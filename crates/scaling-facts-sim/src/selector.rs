//! Kubernetes label selectors, as sent in `labelSelector`: `k=v`, `k==v`, `k!=v`, `k`,
//! `!k`, `k in (a,b)`, `k notin (a,b)`, joined by commas.

use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Eq)]
enum Term {
    Eq(String, String),
    NotEq(String, String),
    Exists(String),
    NotExists(String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
}

/// A parsed selector; the empty selector matches everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selector(Vec<Term>);

impl Selector {
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut terms = Vec::new();
        for raw in split_terms(text) {
            let t = raw.trim();
            if t.is_empty() {
                continue;
            }
            terms.push(parse_term(t).ok_or_else(|| format!("invalid selector term {t:?}"))?);
        }
        Ok(Self(terms))
    }

    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.0.iter().all(|term| match term {
            Term::Eq(k, v) => labels.get(k) == Some(v),
            Term::NotEq(k, v) => labels.get(k) != Some(v),
            Term::Exists(k) => labels.contains_key(k),
            Term::NotExists(k) => !labels.contains_key(k),
            Term::In(k, vs) => labels.get(k).is_some_and(|v| vs.contains(v)),
            Term::NotIn(k, vs) => labels.get(k).is_none_or(|v| !vs.contains(v)),
        })
    }
}

/// Splits on commas outside parentheses.
fn split_terms(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&text[start..]);
    out
}

fn set(values: &str) -> Option<Vec<String>> {
    let inner = values.trim().strip_prefix('(')?.strip_suffix(')')?;
    Some(inner.split(',').map(|v| v.trim().to_owned()).collect())
}

fn parse_term(t: &str) -> Option<Term> {
    if let Some(k) = t.strip_prefix('!') {
        return Some(Term::NotExists(k.trim().to_owned()));
    }
    if let Some((k, v)) = t.split_once("!=") {
        return Some(Term::NotEq(k.trim().to_owned(), v.trim().to_owned()));
    }
    if let Some((k, v)) = t.split_once("==").or_else(|| t.split_once('=')) {
        return Some(Term::Eq(k.trim().to_owned(), v.trim().to_owned()));
    }
    if let Some((k, vs)) = t.split_once(" notin ") {
        return Some(Term::NotIn(k.trim().to_owned(), set(vs)?));
    }
    if let Some((k, vs)) = t.split_once(" in ") {
        return Some(Term::In(k.trim().to_owned(), set(vs)?));
    }
    if t.contains(char::is_whitespace) || t.contains('(') {
        return None;
    }
    Some(Term::Exists(t.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn every_operator() {
        let l = labels(&[("app", "shop"), ("tier", "web")]);
        for (sel, want) in [
            ("", true),
            ("app=shop", true),
            ("app==shop,tier=web", true),
            ("app!=shop", false),
            ("app", true),
            ("!app", false),
            ("!missing", true),
            ("tier in (web, api)", true),
            ("tier notin (web)", false),
            ("missing notin (x)", true),
            ("app=shop,tier in (api)", false),
        ] {
            assert_eq!(Selector::parse(sel).unwrap().matches(&l), want, "{sel}");
        }
        assert!(Selector::parse("a in b").is_err());
    }
}
