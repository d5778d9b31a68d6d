//! The timeline's keys: every action, its default keys, and bindings from the settings file.
//!
//! ```json
//! { "keys": { "zoom_in": "i", "zoom_out": ["o", "-"], "pan_left": "ArrowLeft" } }
//! ```
//!
//! An action given in the settings gets exactly the keys given (its defaults are dropped);
//! a key bound there wins over a default binding of the same key to another action. A key is
//! one character (letters match either case) or a named key (`Home`, `Escape`, `Enter`,
//! `ArrowLeft`, `F1`...). Unknown actions and unreadable keys are warned about and skipped.
//! Ctrl shortcuts (open, search, reload, copy, screenshot) are fixed.

use serde_json::Value;
use winit::keyboard::{Key, NamedKey};

/// What a key does in the timeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// Zoom in (default `w`).
    ZoomIn,
    /// Zoom out (default `s`).
    ZoomOut,
    /// Pan left (default `a`, `ArrowLeft`).
    PanLeft,
    /// Pan right (default `d`, `ArrowRight`).
    PanRight,
    /// Scroll the tracks up (default `ArrowUp`).
    ScrollUp,
    /// Scroll the tracks down (default `ArrowDown`).
    ScrollDown,
    /// Fit the selection (or range, or trace) (default `f`).
    Fit,
    /// Show the whole trace (default `Home`).
    FitAll,
    /// Light / dark theme (default `t`).
    ToggleTheme,
    /// Search names (default `/`).
    Search,
    /// Flow arrows: none / selected / all (default `l`).
    Flows,
    /// Timeline / flame graph (default `g`).
    FlameGraph,
    /// Previous slice on the lane (default `[`).
    PrevSlice,
    /// Next slice on the lane (default `]`).
    NextSlice,
    /// Mark the selection's time range (default `m`).
    MarkRange,
    /// Add a marker at the mouse (its note is in the panel) (default `n`).
    AddMarker,
    /// Show / hide the side panel (default `q`).
    TogglePanel,
    /// This list of keys (default `?`).
    Help,
    /// Next search match (Shift: previous) (default `Enter`).
    NextMatch,
    /// Clear selection, range and search (default `Escape`).
    Clear,
}

/// Every action: its name in the settings, its default keys, and what the help says.
pub const ACTIONS: &[(Action, &str, &[&str], &str)] = &[
    (Action::ZoomIn, "zoom_in", &["w"], "zoom in"),
    (Action::ZoomOut, "zoom_out", &["s"], "zoom out"),
    (Action::PanLeft, "pan_left", &["a", "ArrowLeft"], "pan left"),
    (
        Action::PanRight,
        "pan_right",
        &["d", "ArrowRight"],
        "pan right",
    ),
    (
        Action::ScrollUp,
        "scroll_up",
        &["ArrowUp"],
        "scroll the tracks up",
    ),
    (
        Action::ScrollDown,
        "scroll_down",
        &["ArrowDown"],
        "scroll the tracks down",
    ),
    (
        Action::Fit,
        "fit",
        &["f"],
        "fit the selection (or range, or trace)",
    ),
    (Action::FitAll, "fit_all", &["Home"], "show the whole trace"),
    (Action::ToggleTheme, "theme", &["t"], "light / dark theme"),
    (Action::Search, "search", &["/"], "search names"),
    (
        Action::Flows,
        "flows",
        &["l"],
        "flow arrows: none / selected / all",
    ),
    (
        Action::FlameGraph,
        "flame_graph",
        &["g"],
        "timeline / flame graph",
    ),
    (
        Action::PrevSlice,
        "prev_slice",
        &["["],
        "previous slice on the lane",
    ),
    (
        Action::NextSlice,
        "next_slice",
        &["]"],
        "next slice on the lane",
    ),
    (
        Action::MarkRange,
        "mark_range",
        &["m"],
        "mark the selection's time range",
    ),
    (
        Action::AddMarker,
        "add_marker",
        &["n"],
        "add a marker at the mouse (its note is in the panel)",
    ),
    (
        Action::TogglePanel,
        "toggle_panel",
        &["q"],
        "show / hide the side panel",
    ),
    (Action::Help, "help", &["?"], "this list of keys"),
    (
        Action::NextMatch,
        "next_match",
        &["Enter"],
        "next search match (Shift: previous)",
    ),
    (
        Action::Clear,
        "clear",
        &["Escape"],
        "clear selection, range and search",
    ),
];

