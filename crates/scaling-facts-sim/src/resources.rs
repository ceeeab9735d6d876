//! The resource kinds the simulated API server knows, and how their URLs look.

/// One served resource type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Kind {
    /// API group; empty for the core group.
    pub group: &'static str,
    pub version: &'static str,
    /// URL name, lower-case plural.
    pub plural: &'static str,
    pub kind: &'static str,
    pub namespaced: bool,
    /// Whether `status` is a subresource: writes to the main resource leave it alone.
    pub status_subresource: bool,
}

impl Kind {
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.to_owned()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }
}

const fn kind(
    group: &'static str,
    version: &'static str,
    plural: &'static str,
    kind: &'static str,
    status_subresource: bool,
) -> Kind {
    Kind {
        group,
        version,
        plural,
        kind,
        namespaced: true,
        status_subresource,
    }
}

pub const SERVICE: Kind = kind("serving.knative.dev", "v1", "services", "Service", true);
pub const CONFIGURATION: Kind = kind(
    "serving.knative.dev",
    "v1",
    "configurations",
    "Configuration",
    true,
);
pub const ROUTE: Kind = kind("serving.knative.dev", "v1", "routes", "Route", true);
pub const REVISION: Kind = kind("serving.knative.dev", "v1", "revisions", "Revision", true);
pub const POD_AUTOSCALER: Kind = kind(
    "autoscaling.internal.knative.dev",
    "v1alpha1",
    "podautoscalers",
    "PodAutoscaler",
    true,
);
pub const DEPLOYMENT: Kind = kind("apps", "v1", "deployments", "Deployment", true);
pub const POD: Kind = kind("", "v1", "pods", "Pod", true);
pub const CONFIG_MAP: Kind = kind("", "v1", "configmaps", "ConfigMap", false);
pub const LEASE: Kind = kind("coordination.k8s.io", "v1", "leases", "Lease", false);

pub const ALL: [Kind; 9] = [
    SERVICE,
    CONFIGURATION,
    ROUTE,
    REVISION,
    POD_AUTOSCALER,
    DEPLOYMENT,
    POD,
    CONFIG_MAP,
    LEASE,
];

/// The kind served at `group`/`version`/`plural`.
pub fn lookup(group: &str, version: &str, plural: &str) -> Option<Kind> {
    ALL.iter()
        .copied()
        .find(|k| k.group == group && k.version == version && k.plural == plural)
}
