//! The service's one write to the cluster: the editor's settings, applied to a Knative
//! Service's revision template by server-side apply under the field manager
//! [`FIELD_MANAGER`].
//!
//! Server-side apply, not a merge patch, because it is the API server's own record of who
//! set what: the service owns exactly the two annotations it sends, never forces, and a
//! field another manager changed since (a hand edit, a GitOps controller) comes back as a
//! conflict naming that manager instead of being overwritten. Applying the same values
//! again changes nothing, so a retry cannot make Knative cut another revision.

use kube::api::{Api, Patch, PatchParams};
use kube::core::Status;
use kube::{Client, Resource};
use serde_json::json;

use super::types::KnativeService;
use crate::measure::observe::TemplateScaling;

/// The field manager of every apply.
pub const FIELD_MANAGER: &str = "scaling-facts";

/// The two annotations to apply, as text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateSettings {
    pub min_scale: String,
    pub retention: String,
}

impl TemplateSettings {
    /// `min_instances` replicas kept, and a pod retention of `retention_seconds`.
    pub fn new(min_instances: u32, retention_seconds: u32) -> Self {
        Self {
            min_scale: min_instances.to_string(),
            retention: format!("{retention_seconds}s"),
        }
    }

    /// Whether the Service's template says what was applied, to the letter.
    pub fn matches(&self, template: &TemplateScaling) -> bool {
        template.min_scale.as_deref() == Some(self.min_scale.as_str())
            && template.retention.as_deref() == Some(self.retention.as_str())
    }
}

/// Another field manager set a field the apply would change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldConflict {
    pub manager: String,
    pub field: String,
}

#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    #[error("another field manager owns what the apply would change: {message}")]
    Conflict {
        message: String,
        conflicts: Vec<FieldConflict>,
    },
    #[error("the Knative Service is not in the cluster")]
    NotFound,
    /// Refused for a reason a retry will not change (forbidden, invalid).
    #[error("the API server refused the apply ({code} {reason}): {message}")]
    Refused {
        code: u16,
        reason: String,
        message: String,
    },
    /// The API server could not be reached or failed: worth retrying.
    #[error("the API server could not take the apply")]
    Unavailable(#[source] kube::Error),
}

impl ApplyError {
    /// Whether the same apply may succeed later without anyone changing anything.
    pub fn is_transient(&self) -> bool {
        matches!(self, Self::Unavailable(_))
    }
}

fn from_status(s: &Status) -> ApplyError {
    match s.code {
        404 => ApplyError::NotFound,
        409 if s.reason == "Conflict" => ApplyError::Conflict {
            message: s.message.clone(),
            conflicts: s
                .details
                .iter()
                .flat_map(|d| &d.causes)
                .filter(|c| c.reason == "FieldManagerConflict" || !c.field.is_empty())
                .map(|c| FieldConflict {
                    manager: manager_of(&c.message),
                    field: c.field.clone(),
                })
                .collect(),
        },
        _ => ApplyError::Refused {
            code: s.code,
            reason: s.reason.clone(),
            message: s.message.clone(),
        },
    }
}

/// The manager a conflict cause names: `conflict with "kubectl-edit" using ...`.
fn manager_of(message: &str) -> String {
    message
        .split('"')
        .nth(1)
        .map_or_else(|| message.to_owned(), str::to_owned)
}

/// Applies settings to Knative Services.
#[derive(Clone)]
pub struct ServiceApplier {
    client: Client,
}

impl ServiceApplier {
    pub fn new(client: Client) -> Self {
        Self { client }
    }

    /// Applies `settings` to the template of the Service `namespace/name`.
    pub async fn apply(
        &self,
        namespace: &str,
        name: &str,
        settings: &TemplateSettings,
    ) -> Result<(), ApplyError> {
        let api: Api<KnativeService> = Api::namespaced(self.client.clone(), namespace);
        let body = json!({
            "apiVersion": KnativeService::api_version(&()),
            "kind": KnativeService::kind(&()),
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"template": {"metadata": {"annotations": {
                TemplateScaling::MIN_SCALE: settings.min_scale,
                TemplateScaling::RETENTION: settings.retention,
            }}}},
        });
        // Never forced: a conflict is the editor's to resolve, not ours to overwrite.
        let params = PatchParams::apply(FIELD_MANAGER);
        match api.patch(name, &params, &Patch::Apply(&body)).await {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(status)) if status.code < 500 && status.code != 429 => {
                Err(from_status(&status))
            }
            Err(e) => Err(ApplyError::Unavailable(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_are_the_annotations_knative_reads() {
        let s = TemplateSettings::new(2, 45);
        assert_eq!((s.min_scale.as_str(), s.retention.as_str()), ("2", "45s"));
        let same = TemplateScaling {
            min_scale: Some("2".into()),
            retention: Some("45s".into()),
        };
        assert!(s.matches(&same));
        let edited = TemplateScaling {
            retention: Some("1m".into()),
            ..same
        };
        assert!(
            !s.matches(&edited),
            "an equivalent spelling is still an edit"
        );
    }

    #[test]
    fn a_conflict_names_the_other_manager_and_field() {
        let status: Status = serde_json::from_value(json!({
            "status": "Failure", "reason": "Conflict", "code": 409,
            "message": "Apply failed with 1 conflict: conflict with \"kubectl-edit\" using serving.knative.dev/v1: .spec.template.metadata.annotations.autoscaling.knative.dev/min-scale",
            "details": {"causes": [{"reason": "FieldManagerConflict",
                "message": "conflict with \"kubectl-edit\" using serving.knative.dev/v1",
                "field": ".spec.template.metadata.annotations.autoscaling.knative.dev/min-scale"}]}
        }))
        .unwrap();
        let ApplyError::Conflict { conflicts, .. } = from_status(&status) else {
            panic!("not a conflict");
        };
        assert_eq!(conflicts[0].manager, "kubectl-edit");
        assert!(conflicts[0].field.ends_with("/min-scale"));
        let forbidden = Status {
            code: 403,
            reason: "Forbidden".into(),
            ..Status::failure("no", "Forbidden")
        };
        assert!(!from_status(&forbidden).is_transient());
    }
}
