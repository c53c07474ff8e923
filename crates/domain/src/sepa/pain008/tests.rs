//! The collection file's tests: structure, control sums, grouping, escaping, refusals, and samples for the XSD.

use super::*;
use proptest::prelude::*;
use quick_xml::Reader;
use std::str::FromStr;

fn dec(s: &str) -> Decimal {
    Decimal::from_str(s).unwrap()
}

fn date(s: &str) -> NaiveDate {
    NaiveDate::from_str(s).unwrap()
}

fn creditor() -> Creditor {
    Creditor {
        name: "Fitness Studio Süd GmbH".into(),
        iban: "DE89 3704 0044 0532 0130 00".into(),
        bic: Some("COBADEFFXXX".into()),
        creditor_id: "DE98ZZZ09999999999".into(),
    }
}

fn debit(id: &str, amount: &str, sequence: Sequence) -> Debit {
    Debit {
        end_to_end_id: id.into(),
        amount: dec(amount),
        mandate_id: format!("MNDT-{id}"),
        signed_on: date("2026-01-15"),
        sequence,
        debtor_name: "Erika Mustermann".into(),
        debtor_iban: "DE02120300000000202051".into(),
        debtor_bic: Some("BYLADEM1001".into()),
        remittance: format!("Invoice INV-{id}"),
    }
}

fn collection(debits: Vec<Debit>) -> Collection {
    Collection {
        message_id: "sb-0001".into(),
        created_at: DateTime::parse_from_rfc3339("2026-11-27T10:00:00.750+01:00")
            .unwrap()
            .with_timezone(&Utc),
        collection_date: date("2026-12-01"),
        creditor: creditor(),
        debits,
    }
}

/// The sample collections written for XSD validation (see `write_samples_for_xsd`).
pub(crate) fn samples() -> Vec<(&'static str, Collection)> {
    let first_only = collection(vec![
        debit("att-1", "49.90", Sequence::First),
        debit("att-2", "5", Sequence::First),
    ]);
    let recurring_only = collection(vec![debit("att-3", "19.99", Sequence::Recurring)]);
    let both = collection(vec![
        debit("att-4", "10.10", Sequence::Recurring),
        debit("att-5", "20.20", Sequence::First),
        debit("att-6", "30.30", Sequence::Recurring),
    ]);
    let mut awkward = collection(vec![
        Debit {
            debtor_name: "Jürgen \"Jo\" Müller & Söhne <GmbH> ‘Ærø’ 北京 😀".into(),
            remittance: format!("INV-2026-0042 {}", "ÄÖÜß&<>\"' ".repeat(30)),
            debtor_bic: None,
            debtor_iban: "fr14 2004 1010 0505 0001 3m02 606".into(),
            ..debit("att-7", "1234567.8", Sequence::First)
        },
        Debit {
            remittance: "   ".into(),
            debtor_bic: Some("deutdeff".into()),
            ..debit("att-8", "0.01", Sequence::Recurring)
        },
    ]);
    awkward.creditor.name = format!("O'Brien & Partner – {}", "x".repeat(100));
    awkward.creditor.bic = None;
    vec![
        ("frst-only", first_only),
        ("rcur-only", recurring_only),
        ("frst-and-rcur", both),
        ("escaping-long-text-no-bic", awkward),
    ]
}

/// The character data of every element whose path ends with `suffix`, in document order.
fn texts(xml: &str, suffix: &[&str]) -> Vec<String> {
    let mut reader = Reader::from_str(xml);
    reader.config_mut().expand_empty_elements = true;
    let (mut path, mut found, mut content) = (Vec::<String>::new(), Vec::new(), String::new());
    loop {
        match reader.read_event().unwrap() {
            Event::Start(e) => {
                path.push(String::from_utf8(e.local_name().as_ref().to_vec()).unwrap());
                content.clear();
            }
            Event::Text(t) => content.push_str(&t.xml10_content().unwrap()),
            Event::GeneralRef(r) => {
                let name = r.decode().unwrap();
                content.push_str(quick_xml::escape::resolve_predefined_entity(&name).unwrap());
            }
            Event::End(_) => {
                if path.ends_with(&suffix.iter().map(|s| s.to_string()).collect::<Vec<_>>()) {
                    found.push(content.clone());
                }
                content.clear();
                path.pop();
            }
            Event::Eof => return found,
            _ => {}
        }
    }
}

fn decimals(values: Vec<String>) -> Vec<Decimal> {
    values.iter().map(|v| dec(v)).collect()
}

