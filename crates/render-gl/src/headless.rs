//! Rendering with no window system: an EGL device display (Mesa's software device when
//! there are several), a surfaceless OpenGL 3.3 core context, and a framebuffer object.

use std::num::NonZeroU32;
use std::sync::Arc;

use glow::HasContext;
use glutin::api::egl::context::PossiblyCurrentContext;
use glutin::api::egl::device::Device;
use glutin::api::egl::display::Display;
use glutin::config::{Api, ConfigSurfaceTypes, ConfigTemplateBuilder};
use glutin::context::{ContextApi, ContextAttributesBuilder, Version};
use glutin::prelude::*;

use crate::shaders::ShaderVersion;
use crate::{gl_err, RenderError};

/// An offscreen GL context with a colour framebuffer of a given size.
pub struct Headless {
    gl: Arc<glow::Context>,
    // Dropped after `gl`'s objects: keeps the context alive.
    _context: PossiblyCurrentContext,
    _display: Display,
    fbo: glow::Framebuffer,
    rbo: glow::Renderbuffer,
    width: u32,
    height: u32,
    device_name: String,
}

impl std::fmt::Debug for Headless {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Headless")
            .field("width", &self.width)
            .field("height", &self.height)
            .field("device", &self.device_name)
            .finish_non_exhaustive()
    }
}

fn err(what: &'static str) -> impl Fn(glutin::error::Error) -> RenderError {
    move |e| RenderError::Context {
        what,
        detail: e.to_string(),
    }
}

impl Headless {
    /// Opens a surfaceless context on an EGL device and a `width × height` framebuffer.
    /// Prefers the software device (`EGL_MESA_device_software`, llvmpipe), which exists on
    /// every Mesa install and needs no display or GPU.
    pub fn new(width: u32, height: u32) -> Result<Headless, RenderError> {
        Headless::with_version(width, height, ShaderVersion::Gl33)
    }

    /// Like [`new`](Headless::new), with an OpenGL ES 3.0 context for
    /// [`ShaderVersion::Gles30`] (to check the shaders stay portable).
    pub fn with_version(
        width: u32,
        height: u32,
        version: ShaderVersion,
    ) -> Result<Headless, RenderError> {
        let devices: Vec<Device> = Device::query_devices()
            .map_err(err("no EGL devices (is libEGL installed?)"))?
            .collect();
        let device = devices
            .iter()
            .find(|d| d.extensions().contains("EGL_MESA_device_software"))
            .or(devices.first())
            .ok_or_else(|| RenderError::Context {
                what: "finding an EGL device",
                detail: "EGL lists none".into(),
            })?;
        let device_name = device
            .name()
            .or(device.vendor())
            .unwrap_or("unknown EGL device")
            .to_string();
        // SAFETY: no native display handle is passed; the device came from EGL itself.
        let display = unsafe { Display::with_device(device, None) }.map_err(err("EGL display"))?;
        let (api, context_api) = match version {
            ShaderVersion::Gl33 => (Api::OPENGL, ContextApi::OpenGl(Some(Version::new(3, 3)))),
            ShaderVersion::Gles30 => (Api::GLES3, ContextApi::Gles(Some(Version::new(3, 0)))),
        };
        let template = ConfigTemplateBuilder::new()
            .with_surface_type(ConfigSurfaceTypes::empty())
            .with_api(api)
            .build();
        // SAFETY: the display is valid for the duration of the call.
        let config = unsafe { display.find_configs(template) }
            .map_err(err("EGL configs"))?
            .next()
            .ok_or_else(|| RenderError::Context {
                what: "finding an EGL config",
                detail: format!("none for {version:?}"),
            })?;
        let attrs = ContextAttributesBuilder::new()
            .with_context_api(context_api)
            .build(None);
        // SAFETY: config comes from this display; no window handle is involved.
        let context = unsafe { display.create_context(&config, &attrs) }
            .map_err(err("creating the GL context"))?
            .make_current_surfaceless()
            .map_err(err("making the context current"))?;
        // SAFETY: the context is current on this thread; the loader resolves GL symbols.
        let gl = unsafe {
            glow::Context::from_loader_function_cstr(|s| display.get_proc_address(s) as *const _)
        };
        let gl = Arc::new(gl);
        let (fbo, rbo) = unsafe { make_target(&gl, width, height)? };
        Ok(Headless {
            gl,
            _context: context,
            _display: display,
            fbo,
            rbo,
            width,
            height,
            device_name,
        })
    }

