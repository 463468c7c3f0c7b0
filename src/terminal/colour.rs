//! `Colour`: a cell's foreground as the terminal was told it — the default, one of the 256
//! indexed colours, or 24-bit RGB. The rules read it (a dim hint, a red error); nothing renders it.

/// A cell's foreground colour.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Colour {
    /// The terminal's default foreground (SGR 39, or never set).
    #[default]
    Default,
    /// One of the 256 indexed colours (0–7 normal, 8–15 bright, then the cube and greys).
    Idx(u8),
    /// A 24-bit colour.
    Rgb(u8, u8, u8),
}
