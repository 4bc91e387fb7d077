//! Security grades. Three levels are enough for the decisions the tool makes: recommend (`ok`),
//! allow with a warning (`weak`), or measure but never recommend (`broken`).

use serde::{Deserialize, Serialize};
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Grade {
    Broken,
    Weak,
    Ok,
}

impl Grade {
    pub fn as_str(self) -> &'static str {
        match self {
            Grade::Broken => "broken",
            Grade::Weak => "weak",
            Grade::Ok => "ok",
        }
    }
}

impl fmt::Display for Grade {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}
