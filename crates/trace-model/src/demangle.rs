//! Mangled symbol names made readable, as speedscope and the Firefox Profiler show them:
//! Rust's legacy (`_ZN...17h<hash>E`) and v0 (`_R...`) names by `rustc-demangle` in its
//! alternate form (no hash: `std::rt::lang_start::<()>::{closure#0}`, as `perf` prints
//! them), C++'s Itanium names (`_Z...`) by `cpp_demangle`, with their parameters, as
//! `c++filt` prints them (`work::run(long)`). A leading extra `_` (Mach-O's `__Z`, `__R`)
//! is accepted. Only names that start like a mangled one are tried, so the cost is one
//! prefix test per new frame name.

/// `name` demangled, or `None` when it is not a mangled name (or does not parse as one).
pub(crate) fn demangle(name: &str) -> Option<String> {
    let bare = name
        .strip_prefix('_')
        .filter(|n| n.starts_with("_Z") || n.starts_with("_R"));
    let sym = bare.unwrap_or(name);
    if !(sym.starts_with("_Z") || sym.starts_with("_R")) {
        return None;
    }
    if let Ok(d) = rustc_demangle::try_demangle(sym) {
        return Some(format!("{d:#}"));
    }
    if !sym.starts_with("_Z") {
        return None;
    }
    let s = cpp_demangle::Symbol::new(sym).ok()?;
    s.demangle(&cpp_demangle::DemangleOptions::default()).ok()
}

#[cfg(test)]
mod tests {
    use super::demangle;

    #[test]
    fn rust_legacy_and_v0_and_cpp() {
        let cases = [
            // Rust legacy: the hash left out, `$u7b$` escapes undone.
            (
                "_ZN3std2rt10lang_start28_$u7b$$u7b$closure$u7d$$u7d$17h54d4d8b820eabfaaE",
                "std::rt::lang_start::{{closure}}",
            ),
            // Rust v0: generic arguments shown, crate hashes not.
            (
                "_RNCINvNtCsjrHSEGnQ3l9_3std2rt10lang_startuE0Cs9osdHJuzNgD_4spin",
                "std::rt::lang_start::<()>::{closure#0}",
            ),
            // C++: templates and parameters; Mach-O's extra underscore.
            ("_ZN4work3AccIiE3addEi", "work::Acc<int>::add(int)"),
            ("__ZN4work3runEl", "work::run(long)"),
            ("_ZN4work3runEi.cold", "work::run(int) [clone .cold]"),
        ];
        for (raw, want) in cases {
            assert_eq!(demangle(raw).as_deref(), Some(want), "{raw}");
        }
        for plain in [
            "main",
            "_start",
            "_Zebra",
            "_R",
            "__libc_start_main",
            "Z",
            "",
        ] {
            assert_eq!(demangle(plain), None, "{plain}");
        }
    }
}
