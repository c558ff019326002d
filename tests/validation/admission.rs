//! Validation cases of the admissionregistration.k8s.io, flowcontrol.apiserver.k8s.io and
//! certificates.k8s.io kinds, as kube-apiserver v1.33 refuses them.

use serde_json::json;

use super::Case;

/// `IsQualifiedName`'s message for a bad name part.
macro_rules! qualified_name_part {
    () => {
        "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
    };
}

pub(super) fn cases() -> Vec<Case> {
    vec![
        Case {
            path: "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
            body: json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
                "metadata": {"name": "vwc"},
                "webhooks": [{"name": "hook",
                    "rules": [{"operations": ["*", "CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"]}],
                    "clientConfig": {"url": "http://example.com/x?y=1"},
                    "admissionReviewVersions": ["v2"], "timeoutSeconds": 31}]}),
            code: 422,
            reason: "Invalid",
            message: "ValidatingWebhookConfiguration.admissionregistration.k8s.io \"vwc\" is invalid: [webhooks[0].name: Invalid value: \"hook\": should be a domain with at least three segments separated by dots, webhooks[0].rules[0].operations: Invalid value: []admissionregistration.OperationType{\"*\", \"CREATE\"}: if '*' is present, must not specify other operations, webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun, webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds, webhooks[0].clientConfig.url: Invalid value: \"http\": 'https' is the only allowed URL scheme; desired format: https://host[/path], webhooks[0].clientConfig.url: Invalid value: \"y=1\": query parameters are not permitted in the URL, webhooks[0].admissionReviewVersions: Invalid value: []string{\"v2\"}: must include at least one of v1, v1beta1]",
            causes: Some(vec![
                ("webhooks[0].name", "FieldValueInvalid"),
                ("webhooks[0].rules[0].operations", "FieldValueInvalid"),
                ("webhooks[0].sideEffects", "FieldValueRequired"),
                ("webhooks[0].timeoutSeconds", "FieldValueInvalid"),
                ("webhooks[0].clientConfig.url", "FieldValueInvalid"),
                ("webhooks[0].clientConfig.url", "FieldValueInvalid"),
                ("webhooks[0].admissionReviewVersions", "FieldValueInvalid"),
            ]),
        },
        Case {
            path: "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations",
            body: json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
                "metadata": {"name": "mwc"},
                "webhooks": [
                    {"name": "a.example.com", "sideEffects": "None", "admissionReviewVersions": ["v1"],
                     "reinvocationPolicy": "Always", "clientConfig": {"service": {"path": "hook", "port": 0}},
                     "matchConditions": [{"name": "bad name!", "expression": " "}]},
                    {"name": "a.example.com", "sideEffects": "Some", "admissionReviewVersions": ["v1"],
                     "clientConfig": {"url": "https://example.com/x"}}]}),
            code: 422,
            reason: "Invalid",
            message: concat!("MutatingWebhookConfiguration.admissionregistration.k8s.io \"mwc\" is invalid: [webhooks[0].reinvocationPolicy: Unsupported value: \"Always\": supported values: \"IfNeeded\", \"Never\", webhooks[0].clientConfig.service.name: Required value: service name is required, webhooks[0].clientConfig.service.namespace: Required value: service namespace is required, webhooks[0].clientConfig.service.port: Invalid value: 0: port is not valid: must be between 1 and 65535, inclusive, webhooks[0].clientConfig.service.path: Invalid value: \"hook\": must start with a '/', webhooks[0].matchConditions[0].expression: Required value, webhooks[0].matchConditions[0].name: Invalid value: \"bad name!\": ", qualified_name_part!(), ", webhooks[1].sideEffects: Unsupported value: \"Some\": supported values: \"None\", \"NoneOnDryRun\", webhooks[1].name: Duplicate value: \"a.example.com\"]"),
            causes: Some(vec![
                ("webhooks[0].reinvocationPolicy", "FieldValueNotSupported"),
                ("webhooks[0].clientConfig.service.name", "FieldValueRequired"),
                ("webhooks[0].clientConfig.service.namespace", "FieldValueRequired"),
                ("webhooks[0].clientConfig.service.port", "FieldValueInvalid"),
                ("webhooks[0].clientConfig.service.path", "FieldValueInvalid"),
                ("webhooks[0].matchConditions[0].expression", "FieldValueRequired"),
                ("webhooks[0].matchConditions[0].name", "FieldValueInvalid"),
                ("webhooks[1].sideEffects", "FieldValueNotSupported"),
                ("webhooks[1].name", "FieldValueDuplicate"),
            ]),
        },
        Case {
            path: "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas",
            body: json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema", "metadata": {"name": "fs"},
                "spec": {"matchingPrecedence": 1, "distinguisherMethod": {"type": "ByGroup"},
                    "priorityLevelConfiguration": {"name": ""},
                    "rules": [{"subjects": [{"kind": "ServiceAccount", "serviceAccount": {"name": ""}, "user": {"name": "u"}},
                                            {"kind": "Robot"}],
                        "resourceRules": [{"verbs": ["*", "get"], "apiGroups": [], "resources": ["pods"], "namespaces": ["*", "default"]}],
                        "nonResourceRules": [{"verbs": ["fly"], "nonResourceURLs": ["healthz"]}]}]}}),
            code: 422,
            reason: "Invalid",
            message: "FlowSchema.flowcontrol.apiserver.k8s.io \"fs\" is invalid: [spec.matchingPrecedence: Invalid value: 1: only the schema named 'exempt' may have matchingPrecedence 1, spec.distinguisherMethod.type: Unsupported value: flowcontrol.FlowDistinguisherMethod{Type:\"ByGroup\"}: supported values: \"ByNamespace\", \"ByUser\", spec.priorityLevelConfiguration.name: Required value: must reference a priority level, spec.rules[0].subjects[0].serviceAccount.name: Required value, spec.rules[0].subjects[0].serviceAccount.namespace: Required value: must specify namespace for service account, spec.rules[0].subjects[0].user: Forbidden: user is forbidden when subject kind is not 'User', spec.rules[0].subjects[1].kind: Unsupported value: \"Robot\": supported values: \"Group\", \"ServiceAccount\", \"User\", spec.rules[0].resourceRules[0].verbs: Invalid value: []string{\"*\", \"get\"}: if '*' is present, must not specify other verbs, spec.rules[0].resourceRules[0].apiGroups: Required value: resource rules must supply at least one api group, spec.rules[0].resourceRules[0].namespaces: Invalid value: []string{\"*\", \"default\"}: if '*' is present, must not specify other namespaces, spec.rules[0].nonResourceRules[0].verbs: Unsupported value: []string{\"fly\"}: supported values: \"create\", \"delete\", \"deletecollection\", \"get\", \"list\", \"patch\", \"proxy\", \"update\", \"watch\", spec.rules[0].nonResourceRules[0].nonResourceURLs[0]: Invalid value: \"healthz\": must start with slash]",
            causes: Some(vec![
                ("spec.matchingPrecedence", "FieldValueInvalid"),
                ("spec.distinguisherMethod.type", "FieldValueNotSupported"),
                ("spec.priorityLevelConfiguration.name", "FieldValueRequired"),
                ("spec.rules[0].subjects[0].serviceAccount.name", "FieldValueRequired"),
                ("spec.rules[0].subjects[0].serviceAccount.namespace", "FieldValueRequired"),
                ("spec.rules[0].subjects[0].user", "FieldValueForbidden"),
                ("spec.rules[0].subjects[1].kind", "FieldValueNotSupported"),
                ("spec.rules[0].resourceRules[0].verbs", "FieldValueInvalid"),
                ("spec.rules[0].resourceRules[0].apiGroups", "FieldValueRequired"),
                ("spec.rules[0].resourceRules[0].namespaces", "FieldValueInvalid"),
                ("spec.rules[0].nonResourceRules[0].verbs", "FieldValueNotSupported"),
                ("spec.rules[0].nonResourceRules[0].nonResourceURLs[0]", "FieldValueInvalid"),
            ]),
        },
        Case {
            path: "/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations",
            body: json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "PriorityLevelConfiguration", "metadata": {"name": "pl"},
                "spec": {"type": "Limited", "exempt": {},
                    "limited": {"nominalConcurrencyShares": -1, "lendablePercent": 101, "borrowingLimitPercent": -1,
                        "limitResponse": {"type": "Queue", "queuing": {"queues": 4, "handSize": 5, "queueLengthLimit": -1}}}}}),
            code: 422,
            reason: "Invalid",
            message: "PriorityLevelConfiguration.flowcontrol.apiserver.k8s.io \"pl\" is invalid: [spec.exempt: Forbidden: must be nil if the type is Limited, spec.limited.nominalConcurrencyShares: Invalid value: -1: must be a non-negative integer, spec.limited.limitResponse.queuing.queueLengthLimit: Invalid value: -1: must be positive, spec.limited.limitResponse.queuing.handSize: Invalid value: 5: should not be greater than queues (4), spec.limited.lendablePercent: Invalid value: 101: must be between 0 and 100, inclusive, spec.limited.borrowingLimitPercent: Invalid value: -1: if specified, must be a non-negative integer]",
            causes: None,
        },
        Case {
            path: "/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations",
            body: json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "PriorityLevelConfiguration", "metadata": {"name": "exempt"},
                "spec": {"type": "Limited"}}),
            code: 422,
            reason: "Invalid",
            message: "PriorityLevelConfiguration.flowcontrol.apiserver.k8s.io \"exempt\" is invalid: [spec.type: Invalid value: \"Limited\": type must be 'Exempt' if and only if name is 'exempt', spec.limited: Required value: must not be empty when type is Limited, spec: Invalid value: flowcontrol.PriorityLevelConfigurationSpec{...}: spec of 'exempt' except the 'spec.exempt' field must equal the fixed value]",
            causes: Some(vec![("spec.type", "FieldValueInvalid"), ("spec.limited", "FieldValueRequired"), ("spec", "FieldValueInvalid")]),
        },
        Case {
            path: "/apis/certificates.k8s.io/v1/certificatesigningrequests",
            body: json!({"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest", "metadata": {"name": "csr"},
                "spec": {"request": "bm90IGEgY3Ny", "signerName": "example",
                         "usages": ["client auth", "flying", "client auth"], "expirationSeconds": 60}}),
            code: 422,
            reason: "Invalid",
            message: "CertificateSigningRequest.certificates.k8s.io \"csr\" is invalid: [spec.request: Invalid value: []byte{0x6e, 0x6f, 0x74, 0x20, 0x61, 0x20, 0x63, 0x73, 0x72}: PEM block type must be CERTIFICATE REQUEST, spec.usages[1]: Unsupported value: \"flying\": supported values: \"any\", \"cert sign\", \"client auth\", \"code signing\", \"content commitment\", \"crl sign\", \"data encipherment\", \"decipher only\", \"digital signature\", \"email protection\", \"encipher only\", \"ipsec end system\", \"ipsec tunnel\", \"ipsec user\", \"key agreement\", \"key encipherment\", \"microsoft sgc\", \"netscape sgc\", \"ocsp signing\", \"s/mime\", \"server auth\", \"signing\", \"timestamping\", spec.usages[2]: Duplicate value: \"client auth\", spec.signerName: Invalid value: \"example\": must be a fully qualified domain and path of the form 'example.com/signer-name', spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 600 seconds (10 minutes)]",
            causes: Some(vec![
                ("spec.request", "FieldValueInvalid"),
                ("spec.usages[1]", "FieldValueNotSupported"),
                ("spec.usages[2]", "FieldValueDuplicate"),
                ("spec.signerName", "FieldValueInvalid"),
                ("spec.expirationSeconds", "FieldValueInvalid"),
            ]),
        },
        Case {
            path: "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies",
            body: json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy", "metadata": {"name": "vap"},
                "spec": {"failurePolicy": "Sometimes", "paramKind": {"apiVersion": "a/b/c", "kind": ""},
                    "matchConstraints": {"resourceRules": []},
                    "variables": [{"name": "1x", "expression": ""}],
                    "validations": [{"expression": "true", "message": "two\nlines", "reason": "Teapot"}],
                    "auditAnnotations": [{"key": "k", "valueExpression": "'v'"}, {"key": "k", "valueExpression": " "}]}}),
            code: 422,
            reason: "Invalid",
            message: "ValidatingAdmissionPolicy.admissionregistration.k8s.io \"vap\" is invalid: [spec.failurePolicy: Unsupported value: \"Sometimes\": supported values: \"Fail\", \"Ignore\", spec.paramKind.apiVersion: Invalid value: \"a/b/c\": unexpected GroupVersion string: a/b/c, spec.paramKind.kind: Required value, spec.matchConstraints.resourceRules: Required value, spec.variables[0].name: Invalid value: \"1x\": name is not a valid CEL identifier, spec.variables[0].expression: Required value: expression is not specified, spec.validations[0].message: Invalid value: \"two\\nlines\": message must not contain line breaks, spec.validations[0].reason: Unsupported value: \"Teapot\": supported values: \"Forbidden\", \"Invalid\", \"RequestEntityTooLarge\", spec.auditAnnotations[1].valueExpression: Required value: valueExpression is not specified, spec.auditAnnotations[1].key: Duplicate value: \"k\"]",
            causes: Some(vec![
                ("spec.failurePolicy", "FieldValueNotSupported"),
                ("spec.paramKind.apiVersion", "FieldValueInvalid"),
                ("spec.paramKind.kind", "FieldValueRequired"),
                ("spec.matchConstraints.resourceRules", "FieldValueRequired"),
                ("spec.variables[0].name", "FieldValueInvalid"),
                ("spec.variables[0].expression", "FieldValueRequired"),
                ("spec.validations[0].message", "FieldValueInvalid"),
                ("spec.validations[0].reason", "FieldValueNotSupported"),
                ("spec.auditAnnotations[1].valueExpression", "FieldValueRequired"),
                ("spec.auditAnnotations[1].key", "FieldValueDuplicate"),
            ]),
        },
        // CEL expressions compiled in kube's admission environment
        Case {
            path: "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies",
            body: json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy", "metadata": {"name": "cel"},
                "spec": {"failurePolicy": "Fail",
                    "matchConstraints": {"resourceRules": [{"operations": ["CREATE"], "apiGroups": ["apps"], "apiVersions": ["v1"], "resources": ["deployments"]}]},
                    "matchConditions": [{"name": "m", "expression": "params.x == 1"}],
                    "variables": [{"name": "limit", "expression": "object.spec.replicas"}, {"name": "bad", "expression": "variables.nope + 1"}],
                    "validations": [{"expression": "variables.limit <= 5 && request.operation == 'CREATE'"},
                        {"expression": "object.spec", "messageExpression": "1"}],
                    "auditAnnotations": [{"key": "k", "valueExpression": "1"}]}}),
            code: 422,
            reason: "Invalid",
            message: "ValidatingAdmissionPolicy.admissionregistration.k8s.io \"cel\" is invalid: [spec.matchConditions[0].expression: Invalid value: \"params.x == 1\": compilation failed: ERROR: <input>:1:1: undeclared reference to 'params' (in container '')\n | params.x == 1\n | ^, spec.variables[1].expression: Invalid value: \"variables.nope + 1\": compilation failed: ERROR: <input>:1:10: undefined field 'nope'\n | variables.nope + 1\n | .........^, spec.validations[1].expression: Invalid value: \"object.spec\": must evaluate to bool, spec.validations[1].messageExpression: Invalid value: \"1\": must evaluate to string, spec.auditAnnotations[0].valueExpression: Invalid value: \"1\": must evaluate to one of [string null_type]]",
            causes: Some(vec![
                ("spec.matchConditions[0].expression", "FieldValueInvalid"),
                ("spec.variables[1].expression", "FieldValueInvalid"),
                ("spec.validations[1].expression", "FieldValueInvalid"),
                ("spec.validations[1].messageExpression", "FieldValueInvalid"),
                ("spec.auditAnnotations[0].valueExpression", "FieldValueInvalid"),
            ]),
        },
        Case {
            path: "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
            body: json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
                "metadata": {"name": "vwc-cel"},
                "webhooks": [{"name": "hook.example.com", "sideEffects": "None", "admissionReviewVersions": ["v1"],
                    "clientConfig": {"url": "https://example.com/x"},
                    "matchConditions": [
                        {"name": "ok", "expression": "request.userInfo.username != 'system:admin' && authorizer.group('').resource('pods').check('get').allowed()"},
                        {"name": "bad", "expression": "request.foo == 1"}]}]}),
            code: 422,
            reason: "Invalid",
            message: "ValidatingWebhookConfiguration.admissionregistration.k8s.io \"vwc-cel\" is invalid: webhooks[0].matchConditions[1].expression: Invalid value: \"request.foo == 1\": compilation failed: ERROR: <input>:1:8: undefined field 'foo'\n | request.foo == 1\n | .......^",
            causes: Some(vec![("webhooks[0].matchConditions[1].expression", "FieldValueInvalid")]),
        },
        Case {
            path: "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings",
            body: json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": "vapb"},
                "spec": {"policyName": "", "paramRef": {"name": "p", "selector": {}, "parameterNotFoundAction": "Ignore"},
                    "matchResources": {"resourceRules": [{"operations": ["CREATE"], "apiGroups": ["*"], "apiVersions": ["*"],
                        "resources": ["*/*", "pods"], "resourceNames": ["a", "a"]}]},
                    "validationActions": ["Deny", "Warn", "Deny"]}}),
            code: 422,
            reason: "Invalid",
            message: "ValidatingAdmissionPolicyBinding.admissionregistration.k8s.io \"vapb\" is invalid: [spec.policyName: Required value, spec.paramRef.name: Forbidden: name and selector are mutually exclusive, spec.paramRef.selector: Forbidden: name and selector are mutually exclusive, spec.paramRef.parameterNotFoundAction: Unsupported value: \"Ignore\": supported values: \"Deny\", \"Allow\", spec.matchResources.resourceRules[0].resourceNames[1]: Duplicate value: \"a\", spec.matchResources.resourceRules[0].resources: Invalid value: []string{\"*/*\", \"pods\"}: if '*/*' is present, must not specify other resources, spec.validationActions[2]: Duplicate value: \"Deny\", spec.validationActions: Invalid value: []admissionregistration.ValidationAction{\"Deny\", \"Warn\", \"Deny\"}: must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)]",
            causes: None,
        },
    ]
}

