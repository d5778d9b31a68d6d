//! What only a trace's buffer holds beside its columns: ids, diagnostics and their kinds'
//! tags, the decode's summary.

use std::collections::BTreeMap;
use std::sync::Mutex;

use spall_format::{
    DiagnosticKind, Diagnostics, Format, JsonInfo, Phase, ProfileFormat, SpallHeader, Summary,
    TopLevelKey, Warning, WarningKind,
};

use super::{TransferError, R, W};
use crate::diag::{ModelWarning, SCHED_STATS};
use crate::span::ExtId;
use crate::strings::StrId;

pub(super) fn model_tag(k: ModelWarning) -> (u8, u8) {
    use ModelWarning::*;
    match k {
        EndNameMismatch => (0, 0),
        EndWithoutBegin => (1, 0),
        UnclosedBegin => (2, 0),
        PartialOverlap => (3, 0),
        BadDuration => (4, 0),
        CounterNotNumeric => (5, 0),
        CounterWithoutValues => (6, 0),
        BadMetadata => (7, 0),
        FlowWithoutId => (8, 0),
        FlowUnbound => (9, 0),
        AsyncEndWithoutBegin => (10, 0),
        UnfinishedAsync => (11, 0),
        BadSamples => (12, 0),
        UnmodelledPhase(p) => (13, p.0),
        MisplacedEnd => (14, 0),
        Sched(name) => (
            15,
            SCHED_STATS.iter().position(|n| *n == name).unwrap_or(0) as u8,
        ),
    }
}

pub(super) fn model_kind(tag: u8, phase: u8) -> Option<ModelWarning> {
    use ModelWarning::*;
    Some(match tag {
        0 => EndNameMismatch,
        1 => EndWithoutBegin,
        2 => UnclosedBegin,
        3 => PartialOverlap,
        4 => BadDuration,
        5 => CounterNotNumeric,
        6 => CounterWithoutValues,
        7 => BadMetadata,
        8 => FlowWithoutId,
        9 => FlowUnbound,
        10 => AsyncEndWithoutBegin,
        11 => UnfinishedAsync,
        12 => BadSamples,
        13 => UnmodelledPhase(Phase(phase)),
        14 => MisplacedEnd,
        15 => Sched(SCHED_STATS.get(phase as usize)?),
        _ => return None,
    })
}

/// The kind named `name`; any other name is an unmodelled protobuf packet kind, whose
/// `&'static` name is kept once per distinct name (a handful per run of the program).
fn decode_kind(name: &str) -> WarningKind {
    if let Some(k) = WarningKind::from_name(name) {
        return k;
    }
    static NAMES: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    let kept = match names.iter().find(|n| **n == name) {
        Some(n) => n,
        None => {
            let n: &'static str = Box::leak(name.to_owned().into_boxed_str());
            names.push(n);
            n
        }
    };
    WarningKind::ProtoUnmodelled(kept)
}

/// What only a trace's buffer holds: ids, diagnostics, the decode's summary.
impl W<'_> {
    pub(crate) fn opt_str(&mut self, v: Option<StrId>) {
        self.opt_u32(v.map(|s| s.0));
    }

    pub(crate) fn ext(&mut self, e: ExtId) {
        match e {
            ExtId::Num(n) => {
                self.u8(0);
                self.i64(n);
            }
            ExtId::Str(s) => {
                self.u8(1);
                self.i64(s.0 as i64);
            }
        }
    }

    pub(crate) fn ids(&mut self, v: &[StrId]) {
        self.u32s_by(v, |s| s.0);
    }

    pub(crate) fn diags<K: DiagnosticKind>(
        &mut self,
        d: &Diagnostics<K>,
        kind: impl Fn(&mut Self, K),
    ) {
        let counts: Vec<_> = d.counts().collect();
        self.list(&counts, |w, &(k, n)| {
            kind(w, k);
            w.u64(n);
        });
        self.list(d.examples(), |w, e| {
            kind(w, e.kind);
            w.u64(e.offset);
            w.str(&e.message);
        });
    }

    pub(crate) fn summary(&mut self, s: &Summary) {
        self.u8(match s.format {
            Format::SpallV1 => 0,
            Format::SpallV3 => 1,
            Format::Json => 2,
            Format::Proto => 3,
            Format::Profile(ProfileFormat::Perf) => 4,
            Format::Profile(ProfileFormat::Collapsed) => 5,
            Format::Profile(ProfileFormat::CpuProfile) => 6,
            Format::Profile(ProfileFormat::Speedscope) => 7,
            Format::Profile(ProfileFormat::Pprof) => 8,
            Format::Profile(ProfileFormat::Gecko) => 9,
            Format::Systrace => 10,
        });
        self.u8(s.gzip as u8);
        self.u64(s.input_bytes);
        self.u64(s.decoded_bytes);
        self.u64(s.parsed_bytes);
        self.u64(s.events);
        self.diags(&s.diagnostics, |w, k| w.str(k.as_str()));
        self.u8(s.spall.is_some() as u8);
        if let Some(h) = &s.spall {
            self.u64(h.version);
            self.u64(h.timestamp_unit.to_bits());
        }
        self.u8(s.json.is_some() as u8);
        if let Some(j) = &s.json {
            self.u8(j.object_form as u8);
            self.u8(j.display_time_unit.is_some() as u8);
            self.str(j.display_time_unit.as_deref().unwrap_or(""));
            self.list(&j.other_keys, |w, k| {
                w.str(&k.name);
                w.u64(k.value.start);
                w.u64(k.value.end);
            });
        }
    }
}

