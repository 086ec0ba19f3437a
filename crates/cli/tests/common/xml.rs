//! A small XML well-formedness check for the SVG the program writes (no XML crate is a
//! dependency): one root element, every tag closed in order, attributes quoted, only the
//! predefined or numeric entities, and no control characters XML forbids. Also compiled
//! into the plot module's unit tests.

/// `Ok` when `doc` is well-formed, else what is wrong and where.
pub fn well_formed(doc: &str) -> Result<(), String> {
    let mut open: Vec<&str> = Vec::new();
    let mut roots = 0;
    let mut rest = doc;
    let at = |r: &str| doc.len() - r.len();
    while !rest.is_empty() {
        let Some(lt) = rest.find('<') else {
            text(rest, at(rest))?;
            if !rest.trim().is_empty() {
                return Err("text after the root element".into());
            }
            break;
        };
        let before = &rest[..lt];
        text(before, at(rest))?;
        if open.is_empty() && !before.trim().is_empty() {
            return Err(format!(
                "text outside the root element at byte {}",
                at(rest)
            ));
        }
        rest = &rest[lt..];
        if let Some(r) = rest.strip_prefix("<!--") {
            let end = r.find("-->").ok_or("unclosed comment")?;
            rest = &r[end + 3..];
            continue;
        }
        if let Some(r) = rest.strip_prefix("<?") {
            let end = r.find("?>").ok_or("unclosed processing instruction")?;
            rest = &r[end + 2..];
            continue;
        }
        let gt = tag_end(rest).ok_or_else(|| format!("unclosed tag at byte {}", at(rest)))?;
        let tag = &rest[1..gt];
        rest = &rest[gt + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            match open.pop() {
                Some(o) if o == name.trim() => {}
                o => return Err(format!("</{name}> closes {o:?}")),
            }
            continue;
        }
        let self_closing = tag.ends_with('/');
        let tag = tag.trim_end_matches('/');
        let name_end = tag.find(char::is_whitespace).unwrap_or(tag.len());
        let name = &tag[..name_end];
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_alphanumeric() || "-_:.".contains(c))
        {
            return Err(format!("bad element name {name:?}"));
        }
        attributes(&tag[name_end..]).map_err(|e| format!("<{name}>: {e}"))?;
        if open.is_empty() {
            roots += 1;
        }
        if !self_closing {
            open.push(name);
        }
    }
    match (open.last(), roots) {
        (Some(o), _) => Err(format!("<{o}> is never closed")),
        (None, 1) => Ok(()),
        (None, n) => Err(format!("{n} root elements")),
    }
}

/// The index of the `>` that ends the tag starting at `s[0]` (quotes respected).
fn tag_end(s: &str) -> Option<usize> {
    let mut quote = None;
    for (i, c) in s.char_indices().skip(1) {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '>') => return Some(i),
            (None, '<') => return None,
            _ => {}
        }
    }
    None
}

/// `name="value"` pairs, each name once.
fn attributes(s: &str) -> Result<(), String> {
    let mut seen: Vec<&str> = Vec::new();
    let mut rest = s.trim_start();
    while !rest.is_empty() {
        let eq = rest
            .find('=')
            .ok_or_else(|| format!("attribute without value: {rest}"))?;
        let name = rest[..eq].trim();
        if seen.contains(&name) {
            return Err(format!("attribute {name} twice"));
        }
        seen.push(name);
        let v = rest[eq + 1..].trim_start();
        let q = v.chars().next().filter(|c| *c == '"' || *c == '\'');
        let q = q.ok_or_else(|| format!("unquoted attribute {name}"))?;
        let end = v[1..]
            .find(q)
            .ok_or_else(|| format!("unclosed attribute {name}"))?;
        let value = &v[1..1 + end];
        if value.contains('<') {
            return Err(format!("`<` in attribute {name}"));
        }
        text(value, 0)?;
        rest = v[end + 2..].trim_start();
    }
    Ok(())
}

/// Character data: entities known, no forbidden control characters.
fn text(s: &str, at: usize) -> Result<(), String> {
    if let Some(c) = s
        .chars()
        .find(|c| c.is_control() && !matches!(c, '\t' | '\n' | '\r'))
    {
        return Err(format!("control character {c:?} near byte {at}"));
    }
    let mut rest = s;
    while let Some(amp) = rest.find('&') {
        let r = &rest[amp + 1..];
        let end = r
            .find(';')
            .ok_or_else(|| format!("bare & near byte {at}"))?;
        let entity = &r[..end];
        let numeric = entity
            .strip_prefix("#x")
            .map(|h| !h.is_empty() && h.chars().all(|c| c.is_ascii_hexdigit()))
            .or_else(|| {
                entity
                    .strip_prefix('#')
                    .map(|d| !d.is_empty() && d.chars().all(|c| c.is_ascii_digit()))
            })
            .unwrap_or(false);
        if !numeric && !["amp", "lt", "gt", "quot", "apos"].contains(&entity) {
            return Err(format!("unknown entity &{entity}; near byte {at}"));
        }
        rest = &r[end + 1..];
    }
    Ok(())
}
