//! What the viewer remembers between runs: the theme, the recently opened files, the panel's
//! size and statistics columns, in `settings.json` under the platform's config directory
//! (`~/.config/spall` on Linux; `SPALL_CONFIG_DIR` overrides it).
//!
//! The file is written atomically (a complete file or the previous one, even if the viewer
//! is killed mid-write), and read leniently: a file that is missing is the defaults, one that
//! is corrupt or from a newer version is the defaults plus a warning, never an error.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::theme::ThemeKind;

/// Files kept in the recent list.
pub const RECENT_MAX: usize = 12;

/// The remembered settings, as in `settings.json`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Settings {
    /// The theme chosen with `T`; `None` follows the system.
    pub theme: Option<ThemeKind>,
    /// Most recent first.
    pub recent: Vec<PathBuf>,
    /// Key bindings (see [`crate::persist::keys`]), kept as written so a save never loses them.
    pub keys: Option<Value>,
    /// The last view of each recent file, by its path ([`crate::persist::saved_view`]).
    pub views: serde_json::Map<String, Value>,
    /// The web page's recent traces, which have no path: the keys of their views
    /// (`page:SIZE:NAME`), most recent first.
    pub pages: Vec<String>,
    /// The side panel's width (points), when the user changed it.
    pub panel_points: Option<f32>,
    /// `Q` hid the side panel.
    pub panel_hidden: bool,
    /// The window's size (points), when the user changed it.
    pub window_points: Option<(f32, f32)>,
    /// The statistics table's optional columns shown, by header (`mean`, `p50`, ...).
    pub stats_columns: Vec<String>,
}

impl Settings {
    /// A page keeps no settings file.
    #[cfg(target_arch = "wasm32")]
    pub fn default_path() -> Option<PathBuf> {
        None
    }

    /// Where settings live: `$SPALL_CONFIG_DIR/settings.json`, else the platform's config
    /// directory (`~/.config/spall` on Linux); `None` where there is none (no home directory).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn default_path() -> Option<PathBuf> {
        spall_util::settings_path()
    }

    /// Reads settings; a missing file gives the defaults, an unreadable or corrupt one the
    /// defaults and a warning saying why.
    pub fn load(path: &Path) -> (Settings, Option<String>) {
        match std::fs::read(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => (Settings::default(), None),
            Err(e) => (
                Settings::default(),
                Some(format!(
                    "{}: cannot read the settings ({e}); using defaults",
                    path.display()
                )),
            ),
            Ok(bytes) => match Settings::from_json(&bytes) {
                Ok(s) => (s, None),
                Err(why) => (
                    Settings::default(),
                    Some(format!(
                        "{}: ignored ({why}); using defaults",
                        path.display()
                    )),
                ),
            },
        }
    }

    /// Writes settings atomically, creating the directory.
    pub fn save(&self, path: &Path) -> Result<(), spall_util::WriteError> {
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        spall_util::write_atomically(path, |f| {
            let text = serde_json::to_string_pretty(&self.to_json()).unwrap_or_default();
            std::io::Write::write_all(f, text.as_bytes()).map_err(|e| spall_util::WriteError {
                path: path.to_path_buf(),
                action: "write",
                source: e,
            })
        })
    }

    /// How the recent list and the views name a file: its canonical path.
    pub fn file_key(file: &Path) -> PathBuf {
        trace_model::annotations::file_key(file)
    }

    /// Puts a page's trace (its view's key) first in its recent list.
    pub fn add_page(&mut self, key: &str) {
        self.pages.retain(|p| p != key);
        self.pages.insert(0, key.to_string());
        self.pages.truncate(RECENT_MAX);
    }

    /// Puts `file` first in the recent list.
    pub fn add_recent(&mut self, file: &Path) {
        let file = Settings::file_key(file);
        self.recent.retain(|p| *p != file);
        self.recent.insert(0, file);
        self.recent.truncate(RECENT_MAX);
    }

    /// The settings as `settings.json` stores them (read by [`from_json`](Self::from_json)).
    pub fn to_json(&self) -> Value {
        let mut v = json!({
            "version": 1,
            "theme": match self.theme {
                Some(ThemeKind::Light) => "light",
                Some(ThemeKind::Dark) => "dark",
                None => "system",
            },
            "recent": self.recent.iter().map(|p| p.to_string_lossy()).collect::<Vec<_>>(),
        });
        if let Some(k) = &self.keys {
            v["keys"] = k.clone();
        }
        if let Some(p) = self.panel_points {
            v["panel_width"] = json!(p);
        }
        if self.panel_hidden {
            v["panel_hidden"] = json!(true);
        }
        if let Some((w, h)) = self.window_points {
            v["window_size"] = json!([w, h]);
        }
        if !self.stats_columns.is_empty() {
            v["stats_columns"] = json!(self.stats_columns);
        }
        // Views of files still in the recent lists only: the file stays small.
        let views: serde_json::Map<String, Value> = (self.views.iter())
            .filter(|(p, _)| {
                self.recent
                    .iter()
                    .any(|r| r.to_string_lossy() == p.as_str())
                    || self.pages.contains(p)
            })
            .map(|(p, v)| (p.clone(), v.clone()))
            .collect();
        if !views.is_empty() {
            v["views"] = Value::Object(views);
        }
        if !self.pages.is_empty() {
            v["pages"] = json!(self.pages);
        }
        v
    }

    /// Parses settings; unknown keys are ignored (a newer viewer's), wrong types are errors.
    pub fn from_json(bytes: &[u8]) -> Result<Settings, String> {
        let v: Value = serde_json::from_slice(bytes).map_err(|e| format!("not JSON: {e}"))?;
        let o = v.as_object().ok_or("not a JSON object")?;
        let theme = match o.get("theme").and_then(Value::as_str) {
            Some("light") => Some(ThemeKind::Light),
            Some("dark") => Some(ThemeKind::Dark),
            Some("system") | None => None,
            Some(other) => return Err(format!("unknown theme {other:?}")),
        };
        // Lists of names, most recent first.
        let list = |key: &str| -> Result<Vec<String>, String> {
            match o.get(key) {
                None => Ok(Vec::new()),
                Some(Value::Array(a)) => Ok(a
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .take(RECENT_MAX)
                    .collect()),
                Some(_) => Err(format!("{key:?} is not a list")),
            }
        };
        let recent = list("recent")?.into_iter().map(PathBuf::from).collect();
        let pages = list("pages")?;
        let stats_columns = list("stats_columns")?;
        let keys = o.get("keys").cloned();
        let views = match o.get("views") {
            None => Default::default(),
            Some(Value::Object(m)) => m.clone(),
            Some(_) => return Err("\"views\" is not an object".into()),
        };
        // Sizes out of range (a screen since unplugged, a hand edit) are ignored.
        let points = |v: Option<&Value>, lo: f64, hi: f64| {
            v.and_then(Value::as_f64)
                .filter(|p| (lo..=hi).contains(p))
                .map(|p| p as f32)
        };
        let window = o.get("window_size").and_then(Value::as_array);
        let window_points = window.and_then(|a| {
            Some((
                points(a.first(), 320.0, 16384.0)?,
                points(a.get(1), 240.0, 16384.0)?,
            ))
        });
        Ok(Settings {
            theme,
            recent,
            keys,
            views,
            pages,
            panel_points: points(o.get("panel_width"), 260.0, 1200.0),
            panel_hidden: o.get("panel_hidden").and_then(Value::as_bool) == Some(true),
            window_points,
            stats_columns,
        })
    }
}
