//! `RequestId`: a request's id kept as the exact JSON text the client sent (through
//! `serde_json::Value` an integer past 64 bits came back a float). Part of the wire (`protocol`).

use serde::Serialize;
use serde_json::value::RawValue;

/// A request's id as the client wrote it, echoed byte for byte: any JSON value, and an integer
/// past 64 bits stays that integer (through `serde_json::Value` it came back a float).
#[derive(Debug, Clone, Serialize)]
#[serde(transparent)]
pub struct RequestId(pub(super) Box<RawValue>);

impl RequestId {
    /// `null`: the id of a line that had none or could not be read.
    pub fn null() -> Self {
        RequestId(RawValue::NULL.to_owned())
    }

    /// The id's JSON text.
    pub fn as_str(&self) -> &str {
        self.0.get()
    }
}

impl Default for RequestId {
    fn default() -> Self {
        RequestId::null()
    }
}

impl PartialEq for RequestId {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}
