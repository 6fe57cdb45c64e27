//! What a record keeps of a text that would pass the output line limit: its head, cut at a
//! character boundary, and a marker saying how much was cut (PROFILE §15). Pure; knows no
//! record type (the caller measures the record with `over`).

/// `content`, or its head cut with [`cut_text`]'s marker so that `over(text)`, the bytes by
/// which the record carrying `text` would pass the output line limit, is 0. Each step drops
/// what was over (at least an eighth), so a few steps reach the fit; after 16 the last cut is
/// returned (a record whose other members alone pass the limit cannot fit at all).
pub(crate) fn cut_to_fit(content: &str, mut over: impl FnMut(&str) -> usize) -> String {
    let mut keep = content.len();
    for _ in 0..16 {
        let text = cut_text(content, keep);
        let by = over(&text);
        if by == 0 || keep == 0 {
            return text;
        }
        keep = keep.saturating_sub(by.max(keep / 8));
    }
    cut_text(content, keep)
}

/// The first `keep` bytes of `content` (at a character boundary) and the marker saying how
/// much was cut (PROFILE §15); `content` itself when it all fits.
fn cut_text(content: &str, keep: usize) -> String {
    if keep >= content.len() {
        return content.to_string();
    }
    let mut end = keep;
    while !content.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}\n[agentx: output cut: {} of {} bytes shown, to fit the 1,048,576-byte line limit]",
        &content[..end],
        end,
        content.len()
    )
}
