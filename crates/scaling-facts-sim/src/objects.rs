//! The simulated API server's storage: objects by kind, namespace and name, one global
//! resourceVersion, and a bounded history of watch events so that old versions expire
//! exactly as they do in etcd after compaction.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use tokio::sync::broadcast;

use super::resources::Kind;
use super::selector::Selector;

/// A Kubernetes timestamp: RFC 3339 with whole seconds, as the API server writes it.
pub fn k8s_time(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    Added,
    Modified,
    Deleted,
}

impl EventType {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Added => "ADDED",
            Self::Modified => "MODIFIED",
            Self::Deleted => "DELETED",
        }
    }
}

/// One change, as kept in the history and sent to watches.
#[derive(Debug)]
pub struct StoredEvent {
    pub rv: u64,
    pub kind: Kind,
    pub namespace: String,
    pub event: EventType,
    pub object: Arc<Value>,
}

/// Why a storage operation failed, as the API server reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ObjectError {
    NotFound,
    AlreadyExists,
    /// The requested resourceVersion was compacted away.
    Gone {
        oldest: u64,
    },
    Invalid(String),
}

type Key = (Kind, String, String);

/// Where a watch resumes: the events it missed, and a receiver for the rest.
pub type Resume = (Vec<Arc<StoredEvent>>, broadcast::Receiver<Arc<StoredEvent>>);

pub struct Objects {
    rv: u64,
    objects: BTreeMap<Key, Arc<Value>>,
    history: VecDeque<Arc<StoredEvent>>,
    history_cap: usize,
    /// Watches may resume from any version at or above this one.
    floor: u64,
    tx: broadcast::Sender<Arc<StoredEvent>>,
}

pub fn labels_of(obj: &Value) -> BTreeMap<String, String> {
    obj.pointer("/metadata/labels")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                .collect()
        })
        .unwrap_or_default()
}

fn name_of(obj: &Value) -> Option<&str> {
    obj.pointer("/metadata/name").and_then(Value::as_str)
}

impl Objects {
    pub fn new(history_cap: usize) -> Self {
        let (tx, _) = broadcast::channel(16_384);
        Self {
            rv: 1,
            objects: BTreeMap::new(),
            history: VecDeque::new(),
            history_cap,
            floor: 1,
            tx,
        }
    }

    pub fn resource_version(&self) -> u64 {
        self.rv
    }

    fn record(&mut self, kind: Kind, namespace: &str, event: EventType, object: Arc<Value>) {
        let ev = Arc::new(StoredEvent {
            rv: self.rv,
            kind,
            namespace: namespace.to_owned(),
            event,
            object,
        });
        self.history.push_back(ev.clone());
        while self.history.len() > self.history_cap {
            if let Some(old) = self.history.pop_front() {
                self.floor = old.rv;
            }
        }
        let _ = self.tx.send(ev);
    }

    fn stamp(&mut self, obj: &mut Value) {
        self.rv += 1;
        obj["metadata"]["resourceVersion"] = json!(self.rv.to_string());
    }

    pub fn create(
        &mut self,
        kind: Kind,
        namespace: &str,
        mut obj: Value,
    ) -> Result<Arc<Value>, ObjectError> {
        let name = name_of(&obj)
            .ok_or_else(|| ObjectError::Invalid("metadata.name is required".into()))?
            .to_owned();
        let key = (kind, namespace.to_owned(), name);
        if self.objects.contains_key(&key) {
            return Err(ObjectError::AlreadyExists);
        }
        obj["apiVersion"] = json!(kind.api_version());
        obj["kind"] = json!(kind.kind);
        let meta = obj["metadata"]
            .as_object_mut()
            .expect("metadata is an object");
        if kind.namespaced {
            meta.insert("namespace".into(), json!(namespace));
        } else {
            meta.remove("namespace");
        }
        meta.insert("uid".into(), json!(uuid::Uuid::new_v4().to_string()));
        meta.insert("creationTimestamp".into(), json!(k8s_time(Utc::now())));
        meta.insert("generation".into(), json!(1));
        // A real API server ignores `status` in a create when status is a subresource:
        // the first event of every such object has none (docs/knative.md, "What a watcher must tolerate").
        if kind.status_subresource
            && let Some(o) = obj.as_object_mut()
        {
            o.remove("status");
        }
        self.stamp(&mut obj);
        let obj = Arc::new(obj);
        self.objects.insert(key, obj.clone());
        self.record(kind, namespace, EventType::Added, obj.clone());
        Ok(obj)
    }

    /// Creates an object, then writes its status in a second write, as a controller that
    /// creates an object and reconciles it does.
    pub fn create_with_status(
        &mut self,
        kind: Kind,
        namespace: &str,
        mut obj: Value,
    ) -> Result<Arc<Value>, ObjectError> {
        let status = obj.as_object_mut().and_then(|o| o.remove("status"));
        let created = self.create(kind, namespace, obj)?;
        let Some(status) = status else {
            return Ok(created);
        };
        let name = name_of(&created).unwrap_or_default().to_owned();
        self.update(kind, namespace, &name, |o| o["status"] = status)
    }

    pub fn get(&self, kind: Kind, namespace: &str, name: &str) -> Option<Arc<Value>> {
        self.objects
            .get(&(kind, namespace.to_owned(), name.to_owned()))
            .cloned()
    }

