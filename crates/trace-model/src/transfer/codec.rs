//! How a transferred value is written and read back: [`Codec`]s for fields, [`Record`]s
//! written field by field (made by `record!` from a list of fields), and [`Wire`] for
//! values with one way to be written. `records.rs` and `sched.rs` list the records.

use super::bytes::{TransferReader as R, TransferWriter as W};
use super::TransferError;

/// How a value of type `T` is written and read back.
pub(super) trait Codec<T> {
    fn put(v: &T, w: &mut W<'_>);
    fn get(r: &mut R<'_>) -> Result<T, TransferError>;
}

/// A record written field by field (see [`record!`]).
pub(super) trait Record: Sized {
    fn put(&self, w: &mut W<'_>);
    fn get(r: &mut R<'_>) -> Result<Self, TransferError>;
}

/// Makes `Record` for a struct from its fields in buffer order, each `field` (written
/// plainly, [`Plain`]) or `field as Codec`; `default` (optional) names fields not written,
/// derived again on the reading side; `check` (optional) vets the record read.
macro_rules! record {
    ($ty:ident { $($field:ident $(as $codec:ident)?),* $(,)? }
     $(default $($dfield:ident),+)? $(check $check:path)?) => {
        impl Record for $ty {
            fn put(&self, w: &mut W<'_>) {
                $(<record!(@codec $($codec)?) as Codec<_>>::put(&self.$field, w);)*
            }

            fn get(r: &mut R<'_>) -> Result<Self, TransferError> {
                $(let $field = <record!(@codec $($codec)?) as Codec<_>>::get(r)?;)*
                let v = $ty { $($field,)* $($($dfield: Default::default(),)+)? };
                $(let v = $check(r, v)?;)?
                Ok(v)
            }
        }
    };
    (@codec) => { Plain };
    (@codec $codec:ident) => { $codec };
}

/// A value written as its type writes it ([`Wire`]).
pub(super) struct Plain;

/// A list of records: its length, then each one.
pub(super) struct List;

/// A record inside another, written as its fields.
pub(super) struct Nested;

impl<T: Record> Codec<T> for Nested {
    fn put(v: &T, w: &mut W<'_>) {
        v.put(w);
    }

    fn get(r: &mut R<'_>) -> Result<T, TransferError> {
        T::get(r)
    }
}

/// A value with one way to be written.
pub(super) trait Wire: Sized {
    fn put(&self, w: &mut W<'_>);
    fn get(r: &mut R<'_>) -> Result<Self, TransferError>;
}

impl<T: Wire> Codec<T> for Plain {
    fn put(v: &T, w: &mut W<'_>) {
        v.put(w);
    }

    fn get(r: &mut R<'_>) -> Result<T, TransferError> {
        T::get(r)
    }
}

impl<T: Record> Codec<Vec<T>> for List {
    fn put(v: &Vec<T>, w: &mut W<'_>) {
        w.list(v, |w, x| x.put(w));
    }

    fn get(r: &mut R<'_>) -> Result<Vec<T>, TransferError> {
        r.list(T::get)
    }
}
