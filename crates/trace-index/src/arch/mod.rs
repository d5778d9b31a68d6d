//! Vector kernels, per CPU architecture, each behind a token type that only a run-time check
//! of the CPU can make. The scalar code they speed up is the reference: each kernel's unit
//! test compares it with the scalar code.

#[cfg(target_arch = "x86_64")]
#[path = "x86_64/avx2.rs"]
pub(crate) mod avx2;
