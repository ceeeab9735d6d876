//! Field ownership, as the API server keeps it for server-side apply: every write names a
//! field manager, `metadata.managedFields` records which manager set which fields, and an
//! apply that would change a field another manager set is refused with a conflict unless
//! forced.
//!
//! Ownership is tracked for the fields a writer of a Knative Service sets (`spec`, and the
//! labels and annotations); lists are atomic leaves, as they are for the Service's
//! `containers` and `traffic` under strategic merge. What follows the real API server:
//! - an apply owns exactly the fields it sends; a field it sent before and no longer sends
//!   is removed unless another manager owns it too;
//! - an apply that sets a field another manager owns to the value it already has shares
//!   the field rather than conflicting;
//! - a non-apply write (create, replace, merge or JSON patch) takes the fields it changed
//!   from every other manager, without conflicts;
//! - `force` takes the conflicting fields instead of refusing.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

type FieldPath = Vec<String>;

/// Where ownership is tracked.
const TRACKED: [&[&str]; 3] = [
    &["spec"],
    &["metadata", "labels"],
    &["metadata", "annotations"],
];

/// Another manager owns a field an apply would change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    pub manager: String,
    /// As the API server writes it: `.spec.template.metadata.annotations.<key>`.
    pub field: String,
}

#[derive(Debug, Clone, PartialEq)]
struct Entry {
    manager: String,
    operation: &'static str,
    fields: BTreeSet<FieldPath>,
}

fn at<'a>(v: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter().try_fold(v, |v, k| v.as_object()?.get(k))
}

fn set(v: &mut Value, path: &[String], value: Value) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut cur = v;
    for k in parents {
        if !cur.get(k).is_some_and(Value::is_object) {
            cur[k.as_str()] = json!({});
        }
        cur = &mut cur[k.as_str()];
    }
    cur[last.as_str()] = value;
}

fn remove(v: &mut Value, path: &[String]) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut cur = v;
    for k in parents {
        match cur.get_mut(k) {
            Some(next) => cur = next,
            None => return,
        }
    }
    if let Some(m) = cur.as_object_mut() {
        m.remove(last);
    }
}

fn leaves_under(v: &Value, prefix: &mut FieldPath, out: &mut BTreeSet<FieldPath>) {
    match v.as_object() {
        Some(m) if !m.is_empty() => {
            for (k, child) in m {
                prefix.push(k.clone());
                leaves_under(child, prefix, out);
                prefix.pop();
            }
        }
        _ => {
            out.insert(prefix.clone());
        }
    }
}

/// The tracked fields an object sets, as paths to its leaves.
fn leaves(obj: &Value) -> BTreeSet<FieldPath> {
    let mut out = BTreeSet::new();
    for root in TRACKED {
        let mut prefix: FieldPath = root.iter().map(|s| (*s).to_owned()).collect();
        if let Some(v) = at(obj, &prefix) {
            leaves_under(v, &mut prefix, &mut out);
        }
    }
    out
}

/// `fieldsV1`: `{"f:spec": {"f:template": {...}}}`, a leaf as `{}`.
fn to_fields_v1(fields: &BTreeSet<FieldPath>) -> Value {
    let mut root = json!({});
    for path in fields {
        let keyed: FieldPath = path.iter().map(|k| format!("f:{k}")).collect();
        set(&mut root, &keyed, json!({}));
    }
    root
}

fn from_fields_v1(v: &Value) -> BTreeSet<FieldPath> {
    let mut keyed = BTreeSet::new();
    leaves_under(v, &mut Vec::new(), &mut keyed);
    keyed
        .into_iter()
        .filter(|p| !p.is_empty())
        .map(|p| {
            p.into_iter()
                .map(|k| k.strip_prefix("f:").map(str::to_owned).unwrap_or(k))
                .collect()
        })
        .collect()
}

fn entries(obj: &Value) -> Vec<Entry> {
    let Some(list) = obj
        .pointer("/metadata/managedFields")
        .and_then(Value::as_array)
    else {
        return Vec::new();
    };
    list.iter()
        .filter_map(|e| {
            Some(Entry {
                manager: e["manager"].as_str()?.to_owned(),
                operation: match e["operation"].as_str()? {
                    "Apply" => "Apply",
                    _ => "Update",
                },
                fields: from_fields_v1(&e["fieldsV1"]),
            })
        })
        .collect()
}

