//! Sizes for people: one formatter and one parser, both in powers of 1024.

/// Bytes for people: `512 bytes`, `1.5 KB`, `340 MB`, `3.0 GB`. Units are powers of 1024
/// (a KB is 1024 bytes), as [`parse_size`] reads them; one decimal below 10 of a unit, none
/// above.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["bytes", "KB", "MB", "GB", "TB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    match u {
        0 => format!("{n} bytes"),
        _ if v < 10.0 => format!("{v:.1} {}", UNITS[u]),
        _ => format!("{v:.0} {}", UNITS[u]),
    }
}

/// Parses a size: bytes, or with a binary unit K, M, G or T (`512M`, `16G`, `16GB`, `16GiB`).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let mut t = s.trim();
    for suffix in ["iB", "ib", "IB", "B", "b"] {
        if let Some(rest) = t.strip_suffix(suffix) {
            if rest.ends_with(|c: char| "kKmMgGtT".contains(c)) {
                t = rest;
                break;
            }
        }
    }
    let (num, mult) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let m = match c.to_ascii_uppercase() {
                'K' => 1u64 << 10,
                'M' => 1 << 20,
                'G' => 1 << 30,
                'T' => 1 << 40,
                _ => return Err(format!("{s:?}: use bytes or K, M, G, T (for example 16G)")),
            };
            (&t[..i], m)
        }
        _ => (t, 1),
    };
    num.trim()
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .ok_or_else(|| format!("{s:?} is not a size (for example 512M or 16G)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_with_units() {
        assert_eq!(parse_size("1000"), Ok(1000));
        assert_eq!(parse_size("512M"), Ok(512 << 20));
        assert_eq!(parse_size("16g"), Ok(16 << 30));
        assert_eq!(parse_size("16GB"), Ok(16 << 30));
        assert_eq!(parse_size("2KiB"), Ok(2048));
        assert!(parse_size("2B").is_err());
        assert!(parse_size("12X").is_err());
        assert!(parse_size("G").is_err());
    }

    #[test]
    fn human_sizes() {
        assert_eq!(human_bytes(512), "512 bytes");
        assert_eq!(human_bytes(1536), "1.5 KB");
        assert_eq!(human_bytes(340 << 20), "340 MB");
        assert_eq!(human_bytes(3 << 30), "3.0 GB");
        assert_eq!(human_bytes(5 << 40), "5.0 TB");
        assert_eq!(human_bytes(5000 << 40), "5000 TB");
    }

    #[test]
    fn printed_sizes_read_back() {
        for n in [12u64 << 10, 340 << 20, 16 << 30] {
            assert_eq!(parse_size(&human_bytes(n).replace(' ', "")), Ok(n));
        }
    }
}