/// A CSR starts without status and keeps its spec; its status follows kube's condition rules.
#[tokio::test]
async fn certificate_signing_requests_keep_their_spec() {
    use reqwest::{Method, StatusCode};
    let s = super::support::Server::start();
    let c = s.client();
    let path = "/apis/certificates.k8s.io/v1/certificatesigningrequests";
    let key = rcgen::KeyPair::generate().unwrap();
    let pem = rcgen::CertificateParams::new(vec!["node.example".to_string()])
        .unwrap()
        .serialize_request(&key)
        .unwrap()
        .pem()
        .unwrap();
    use base64::Engine;
    let request = base64::engine::general_purpose::STANDARD.encode(pem);
    let r = s
        .json(&c, Method::POST, path, Some(json!({"apiVersion": "certificates.k8s.io/v1",
            "kind": "CertificateSigningRequest", "metadata": {"name": "good"},
            "spec": {"request": request, "signerName": "example.com/signer", "usages": ["client auth"]},
            "status": {"conditions": [{"type": "Approved", "status": "True"}]}})))
        .await;
    assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
    assert_eq!(r.body["status"], json!({}));

    // The spec of an update is the stored one.
    let mut csr = r.body;
    csr["spec"]["signerName"] = json!("example.com/other");
    let r = s
        .json(&c, Method::PUT, &format!("{path}/good"), Some(csr))
        .await;
    assert_eq!(r.code, StatusCode::OK, "{}", r.body);
    assert_eq!(r.body["spec"]["signerName"], "example.com/signer");

    // Approved and Denied exclude each other, and neither is added through /status.
    let mut csr = r.body;
    csr["status"]["conditions"] =
        json!([{"type": "Approved"}, {"type": "Denied", "status": "True"}]);
    let r = s
        .json(&c, Method::PUT, &format!("{path}/good/status"), Some(csr))
        .await;
    assert_eq!(r.code, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert_eq!(
        r.body["message"],
        "CertificateSigningRequest.certificates.k8s.io \"good\" is invalid: [status.conditions[1].type: Invalid value: \"Denied\": Approved and Denied conditions are mutually exclusive, status.conditions: Forbidden: updates may not add a condition of type \"Approved\", status.conditions: Forbidden: updates may not add a condition of type \"Denied\"]"
    );

    // `kubectl certificate approve` writes the condition through /approval.
    let out = s.ok(&["certificate", "approve", "good"]);
    assert!(out.contains("approved"), "{out}");
    let r = s.json(&c, Method::GET, &format!("{path}/good"), None).await;
    let conds = r.body["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(conds.len(), 1, "{}", r.body);
    assert_eq!(conds[0]["type"], "Approved");
    assert_eq!(conds[0]["status"], "True");
    assert_eq!(conds[0]["reason"], "KubectlApprove");
    // the approval strategy fills the condition's timestamps
    for t in ["lastUpdateTime", "lastTransitionTime"] {
        assert!(conds[0][t].is_string(), "{t}: {}", conds[0]);
    }
    // Approval may not be taken back.
    let mut csr = r.body;
    csr["status"]["conditions"] = json!([]);
    let r = s
        .json(&c, Method::PUT, &format!("{path}/good/approval"), Some(csr))
        .await;
    assert_eq!(r.code, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert!(
        r.body["message"].as_str().unwrap_or("").ends_with(
            "status.conditions: Forbidden: updates may not remove a condition of type \"Approved\""
        ),
        "{}",
        r.body
    );
}
