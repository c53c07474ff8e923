//! The hosted pages' strings, one TOML file per language under `locales/`, chosen from the
//! browser's `Accept-Language`. English is the fallback for a language or key that is missing.

use std::collections::BTreeMap;

/// Languages shipped, with their string files.
const LOCALES: [(&str, &str); 2] = [
    ("en", include_str!("../locales/en.toml")),
    ("de", include_str!("../locales/de.toml")),
];

/// Every language's strings.
#[derive(Debug)]
pub struct Strings {
    by_lang: BTreeMap<&'static str, BTreeMap<String, String>>,
}

impl Strings {
    /// Parses the bundled string files; a key missing from a language falls back to English.
    pub fn load() -> anyhow::Result<Self> {
        let mut by_lang = BTreeMap::new();
        for (lang, text) in LOCALES {
            let table: BTreeMap<String, String> =
                toml::from_str(text).map_err(|e| anyhow::anyhow!("locales/{lang}.toml: {e}"))?;
            by_lang.insert(lang, table);
        }
        let english = by_lang.get("en").cloned().unwrap_or_default();
        for table in by_lang.values_mut() {
            for (key, value) in &english {
                table.entry(key.clone()).or_insert_with(|| value.clone());
            }
        }
        Ok(Self { by_lang })
    }

    /// The strings for the first supported language of an `Accept-Language` header.
    pub fn for_accept_language(&self, header: Option<&str>) -> &BTreeMap<String, String> {
        let lang = negotiate(header, |lang| self.by_lang.contains_key(lang));
        self.by_lang
            .get(lang.as_str())
            .or_else(|| self.by_lang.get("en"))
            .expect("English strings are bundled")
    }
}

/// The language code of a strings table (`en`, `de`).
pub fn lang(t: &BTreeMap<String, String>) -> &str {
    t.get("lang").map_or("en", String::as_str)
}

/// The best language of `header` that `supported` accepts, by quality; `en` when none.
fn negotiate(header: Option<&str>, supported: impl Fn(&str) -> bool) -> String {
    let mut candidates: Vec<(f32, String)> = header
        .unwrap_or_default()
        .split(',')
        .filter_map(|item| {
            let mut parts = item.trim().split(';');
            let tag = parts.next()?.trim().to_ascii_lowercase();
            let primary = tag.split('-').next()?.to_string();
            let quality = parts
                .find_map(|p| p.trim().strip_prefix("q=").and_then(|q| q.parse().ok()))
                .unwrap_or(1.0);
            Some((quality, primary))
        })
        .filter(|(q, lang)| *q > 0.0 && supported(lang))
        .collect();
    candidates.sort_by(|a, b| b.0.total_cmp(&a.0));
    candidates
        .into_iter()
        .next()
        .map_or_else(|| "en".to_string(), |(_, lang)| lang)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_language_has_every_english_key() {
        let strings = Strings::load().unwrap();
        let en = &strings.by_lang["en"];
        for (lang, table) in &strings.by_lang {
            for key in en.keys() {
                assert!(table.contains_key(key), "{lang} lacks {key}");
            }
        }
    }

    #[test]
    fn accept_language_is_negotiated() {
        let strings = Strings::load().unwrap();
        assert_eq!(
            strings.for_accept_language(Some("de-DE,de;q=0.9,en;q=0.8"))["lang"],
            "de"
        );
        assert_eq!(
            strings.for_accept_language(Some("fr-FR, en;q=0.5"))["lang"],
            "en"
        );
        assert_eq!(
            strings.for_accept_language(Some("en;q=0.4, de;q=0.6"))["lang"],
            "de"
        );
        assert_eq!(strings.for_accept_language(None)["lang"], "en");
        assert_eq!(strings.for_accept_language(Some("*"))["lang"], "en");
    }
}
