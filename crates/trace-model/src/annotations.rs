//! Annotations a user adds to a trace: markers (a time, with a note) and a marked range.
//!
//! The viewer keeps them per file in its settings (`"views"`, by the file's canonical path),
//! and `spall-cli markers` reads them from there. To share them, `spall-cli markers --save`
//! writes a sidecar file beside the trace (`TRACE.markers.json`), which the viewer reads
//! when it opens a trace it has no annotations for:
//!
//! ```json
//! { "version": 1, "markers": [{ "at_ns": 1500000, "note": "GC pause" }], "range": [0, 2000000] }
//! ```
//!
//! Times are nanoseconds from the trace's start, so they survive a conversion of the trace
//! to another format. Reading is lenient: entries that are not markers are skipped.

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

/// A flag at a time, with a note.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Marker {
    /// Nanoseconds from the trace's start.
    pub at_ns: i64,
    /// What the person wrote (may be empty).
    pub note: String,
}

/// A trace's markers, in time order, and its marked range.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Annotations {
    /// The markers, in time order.
    pub markers: Vec<Marker>,
    /// Nanoseconds from the trace's start, `start < end`.
    pub range: Option<(i64, i64)>,
}

impl Annotations {
    /// Whether there is neither a marker nor a range.
    pub fn is_empty(&self) -> bool {
        self.markers.is_empty() && self.range.is_none()
    }

    /// Reads the `"markers"` and `"range"` keys of an object; anything else is ignored.
    pub fn from_json(v: &Value) -> Annotations {
        let mut markers: Vec<Marker> = (v.get("markers").and_then(Value::as_array))
            .into_iter()
            .flatten()
            .filter_map(|m| {
                Some(Marker {
                    at_ns: m.get("at_ns")?.as_i64()?,
                    note: m.get("note").and_then(Value::as_str).unwrap_or("").into(),
                })
            })
            .collect();
        markers.sort_by_key(|m| m.at_ns);
        let range = v.get("range").and_then(Value::as_array).and_then(|r| {
            let (a, b) = (r.first()?.as_i64()?, r.get(1)?.as_i64()?);
            (a < b).then_some((a, b))
        });
        Annotations { markers, range }
    }

    /// Sets (or removes, when empty) the `"markers"` and `"range"` keys of `to`.
    pub fn write_into(&self, to: &mut Map<String, Value>) {
        to.remove("markers");
        to.remove("range");
        if !self.markers.is_empty() {
            let list = (self.markers.iter())
                .map(|m| json!({ "at_ns": m.at_ns, "note": m.note }))
                .collect();
            to.insert("markers".into(), Value::Array(list));
        }
        if let Some((a, b)) = self.range {
            to.insert("range".into(), json!([a, b]));
        }
    }

    /// The sidecar file that shares a trace's annotations: `TRACE.markers.json`.
    pub fn sidecar_path(trace: &Path) -> PathBuf {
        let mut name = trace.as_os_str().to_owned();
        name.push(".markers.json");
        PathBuf::from(name)
    }

    /// The annotations in `trace`'s sidecar: `Ok(None)` when there is none, an error saying
    /// why when it cannot be read or is not JSON.
    pub fn load_sidecar(trace: &Path) -> Result<Option<Annotations>, String> {
        let path = Annotations::sidecar_path(trace);
        match std::fs::read(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(format!("{}: {e}", path.display())),
            Ok(bytes) => match serde_json::from_slice::<Value>(&bytes) {
                Ok(v) => Ok(Some(Annotations::from_json(&v))),
                Err(e) => Err(format!("{}: not JSON ({e})", path.display())),
            },
        }
    }

    /// Writes `trace`'s sidecar atomically (the previous one stays whole on failure).
    pub fn save_sidecar(&self, trace: &Path) -> Result<PathBuf, spall_util::WriteError> {
        let path = Annotations::sidecar_path(trace);
        let mut v = Map::new();
        v.insert("version".into(), json!(1));
        self.write_into(&mut v);
        let text = serde_json::to_string_pretty(&Value::Object(v)).unwrap_or_default();
        spall_util::write_atomically(&path, |f| {
            std::io::Write::write_all(f, text.as_bytes()).map_err(|e| spall_util::WriteError {
                path: path.clone(),
                action: "write",
                source: e,
            })
        })?;
        Ok(path)
    }

    /// The annotations the viewer's settings (`settings.json`, parsed) hold for `trace`.
    pub fn from_settings(settings: &Value, trace: &Path) -> Annotations {
        let key = file_key(trace);
        (settings.get("views"))
            .and_then(|v| v.get(key.to_string_lossy().as_ref()))
            .map(Annotations::from_json)
            .unwrap_or_default()
    }
}

/// How the viewer's settings name a file: its canonical path.
pub fn file_key(file: &Path) -> PathBuf {
    std::fs::canonicalize(file).unwrap_or_else(|_| file.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_sorted_and_lenient() {
        let v = json!({
            "markers": [
                { "at_ns": 30, "note": "later" },
                { "at_ns": 10 },
                { "note": "no time: skipped" },
                "not a marker"
            ],
            "range": [5, 50],
            "view": [0, 100]
        });
        let a = Annotations::from_json(&v);
        assert_eq!(
            a.markers,
            [
                Marker {
                    at_ns: 10,
                    note: String::new()
                },
                Marker {
                    at_ns: 30,
                    note: "later".into()
                }
            ]
        );
        assert_eq!(a.range, Some((5, 50)));
        let mut m = v.as_object().unwrap().clone();
        a.write_into(&mut m);
        assert_eq!(Annotations::from_json(&Value::Object(m.clone())), a);
        assert_eq!(m["view"], json!([0, 100]), "other keys are kept");
        Annotations::default().write_into(&mut m);
        assert!(!m.contains_key("markers") && !m.contains_key("range"));
        // An empty or reversed range is no range.
        assert_eq!(
            Annotations::from_json(&json!({ "range": [9, 9] })).range,
            None
        );
    }

    #[test]
    fn sidecar_round_trip() {
        let dir = std::env::temp_dir().join(format!("spall-sidecar-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let trace = dir.join("t.json");
        assert_eq!(Annotations::load_sidecar(&trace), Ok(None));
        let a = Annotations {
            markers: vec![Marker {
                at_ns: 7,
                note: "ça \"marche\"".into(),
            }],
            range: Some((1, 2)),
        };
        let path = a.save_sidecar(&trace).unwrap();
        assert_eq!(path, dir.join("t.json.markers.json"));
        assert_eq!(Annotations::load_sidecar(&trace), Ok(Some(a)));
        std::fs::write(&path, "{").unwrap();
        assert!(Annotations::load_sidecar(&trace)
            .unwrap_err()
            .contains("not JSON"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
