//! Light and dark themes.

use render_gl::Color;

/// Which palette.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThemeKind {
    /// Dark text on a light background.
    Light,
    /// Light text on a dark background.
    Dark,
}

/// Every colour the timeline uses.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Theme {
    /// Which palette this is.
    pub kind: ThemeKind,
    /// Behind everything.
    pub background: Color,
    /// Labels and headers.
    pub text: Color,
    /// Secondary text: times, counts, axis labels.
    pub text_dim: Color,
    /// The time ruler's background.
    pub ruler: Color,
    /// Ruler ticks, grid lines and outlines.
    pub tick: Color,
    /// Process header rows.
    pub process_header: Color,
    /// Thread header rows.
    pub thread_header: Color,
    /// The outline of the selected span.
    pub selection: Color,
    /// Shading over the marked time range.
    pub range: Color,
    /// The marked range's edges.
    pub range_edge: Color,
    /// The minimap's background.
    pub minimap: Color,
    /// The minimap's activity bars.
    pub minimap_bars: Color,
    /// The minimap's box around the visible time window.
    pub minimap_window: Color,
    /// Tooltip background.
    pub tooltip: Color,
    /// The bar under spans that match the search.
    pub match_marker: Color,
    /// Flow arrows.
    pub flow: Color,
    /// The banner that says the trace loaded with warnings.
    pub warning: Color,
    /// How much to keep of a span's colour when a search dims it (0..=255).
    pub dim_alpha: u8,
}

impl Theme {
    /// The palette of `kind`.
    pub fn new(kind: ThemeKind) -> Theme {
        match kind {
            ThemeKind::Light => Theme {
                kind,
                background: Color::rgb(250, 250, 252),
                text: Color::rgb(20, 20, 24),
                text_dim: Color::rgb(100, 100, 110),
                ruler: Color::rgb(236, 237, 241),
                tick: Color::rgb(200, 202, 210),
                process_header: Color::rgb(222, 225, 233),
                thread_header: Color::rgb(238, 240, 245),
                selection: Color::rgb(255, 140, 0),
                range: Color::rgba(60, 120, 255, 40),
                range_edge: Color::rgb(60, 120, 255),
                minimap: Color::rgb(232, 233, 238),
                minimap_bars: Color::rgb(120, 130, 160),
                minimap_window: Color::rgba(60, 120, 255, 50),
                tooltip: Color::rgba(255, 255, 240, 245),
                match_marker: Color::rgb(255, 200, 0),
                warning: Color::rgb(255, 222, 140),
                flow: Color::rgb(30, 30, 40),
                dim_alpha: 60,
            },
            ThemeKind::Dark => Theme {
                kind,
                background: Color::rgb(24, 25, 30),
                text: Color::rgb(230, 230, 235),
                text_dim: Color::rgb(150, 152, 160),
                ruler: Color::rgb(36, 38, 45),
                tick: Color::rgb(60, 63, 74),
                process_header: Color::rgb(48, 51, 62),
                thread_header: Color::rgb(36, 38, 46),
                selection: Color::rgb(255, 170, 40),
                range: Color::rgba(90, 150, 255, 50),
                range_edge: Color::rgb(90, 150, 255),
                minimap: Color::rgb(32, 34, 40),
                minimap_bars: Color::rgb(110, 120, 150),
                minimap_window: Color::rgba(90, 150, 255, 60),
                tooltip: Color::rgba(44, 46, 54, 245),
                match_marker: Color::rgb(255, 210, 0),
                warning: Color::rgb(110, 78, 10),
                flow: Color::rgb(235, 235, 245),
                dim_alpha: 50,
            },
        }
    }

    /// The other palette (light for dark, dark for light).
    pub fn toggled(&self) -> Theme {
        Theme::new(match self.kind {
            ThemeKind::Light => ThemeKind::Dark,
            ThemeKind::Dark => ThemeKind::Light,
        })
    }

    /// A span's fill for its name's base colour (slightly deeper in the dark theme).
    pub fn span_fill(&self, base: Color) -> Color {
        match self.kind {
            ThemeKind::Light => base,
            ThemeKind::Dark => {
                let [r, g, b, a] = base.0;
                Color([
                    (r as u16 * 3 / 4) as u8,
                    (g as u16 * 3 / 4) as u8,
                    (b as u16 * 3 / 4) as u8,
                    a,
                ])
            }
        }
    }

    /// Readable text on a fill.
    pub fn text_on(&self, fill: Color) -> Color {
        if fill.luma() > 0.55 {
            Color::rgb(15, 15, 20)
        } else {
            Color::rgb(250, 250, 250)
        }
    }
}
