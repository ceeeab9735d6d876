//! Kubernetes label selectors, as sent in `labelSelector`: `k=v`, `k==v`, `k!=v`, `k`,
//! `!k`, `k in (a,b)`, `k notin (a,b)`, joined by commas; and the field selectors every
//! kind supports, as sent in `fieldSelector`: `metadata.name` and `metadata.namespace`
//! with `=`, `==` or `!=`. Any other field is refused, as the API server refuses a field
//! label it does not know. (A watch narrowed to one object by name is what RBAC's
//! `resourceNames` allows for `list` and `watch`.)

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
pub struct Selector(Vec<Term>, Vec<Term>);

/// The fields a field selector may name, for every kind.
const FIELDS: [&str; 2] = ["metadata.name", "metadata.namespace"];

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
        Ok(Self(terms, Vec::new()))
    }

    /// Adds the terms of a `fieldSelector`.
    pub fn with_fields(mut self, text: &str) -> Result<Self, String> {
        for raw in text.split(',') {
            let t = raw.trim();
            if t.is_empty() {
                continue;
            }
            let term = parse_term(t).ok_or_else(|| format!("invalid field selector {t:?}"))?;
            let field = match &term {
                Term::Eq(k, _) | Term::NotEq(k, _) => k.as_str(),
                _ => return Err(format!("invalid field selector {t:?}: only =, == and !=")),
            };
            if !FIELDS.contains(&field) {
                return Err(format!("field label not supported: {field}"));
            }
            self.1.push(term);
        }
        Ok(self)
    }

    /// The one name a field selector narrows to (`metadata.name=<name>`), as an
    /// authorizer reads it.
    pub fn selected_name(&self) -> Option<&str> {
        self.1.iter().find_map(|term| match term {
            Term::Eq(k, v) if k == "metadata.name" => Some(v.as_str()),
            _ => None,
        })
    }

    /// Whether an object, with its labels and its name and namespace, is selected.
    pub fn matches_object(
        &self,
        labels: &BTreeMap<String, String>,
        name: &str,
        namespace: &str,
    ) -> bool {
        self.matches(labels)
            && self.1.iter().all(|term| {
                let value = |k: &str| {
                    if k == "metadata.name" {
                        name
                    } else {
                        namespace
                    }
                };
                match term {
                    Term::Eq(k, v) => value(k) == v,
                    Term::NotEq(k, v) => value(k) != v,
                    _ => false,
                }
            })
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

    #[test]
    fn fields_by_name_and_namespace_only() {
        let l = labels(&[("app", "shop")]);
        let sel = |f: &str| Selector::parse("app=shop").unwrap().with_fields(f);
        for (f, want) in [
            ("", true),
            ("metadata.name=config-autoscaler", true),
            (
                "metadata.name==config-autoscaler,metadata.namespace=knative-serving",
                true,
            ),
            ("metadata.name=config-deployment", false),
            ("metadata.namespace!=knative-serving", false),
        ] {
            assert_eq!(
                sel(f)
                    .unwrap()
                    .matches_object(&l, "config-autoscaler", "knative-serving"),
                want,
                "{f}"
            );
        }
        let named = sel("metadata.namespace=k,metadata.name==config-autoscaler").unwrap();
        assert_eq!(named.selected_name(), Some("config-autoscaler"));
        assert_eq!(sel("metadata.name!=x").unwrap().selected_name(), None);
        assert!(sel("spec.nodeName=a").is_err());
        assert!(sel("metadata.name").is_err());
    }
}
