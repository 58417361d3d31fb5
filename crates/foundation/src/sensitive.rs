//! A value that must never be printed, as the plan carries passwords and keys.

use std::fmt;

use secrecy::{ExposeSecret, SecretString};

/// A value that must never be printed: Debug shows `[redacted]`; equality compares the values so
/// plans can be compared in tests.
#[derive(Clone)]
pub struct Sensitive(pub SecretString);

impl Sensitive {
    pub fn new(value: impl Into<String>) -> Self {
        Sensitive(SecretString::from(value.into()))
    }

    pub fn expose(&self) -> &str {
        self.0.expose_secret()
    }
}

impl fmt::Debug for Sensitive {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

impl PartialEq for Sensitive {
    fn eq(&self, other: &Self) -> bool {
        self.expose() == other.expose()
    }
}