    /// Changes an object with `f`. Nothing is written (and no event sent) when `f` leaves
    /// it unchanged; a changed `spec` increments `metadata.generation`.
    pub fn update(
        &mut self,
        kind: Kind,
        namespace: &str,
        name: &str,
        f: impl FnOnce(&mut Value),
    ) -> Result<Arc<Value>, ObjectError> {
        let key = (kind, namespace.to_owned(), name.to_owned());
        let old = self.objects.get(&key).ok_or(ObjectError::NotFound)?.clone();
        let mut new = (*old).clone();
        f(&mut new);
        // Identity fields are the server's, whatever the writer sent.
        for field in [
            "uid",
            "creationTimestamp",
            "name",
            "namespace",
            "resourceVersion",
            "generation",
        ] {
            match old["metadata"].get(field) {
                Some(v) => new["metadata"][field] = v.clone(),
                None => {
                    if let Some(m) = new["metadata"].as_object_mut() {
                        m.remove(field);
                    }
                }
            }
        }
        new["apiVersion"] = old["apiVersion"].clone();
        new["kind"] = old["kind"].clone();
        if new == *old {
            return Ok(old);
        }
        if new.get("spec") != old.get("spec") {
            let generation = old["metadata"]["generation"].as_i64().unwrap_or(1) + 1;
            new["metadata"]["generation"] = json!(generation);
        }
        self.stamp(&mut new);
        let new = Arc::new(new);
        self.objects.insert(key, new.clone());
        self.record(kind, namespace, EventType::Modified, new.clone());
        Ok(new)
    }

    pub fn delete(
        &mut self,
        kind: Kind,
        namespace: &str,
        name: &str,
    ) -> Result<Arc<Value>, ObjectError> {
        let key = (kind, namespace.to_owned(), name.to_owned());
        let old = self.objects.remove(&key).ok_or(ObjectError::NotFound)?;
        let mut gone = (*old).clone();
        self.stamp(&mut gone);
        let gone = Arc::new(gone);
        self.record(kind, namespace, EventType::Deleted, gone.clone());
        Ok(gone)
    }

    /// Objects of `kind` (in `namespace`, or all), matching `selector`, sorted by namespace
    /// and name, starting after `after` (for `continue`).
    pub fn list(
        &self,
        kind: Kind,
        namespace: Option<&str>,
        selector: &Selector,
        after: Option<(&str, &str)>,
    ) -> impl Iterator<Item = &Arc<Value>> {
        let start = match after {
            Some((ns, name)) => std::ops::Bound::Excluded((kind, ns.to_owned(), name.to_owned())),
            None => std::ops::Bound::Included((kind, String::new(), String::new())),
        };
        self.objects
            .range((start, std::ops::Bound::Unbounded))
            .take_while(move |((k, _, _), _)| *k == kind)
            .filter(move |((_, ns, _), _)| namespace.is_none_or(|want| want == ns))
            .filter(move |((_, ns, name), obj)| selector.matches_object(&labels_of(obj), name, ns))
            .map(|(_, obj)| obj)
    }

    pub fn count(&self, kind: Kind) -> usize {
        self.objects.keys().filter(|(k, _, _)| *k == kind).count()
    }

    /// The events after `rv` and a receiver for the ones to come, taken together so that
    /// none falls between. `Gone` when `rv` is older than the history reaches.
    pub fn watch_from(&self, rv: u64) -> Result<Resume, ObjectError> {
        if rv < self.floor {
            return Err(ObjectError::Gone { oldest: self.floor });
        }
        let past = self.history.iter().filter(|e| e.rv > rv).cloned().collect();
        Ok((past, self.tx.subscribe()))
    }

    /// A receiver for changes from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<StoredEvent>> {
        self.tx.subscribe()
    }

    /// An API server restart: the history is lost and versions jump, so every watch
    /// must relist.
    pub fn restart(&mut self, jump: u64) {
        self.history.clear();
        self.rv += jump;
        self.floor = self.rv;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::POD;

    fn pod(name: &str, app: &str) -> Value {
        json!({"metadata": {"name": name, "labels": {"app": app}}, "spec": {}})
    }

    #[test]
    fn versions_history_and_compaction() {
        let mut o = Objects::new(3);
        let a = o.create(POD, "ns", pod("a", "x")).unwrap();
        assert_eq!(a["metadata"]["resourceVersion"], "2");
        assert_eq!(
            o.create(POD, "ns", pod("a", "x")).unwrap_err(),
            ObjectError::AlreadyExists
        );
        o.create(POD, "ns", pod("b", "y")).unwrap();
        // A no-op update writes nothing.
        o.update(POD, "ns", "a", |_| {}).unwrap();
        assert_eq!(o.resource_version(), 3);
        o.update(POD, "ns", "a", |p| p["spec"]["x"] = json!(1))
            .unwrap();
        assert_eq!(o.get(POD, "ns", "a").unwrap()["metadata"]["generation"], 2);
        o.delete(POD, "ns", "b").unwrap();
        let sel = Selector::parse("app=x").unwrap();
        assert_eq!(o.list(POD, Some("ns"), &sel, None).count(), 1);
        // History holds 3 events (rv 3, 4, 5): watching from 1 is too old.
        assert!(matches!(o.watch_from(1), Err(ObjectError::Gone { .. })));
        let (past, _) = o.watch_from(3).unwrap();
        assert_eq!(past.iter().map(|e| e.rv).collect::<Vec<_>>(), vec![4, 5]);
        o.restart(100);
        assert!(o.watch_from(5).is_err());
        assert!(o.watch_from(o.resource_version()).unwrap().0.is_empty());
    }
}