#[test]
fn renders_a_single_debit_exactly() {
    let xml = render(&collection(vec![debit("att-1", "49.9", Sequence::First)])).unwrap();
    let expected = r#"<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.008.001.08">
  <CstmrDrctDbtInitn>
    <GrpHdr>
      <MsgId>sb-0001</MsgId>
      <CreDtTm>2026-11-27T09:00:00Z</CreDtTm>
      <NbOfTxs>1</NbOfTxs>
      <CtrlSum>49.90</CtrlSum>
      <InitgPty>
        <Nm>Fitness Studio Sud GmbH</Nm>
      </InitgPty>
    </GrpHdr>
    <PmtInf>
      <PmtInfId>sb-0001-FRST</PmtInfId>
      <PmtMtd>DD</PmtMtd>
      <NbOfTxs>1</NbOfTxs>
      <CtrlSum>49.90</CtrlSum>
      <PmtTpInf>
        <SvcLvl>
          <Cd>SEPA</Cd>
        </SvcLvl>
        <LclInstrm>
          <Cd>CORE</Cd>
        </LclInstrm>
        <SeqTp>FRST</SeqTp>
      </PmtTpInf>
      <ReqdColltnDt>2026-12-01</ReqdColltnDt>
      <Cdtr>
        <Nm>Fitness Studio Sud GmbH</Nm>
      </Cdtr>
      <CdtrAcct>
        <Id>
          <IBAN>DE89370400440532013000</IBAN>
        </Id>
      </CdtrAcct>
      <CdtrAgt>
        <FinInstnId>
          <BICFI>COBADEFFXXX</BICFI>
        </FinInstnId>
      </CdtrAgt>
      <ChrgBr>SLEV</ChrgBr>
      <CdtrSchmeId>
        <Id>
          <PrvtId>
            <Othr>
              <Id>DE98ZZZ09999999999</Id>
              <SchmeNm>
                <Prtry>SEPA</Prtry>
              </SchmeNm>
            </Othr>
          </PrvtId>
        </Id>
      </CdtrSchmeId>
      <DrctDbtTxInf>
        <PmtId>
          <EndToEndId>att-1</EndToEndId>
        </PmtId>
        <InstdAmt Ccy="EUR">49.90</InstdAmt>
        <DrctDbtTx>
          <MndtRltdInf>
            <MndtId>MNDT-att-1</MndtId>
            <DtOfSgntr>2026-01-15</DtOfSgntr>
          </MndtRltdInf>
        </DrctDbtTx>
        <DbtrAgt>
          <FinInstnId>
            <BICFI>BYLADEM1001</BICFI>
          </FinInstnId>
        </DbtrAgt>
        <Dbtr>
          <Nm>Erika Mustermann</Nm>
        </Dbtr>
        <DbtrAcct>
          <Id>
            <IBAN>DE02120300000000202051</IBAN>
          </Id>
        </DbtrAcct>
        <RmtInf>
          <Ustrd>Invoice INV-att-1</Ustrd>
        </RmtInf>
      </DrctDbtTxInf>
    </PmtInf>
  </CstmrDrctDbtInitn>
</Document>
"#;
    assert_eq!(xml, expected);
}

#[test]
fn same_input_same_bytes() {
    for (_, sample) in samples() {
        assert_eq!(render(&sample).unwrap(), render(&sample).unwrap());
    }
}

#[test]
fn one_block_per_sequence_first_before_recurring() {
    let xml = render(&samples()[2].1).unwrap();
    assert_eq!(
        texts(&xml, &["PmtInf", "PmtInfId"]),
        ["sb-0001-FRST", "sb-0001-RCUR"]
    );
    assert_eq!(texts(&xml, &["PmtTpInf", "SeqTp"]), ["FRST", "RCUR"]);
    assert_eq!(texts(&xml, &["PmtInf", "NbOfTxs"]), ["1", "2"]);
    assert_eq!(texts(&xml, &["PmtInf", "CtrlSum"]), ["20.20", "40.40"]);
    assert_eq!(texts(&xml, &["GrpHdr", "NbOfTxs"]), ["3"]);
    assert_eq!(texts(&xml, &["GrpHdr", "CtrlSum"]), ["60.60"]);
    // Within a block the debits keep their order.
    assert_eq!(texts(&xml, &["EndToEndId"]), ["att-5", "att-4", "att-6"]);
}

#[test]
fn a_single_sequence_type_makes_a_single_block() {
    let first = render(&samples()[0].1).unwrap();
    assert_eq!(texts(&first, &["PmtInfId"]), ["sb-0001-FRST"]);
    assert_eq!(texts(&first, &["InstdAmt"]), ["49.90", "5.00"]);
    assert_eq!(texts(&first, &["GrpHdr", "CtrlSum"]), ["54.90"]);
    let recurring = render(&samples()[1].1).unwrap();
    assert_eq!(texts(&recurring, &["PmtInfId"]), ["sb-0001-RCUR"]);
    assert_eq!(texts(&recurring, &["SeqTp"]), ["RCUR"]);
}