    /// The GL context, current on this thread, to hand to [`Renderer::new`](crate::Renderer::new).
    pub fn gl(&self) -> &Arc<glow::Context> {
        &self.gl
    }

    /// Width and height of the framebuffer, in pixels.
    pub fn size(&self) -> (u32, u32) {
        (self.width, self.height)
    }

    /// `GL_RENDERER`, e.g. "llvmpipe (LLVM 15.0.6, 256 bits)".
    pub fn renderer_name(&self) -> String {
        // SAFETY: the context is current.
        unsafe { self.gl.get_parameter_string(glow::RENDERER) }
    }

    /// Resizes the framebuffer (contents undefined until the next render).
    pub fn resize(&mut self, width: u32, height: u32) -> Result<(), RenderError> {
        if (width, height) == (self.width, self.height) {
            return Ok(());
        }
        // SAFETY: the context is current; the old objects are ours.
        unsafe {
            self.gl.delete_framebuffer(self.fbo);
            self.gl.delete_renderbuffer(self.rbo);
            let (fbo, rbo) = make_target(&self.gl, width, height)?;
            self.fbo = fbo;
            self.rbo = rbo;
        }
        self.width = width;
        self.height = height;
        Ok(())
    }

    /// Binds the framebuffer for drawing.
    pub fn bind(&self) {
        // SAFETY: the context is current; the framebuffer is ours.
        unsafe { self.gl.bind_framebuffer(glow::FRAMEBUFFER, Some(self.fbo)) }
    }

    /// The framebuffer's pixels, RGBA, rows from the top.
    pub fn read_rgba(&self) -> Vec<u8> {
        let (w, h) = (self.width as usize, self.height as usize);
        let mut px = vec![0u8; w * h * 4];
        // SAFETY: the buffer holds exactly w × h RGBA pixels; pack alignment 1.
        unsafe {
            self.gl.bind_framebuffer(glow::FRAMEBUFFER, Some(self.fbo));
            self.gl.finish();
            self.gl.pixel_store_i32(glow::PACK_ALIGNMENT, 1);
            self.gl.read_pixels(
                0,
                0,
                w as i32,
                h as i32,
                glow::RGBA,
                glow::UNSIGNED_BYTE,
                glow::PixelPackData::Slice(Some(&mut px)),
            );
        }
        // GL rows run bottom-up; images run top-down.
        let row = w * 4;
        let mut out = vec![0u8; px.len()];
        for y in 0..h {
            out[y * row..(y + 1) * row].copy_from_slice(&px[(h - 1 - y) * row..(h - y) * row]);
        }
        out
    }
}

unsafe fn make_target(
    gl: &glow::Context,
    w: u32,
    h: u32,
) -> Result<(glow::Framebuffer, glow::Renderbuffer), RenderError> {
    let w = NonZeroU32::new(w).ok_or(RenderError::ZeroSize)?;
    let h = NonZeroU32::new(h).ok_or(RenderError::ZeroSize)?;
    let fbo = gl
        .create_framebuffer()
        .map_err(gl_err("creating a framebuffer"))?;
    let rbo = gl
        .create_renderbuffer()
        .map_err(gl_err("creating a renderbuffer"))?;
    gl.bind_renderbuffer(glow::RENDERBUFFER, Some(rbo));
    gl.renderbuffer_storage(
        glow::RENDERBUFFER,
        glow::RGBA8,
        w.get() as i32,
        h.get() as i32,
    );
    gl.bind_framebuffer(glow::FRAMEBUFFER, Some(fbo));
    gl.framebuffer_renderbuffer(
        glow::FRAMEBUFFER,
        glow::COLOR_ATTACHMENT0,
        glow::RENDERBUFFER,
        Some(rbo),
    );
    let status = gl.check_framebuffer_status(glow::FRAMEBUFFER);
    if status != glow::FRAMEBUFFER_COMPLETE {
        return Err(RenderError::Gl {
            what: "the framebuffer is incomplete",
            detail: format!("status 0x{status:x}"),
        });
    }
    Ok((fbo, rbo))
}
