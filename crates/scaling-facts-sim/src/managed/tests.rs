use serde_json::{Value, json};

use super::*;

const MIN: &str = "autoscaling.knative.dev/min-scale";

fn service() -> Value {
    let mut svc = json!({
        "apiVersion": "serving.knative.dev/v1", "kind": "Service",
        "metadata": {"name": "web", "namespace": "d"},
        "spec": {"template": {"metadata": {"annotations": {"team": "a"}},
                 "spec": {"containers": [{"image": "web:v1"}]}}},
    });
    update(None, &mut svc, "kubectl-create");
    svc
}

fn config(min: &str) -> Value {
    json!({
        "apiVersion": "serving.knative.dev/v1", "kind": "Service",
        "metadata": {"name": "web", "namespace": "d"},
        "spec": {"template": {"metadata": {"annotations": {MIN: min}}}},
    })
}

fn annotations(v: &Value) -> &Value {
    &v["spec"]["template"]["metadata"]["annotations"]
}

fn managers(v: &Value) -> Vec<(String, String)> {
    entries(v)
        .into_iter()
        .map(|e| (e.manager, e.operation.to_owned()))
        .collect()
}

#[test]
fn fields_v1_round_trips() {
    let set = leaves(&service());
    assert!(set.contains(&vec![
        "spec".to_owned(),
        "template".into(),
        "spec".into(),
        "containers".into()
    ]));
    assert_eq!(from_fields_v1(&to_fields_v1(&set)), set);
    let v1 = to_fields_v1(&set);
    assert!(v1["f:spec"]["f:template"]["f:metadata"]["f:annotations"]["f:team"].is_object());
}

#[test]
fn an_apply_sets_its_fields_and_owns_them_alone() {
    let svc = apply(&service(), &config("2"), "scaling-facts", false).unwrap();
    assert_eq!(annotations(&svc)[MIN], "2");
    assert_eq!(annotations(&svc)["team"], "a", "other fields stay");
    assert_eq!(
        managers(&svc),
        [
            ("kubectl-create".to_owned(), "Update".to_owned()),
            ("scaling-facts".into(), "Apply".into())
        ]
    );
    // The same apply again changes nothing.
    assert_eq!(
        apply(&svc, &config("2"), "scaling-facts", false).unwrap(),
        svc
    );
}

#[test]
fn a_hand_edit_takes_the_field_and_the_next_apply_conflicts() {
    let applied = apply(&service(), &config("2"), "scaling-facts", false).unwrap();
    let mut edited = applied.clone();
    edited["spec"]["template"]["metadata"]["annotations"][MIN] = json!("5");
    update(Some(&applied), &mut edited, "kubectl-edit");
    let refused = apply(&edited, &config("3"), "scaling-facts", false).unwrap_err();
    assert_eq!(
        refused,
        [Conflict {
            manager: "kubectl-edit".into(),
            field: format!(".spec.template.metadata.annotations.{MIN}"),
        }]
    );
    let message = conflict_message(&refused, "serving.knative.dev/v1");
    assert!(message.starts_with("Apply failed with 1 conflict: conflict with \"kubectl-edit\""));
    // Applying the value the editor set shares the field; forcing takes it.
    assert!(apply(&edited, &config("5"), "scaling-facts", false).is_ok());
    let forced = apply(&edited, &config("3"), "scaling-facts", true).unwrap();
    assert_eq!(annotations(&forced)[MIN], "3");
    assert!(
        entries(&forced).iter().all(|e| e.manager != "kubectl-edit"),
        "the editor owned nothing else"
    );
}

#[test]
fn a_field_no_longer_applied_is_removed_unless_shared() {
    let mut both = config("2");
    both["spec"]["template"]["metadata"]["annotations"]["x"] = json!("1");
    let svc = apply(&service(), &both, "scaling-facts", false).unwrap();
    let svc = apply(&svc, &config("2"), "scaling-facts", false).unwrap();
    assert!(annotations(&svc).get("x").is_none());
    assert_eq!(annotations(&svc)["team"], "a");
}
