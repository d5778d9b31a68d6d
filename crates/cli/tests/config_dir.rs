//! The programs' files under `SPALL_CONFIG_DIR`: `spall-cli query`'s history and the
//! settings `spall-cli markers` reads. A test binary of its own, because it sets the
//! variable for its whole process.

use std::path::PathBuf;

#[test]
fn query_history_and_settings_follow_spall_config_dir() {
    let dir = std::env::temp_dir().join(format!("spall-config-{}", std::process::id()));
    let home = std::env::temp_dir().join(format!("spall-home-{}", std::process::id()));
    // The only test in this process: nothing reads the environment meanwhile.
    std::env::set_var("SPALL_CONFIG_DIR", &dir);
    std::env::set_var("HOME", &home);
    std::env::set_var("XDG_CONFIG_HOME", home.join(".config"));
    assert_eq!(
        spall_cli::query::history_path(),
        Some(dir.join("query_history"))
    );
    assert_eq!(spall_util::settings_path(), Some(dir.join("settings.json")));
    // Without it, both fall back to the platform's directory, as the viewer does.
    std::env::remove_var("SPALL_CONFIG_DIR");
    let platform: Option<PathBuf> = spall_util::config_dir();
    assert_ne!(platform, Some(dir.clone()));
    assert_eq!(
        spall_cli::query::history_path(),
        platform.map(|d| d.join("query_history"))
    );
}