/// The fixed Ctrl shortcuts and the mouse, for the help overlay.
pub const FIXED: &[(&str, &str)] = &[
    ("Ctrl+O", "open a trace"),
    ("Ctrl+F", "search names"),
    ("Ctrl+R, F5", "reload the file, keeping the view"),
    ("Ctrl+C", "copy the selection's name"),
    ("Ctrl+Shift+C", "copy the selection's call stack"),
    ("Ctrl+S", "save the window as PNG"),
    (
        "Ctrl+Q",
        "quit (the settings and this file's view are kept)",
    ),
    ("wheel", "zoom at the cursor (Shift: scroll)"),
    ("drag", "pan and scroll"),
    ("Shift+drag, drag on the ruler", "select a time range"),
    ("click", "select; a track header collapses it"),
    ("double-click", "zoom to the slice"),
    (
        "flame graph: I, O, V, Backspace",
        "icicle, sort, sandwich, zoom out",
    ),
];

/// A key as the settings write it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeySpec {
    /// Lower case when it is a letter.
    Char(String),
    /// A named key (`Home`, `ArrowLeft`, `F1`...).
    Named(NamedKey),
}

const NAMED: &[(&str, NamedKey)] = &[
    ("Home", NamedKey::Home),
    ("End", NamedKey::End),
    ("Escape", NamedKey::Escape),
    ("Enter", NamedKey::Enter),
    ("Tab", NamedKey::Tab),
    ("Space", NamedKey::Space),
    ("Backspace", NamedKey::Backspace),
    ("Delete", NamedKey::Delete),
    ("PageUp", NamedKey::PageUp),
    ("PageDown", NamedKey::PageDown),
    ("ArrowLeft", NamedKey::ArrowLeft),
    ("ArrowRight", NamedKey::ArrowRight),
    ("ArrowUp", NamedKey::ArrowUp),
    ("ArrowDown", NamedKey::ArrowDown),
    ("F1", NamedKey::F1),
    ("F2", NamedKey::F2),
    ("F3", NamedKey::F3),
    ("F4", NamedKey::F4),
    ("F6", NamedKey::F6),
    ("F7", NamedKey::F7),
    ("F8", NamedKey::F8),
    ("F9", NamedKey::F9),
    ("F10", NamedKey::F10),
    ("F11", NamedKey::F11),
    ("F12", NamedKey::F12),
];

impl KeySpec {
    /// `"w"`, `"["`, `"Home"`, `"ArrowLeft"`...
    pub fn parse(s: &str) -> Result<KeySpec, String> {
        let mut chars = s.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) if !c.is_control() && !c.is_whitespace() => {
                Ok(KeySpec::Char(c.to_lowercase().collect()))
            }
            _ => NAMED
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(s))
                .map(|&(_, k)| KeySpec::Named(k))
                .ok_or_else(|| {
                    format!("{s:?} is not a key (one character, or a name such as Home, Escape, ArrowLeft, F1)")
                }),
        }
    }

    fn matches(&self, key: &Key) -> bool {
        match (self, key) {
            (KeySpec::Char(c), Key::Character(k)) => k.to_lowercase() == *c,
            (KeySpec::Named(n), Key::Named(k)) => n == k,
            _ => false,
        }
    }

    /// As the help shows it.
    pub fn label(&self) -> String {
        match self {
            KeySpec::Char(c) => c.to_uppercase(),
            KeySpec::Named(n) => NAMED
                .iter()
                .find(|(_, k)| k == n)
                .map_or("?".into(), |(s, _)| s.to_string()),
        }
    }
}

/// Keys to actions; the settings' bindings first.
#[derive(Clone, Debug, PartialEq)]
pub struct Bindings {
    keys: Vec<(KeySpec, Action)>,
}

impl Default for Bindings {
    fn default() -> Self {
        Bindings::from_settings(None).0
    }
}

