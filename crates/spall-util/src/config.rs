//! Where spall keeps what it remembers between runs (the viewer's settings, `spall-cli
//! query`'s history): one rule for every program.

use std::ffi::OsString;
use std::path::PathBuf;

/// The environment variable that overrides the config directory (tests, portable setups).
pub const CONFIG_DIR_VAR: &str = "SPALL_CONFIG_DIR";

/// spall's config directory: `$SPALL_CONFIG_DIR` when set, else the platform's (for
/// example `~/.config/spall` on Linux); `None` where there is neither (no home directory,
/// or the web).
pub fn config_dir() -> Option<PathBuf> {
    choose(std::env::var_os(CONFIG_DIR_VAR), platform_dir)
}

/// The viewer's settings file, `settings.json` in [`config_dir`]; `spall-cli markers`
/// reads the markers kept there.
pub fn settings_path() -> Option<PathBuf> {
    config_dir().map(|d| d.join("settings.json"))
}

/// The rule, apart from the environment: the override wins, even where the platform has
/// a directory.
fn choose(over: Option<OsString>, platform: impl FnOnce() -> Option<PathBuf>) -> Option<PathBuf> {
    match over {
        Some(d) if !d.is_empty() => Some(PathBuf::from(d)),
        _ => platform(),
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn platform_dir() -> Option<PathBuf> {
    let dirs = directories::ProjectDirs::from("", "", "spall")?;
    Some(dirs.config_dir().to_path_buf())
}

#[cfg(target_arch = "wasm32")]
fn platform_dir() -> Option<PathBuf> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_variable_wins_over_the_platform() {
        let home = || Some(PathBuf::from("/home/u/.config/spall"));
        assert_eq!(
            choose(Some("/tmp/cfg".into()), home),
            Some(PathBuf::from("/tmp/cfg"))
        );
        assert_eq!(choose(None, home), home());
        assert_eq!(choose(Some("".into()), home), home());
        assert_eq!(choose(None, || None), None);
    }
}
