//! `application/x-www-form-urlencoded` bodies (the token endpoints of Entra ID and Google).

/// `application/x-www-form-urlencoded` pairs, percent-decoded (`+` is a space).
pub(crate) fn parse_form(body: &[u8]) -> Vec<(String, String)> {
    body.split(|&byte| byte == b'&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (key, value) = match pair.iter().position(|&byte| byte == b'=') {
                Some(at) => (&pair[..at], &pair[at + 1..]),
                None => (pair, &[][..]),
            };
            (percent_decode(key), percent_decode(value))
        })
        .collect()
}

fn percent_decode(text: &[u8]) -> String {
    let mut out = Vec::with_capacity(text.len());
    let mut index = 0;
    while index < text.len() {
        let hex = |at: usize| text.get(at).and_then(|&byte| (byte as char).to_digit(16));
        match text[index] {
            b'+' => out.push(b' '),
            b'%' if hex(index + 1).is_some() && hex(index + 2).is_some() => {
                out.push((hex(index + 1).unwrap_or(0) * 16 + hex(index + 2).unwrap_or(0)) as u8);
                index += 2;
            }
            byte => out.push(byte),
        }
        index += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}
