//! ServiceAccounts (core/v1): the `token` subresource and the printer.

use crate::registry::strategy::{Extra, Strategy};
use crate::registry::table::{printers, Printer};

pub struct ServiceAccounts;

impl Strategy for ServiceAccounts {
    fn extras(&self) -> &'static [Extra] {
        &[Extra::Token]
    }

    fn printer(&self) -> Printer {
        printers::SA
    }
}