#[test]
fn free_text_is_converted_cut_and_escaped() {
    let xml = render(&samples()[3].1).unwrap();
    let debtors = texts(&xml, &["Dbtr", "Nm"]);
    assert_eq!(
        debtors[0],
        "Jurgen 'Jo' Muller + Sohne (GmbH) 'AEro' Bei Jing grinning"
    );
    let creditor = &texts(&xml, &["Cdtr", "Nm"])[0];
    assert!(
        creditor.starts_with("O'Brien + Partner - xxx"),
        "{creditor}"
    );
    assert_eq!(creditor.len(), MAX_NAME_CHARS);
    let remittance = texts(&xml, &["RmtInf", "Ustrd"]);
    assert_eq!(remittance.len(), 1, "the blank remittance line is left out");
    assert_eq!(remittance[0].len(), MAX_REMITTANCE_CHARS);
    assert!(remittance[0].starts_with("INV-2026-0042 AOUss+()'' AOUss"));
    // Nothing outside the SEPA set reached the file, so nothing needed escaping.
    assert!(!xml.contains("&amp;") && !xml.contains("&lt;") && !xml.contains("&quot;"));
    assert!(xml.is_ascii());
}

#[test]
fn agents_without_bic_are_not_provided_and_accounts_are_compacted() {
    let xml = render(&samples()[3].1).unwrap();
    // One creditor agent per block, FRST and RCUR.
    assert_eq!(
        texts(&xml, &["CdtrAgt", "FinInstnId", "Othr", "Id"]),
        ["NOTPROVIDED", "NOTPROVIDED"]
    );
    assert_eq!(
        texts(&xml, &["DbtrAgt", "FinInstnId", "Othr", "Id"]),
        ["NOTPROVIDED"]
    );
    assert_eq!(
        texts(&xml, &["DbtrAgt", "FinInstnId", "BICFI"]),
        ["DEUTDEFF"]
    );
    assert!(texts(&xml, &["CdtrAgt", "FinInstnId", "BICFI"]).is_empty());
    assert_eq!(
        texts(&xml, &["DbtrAcct", "Id", "IBAN"]),
        ["FR1420041010050500013M02606", "DE02120300000000202051"]
    );
}

