//! PersistentVolumes and PersistentVolumeClaims (core/v1): both start `Pending`; printers.

use serde_json::{json, Value};

use crate::registry::strategy::Strategy;
use crate::registry::table::{printers, Printer};

pub struct PersistentVolumes;

impl Strategy for PersistentVolumes {
    fn initialize(&self, obj: &mut Value) {
        obj["status"] = json!({"phase": "Pending"});
    }

    fn printer(&self) -> Printer {
        printers::PV
    }
}

pub struct PersistentVolumeClaims;

impl Strategy for PersistentVolumeClaims {
    fn initialize(&self, obj: &mut Value) {
        obj["status"] = json!({"phase": "Pending"});
    }

    fn printer(&self) -> Printer {
        printers::PVC
    }
}
