//! trace_processor's tables of samples: `stack_profile_callsite`, `stack_profile_frame`,
//! `stack_profile_mapping`, and the samples as `cpu_profile_stack_sample` (Chrome's V8
//! profiles, and every profile format trace_processor does not read) or `perf_sample`
//! (`perf script`).
//!
//! A callsite is one of the model's frames (a function called from a callsite: the model
//! interns frames with their caller), in the model's order, for the frames of the samples
//! trace_processor reads: a JSON trace's V8 profiles, not its plain `P` events. Where the
//! trace holds a V8 profile, trace_processor keeps V8's `(root)` node as the outermost
//! callsite of every stack, which the model leaves out (it is no function): callsite 0 is
//! then that root, and every stack one level deeper; and it keeps a nameless function's
//! empty name, which the model gives as DevTools does, `(anonymous)`. A
//! `stack_profile_frame` is a function: a distinct (name, module or file, line), its
//! mapping the module or file (one mapping with no name for frames without one, as
//! trace_processor gives V8's frames).

use std::collections::HashMap;

use spall_format::{Format, ProfileFormat, SampleUnit};

use crate::samples::NO_FRAME;
use crate::strings::StrId;
use crate::trace::Trace;

/// One `stack_profile_frame` row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SqlFrame {
    /// The function's name.
    pub name: StrId,
    /// Its `stack_profile_mapping` id.
    pub mapping: u32,
    /// Its line, 0 where not given.
    pub line: u32,
}

/// The sample tables' ids (see the module docs).
#[derive(Clone, Debug, Default)]
pub struct SampleIds {
    /// Whether callsite 0 is V8's `(root)`, above every model frame.
    pub v8_root: bool,
    /// Whether the samples are `perf_sample`'s (else `cpu_profile_stack_sample`'s).
    pub perf: bool,
    /// Per model frame, its callsite id (`u32::MAX` for a frame of no sample in SQL).
    callsite_of: Vec<u32>,
    /// Per callsite id, its `stack_profile_frame` id.
    pub callsite_frame: Vec<u32>,
    /// Per callsite id, its depth (0 is the outermost).
    pub callsite_depth: Vec<u32>,
    /// Per callsite id, its parent's id, or `None` for an outermost one.
    pub callsite_parent: Vec<Option<u32>>,
    /// The `stack_profile_frame` rows, by id.
    pub frames: Vec<SqlFrame>,
    /// The `stack_profile_mapping` names, by id.
    pub mappings: Vec<StrId>,
    /// The sample tracks in SQL (indices into `Trace::samples`), and the id of each one's
    /// first sample: a track's samples have consecutive ids.
    tracks: Vec<(u32, u64)>,
    /// The number of samples in SQL.
    samples: u64,
}

impl SampleIds {
    /// O(frames + samples).
    pub(crate) fn new(t: &Trace) -> SampleIds {
        let fmt = t.decode_summary().format;
        // trace_processor reads a JSON trace's V8 profiles (in nanoseconds), not its plain
        // `P` events (counts).
        let in_sql = |s: &crate::SampleTrack| fmt != Format::Json || s.unit != SampleUnit::Count;
        let v8_root = fmt == Format::Json && t.samples().iter().any(in_sql);
        let mut ids = SampleIds {
            v8_root,
            perf: fmt == Format::Profile(ProfileFormat::Perf),
            ..SampleIds::default()
        };
        let frames = t.frames();
        // The frames of the samples in SQL, and their callers.
        let mut used = vec![false; frames.len()];
        for (i, st) in t.samples().iter().enumerate() {
            if !in_sql(st) {
                continue;
            }
            ids.tracks.push((i as u32, ids.samples));
            ids.samples += st.ts.len() as u64;
            for &leaf in &st.frame {
                let mut f = leaf;
                while let Some(u) = used.get_mut(f as usize).filter(|u| !**u) {
                    *u = true;
                    f = frames[f as usize].parent;
                }
            }
        }
        let mut mapping_ids: HashMap<StrId, u32> = HashMap::new();
        let mut frame_ids: HashMap<SqlFrame, u32> = HashMap::new();
        let anonymous = t.strings().lookup("(anonymous)");
        let mut frame_of = |ids: &mut SampleIds, name: StrId, file: StrId, line: u32| {
            // The model names V8's nameless functions as DevTools does; trace_processor
            // keeps the empty name.
            let name = if v8_root && Some(name) == anonymous {
                StrId::EMPTY
            } else {
                name
            };
            let mapping = *mapping_ids.entry(file).or_insert_with(|| {
                ids.mappings.push(file);
                ids.mappings.len() as u32 - 1
            });
            let f = SqlFrame {
                name,
                mapping,
                line,
            };
            *frame_ids.entry(f).or_insert_with(|| {
                ids.frames.push(f);
                ids.frames.len() as u32 - 1
            })
        };
        if v8_root {
            let root = t.strings().lookup("(root)").unwrap_or(StrId::EMPTY);
            let f = frame_of(&mut ids, root, StrId::EMPTY, 0);
            ids.push_callsite(f, 0, None);
        }
        ids.callsite_of = vec![u32::MAX; frames.len()];
        // A frame's caller comes before it in the model's table.
        for (i, fr) in frames.iter().enumerate().filter(|(i, _)| used[*i]) {
            let f = frame_of(&mut ids, fr.name, fr.file, fr.line);
            let (parent, depth) = match ids.callsite(fr.parent) {
                None => (None, 0),
                Some(p) => (Some(p), ids.callsite_depth[p as usize] + 1),
            };
            ids.callsite_of[i] = ids.callsite_frame.len() as u32;
            ids.push_callsite(f, depth, parent);
        }
        ids
    }

    fn push_callsite(&mut self, frame: u32, depth: u32, parent: Option<u32>) {
        self.callsite_frame.push(frame);
        self.callsite_depth.push(depth);
        self.callsite_parent.push(parent);
    }

    /// The callsite id of the model's frame `f` (`None` for [`NO_FRAME`], a sample with no
    /// stack, which is V8's root where it is kept).
    pub fn callsite(&self, f: u32) -> Option<u32> {
        match f {
            NO_FRAME => self.v8_root.then_some(0),
            f => self
                .callsite_of
                .get(f as usize)
                .copied()
                .filter(|&c| c != u32::MAX),
        }
    }

    /// The number of samples: ids are `0..sample_count()`.
    pub fn sample_count(&self) -> u64 {
        self.samples
    }

    /// Sample `id` as (track, index in the track).
    pub fn sample(&self, id: u64) -> Option<(u32, u32)> {
        if id >= self.samples {
            return None;
        }
        let k = self
            .tracks
            .partition_point(|&(_, f)| f <= id)
            .checked_sub(1)?;
        let (track, first) = self.tracks[k];
        Some((track, (id - first) as u32))
    }
}