impl Bindings {
    /// The defaults, with the settings' `keys` object applied; warnings for what was
    /// skipped.
    pub fn from_settings(keys: Option<&Value>) -> (Bindings, Vec<String>) {
        let mut warnings = Vec::new();
        let mut given: Vec<(KeySpec, Action)> = Vec::new();
        let mut rebound = Vec::new();
        match keys {
            None | Some(Value::Null) => {}
            Some(Value::Object(m)) => {
                for (name, v) in m {
                    let Some(&(action, ..)) = ACTIONS.iter().find(|a| a.1 == name) else {
                        warnings.push(format!("keys: no action is called {name:?}"));
                        continue;
                    };
                    let specs: Vec<&Value> = match v {
                        Value::Array(a) => a.iter().collect(),
                        v => vec![v],
                    };
                    rebound.push(action);
                    for s in specs {
                        match s.as_str().map(KeySpec::parse) {
                            Some(Ok(k)) => given.push((k, action)),
                            Some(Err(e)) => warnings.push(format!("keys.{name}: {e}")),
                            None => warnings.push(format!("keys.{name}: {s} is not a string")),
                        }
                    }
                }
            }
            Some(other) => warnings.push(format!("keys: {other} is not an object")),
        }
        let defaults = ACTIONS
            .iter()
            .filter(|a| !rebound.contains(&a.0))
            .flat_map(|&(action, _, keys, _)| {
                keys.iter().map(move |k| {
                    let k = KeySpec::parse(k).expect("default keys parse");
                    (k, action)
                })
            })
            .filter(|(k, _)| !given.iter().any(|(g, _)| g == k));
        let keys = given.iter().cloned().chain(defaults).collect();
        (Bindings { keys }, warnings)
    }

    /// What `key` does, if anything.
    pub fn action(&self, key: &Key) -> Option<Action> {
        self.keys
            .iter()
            .find(|(k, _)| k.matches(key))
            .map(|&(_, a)| a)
    }

    /// The keys bound to `action`, as the help shows them ("A, ArrowLeft").
    pub fn label(&self, action: Action) -> String {
        let keys: Vec<String> = self
            .keys
            .iter()
            .filter(|(_, a)| *a == action)
            .map(|(k, _)| k.label())
            .collect();
        keys.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ch(s: &str) -> Key {
        Key::Character(s.into())
    }

    #[test]
    fn defaults_cover_every_action_once() {
        let b = Bindings::default();
        assert_eq!(b.action(&ch("W")), Some(Action::ZoomIn));
        assert_eq!(b.action(&ch("[")), Some(Action::PrevSlice));
        assert_eq!(b.action(&ch("?")), Some(Action::Help));
        assert_eq!(
            b.action(&Key::Named(NamedKey::ArrowLeft)),
            Some(Action::PanLeft)
        );
        assert_eq!(b.action(&ch("z")), None);
        for (a, ..) in ACTIONS {
            assert!(!b.label(*a).is_empty(), "{a:?} has no key");
        }
        // No key is bound twice by default.
        let mut seen = std::collections::HashSet::new();
        for (k, _) in &b.keys {
            assert!(seen.insert(k.label()), "{} twice", k.label());
        }
    }

    #[test]
    fn settings_rebind_and_take_keys_from_defaults() {
        let keys = json!({"zoom_in": "i", "zoom_out": ["O", "-"], "fit": "w"});
        let (b, warnings) = Bindings::from_settings(Some(&keys));
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(b.action(&ch("i")), Some(Action::ZoomIn));
        assert_eq!(b.action(&ch("o")), Some(Action::ZoomOut));
        assert_eq!(b.action(&ch("-")), Some(Action::ZoomOut));
        // W was zoom in by default: now it is fit, and S no longer zooms out.
        assert_eq!(b.action(&ch("w")), Some(Action::Fit));
        assert_eq!(b.action(&ch("s")), None);
        assert_eq!(b.action(&ch("f")), None);
        assert_eq!(b.label(Action::ZoomOut), "O, -");
    }

    #[test]
    fn bad_bindings_warn_and_keep_the_rest() {
        let keys = json!({
            "zoom_in": "ii",
            "no_such_action": "x",
            "pan_left": ["h", 7, "NotAKey"],
            "fit_all": "end",
        });
        let (b, warnings) = Bindings::from_settings(Some(&keys));
        assert_eq!(warnings.len(), 4, "{warnings:?}");
        assert!(warnings.iter().any(|w| w.contains("no_such_action")));
        assert!(warnings.iter().any(|w| w.contains("\"ii\" is not a key")));
        assert_eq!(b.action(&ch("h")), Some(Action::PanLeft));
        assert_eq!(b.action(&ch("a")), None, "pan_left was rebound");
        // zoom_in was given only a bad key: it has none left, but W is not reused.
        assert_eq!(b.action(&ch("w")), None);
        assert_eq!(b.action(&Key::Named(NamedKey::End)), Some(Action::FitAll));
        let (_, w) = Bindings::from_settings(Some(&json!([1, 2])));
        assert_eq!(w.len(), 1);
    }
}