fn write(obj: &mut Value, entries: &[Entry], api_version: &Value) {
    let list: Vec<Value> = entries
        .iter()
        .filter(|e| !e.fields.is_empty())
        .map(|e| {
            json!({
                "manager": e.manager, "operation": e.operation, "apiVersion": api_version,
                "fieldsType": "FieldsV1", "fieldsV1": to_fields_v1(&e.fields),
            })
        })
        .collect();
    if let Some(meta) = obj["metadata"].as_object_mut() {
        if list.is_empty() {
            meta.remove("managedFields");
        } else {
            meta.insert("managedFields".into(), Value::Array(list));
        }
    }
}

fn entry_mut<'a>(
    entries: &'a mut Vec<Entry>,
    manager: &str,
    operation: &'static str,
) -> &'a mut Entry {
    let i = match entries
        .iter()
        .position(|e| e.manager == manager && e.operation == operation)
    {
        Some(i) => i,
        None => {
            entries.push(Entry {
                manager: manager.to_owned(),
                operation,
                fields: BTreeSet::new(),
            });
            entries.len() - 1
        }
    };
    &mut entries[i]
}

fn dotted(path: &FieldPath) -> String {
    path.iter().fold(String::new(), |s, k| s + "." + k)
}

/// Server-side apply of `config` to `current` by `manager`: the object to store, or the
/// conflicts that refuse it.
pub fn apply(
    current: &Value,
    config: &Value,
    manager: &str,
    force: bool,
) -> Result<Value, Vec<Conflict>> {
    let applied = leaves(config);
    let mut owners = entries(current);
    let mut conflicts = Vec::new();
    for path in &applied {
        let (want, have) = (at(config, path), at(current, path));
        if want == have {
            continue;
        }
        for e in owners.iter_mut().filter(|e| e.manager != manager) {
            if e.fields.contains(path) {
                if force {
                    e.fields.remove(path);
                } else {
                    conflicts.push(Conflict {
                        manager: e.manager.clone(),
                        field: dotted(path),
                    });
                }
            }
        }
    }
    if !conflicts.is_empty() {
        return Err(conflicts);
    }
    let mut next = current.clone();
    let before = entry_mut(&mut owners, manager, "Apply").fields.clone();
    for gone in before.difference(&applied) {
        let shared = owners
            .iter()
            .any(|e| !(e.manager == manager && e.operation == "Apply") && e.fields.contains(gone));
        if !shared {
            remove(&mut next, gone);
        }
    }
    for path in &applied {
        set(
            &mut next,
            path,
            at(config, path).cloned().unwrap_or(Value::Null),
        );
    }
    entry_mut(&mut owners, manager, "Apply").fields = applied;
    write(&mut next, &owners, &current["apiVersion"]);
    Ok(next)
}

/// Records a non-apply write by `manager`: it owns what it changed, and nobody else does.
pub fn update(before: Option<&Value>, after: &mut Value, manager: &str) {
    let empty = Value::Null;
    let before = before.unwrap_or(&empty);
    let mut owners = entries(before);
    let (old, new) = (leaves(before), leaves(after));
    let changed: Vec<&FieldPath> = old
        .union(&new)
        .filter(|p| at(before, p) != at(after, p))
        .collect();
    if changed.is_empty() {
        // Whatever managedFields the writer sent, the server's stand.
        let api_version = after["apiVersion"].clone();
        write(after, &owners, &api_version);
        return;
    }
    for path in &changed {
        for e in owners.iter_mut() {
            e.fields.remove(*path);
        }
    }
    let mine = entry_mut(&mut owners, manager, "Update");
    mine.fields
        .extend(changed.into_iter().filter(|p| new.contains(*p)).cloned());
    let api_version = after["apiVersion"].clone();
    write(after, &owners, &api_version);
}

/// The message of a refused apply, as the API server words it.
pub fn conflict_message(conflicts: &[Conflict], api_version: &str) -> String {
    let mut m = format!(
        "Apply failed with {} conflict{}:",
        conflicts.len(),
        if conflicts.len() == 1 { "" } else { "s" }
    );
    for c in conflicts {
        m.push_str(&format!(
            " conflict with \"{}\" using {api_version}: {}",
            c.manager, c.field
        ));
    }
    m
}

/// The `details.causes` of a refused apply.
pub fn conflict_causes(conflicts: &[Conflict], api_version: &str) -> Value {
    Value::Array(
        conflicts
            .iter()
            .map(|c| {
                let mut m = Map::new();
                m.insert("type".into(), json!("FieldManagerConflict"));
                m.insert(
                    "message".into(),
                    json!(format!(
                        "conflict with \"{}\" using {api_version}",
                        c.manager
                    )),
                );
                m.insert("field".into(), json!(c.field));
                Value::Object(m)
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests;
