//! One embedded TrueType face as a document uses it: the glyphs drawn so far, their widths, and
//! the PDF objects that embed a subset of the face holding just those glyphs (a Type0 font over
//! a CIDFontType2, `Identity-H`, with a `ToUnicode` CMap so the text can be copied and searched).

use std::collections::BTreeMap;

use anyhow::Context as _;
use pdf_writer::types::{CidFontType, FontFlags, SystemInfo, UnicodeCmap};
use pdf_writer::{Filter, Finish, Name, Pdf, Rect, Ref, Str};
use subsetter::GlyphRemapper;
use ttf_parser::{Face, GlyphId};

use super::deflate;

/// DejaVu Sans (Bitstream Vera licence, `assets/fonts/LICENSE`): Latin, Greek and Cyrillic.
pub(super) const DEJAVU_SANS: FontFile = FontFile {
    data: include_bytes!("../../../assets/fonts/DejaVuSans.ttf"),
    postscript_name: "DejaVuSans",
};

/// DejaVu Sans Bold, same licence and coverage.
pub(super) const DEJAVU_SANS_BOLD: FontFile = FontFile {
    data: include_bytes!("../../../assets/fonts/DejaVuSans-Bold.ttf"),
    postscript_name: "DejaVuSans-Bold",
};

/// A TrueType file shipped in the binary.
#[derive(Clone, Copy)]
pub(super) struct FontFile {
    data: &'static [u8],
    postscript_name: &'static str,
}

/// What a character the face lacks prints as.
const REPLACEMENT: char = '?';

/// A face and the glyphs one document has drawn with it.
pub(super) struct UsedFont {
    file: FontFile,
    face: Face<'static>,
    /// Old glyph id → CID (the glyph's id in the subset), in the order glyphs were first drawn.
    remapper: GlyphRemapper,
    /// CID → the character it prints, for the `ToUnicode` CMap.
    chars: BTreeMap<u16, char>,
}

impl UsedFont {
    /// `file`, parsed, with nothing drawn yet.
    pub(super) fn new(file: FontFile) -> anyhow::Result<Self> {
        let face = Face::parse(file.data, 0)
            .with_context(|| format!("parsing the font {}", file.postscript_name))?;
        Ok(Self {
            file,
            face,
            remapper: GlyphRemapper::new(),
            chars: BTreeMap::new(),
        })
    }

    /// The glyph `ch` prints with, and the character that glyph stands for: the face's own, or
    /// the replacement `?` when the face has none (control characters included).
    fn glyph(&self, ch: char) -> (GlyphId, char) {
        match self.face.glyph_index(ch) {
            Some(id) if !ch.is_control() => (id, ch),
            _ => (
                self.face.glyph_index(REPLACEMENT).unwrap_or(GlyphId(0)),
                REPLACEMENT,
            ),
        }
    }

