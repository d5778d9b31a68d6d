//! Tables as CSV (RFC 4180) or TSV text, for the panels' copy buttons.

use trace_model::NameStats;

use crate::loaded::Loaded;

/// One field of a CSV (RFC 4180) or TSV table: quoted when it holds the separator, a
/// quote or a line break, quotes doubled.
pub fn csv_field(s: &str, sep: char) -> std::borrow::Cow<'_, str> {
    if s.contains([sep, '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\"")).into()
    } else {
        s.into()
    }
}

/// A table as CSV or TSV text: the header, then each row, CRLF line ends.
pub fn csv<R, F>(header: &[&str], rows: R, sep: char) -> String
where
    R: IntoIterator<Item = Vec<F>>,
    F: AsRef<str>,
{
    let mut out = String::new();
    let mut line = |fields: &mut dyn Iterator<Item = &str>| {
        for (i, f) in fields.enumerate() {
            if i > 0 {
                out.push(sep);
            }
            out.push_str(&csv_field(f, sep));
        }
        out.push_str("\r\n");
    };
    line(&mut header.iter().copied());
    for r in rows {
        line(&mut r.iter().map(AsRef::as_ref));
    }
    out
}

/// Rows as CSV (RFC 4180: fields with the separator, quotes or line breaks quoted, quotes
/// doubled) or TSV (the same quoting with tabs), with a header; times in ns.
pub fn table_text<'a>(
    l: &Loaded,
    rows: impl IntoIterator<Item = &'a NameStats>,
    sep: char,
) -> String {
    let head = [
        "name", "count", "total_ns", "self_ns", "mean_ns", "min_ns", "p50_ns", "p90_ns", "p99_ns",
        "max_ns",
    ];
    let rows = rows.into_iter().map(|r| {
        let nums = [
            r.count as i64,
            r.total_ns,
            r.self_ns,
            r.mean_ns,
            r.min_ns,
            r.p50_ns,
            r.p90_ns,
            r.p99_ns,
            r.max_ns,
        ];
        std::iter::once(l.trace.str(r.name).to_string())
            .chain(nums.iter().map(i64::to_string))
            .collect::<Vec<_>>()
    });
    csv(&head, rows, sep)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copied_tables_follow_rfc_4180() {
        let l = Loaded::new(
            trace_model::load_bytes(
                br#"[{"ph":"X","name":"a, \"b\"","ts":0,"dur":2,"pid":1,"tid":1},
                     {"ph":"X","name":"tab\there","ts":5,"dur":1,"pid":1,"tid":1}]"#,
            )
            .unwrap(),
            "t".into(),
        );
        let stats = l.trace.stats(&Default::default());
        let csv = table_text(&l, &stats, ',');
        let lines: Vec<&str> = csv.split("\r\n").collect();
        assert!(lines[0].starts_with("name,count,total_ns,self_ns"));
        assert_eq!(
            lines[1],
            "\"a, \"\"b\"\"\",1,2000,2000,2000,2000,2000,2000,2000,2000"
        );
        assert_eq!(
            lines[2],
            "tab\there,1,1000,1000,1000,1000,1000,1000,1000,1000"
        );
        let tsv = table_text(&l, &stats, '\t');
        assert!(tsv.contains("\"tab\there\"\t1\t1000"), "{tsv}");
    }
}
