//! A one-page document that layouts draw on: text (left- or right-aligned), rules and grey
//! levels, measured with the embedded faces' real widths; long text is clipped or wrapped to a
//! width. [`Document::finish`] writes the PDF with the subsets of the glyphs drawn.

use pdf_writer::{Content, Filter, Finish, Name, Pdf, Rect, Ref, Str, TextStr};

use super::deflate;
use super::font::{UsedFont, DEJAVU_SANS, DEJAVU_SANS_BOLD, OBJECTS_PER_FONT};

/// An A4 page's width, in points.
pub const A4_WIDTH: f32 = 595.0;
/// An A4 page's height, in points.
pub const A4_HEIGHT: f32 = 842.0;

/// The face text is set in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// DejaVu Sans.
    Regular,
    /// DejaVu Sans Bold.
    Bold,
}

impl Style {
    fn resource(self) -> Name<'static> {
        match self {
            Style::Regular => Name(b"F1"),
            Style::Bold => Name(b"F2"),
        }
    }
}

/// One page being drawn, with the fonts it uses.
pub struct Document {
    width: f32,
    height: f32,
    left: f32,
    right: f32,
    content: Content,
    regular: UsedFont,
    bold: UsedFont,
}

impl Document {
    /// An empty A4 page whose rules run between `margin` points from either side.
    pub fn a4(margin: f32) -> anyhow::Result<Self> {
        Ok(Self {
            width: A4_WIDTH,
            height: A4_HEIGHT,
            left: margin,
            right: A4_WIDTH - margin,
            content: Content::new(),
            regular: UsedFont::new(DEJAVU_SANS)?,
            bold: UsedFont::new(DEJAVU_SANS_BOLD)?,
        })
    }

    fn font(&self, style: Style) -> &UsedFont {
        match style {
            Style::Regular => &self.regular,
            Style::Bold => &self.bold,
        }
    }

    /// `s` in `style` at `size` points, its baseline starting at (`x`, `y`) from the page's
    /// bottom left.
    pub fn text(&mut self, style: Style, size: f32, x: f32, y: f32, s: &str) {
        let font = match style {
            Style::Regular => &mut self.regular,
            Style::Bold => &mut self.bold,
        };
        let cids = font.encode(s);
        let c = &mut self.content;
        c.begin_text();
        c.set_font(style.resource(), size);
        c.next_line(x, y);
        c.show(Str(&cids));
        c.end_text();
    }

    /// `s` as [`Self::text`] does, ending at `right`.
    pub fn text_right(&mut self, style: Style, size: f32, right: f32, y: f32, s: &str) {
        let width = self.measure(style, size, s);
        self.text(style, size, right - width, y, s);
    }

    /// A horizontal rule `thickness` points thick at height `y`, between the margins.
    pub fn rule(&mut self, y: f32, thickness: f32) {
        let c = &mut self.content;
        c.set_line_width(thickness);
        c.set_stroke_gray(0.75);
        c.move_to(self.left, y);
        c.line_to(self.right, y);
        c.stroke();
    }

    /// Text drawn from now on is grey `level` (0 black, 1 white).
    pub fn gray(&mut self, level: f32) {
        self.content.set_fill_gray(level);
    }

    /// The width of `s` in `style` at `size` points, in points.
    pub fn measure(&self, style: Style, size: f32, s: &str) -> f32 {
        self.font(style).width(s, size)
    }

    /// `s` if it fits in `max_width` points, otherwise as much of it as fits followed by `…`.
    pub fn clip(&self, style: Style, size: f32, s: &str, max_width: f32) -> String {
        if self.measure(style, size, s) <= max_width {
            return s.to_string();
        }
        let mut clipped = String::new();
        for ch in s.chars() {
            let candidate = format!("{clipped}{ch}…");
            if self.measure(style, size, &candidate) > max_width {
                break;
            }
            clipped.push(ch);
        }
        format!("{}…", clipped.trim_end())
    }

    /// `s` broken into lines of at most `max_width` points, between words; a word wider than
    /// that on its own is clipped.
    pub fn wrap(&self, style: Style, size: f32, s: &str, max_width: f32) -> Vec<String> {
        let mut lines = Vec::new();
        let mut line = String::new();
        for word in s.split_whitespace() {
            let candidate = if line.is_empty() {
                word.to_string()
            } else {
                format!("{line} {word}")
            };
            if self.measure(style, size, &candidate) <= max_width || line.is_empty() {
                line = candidate;
            } else {
                lines.push(std::mem::replace(&mut line, word.to_string()));
            }
        }
        if !line.is_empty() {
            lines.push(line);
        }
        lines
            .into_iter()
            .map(|l| self.clip(style, size, &l, max_width))
            .collect()
    }

