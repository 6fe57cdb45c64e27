//! The JSON path of a value being decoded (`message.content[1].sha256`): a chain of segments
//! on the stack, rendered only when an error is built. Owns nothing else; never allocates
//! until [`Path::render`].

/// A JSON path segment chain, built on the stack while decoding.
#[derive(Clone, Copy)]
pub struct Path<'p> {
    parent: Option<&'p Path<'p>>,
    seg: Seg,
}

#[derive(Clone, Copy)]
enum Seg {
    Root,
    Key(&'static str),
    Index(usize),
}

impl<'p> Path<'p> {
    /// The document root (`$`).
    pub const ROOT: Path<'static> = Path {
        parent: None,
        seg: Seg::Root,
    };

    /// This path followed by the member `key`.
    #[inline]
    pub fn key(&'p self, key: &'static str) -> Path<'p> {
        Path {
            parent: Some(self),
            seg: Seg::Key(key),
        }
    }

    /// This path followed by array index `i`.
    #[inline]
    pub fn index(&'p self, i: usize) -> Path<'p> {
        Path {
            parent: Some(self),
            seg: Seg::Index(i),
        }
    }

    /// `message.content[1].sha256`; empty for the root.
    #[cold]
    pub fn render(&self) -> String {
        let mut segs = Vec::new();
        let mut p = Some(self);
        while let Some(cur) = p {
            segs.push(cur.seg);
            p = cur.parent;
        }
        let mut out = String::new();
        for seg in segs.iter().rev() {
            match *seg {
                Seg::Root => {}
                Seg::Key(k) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(k);
                }
                Seg::Index(i) => {
                    out.push('[');
                    out.push_str(&i.to_string());
                    out.push(']');
                }
            }
        }
        out
    }
}