    /// `s` as the two-byte CIDs a content stream shows, its glyphs added to the subset.
    pub(super) fn encode(&mut self, s: &str) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(2 * s.len());
        for ch in s.chars() {
            let (glyph, printed) = self.glyph(ch);
            let cid = self.remapper.remap(glyph.0);
            self.chars.entry(cid).or_insert(printed);
            bytes.extend_from_slice(&cid.to_be_bytes());
        }
        bytes
    }

    /// The advance of `s` at `size` points, in points: the sum of its glyphs' advances (text is
    /// shown glyph by glyph, without kerning, so this is exactly the width it takes).
    pub(super) fn width(&self, s: &str, size: f32) -> f32 {
        let units: u32 = s
            .chars()
            .map(|ch| u32::from(self.advance(self.glyph(ch).0)))
            .sum();
        units as f32 * size / f32::from(self.face.units_per_em())
    }

    fn advance(&self, glyph: GlyphId) -> u16 {
        self.face.glyph_hor_advance(glyph).unwrap_or(0)
    }

    /// `units` of the face in PDF glyph space (thousandths of an em).
    fn to_pdf(&self, units: impl Into<f32>) -> f32 {
        units.into() * 1000.0 / f32::from(self.face.units_per_em())
    }

    /// Writes the font as object `type0` and the four objects after it (CIDFont, descriptor,
    /// `ToUnicode` CMap, font file), embedding a subset of the glyphs drawn.
    pub(super) fn write(&self, pdf: &mut Pdf, type0: Ref) -> anyhow::Result<()> {
        let cid_font = Ref::new(type0.get() + 1);
        let descriptor = Ref::new(type0.get() + 2);
        let to_unicode = Ref::new(type0.get() + 3);
        let file = Ref::new(type0.get() + 4);

        let subset = subsetter::subset(self.file.data, 0, &self.remapper)
            .map_err(|e| anyhow::anyhow!("subsetting {}: {e}", self.file.postscript_name))?;
        let name = format!("{}+{}", self.subset_tag(), self.file.postscript_name);
        let name = Name(name.as_bytes());
        let system_info = SystemInfo {
            registry: Str(b"Adobe"),
            ordering: Str(b"Identity"),
            supplement: 0,
        };

        pdf.type0_font(type0)
            .base_font(name)
            .encoding_predefined(Name(b"Identity-H"))
            .descendant_font(cid_font)
            .to_unicode(to_unicode);

        let widths: Vec<f32> = self
            .remapper
            .remapped_gids()
            .map(|glyph| self.to_pdf(self.advance(GlyphId(glyph))))
            .collect();
        let mut cid = pdf.cid_font(cid_font);
        cid.subtype(CidFontType::Type2)
            .base_font(name)
            .system_info(system_info)
            .font_descriptor(descriptor)
            .cid_to_gid_map_predefined(Name(b"Identity"));
        cid.widths().consecutive(0, widths);
        cid.finish();

        let bbox = self.face.global_bounding_box();
        let weight = f32::from(self.face.weight().to_number());
        pdf.font_descriptor(descriptor)
            .name(name)
            .flags(FontFlags::SYMBOLIC)
            .bbox(Rect::new(
                self.to_pdf(bbox.x_min),
                self.to_pdf(bbox.y_min),
                self.to_pdf(bbox.x_max),
                self.to_pdf(bbox.y_max),
            ))
            .italic_angle(self.face.italic_angle())
            .ascent(self.to_pdf(self.face.ascender()))
            .descent(self.to_pdf(self.face.descender()))
            .cap_height(self.to_pdf(self.face.capital_height().unwrap_or(self.face.ascender())))
            // The usual estimate from the weight class (the face does not record its stems).
            .stem_v(10.0 + 0.244 * (weight - 50.0))
            .font_file2(file);

        let mut cmap = UnicodeCmap::new(Name(b"Recur-UCS"), system_info);
        for (cid, ch) in &self.chars {
            cmap.pair(*cid, *ch);
        }
        pdf.cmap(to_unicode, &deflate(&cmap.finish()))
            .filter(Filter::FlateDecode);

        let length = i32::try_from(subset.len()).context("font subset over 2 GiB")?;
        pdf.stream(file, &deflate(&subset))
            .filter(Filter::FlateDecode)
            .pair(Name(b"Length1"), length);
        Ok(())
    }

    /// The six capital letters that name a subset (`ABCDEF+DejaVuSans`), from its glyphs, so two
    /// different subsets in one reader do not share a name.
    fn subset_tag(&self) -> String {
        // FNV-1a over the glyph ids, in CID order.
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for glyph in self.remapper.remapped_gids() {
            for byte in glyph.to_be_bytes() {
                hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
            }
        }
        (0..6)
            .map(|i| char::from(b'A' + ((hash >> (i * 8)) % 26) as u8))
            .collect()
    }
}

/// The number of objects [`UsedFont::write`] writes.
pub(super) const OBJECTS_PER_FONT: i32 = 5;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_faces_parse_and_cover_latin_greek_and_cyrillic() {
        for file in [DEJAVU_SANS, DEJAVU_SANS_BOLD] {
            let font = UsedFont::new(file).unwrap();
            for ch in "Łódź Ελένη Юлия €£¥–".chars() {
                assert_eq!(font.glyph(ch).1, ch, "{ch} in {}", file.postscript_name);
            }
        }
    }

    #[test]
    fn encodes_each_new_glyph_as_the_next_cid_and_reuses_it() {
        let mut font = UsedFont::new(DEJAVU_SANS).unwrap();
        // CID 0 is .notdef; then one CID per distinct glyph, in the order drawn.
        assert_eq!(font.encode("Юля"), vec![0, 1, 0, 2, 0, 3]);
        assert_eq!(font.encode("яЮ"), vec![0, 3, 0, 1]);
        assert_eq!(font.chars.get(&1), Some(&'Ю'));
    }

    #[test]
    fn characters_the_face_lacks_print_as_a_question_mark() {
        let mut font = UsedFont::new(DEJAVU_SANS).unwrap();
        let question = font.encode("?");
        assert_eq!(font.encode("中"), question);
        assert_eq!(font.encode("\t"), question);
        assert_eq!(font.width("中", 10.0), font.width("?", 10.0));
    }

    #[test]
    fn widths_are_the_faces_advances() {
        let font = UsedFont::new(DEJAVU_SANS).unwrap();
        // DejaVu Sans: 2048 units per em, figures 1303 units wide, space 651.
        assert_eq!(font.face.units_per_em(), 2048);
        let figure = 1303.0 * 10.0 / 2048.0;
        assert!((font.width("0123456789", 10.0) - 10.0 * figure).abs() < 1e-3);
        assert!((font.width("1 1", 10.0) - (2.0 * figure + 651.0 * 10.0 / 2048.0)).abs() < 1e-3);
        assert!(font.width("W", 10.0) > font.width("i", 10.0));
    }
}