    /// The PDF, titled `title`, with the subsets of the glyphs drawn embedded.
    pub fn finish(self, title: &str) -> anyhow::Result<Vec<u8>> {
        let catalog = Ref::new(1);
        let pages = Ref::new(2);
        let page = Ref::new(3);
        let contents = Ref::new(4);
        let info = Ref::new(5);
        let regular = Ref::new(6);
        let bold = Ref::new(6 + OBJECTS_PER_FONT);

        let mut pdf = Pdf::new();
        pdf.catalog(catalog).pages(pages);
        pdf.pages(pages).kids([page]).count(1);
        let mut p = pdf.page(page);
        p.media_box(Rect::new(0.0, 0.0, self.width, self.height));
        p.parent(pages);
        p.contents(contents);
        p.resources()
            .fonts()
            .pair(Style::Regular.resource(), regular)
            .pair(Style::Bold.resource(), bold);
        p.finish();
        pdf.document_info(info)
            .title(TextStr(title))
            .producer(TextStr("recur"));
        pdf.stream(contents, &deflate(&self.content.finish()))
            .filter(Filter::FlateDecode);
        self.regular.write(&mut pdf, regular)?;
        self.bold.write(&mut pdf, bold)?;
        Ok(pdf.finish())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc() -> Document {
        Document::a4(56.0).unwrap()
    }

    #[test]
    fn right_aligned_text_ends_at_the_edge() {
        let mut d = doc();
        let width = d.measure(Style::Bold, 10.0, "€1,234.50");
        assert!(width > 40.0 && width < 60.0, "{width}");
        d.text_right(Style::Bold, 10.0, 539.0, 100.0, "€1,234.50");
        let content = String::from_utf8_lossy(d.content.as_bytes()).into_owned();
        let x: f32 = content
            .split(" 100 Td")
            .next()
            .and_then(|before| before.rsplit(['\n', ' ']).next())
            .and_then(|x| x.parse().ok())
            .unwrap_or_else(|| panic!("no Td in {content}"));
        assert!(
            (x + width - 539.0).abs() < 0.01,
            "{x} + {width} in {content}"
        );
    }

    #[test]
    fn clip_keeps_what_fits_and_marks_the_cut() {
        let d = doc();
        assert_eq!(d.clip(Style::Regular, 10.0, "Pro", 100.0), "Pro");
        let long = "Professional plan with every add-on there is";
        let clipped = d.clip(Style::Regular, 10.0, long, 100.0);
        assert!(
            clipped.ends_with('…') && clipped.len() < long.len(),
            "{clipped}"
        );
        assert!(d.measure(Style::Regular, 10.0, &clipped) <= 100.0);
        let more = d.clip(Style::Regular, 10.0, long, 150.0);
        assert!(more.chars().count() > clipped.chars().count());
    }

    #[test]
    fn wrap_breaks_between_words_within_the_width() {
        let d = doc();
        let text = "Łódź Ελένη Юлия, ulica Piotrkowska 104, 90-926 Łódź";
        let lines = d.wrap(Style::Regular, 10.0, text, 120.0);
        assert!(lines.len() > 1, "{lines:?}");
        assert_eq!(lines.join(" "), text);
        for line in &lines {
            assert!(d.measure(Style::Regular, 10.0, line) <= 120.0, "{line}");
        }
        let narrow = d.wrap(Style::Regular, 10.0, "Supercalifragilistic", 30.0);
        assert_eq!(narrow.len(), 1);
        assert!(narrow[0].ends_with('…'));
    }

    #[test]
    fn finish_embeds_one_subset_per_face_with_its_cmap() {
        let mut d = doc();
        d.text(Style::Regular, 10.0, 56.0, 700.0, "Łódź");
        d.text(Style::Bold, 10.0, 56.0, 680.0, "Юлия");
        let pdf = d.finish("Test").unwrap();
        let text = String::from_utf8_lossy(&pdf);
        assert!(text.starts_with("%PDF-"));
        assert_eq!(text.matches("/Subtype /Type0").count(), 2);
        assert_eq!(text.matches("/CIDFontType2").count(), 2);
        assert_eq!(text.matches("/Identity-H").count(), 2);
        assert!(text.contains("+DejaVuSans"));
        assert!(text.contains("+DejaVuSans-Bold"));
        // ToUnicode pairs: CID 1 of the regular face is Ł (U+0141), of the bold one Ю (U+042E).
        let streams = super::super::inflated_streams(&pdf);
        assert!(streams.contains("<0001> <0141>"), "{streams}");
        assert!(streams.contains("<0001> <042E>"));
        // The text shows CIDs: Ł ó d ź are 1 2 3 4 in the regular face.
        assert!(
            streams.contains(r"(\000\001\000\002\000\003\000\004) Tj"),
            "{streams}"
        );
        // Subsets, not the 700 KB faces.
        assert!(pdf.len() < 20_000, "{} bytes", pdf.len());
    }
}
