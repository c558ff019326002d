//! The protobuf messages of aggregated discovery (`apidiscovery.k8s.io/v2` and `v2beta1`
//! `APIGroupDiscoveryList`, and `meta.v1.GroupVersionKind` they reference), which the
//! generated table (`crate::generated::protobuf_schema`, built from the definitions of the
//! OpenAPI v2 document) does not reach: kube serves them only at `/api` and `/apis`.
//!
//! Owns: the field numbers and Go field shapes of k8s.io/api/apidiscovery/v2(beta1)'s
//! types.go (both versions have the same layout), transcribed by hand.
//!
//! Does not know: how the document is built (`registry::discovery`, `aggregator::discovery`).

use crate::generated::protobuf_schema::{Card, Emit, Field, Message, Shape, Ty};

const GVK: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.GroupVersionKind";
const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
const LIST_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta";

const fn f(tag: u32, json: &'static str, ty: Ty, card: Card, emit: Emit) -> Field {
    Field {
        tag,
        json,
        ty,
        card,
        emit,
    }
}

const fn o(name: &'static str, fields: &'static [Field]) -> Message {
    Message {
        name,
        shape: Shape::Object,
        fields,
    }
}

macro_rules! version {
    ($v:literal) => {
        [
            o(
                concat!("io.k8s.api.apidiscovery.", $v, ".APIGroupDiscovery"),
                &[
                    f(1, "metadata", Ty::Msg(OBJECT_META), Card::One, Emit::Fill),
                    f(
                        2,
                        "versions",
                        Ty::Msg(concat!(
                            "io.k8s.api.apidiscovery.",
                            $v,
                            ".APIVersionDiscovery"
                        )),
                        Card::Rep,
                        Emit::Omit,
                    ),
                ],
            ),
            o(
                concat!("io.k8s.api.apidiscovery.", $v, ".APIGroupDiscoveryList"),
                &[
                    f(1, "metadata", Ty::Msg(LIST_META), Card::One, Emit::Fill),
                    f(
                        2,
                        "items",
                        Ty::Msg(concat!(
                            "io.k8s.api.apidiscovery.",
                            $v,
                            ".APIGroupDiscovery"
                        )),
                        Card::Rep,
                        Emit::Null,
                    ),
                ],
            ),
            o(
                concat!("io.k8s.api.apidiscovery.", $v, ".APIResourceDiscovery"),
                &[
                    f(1, "resource", Ty::Str, Card::One, Emit::Fill),
                    f(2, "responseKind", Ty::Msg(GVK), Card::One, Emit::Null),
                    f(3, "scope", Ty::Str, Card::One, Emit::Fill),
                    f(4, "singularResource", Ty::Str, Card::One, Emit::Fill),
                    f(5, "verbs", Ty::Str, Card::Rep, Emit::Null),
                    f(6, "shortNames", Ty::Str, Card::Rep, Emit::Omit),
                    f(7, "categories", Ty::Str, Card::Rep, Emit::Omit),
                    f(
                        8,
                        "subresources",
                        Ty::Msg(concat!(
                            "io.k8s.api.apidiscovery.",
                            $v,
                            ".APISubresourceDiscovery"
                        )),
                        Card::Rep,
                        Emit::Omit,
                    ),
                ],
            ),
            o(
                concat!("io.k8s.api.apidiscovery.", $v, ".APISubresourceDiscovery"),
                &[
                    f(1, "subresource", Ty::Str, Card::One, Emit::Fill),
                    f(2, "responseKind", Ty::Msg(GVK), Card::One, Emit::Omit),
                    f(3, "acceptedTypes", Ty::Msg(GVK), Card::Rep, Emit::Omit),
                    f(4, "verbs", Ty::Str, Card::Rep, Emit::Null),
                ],
            ),
            o(
                concat!("io.k8s.api.apidiscovery.", $v, ".APIVersionDiscovery"),
                &[
                    f(1, "version", Ty::Str, Card::One, Emit::Fill),
                    f(
                        2,
                        "resources",
                        Ty::Msg(concat!(
                            "io.k8s.api.apidiscovery.",
                            $v,
                            ".APIResourceDiscovery"
                        )),
                        Card::Rep,
                        Emit::Omit,
                    ),
                    f(3, "freshness", Ty::Str, Card::Zero, Emit::Omit),
                ],
            ),
        ]
    };
}

static V2: [Message; 5] = version!("v2");
static V2BETA1: [Message; 5] = version!("v2beta1");
static META: [Message; 1] = [o(
    GVK,
    &[
        f(1, "group", Ty::Str, Card::One, Emit::Fill),
        f(2, "version", Ty::Str, Card::One, Emit::Fill),
        f(3, "kind", Ty::Str, Card::One, Emit::Fill),
    ],
)];

/// A message of aggregated discovery by its definition name.
pub(super) fn message(name: &str) -> Option<&'static Message> {
    V2.iter()
        .chain(V2BETA1.iter())
        .chain(META.iter())
        .find(|m| m.name == name)
}

/// The definition of `APIGroupDiscoveryList` in `api_version`.
pub(super) fn list_definition(api_version: &str) -> Option<&'static str> {
    match api_version {
        "apidiscovery.k8s.io/v2" => Some("io.k8s.api.apidiscovery.v2.APIGroupDiscoveryList"),
        "apidiscovery.k8s.io/v2beta1" => {
            Some("io.k8s.api.apidiscovery.v2beta1.APIGroupDiscoveryList")
        }
        _ => None,
    }
}
