//! Vector kernels, each beside the scalar code it must agree with (tests compare them).
//! Only instructions every CPU of the target has are used (SSE2 on x86_64), so no runtime
//! detection is needed; other targets run the scalar code.

#[cfg(target_arch = "x86_64")]
pub(crate) mod sse2;