#[test]
fn amounts_have_exactly_two_decimals() {
    let xml = render(&collection(vec![
        debit("a", "10", Sequence::First),
        debit("b", "10.5", Sequence::First),
        debit("c", "10.500", Sequence::First),
        debit("d", "999999999.99", Sequence::First),
    ]))
    .unwrap();
    assert_eq!(
        texts(&xml, &["InstdAmt"]),
        ["10.00", "10.50", "10.50", "999999999.99"]
    );
    assert_eq!(texts(&xml, &["GrpHdr", "CtrlSum"]), ["1000000030.99"]);
    assert_eq!(xml.matches(r#"<InstdAmt Ccy="EUR">"#).count(), 4);
}

#[test]
fn refuses_amounts_a_bank_would_refuse() {
    for bad in ["0", "-1.00", "10.505", "0.001", "1000000000.00"] {
        let result = render(&collection(vec![debit("a", bad, Sequence::First)]));
        assert_eq!(
            result,
            Err(RenderError::InvalidAmount {
                field: "debits[0].amount".into()
            }),
            "{bad}"
        );
    }
}

#[test]
fn refuses_what_would_make_the_file_invalid() {
    let error = |change: fn(&mut Collection)| {
        let mut c = collection(vec![
            debit("a", "1", Sequence::First),
            debit("b", "1", Sequence::Recurring),
        ]);
        change(&mut c);
        render(&c).unwrap_err()
    };
    let invalid_id = |field: &str| RenderError::InvalidId {
        field: field.into(),
    };
    assert_eq!(error(|c| c.debits.clear()), RenderError::NoDebits);
    assert_eq!(
        error(|c| c.message_id = "m".repeat(31)),
        invalid_id("message_id")
    );
    assert_eq!(
        error(|c| c.message_id = "a//b".into()),
        invalid_id("message_id")
    );
    assert_eq!(
        error(|c| c.debits[1].end_to_end_id = "Müller".into()),
        invalid_id("debits[1].end_to_end_id")
    );
    assert_eq!(
        error(|c| c.debits[0].mandate_id = String::new()),
        invalid_id("debits[0].mandate_id")
    );
    assert_eq!(
        error(|c| c.creditor.creditor_id = "DE98ZZZ0999 ".into()),
        invalid_id("creditor.creditor_id")
    );
    assert_eq!(
        error(|c| c.debits[1].end_to_end_id = "a".into()),
        RenderError::DuplicateEndToEndId("a".into())
    );
    assert_eq!(
        error(|c| c.debits[1].debtor_name = " @#$ ".into()),
        RenderError::EmptyName {
            field: "debits[1].debtor_name".into()
        }
    );
    assert_eq!(
        error(|c| c.creditor.name = " ** ".into()),
        RenderError::EmptyName {
            field: "creditor.name".into()
        }
    );
    assert_eq!(
        error(|c| c.debits[0].debtor_iban = "DE0212030000000020205X!".into()),
        RenderError::InvalidIban {
            field: "debits[0].debtor_iban".into()
        }
    );
    assert_eq!(
        error(|c| c.creditor.iban = "1234".into()),
        RenderError::InvalidIban {
            field: "creditor.iban".into()
        }
    );
    assert_eq!(
        error(|c| c.debits[1].debtor_bic = Some("BYLA1EM1".into())),
        RenderError::InvalidBic {
            field: "debits[1].debtor_bic".into()
        }
    );
    assert_eq!(
        error(|c| c.creditor.bic = Some("COBADEFFX".into())),
        RenderError::InvalidBic {
            field: "creditor.bic".into()
        }
    );
}

#[test]
fn a_blank_bic_counts_as_none() {
    let mut c = collection(vec![debit("a", "1", Sequence::First)]);
    c.debits[0].debtor_bic = Some("  ".into());
    let xml = render(&c).unwrap();
    assert_eq!(
        texts(&xml, &["DbtrAgt", "FinInstnId", "Othr", "Id"]),
        ["NOTPROVIDED"]
    );
}

#[test]
fn errors_read_well() {
    assert_eq!(
        RenderError::InvalidAmount {
            field: "debits[0].amount".into()
        }
        .to_string(),
        "debits[0].amount must be a EUR amount from 0.01 to 999999999.99 with at most two decimals"
    );
}

/// Writes every sample to `$SEPA_SAMPLES_DIR` (default: `recur-sepa-samples` in the temporary
/// directory) for validation against the XSD:
///
/// ```text
/// cargo test -p recur-domain sepa::pain008::tests::write_samples_for_xsd -- --ignored
/// for f in /tmp/recur-sepa-samples/*.xml; do /tmp/sepa-venv/bin/python -c \
///   "import xmlschema,sys; xmlschema.XMLSchema(sys.argv[1]).validate(sys.argv[2])" \
///   "$XSD" "$f" && echo "valid: $f"; done
/// ```
#[test]
#[ignore = "writes files; run by hand to validate against the XSD"]
fn write_samples_for_xsd() {
    let dir = std::env::var_os("SEPA_SAMPLES_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("recur-sepa-samples"));
    std::fs::create_dir_all(&dir).unwrap();
    for (name, sample) in samples() {
        std::fs::write(dir.join(format!("{name}.xml")), render(&sample).unwrap()).unwrap();
    }
}

fn sequence() -> impl Strategy<Value = Sequence> {
    prop_oneof![Just(Sequence::First), Just(Sequence::Recurring)]
}

proptest! {
    #[test]
    fn counts_and_control_sums_add_up(
        debits in proptest::collection::vec((1i64..=99_999_999_999, sequence()), 1..40)
    ) {
        let list = debits
            .iter()
            .enumerate()
            .map(|(i, (cents, sequence))| Debit {
                amount: Decimal::new(*cents, 2),
                ..debit(&format!("e2e-{i}"), "1", *sequence)
            })
            .collect::<Vec<_>>();
        let xml = render(&collection(list)).unwrap();

        let amounts = texts(&xml, &["InstdAmt"]);
        prop_assert!(amounts.iter().all(|a| a.split_once('.').is_some_and(|(_, d)| d.len() == 2)));
        let total: Decimal = decimals(amounts.clone()).into_iter().sum();
        let expected: Decimal = debits.iter().map(|(cents, _)| Decimal::new(*cents, 2)).sum();
        prop_assert_eq!(total, expected);
        prop_assert_eq!(decimals(texts(&xml, &["GrpHdr", "CtrlSum"])), vec![expected]);
        prop_assert_eq!(texts(&xml, &["GrpHdr", "NbOfTxs"]), vec![debits.len().to_string()]);

        let mut sums = Vec::new();
        let mut counts = Vec::new();
        for wanted in Sequence::ALL {
            let of_kind: Vec<_> = debits.iter().filter(|(_, s)| *s == wanted).collect();
            if !of_kind.is_empty() {
                sums.push(of_kind.iter().map(|(cents, _)| Decimal::new(*cents, 2)).sum::<Decimal>());
                counts.push(of_kind.len().to_string());
            }
        }
        prop_assert_eq!(decimals(texts(&xml, &["PmtInf", "CtrlSum"])), sums);
        prop_assert_eq!(texts(&xml, &["PmtInf", "NbOfTxs"]), counts);
    }
}
