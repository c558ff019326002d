//! The apiextensions.k8s.io group's strategy: CustomResourceDefinitions.

use crate::registry::strategy::Strategy;

pub struct CustomResourceDefinitions;

impl Strategy for CustomResourceDefinitions {
    fn returns_deleted_object(&self) -> bool {
        true
    }
}
