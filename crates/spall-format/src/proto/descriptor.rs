//! The shape of the generated descriptor tables (`typed_fields.rs`): a message's fields and
//! their types, as the args show them.

/// A field's type. (Every scalar type the generator can emit, whether or not today's
/// messages use it.)
#[allow(dead_code)]
#[derive(Clone, Copy, Debug)]
pub(super) enum Ty {
    Int,
    Sint,
    Uint,
    Sfixed32,
    Sfixed64,
    Bool,
    Double,
    Float,
    Str,
    /// An index into `ENUMS` (`typed_enums.rs`).
    Enum(u16),
    /// An index into `MESSAGES`.
    Msg(u16),
}

/// One field of a message.
#[derive(Debug)]
pub(super) struct Field {
    pub num: u32,
    pub name: &'static str,
    pub ty: Ty,
    pub repeated: bool,
}

/// A singular field.
pub(super) const fn one(num: u32, name: &'static str, ty: Ty) -> Field {
    Field {
        num,
        name,
        ty,
        repeated: false,
    }
}

/// A repeated field.
pub(super) const fn many(num: u32, name: &'static str, ty: Ty) -> Field {
    Field {
        num,
        name,
        ty,
        repeated: true,
    }
}
