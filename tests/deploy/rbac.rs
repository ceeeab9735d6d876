//! The RBAC a rendered overlay grants the service's account, against the requests the
//! service made of an API server (the simulator's audit trail): every request must be
//! permitted (nothing missing) and every grant used (nothing extra).

use std::collections::BTreeSet;

use scaling_facts_sim::audit::Authorized;
use serde_json::Value;

/// One permission: a verb on a resource, cluster-wide (`namespace` None) or in one
/// namespace, on every object (`name` None) or one.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Grant {
    pub verb: String,
    pub group: String,
    pub resource: String,
    pub namespace: Option<String>,
    pub name: Option<String>,
}

impl Grant {
    fn permits(&self, r: &Authorized) -> bool {
        self.verb == r.verb
            && self.group == r.group
            && self.resource == r.resource
            && (self.namespace.is_none() || self.namespace == r.namespace)
            && (self.name.is_none() || self.name == r.name)
    }
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_str().map(str::to_owned))
        .collect()
}

/// What the objects grant the ServiceAccount `namespace/account`: the rules of every role
/// a binding gives it, a ClusterRole's cluster-wide, a Role's in the Role's namespace.
pub fn grants(objects: &[Value], namespace: &str, account: &str) -> BTreeSet<Grant> {
    let mut out = BTreeSet::new();
    for binding in objects {
        let kind = binding["kind"].as_str().unwrap_or("");
        if kind != "ClusterRoleBinding" && kind != "RoleBinding" {
            continue;
        }
        let bound = binding["subjects"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|s| {
                s["kind"] == "ServiceAccount" && s["name"] == account && s["namespace"] == namespace
            });
        if !bound {
            continue;
        }
        let role_kind = binding["roleRef"]["kind"].as_str().unwrap_or("");
        let role_name = &binding["roleRef"]["name"];
        let scope = binding["metadata"]["namespace"].as_str().map(str::to_owned);
        let role = objects.iter().find(|o| {
            o["kind"] == role_kind
                && &o["metadata"]["name"] == role_name
                && (role_kind == "ClusterRole"
                    || o["metadata"]["namespace"].as_str() == scope.as_deref())
        });
        let Some(role) = role else {
            panic!(
                "{kind} {} binds a missing {role_kind} {role_name}",
                binding["metadata"]["name"]
            );
        };
        for rule in role["rules"].as_array().into_iter().flatten() {
            let names = strings(&rule["resourceNames"]);
            let names: Vec<Option<String>> = if names.is_empty() {
                vec![None]
            } else {
                names.into_iter().map(Some).collect()
            };
            for verb in strings(&rule["verbs"]) {
                for group in strings(&rule["apiGroups"]) {
                    for resource in strings(&rule["resources"]) {
                        for name in &names {
                            out.insert(Grant {
                                verb: verb.clone(),
                                group: group.clone(),
                                resource: resource.clone(),
                                // A RoleBinding of a ClusterRole grants it in its namespace.
                                namespace: if kind == "RoleBinding" {
                                    scope.clone()
                                } else {
                                    None
                                },
                                name: name.clone(),
                            });
                        }
                    }
                }
            }
        }
    }
    out
}

/// What the requests need and the grants lack, and what the grants give that no request
/// used. Both empty: the RBAC is exactly what the service does.
pub fn compare(
    grants: &BTreeSet<Grant>,
    requests: &BTreeSet<Authorized>,
) -> (Vec<Authorized>, Vec<Grant>) {
    let missing = requests
        .iter()
        .filter(|r| !grants.iter().any(|g| g.permits(r)))
        .cloned()
        .collect();
    let extra = grants
        .iter()
        .filter(|g| !requests.iter().any(|r| g.permits(r)))
        .cloned()
        .collect();
    (missing, extra)
}