impl<'a> R<'a> {
    pub(crate) fn opt_str(&mut self) -> Result<Option<StrId>, TransferError> {
        Ok(self.opt_u32()?.map(StrId))
    }

    pub(crate) fn ext(&mut self) -> Result<ExtId, TransferError> {
        let tag = self.u8()?;
        let v = self.i64()?;
        match (tag, u32::try_from(v)) {
            (0, _) => Ok(ExtId::Num(v)),
            (1, Ok(s)) => Ok(ExtId::Str(StrId(s))),
            _ => Err(self.fail("a process or thread id")),
        }
    }

    pub(crate) fn ids(&mut self) -> Result<Vec<StrId>, TransferError> {
        Ok(self.u32s()?.into_iter().map(StrId).collect())
    }

    pub(crate) fn diags<K: DiagnosticKind>(
        &mut self,
        kind: impl Fn(&mut R<'a>) -> Result<K, TransferError>,
    ) -> Result<Diagnostics<K>, TransferError> {
        let counts = self.list(|r| Ok((kind(r)?, r.u64()?)))?;
        let examples = self.list(|r| {
            Ok(Warning {
                kind: kind(r)?,
                offset: r.u64()?,
                message: r.str()?.to_owned(),
            })
        })?;
        let counts: BTreeMap<K, u64> = counts.into_iter().collect();
        Ok(Diagnostics::from_parts(counts, examples))
    }

    pub(crate) fn summary(&mut self) -> Result<Summary, TransferError> {
        let format = match self.u8()? {
            0 => Format::SpallV1,
            1 => Format::SpallV3,
            2 => Format::Json,
            3 => Format::Proto,
            4 => Format::Profile(ProfileFormat::Perf),
            5 => Format::Profile(ProfileFormat::Collapsed),
            6 => Format::Profile(ProfileFormat::CpuProfile),
            7 => Format::Profile(ProfileFormat::Speedscope),
            8 => Format::Profile(ProfileFormat::Pprof),
            9 => Format::Profile(ProfileFormat::Gecko),
            10 => Format::Systrace,
            _ => return Err(self.fail("a format")),
        };
        let gzip = self.bool()?;
        let (input_bytes, decoded_bytes) = (self.u64()?, self.u64()?);
        let (parsed_bytes, events) = (self.u64()?, self.u64()?);
        let diagnostics = self.diags(|r| Ok(decode_kind(r.str()?)))?;
        let spall = match self.bool()? {
            true => Some(SpallHeader {
                version: self.u64()?,
                timestamp_unit: f64::from_bits(self.u64()?),
            }),
            false => None,
        };
        let json = match self.bool()? {
            true => {
                let object_form = self.bool()?;
                let has_unit = self.bool()?;
                let unit = self.str()?;
                Some(JsonInfo {
                    object_form,
                    display_time_unit: has_unit.then(|| unit.to_owned()),
                    other_keys: self.list(|r| {
                        Ok(TopLevelKey {
                            name: r.str()?.to_owned(),
                            value: r.u64()?..r.u64()?,
                        })
                    })?,
                })
            }
            false => None,
        };
        Ok(Summary {
            format,
            gzip,
            input_bytes,
            decoded_bytes,
            parsed_bytes,
            events,
            diagnostics,
            spall,
            json,
        })
    }
}
