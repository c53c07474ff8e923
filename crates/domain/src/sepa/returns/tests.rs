//! The return files' tests: both kinds, mixed statuses, duplicates, and every refusal.

use super::*;
use proptest::prelude::*;

fn returned(list: &[(&str, &str)]) -> Vec<Returned> {
    list.iter()
        .map(|(id, code)| Returned {
            end_to_end_id: (*id).into(),
            reason_code: (*code).into(),
        })
        .collect()
}

fn status_report(list: &[(&str, &str)]) -> ReturnFile {
    ReturnFile {
        kind: FileKind::StatusReport,
        returned: returned(list),
    }
}

fn notification(list: &[(&str, &str)]) -> ReturnFile {
    ReturnFile {
        kind: FileKind::DebitNotification,
        returned: returned(list),
    }
}

/// A bank's status report for a file with a FRST and a RCUR block: in the first block one
/// debit accepted and one rejected, the second block rejected with a block-level reason.
const PAIN_002_MIXED: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.002.001.10" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
  <CstmrPmtStsRpt>
    <GrpHdr>
      <MsgId>STS-20261203-000017</MsgId>
      <CreDtTm>2026-12-03T08:15:00+01:00</CreDtTm>
      <InitgPty><Id><OrgId><AnyBIC>COBADEFFXXX</AnyBIC></OrgId></Id></InitgPty>
    </GrpHdr>
    <OrgnlGrpInfAndSts>
      <OrgnlMsgId>sb-0001</OrgnlMsgId>
      <OrgnlMsgNmId>pain.008.001.08</OrgnlMsgNmId>
      <OrgnlNbOfTxs>5</OrgnlNbOfTxs>
      <OrgnlCtrlSum>150.00</OrgnlCtrlSum>
      <GrpSts>PART</GrpSts>
    </OrgnlGrpInfAndSts>
    <OrgnlPmtInfAndSts>
      <OrgnlPmtInfId>sb-0001-FRST</OrgnlPmtInfId>
      <OrgnlNbOfTxs>2</OrgnlNbOfTxs>
      <PmtInfSts>PART</PmtInfSts>
      <TxInfAndSts>
        <StsId>1</StsId>
        <OrgnlEndToEndId>att-1</OrgnlEndToEndId>
        <TxSts>ACCP</TxSts>
      </TxInfAndSts>
      <TxInfAndSts>
        <StsId>2</StsId>
        <OrgnlInstrId>instr-2</OrgnlInstrId>
        <OrgnlEndToEndId>att-2</OrgnlEndToEndId>
        <TxSts>RJCT</TxSts>
        <StsRsnInf>
          <Orgtr><Id><OrgId><AnyBIC>BYLADEM1001</AnyBIC></OrgId></Id></Orgtr>
          <Rsn><Cd>AC04</Cd></Rsn>
          <AddtlInf>Konto aufgel&#246;st &amp; gesperrt</AddtlInf>
        </StsRsnInf>
        <OrgnlTxRef>
          <Amt><InstdAmt Ccy="EUR">25.00</InstdAmt></Amt>
          <ReqdColltnDt>2026-12-01</ReqdColltnDt>
          <PmtTpInf>
            <SvcLvl><Cd>SEPA</Cd></SvcLvl>
            <LclInstrm><Cd>CORE</Cd></LclInstrm>
            <SeqTp>FRST</SeqTp>
          </PmtTpInf>
          <MndtRltdInf><MndtId>MNDT-2</MndtId><DtOfSgntr>2026-01-15</DtOfSgntr></MndtRltdInf>
          <Dbtr><Pty><Nm>Erika Mustermann</Nm></Pty></Dbtr>
          <DbtrAcct><Id><IBAN>DE02120300000000202051</IBAN></Id></DbtrAcct>
        </OrgnlTxRef>
      </TxInfAndSts>
    </OrgnlPmtInfAndSts>
    <OrgnlPmtInfAndSts>
      <OrgnlPmtInfId>sb-0001-RCUR</OrgnlPmtInfId>
      <PmtInfSts>RJCT</PmtInfSts>
      <StsRsnInf><Rsn><Cd>AM04</Cd></Rsn></StsRsnInf>
      <TxInfAndSts>
        <OrgnlEndToEndId>att-3</OrgnlEndToEndId>
      </TxInfAndSts>
      <TxInfAndSts>
        <OrgnlEndToEndId>att-4</OrgnlEndToEndId>
        <TxSts>RJCT</TxSts>
        <StsRsnInf><Rsn><Prtry>MS03</Prtry></Rsn></StsRsnInf>
      </TxInfAndSts>
      <TxInfAndSts>
        <OrgnlEndToEndId> att-5 </OrgnlEndToEndId>
        <TxSts>RJCT</TxSts>
        <StsRsnInf><Rsn><Cd>MD06</Cd></Rsn></StsRsnInf>
        <StsRsnInf><Rsn><Cd>AC01</Cd></Rsn></StsRsnInf>
      </TxInfAndSts>
    </OrgnlPmtInfAndSts>
  </CstmrPmtStsRpt>
</Document>
"#;

#[test]
fn pain_002_reports_the_rejected_transactions_only() {
    assert_eq!(
        parse(PAIN_002_MIXED.as_bytes()).unwrap(),
        status_report(&[
            ("att-2", "AC04"),
            // No status of its own: its block's RJCT and AM04.
            ("att-3", "AM04"),
            // A proprietary reason when there is no code.
            ("att-4", "MS03"),
            // Trimmed, and the first reason of several.
            ("att-5", "MD06"),
        ])
    );
}

#[test]
fn pain_002_of_an_older_version_with_a_namespace_prefix() {
    let xml = r#"<?xml version="1.0" encoding="UTF-8"?>
<ns2:Document xmlns:ns2="urn:iso:std:iso:20022:tech:xsd:pain.002.001.03">
  <ns2:CstmrPmtStsRpt>
    <ns2:GrpHdr><ns2:MsgId>R1</ns2:MsgId><ns2:CreDtTm>2026-12-03T08:15:00</ns2:CreDtTm></ns2:GrpHdr>
    <ns2:OrgnlGrpInfAndSts>
      <ns2:OrgnlMsgId>sb-0002</ns2:OrgnlMsgId>
      <ns2:OrgnlMsgNmId>pain.008.001.02</ns2:OrgnlMsgNmId>
    </ns2:OrgnlGrpInfAndSts>
    <ns2:OrgnlPmtInfAndSts>
      <ns2:OrgnlPmtInfId>sb-0002-RCUR</ns2:OrgnlPmtInfId>
      <ns2:TxInfAndSts>
        <ns2:OrgnlEndToEndId>att-9</ns2:OrgnlEndToEndId>
        <ns2:TxSts>RJCT</ns2:TxSts>
        <ns2:StsRsnInf><ns2:Rsn><ns2:Cd>MD07</ns2:Cd></ns2:Rsn></ns2:StsRsnInf>
      </ns2:TxInfAndSts>
      <ns2:TxInfAndSts>
        <ns2:OrgnlEndToEndId>att-10</ns2:OrgnlEndToEndId>
        <ns2:TxSts>RJCT</ns2:TxSts>
      </ns2:TxInfAndSts>
    </ns2:OrgnlPmtInfAndSts>
  </ns2:CstmrPmtStsRpt>
</ns2:Document>"#;
    assert_eq!(
        parse(xml.as_bytes()).unwrap(),
        status_report(&[("att-9", "MD07"), ("att-10", FALLBACK_REASON)])
    );
}

/// A minimal `pain.002` around `body` (the children of `CstmrPmtStsRpt` after `GrpHdr`).
fn pain_002(body: &str) -> String {
    format!(
        r#"<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.002.001.10"><CstmrPmtStsRpt><GrpHdr><MsgId>S</MsgId><CreDtTm>2026-12-03T08:15:00</CreDtTm></GrpHdr>{body}</CstmrPmtStsRpt></Document>"#
    )
}

#[test]
fn pain_002_that_accepts_everything_returns_nothing() {
    let xml = pain_002(
        "<OrgnlGrpInfAndSts><OrgnlMsgId>sb-1</OrgnlMsgId><GrpSts>ACCP</GrpSts></OrgnlGrpInfAndSts>",
    );
    assert_eq!(parse(xml.as_bytes()).unwrap(), status_report(&[]));
}

#[test]
fn pain_002_rejecting_the_whole_file_without_transactions_is_refused() {
    let xml = pain_002(
            "<OrgnlGrpInfAndSts><OrgnlMsgId>sb-1</OrgnlMsgId><OrgnlMsgNmId>pain.008.001.08</OrgnlMsgNmId>\
             <GrpSts>RJCT</GrpSts><StsRsnInf><Rsn><Cd>FF01</Cd></Rsn></StsRsnInf></OrgnlGrpInfAndSts>",
        );
    let error = parse(xml.as_bytes()).unwrap_err();
    assert_eq!(
        error,
        ReturnFileError::WholeRejection {
            message_id: Some("sb-1".into()),
            payment_information_id: None,
            reason_code: "FF01".into(),
        }
    );
    assert_eq!(
            error.to_string(),
            "the bank rejected the whole collection file sb-1 (reason FF01) without naming its debits; recur applies rejections of single debits only"
        );
}

#[test]
fn pain_002_rejecting_a_block_without_transactions_is_refused() {
    let xml = pain_002(
            "<OrgnlGrpInfAndSts><OrgnlMsgId>sb-1</OrgnlMsgId><GrpSts>PART</GrpSts></OrgnlGrpInfAndSts>\
             <OrgnlPmtInfAndSts><OrgnlPmtInfId>sb-1-FRST</OrgnlPmtInfId><PmtInfSts>ACCP</PmtInfSts>\
             <TxInfAndSts><OrgnlEndToEndId>a</OrgnlEndToEndId><TxSts>RJCT</TxSts></TxInfAndSts></OrgnlPmtInfAndSts>\
             <OrgnlPmtInfAndSts><OrgnlPmtInfId>sb-1-RCUR</OrgnlPmtInfId><PmtInfSts>RJCT</PmtInfSts></OrgnlPmtInfAndSts>",
        );
    let error = parse(xml.as_bytes()).unwrap_err();
    assert_eq!(
        error,
        ReturnFileError::WholeRejection {
            message_id: Some("sb-1".into()),
            payment_information_id: Some("sb-1-RCUR".into()),
            reason_code: FALLBACK_REASON.into(),
        }
    );
    assert!(error.to_string().starts_with(
        "the bank rejected the payment block sb-1-RCUR of the collection file sb-1 (reason NARR)"
    ));
}

#[test]
fn pain_002_group_rejection_that_lists_transactions_reports_them() {
    let xml = pain_002(
        "<OrgnlGrpInfAndSts><OrgnlMsgId>sb-1</OrgnlMsgId><GrpSts>RJCT</GrpSts>\
             <StsRsnInf><Rsn><Cd>DU01</Cd></Rsn></StsRsnInf></OrgnlGrpInfAndSts>\
             <OrgnlPmtInfAndSts><OrgnlPmtInfId>sb-1-FRST</OrgnlPmtInfId>\
             <TxInfAndSts><OrgnlEndToEndId>a</OrgnlEndToEndId></TxInfAndSts>\
             <TxInfAndSts><OrgnlEndToEndId>b</OrgnlEndToEndId><TxSts>ACCP</TxSts></TxInfAndSts>\
             </OrgnlPmtInfAndSts>",
    );
    assert_eq!(
        parse(xml.as_bytes()).unwrap(),
        status_report(&[("a", "DU01")])
    );
}

#[test]
fn pain_002_rejection_without_end_to_end_id_is_refused() {
    let xml = pain_002(
            "<OrgnlPmtInfAndSts><OrgnlPmtInfId>p</OrgnlPmtInfId>\
             <TxInfAndSts><OrgnlInstrId>i</OrgnlInstrId><TxSts>RJCT</TxSts></TxInfAndSts></OrgnlPmtInfAndSts>",
        );
    let error = parse(xml.as_bytes()).unwrap_err();
    assert_eq!(error, ReturnFileError::MissingEndToEndId("OrgnlEndToEndId"));
    assert_eq!(
            error.to_string(),
            "a rejected or returned transaction has no OrgnlEndToEndId, so it cannot be matched to a debit"
        );
}

#[test]
fn a_debit_named_twice_is_reported_once_with_the_first_reason() {
    let xml = pain_002(
            "<OrgnlPmtInfAndSts><OrgnlPmtInfId>p</OrgnlPmtInfId>\
             <TxInfAndSts><OrgnlEndToEndId>a</OrgnlEndToEndId><TxSts>RJCT</TxSts><StsRsnInf><Rsn><Cd>AM04</Cd></Rsn></StsRsnInf></TxInfAndSts>\
             <TxInfAndSts><OrgnlEndToEndId>b</OrgnlEndToEndId><TxSts>RJCT</TxSts></TxInfAndSts>\
             <TxInfAndSts><OrgnlEndToEndId>a</OrgnlEndToEndId><TxSts>RJCT</TxSts><StsRsnInf><Rsn><Cd>AC04</Cd></Rsn></StsRsnInf></TxInfAndSts>\
             </OrgnlPmtInfAndSts>",
        );
    assert_eq!(
        parse(xml.as_bytes()).unwrap(),
        status_report(&[("a", "AM04"), ("b", FALLBACK_REASON)])
    );
}

/// A creditor's debit notification: the collection's credit (two debits), the return of one
/// of them, a credit transfer that came back (a credit with return information) and a fee.
const CAMT_054: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.054.001.08">
  <BkToCstmrDbtCdtNtfctn>
    <GrpHdr><MsgId>C54-20261204-1</MsgId><CreDtTm>2026-12-04T06:00:00+01:00</CreDtTm></GrpHdr>
    <Ntfctn>
      <Id>C54-20261204-1-1</Id>
      <CreDtTm>2026-12-04T06:00:00+01:00</CreDtTm>
      <Acct><Id><IBAN>DE89370400440532013000</IBAN></Id><Ccy>EUR</Ccy></Acct>
      <Ntry>
        <NtryRef>1</NtryRef>
        <Amt Ccy="EUR">60.00</Amt>
        <CdtDbtInd>CRDT</CdtDbtInd>
        <Sts><Cd>BOOK</Cd></Sts>
        <BookgDt><Dt>2026-12-01</Dt></BookgDt>
        <ValDt><Dt>2026-12-01</Dt></ValDt>
        <BkTxCd><Domn><Cd>PMNT</Cd><Fmly><Cd>IDDT</Cd><SubFmlyCd>ESDD</SubFmlyCd></Fmly></Domn></BkTxCd>
        <NtryDtls>
          <Btch><PmtInfId>sb-0001-RCUR</PmtInfId><NbOfTxs>2</NbOfTxs></Btch>
          <TxDtls>
            <Refs><PmtInfId>sb-0001-RCUR</PmtInfId><EndToEndId>att-5</EndToEndId><MndtId>MNDT-5</MndtId></Refs>
            <Amt Ccy="EUR">30.00</Amt>
            <CdtDbtInd>CRDT</CdtDbtInd>
          </TxDtls>
          <TxDtls>
            <Refs><EndToEndId>att-6</EndToEndId></Refs>
            <Amt Ccy="EUR">30.00</Amt>
            <CdtDbtInd>CRDT</CdtDbtInd>
          </TxDtls>
        </NtryDtls>
      </Ntry>
      <Ntry>
        <NtryRef>2</NtryRef>
        <Amt Ccy="EUR">30.00</Amt>
        <CdtDbtInd>DBIT</CdtDbtInd>
        <Sts><Cd>BOOK</Cd></Sts>
        <BookgDt><Dt>2026-12-04</Dt></BookgDt>
        <BkTxCd><Domn><Cd>PMNT</Cd><Fmly><Cd>IDDT</Cd><SubFmlyCd>UPDD</SubFmlyCd></Fmly></Domn></BkTxCd>
        <NtryDtls>
          <TxDtls>
            <Refs><EndToEndId>att-5</EndToEndId><MndtId>MNDT-5</MndtId></Refs>
            <Amt Ccy="EUR">30.00</Amt>
            <CdtDbtInd>DBIT</CdtDbtInd>
            <RltdPties><Dbtr><Pty><Nm>M&#252;ller &amp; S&#246;hne</Nm></Pty></Dbtr></RltdPties>
            <RtrInf>
              <OrgnlBkTxCd><Domn><Cd>PMNT</Cd><Fmly><Cd>IDDT</Cd><SubFmlyCd>ESDD</SubFmlyCd></Fmly></Domn></OrgnlBkTxCd>
              <Orgtr><Id><OrgId><AnyBIC>BYLADEM1001</AnyBIC></OrgId></Id></Orgtr>
              <Rsn><Cd>AM04</Cd></Rsn>
              <AddtlInf>Insufficient funds</AddtlInf>
            </RtrInf>
          </TxDtls>
        </NtryDtls>
      </Ntry>
      <Ntry>
        <Amt Ccy="EUR">12.00</Amt>
        <CdtDbtInd>CRDT</CdtDbtInd>
        <Sts><Cd>BOOK</Cd></Sts>
        <BkTxCd><Domn><Cd>PMNT</Cd><Fmly><Cd>ICDT</Cd><SubFmlyCd>RRTN</SubFmlyCd></Fmly></Domn></BkTxCd>
        <NtryDtls><TxDtls>
          <Refs><EndToEndId>refund-7</EndToEndId></Refs>
          <RtrInf><Rsn><Cd>AC04</Cd></Rsn></RtrInf>
        </TxDtls></NtryDtls>
      </Ntry>
      <Ntry>
        <Amt Ccy="EUR">0.35</Amt>
        <CdtDbtInd>DBIT</CdtDbtInd>
        <Sts><Cd>BOOK</Cd></Sts>
        <BkTxCd><Domn><Cd>ACMT</Cd><Fmly><Cd>MDOP</Cd><SubFmlyCd>CHRG</SubFmlyCd></Fmly></Domn></BkTxCd>
        <NtryDtls><TxDtls><Refs><EndToEndId>NOTPROVIDED</EndToEndId></Refs></TxDtls></NtryDtls>
      </Ntry>
    </Ntfctn>
  </BkToCstmrDbtCdtNtfctn>
</Document>
"#;

#[test]
fn camt_054_reports_returned_debits_only() {
    assert_eq!(
        parse(CAMT_054.as_bytes()).unwrap(),
        notification(&[("att-5", "AM04")])
    );
}

#[test]
fn camt_054_of_an_older_version_with_a_reversal_booked_as_credit() {
    // camt.054.001.02 has no CdtDbtInd per transaction; this bank books the return as a
    // reversed credit and gives only a proprietary reason, the next return has none.
    let xml = r#"<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.054.001.02"><BkToCstmrDbtCdtNtfctn>
<GrpHdr><MsgId>M</MsgId><CreDtTm>2026-12-04T06:00:00</CreDtTm></GrpHdr>
<Ntfctn><Id>N</Id><CreDtTm>2026-12-04T06:00:00</CreDtTm><Acct><Id><IBAN>DE89370400440532013000</IBAN></Id></Acct>
<Ntry><Amt Ccy="EUR">30.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><RvslInd>true</RvslInd><Sts>BOOK</Sts><BookgDt><Dt>2026-12-04</Dt></BookgDt>
<BkTxCd/>
<NtryDtls><TxDtls><Refs><EndToEndId>att-8</EndToEndId></Refs><RtrInf><Rsn><Prtry>901</Prtry></Rsn></RtrInf></TxDtls>
<TxDtls><Refs><EndToEndId>att-9</EndToEndId></Refs><RtrInf><AddtlInf>Widerspruch</AddtlInf></RtrInf></TxDtls></NtryDtls></Ntry>
</Ntfctn></BkToCstmrDbtCdtNtfctn></Document>"#;
    assert_eq!(
        parse(xml.as_bytes()).unwrap(),
        notification(&[("att-8", "901"), ("att-9", FALLBACK_REASON)])
    );
}

#[test]
fn camt_054_return_without_end_to_end_id_is_refused() {
    let xml = r#"<Document><BkToCstmrDbtCdtNtfctn><Ntfctn><Ntry><CdtDbtInd>DBIT</CdtDbtInd>
<NtryDtls><TxDtls><Refs><MndtId>M</MndtId></Refs><RtrInf><Rsn><Cd>MD06</Cd></Rsn></RtrInf></TxDtls></NtryDtls>
</Ntry></Ntfctn></BkToCstmrDbtCdtNtfctn></Document>"#;
    assert_eq!(
        parse(xml.as_bytes()),
        Err(ReturnFileError::MissingEndToEndId("EndToEndId"))
    );
}

#[test]
fn camt_054_without_returns_returns_nothing() {
    let xml = r#"<Document><BkToCstmrDbtCdtNtfctn><GrpHdr><MsgId>M</MsgId></GrpHdr></BkToCstmrDbtCdtNtfctn></Document>"#;
    assert_eq!(parse(xml.as_bytes()).unwrap(), notification(&[]));
}

#[test]
fn a_doctype_is_refused_before_any_entity_is_used() {
    let laughs = r#"<?xml version="1.0"?>
<!DOCTYPE Document [
  <!ENTITY lol "lol">
  <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
  <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
]>
<Document><CstmrPmtStsRpt><OrgnlPmtInfAndSts><TxInfAndSts>
<OrgnlEndToEndId>&lol3;</OrgnlEndToEndId><TxSts>RJCT</TxSts></TxInfAndSts></OrgnlPmtInfAndSts></CstmrPmtStsRpt></Document>"#;
    let external = r#"<?xml version="1.0"?>
<!DOCTYPE Document [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<Document><BkToCstmrDbtCdtNtfctn><Ntfctn><Ntry><CdtDbtInd>DBIT</CdtDbtInd><NtryDtls><TxDtls>
<Refs><EndToEndId>&xxe;</EndToEndId></Refs><RtrInf/></TxDtls></NtryDtls></Ntry></Ntfctn></BkToCstmrDbtCdtNtfctn></Document>"#;
    let public =
        r#"<!DOCTYPE Document PUBLIC "-//X//Y" "http://example.invalid/x.dtd"><Document/>"#;
    for xml in [laughs, external, public] {
        assert_eq!(parse(xml.as_bytes()), Err(ReturnFileError::DocType));
    }
    assert_eq!(
            ReturnFileError::DocType.to_string(),
            "the file has a DOCTYPE declaration; bank return files have none and recur does not read them"
        );
}

#[test]
fn only_predefined_entities_and_character_references_are_resolved() {
    let xml = pain_002(
        "<OrgnlPmtInfAndSts><TxInfAndSts><OrgnlEndToEndId>a&#45;b&#x2D;c&amp;d</OrgnlEndToEndId>\
             <TxSts>RJ<![CDATA[CT]]></TxSts></TxInfAndSts></OrgnlPmtInfAndSts>",
    );
    assert_eq!(
        parse(xml.as_bytes()).unwrap(),
        status_report(&[("a-b-c&d", FALLBACK_REASON)])
    );

    let undefined = pain_002("<OrgnlPmtInfAndSts><TxInfAndSts><OrgnlEndToEndId>&xxe;</OrgnlEndToEndId></TxInfAndSts></OrgnlPmtInfAndSts>");
    assert_eq!(
        parse(undefined.as_bytes()),
        Err(ReturnFileError::UnknownEntity("xxe".into()))
    );
}

#[test]
fn malformed_xml_is_refused() {
    let cases = [
        "",
        "   ",
        "not xml at all",
        "<Document><CstmrPmtStsRpt></Document>",
        "<Document><CstmrPmtStsRpt>",
        "<Document><CstmrPmtStsRpt></CstmrPmtStsRpt></Document><Document/>",
        "<Document><CstmrPmtStsRpt></CstmrPmtStsRpt></Document>trailing",
        "<Document><CstmrPmtStsRpt><GrpHdr a=></GrpHdr></CstmrPmtStsRpt></Document>",
        "</Document>",
        "<Document><CstmrPmtStsRpt>&amp</CstmrPmtStsRpt></Document>",
        &PAIN_002_MIXED[..PAIN_002_MIXED.len() / 2],
    ];
    for xml in cases {
        match parse(xml.as_bytes()) {
            Err(ReturnFileError::Malformed(detail)) => assert!(!detail.is_empty()),
            other => panic!("{xml:?} gave {other:?}"),
        }
    }
    let message = parse(b"<Document><CstmrPmtStsRpt>")
        .unwrap_err()
        .to_string();
    assert_eq!(
        message,
        "the file is not well-formed XML: the file ends inside <CstmrPmtStsRpt>"
    );
}

#[test]
fn other_messages_are_refused() {
    let cases = [
            ("<html><body/></html>", "html"),
            ("<Document xmlns='urn:iso:std:iso:20022:tech:xsd:pain.008.001.08'><CstmrDrctDbtInitn/></Document>", "Document/CstmrDrctDbtInitn"),
            ("<Document><BkToCstmrStmt/></Document>", "Document/BkToCstmrStmt"),
            ("<Document/>", "an empty Document"),
        ];
    for (xml, found) in cases {
        assert_eq!(
            parse(xml.as_bytes()),
            Err(ReturnFileError::WrongRoot(found.into())),
            "{xml}"
        );
    }
    assert_eq!(
            ReturnFileError::WrongRoot("html".into()).to_string(),
            "the file is neither a pain.002 payment status report nor a camt.054 debit notification (it starts with html)"
        );
}

#[test]
fn a_collection_file_is_not_a_return_file() {
    let sample = &super::super::pain008::tests::samples()[0].1;
    let xml = super::super::pain008::render(sample).unwrap();
    assert_eq!(
        parse(xml.as_bytes()),
        Err(ReturnFileError::WrongRoot(
            "Document/CstmrDrctDbtInitn".into()
        ))
    );
}

#[test]
fn only_utf8_is_read_and_a_byte_order_mark_is_fine() {
    let latin1 = b"<Document><CstmrPmtStsRpt><GrpHdr><MsgId>M\xfcller</MsgId></GrpHdr></CstmrPmtStsRpt></Document>";
    assert_eq!(parse(latin1), Err(ReturnFileError::NotUtf8));
    let with_bom = format!("\u{feff}{PAIN_002_MIXED}");
    assert_eq!(parse(with_bom.as_bytes()).unwrap().returned.len(), 4);
}

#[test]
fn deep_nesting_is_refused() {
    let deep = format!(
        "<Document><CstmrPmtStsRpt>{}{}</CstmrPmtStsRpt></Document>",
        "<a>".repeat(MAX_DEPTH),
        "</a>".repeat(MAX_DEPTH)
    );
    assert_eq!(parse(deep.as_bytes()), Err(ReturnFileError::TooDeep));
    let fine = format!(
        "<Document><CstmrPmtStsRpt>{}{}</CstmrPmtStsRpt></Document>",
        "<a>".repeat(MAX_DEPTH - 2),
        "</a>".repeat(MAX_DEPTH - 2)
    );
    assert!(parse(fine.as_bytes()).is_ok());
}

fn status() -> impl Strategy<Value = &'static str> {
    prop_oneof![Just("ACCP"), Just("ACSC"), Just("PDNG"), Just("RJCT")]
}

fn reason() -> impl Strategy<Value = Option<&'static str>> {
    proptest::option::of(prop_oneof![
        Just("AC04"),
        Just("AM04"),
        Just("MD06"),
        Just("MS02")
    ])
}

proptest! {
    #[test]
    fn pain_002_reports_exactly_the_rejected_transactions(
        transactions in proptest::collection::vec((status(), reason()), 0..30)
    ) {
        let body: String = transactions
            .iter()
            .enumerate()
            .map(|(i, (status, reason))| {
                let reason = reason
                    .map(|r| format!("<StsRsnInf><Rsn><Cd>{r}</Cd></Rsn></StsRsnInf>"))
                    .unwrap_or_default();
                format!("<TxInfAndSts><OrgnlEndToEndId>e2e-{i}</OrgnlEndToEndId><TxSts>{status}</TxSts>{reason}</TxInfAndSts>")
            })
            .collect();
        let xml = pain_002(&format!("<OrgnlPmtInfAndSts><OrgnlPmtInfId>p</OrgnlPmtInfId>{body}</OrgnlPmtInfAndSts>"));
        let expected: Vec<Returned> = transactions
            .iter()
            .enumerate()
            .filter(|(_, (status, _))| *status == "RJCT")
            .map(|(i, (_, reason))| Returned {
                end_to_end_id: format!("e2e-{i}"),
                reason_code: reason.unwrap_or(FALLBACK_REASON).to_owned(),
            })
            .collect();
        prop_assert_eq!(parse(xml.as_bytes()).unwrap().returned, expected);
    }

    #[test]
    fn any_bytes_give_an_answer_not_a_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let _ = parse(&bytes);
    }

    #[test]
    fn cut_or_damaged_files_give_an_answer_not_a_panic(cut in 0usize..2_000, at in 0usize..2_000, byte in any::<u8>()) {
        let mut bytes = CAMT_054.as_bytes()[..cut.min(CAMT_054.len())].to_vec();
        if let Some(b) = bytes.get_mut(at) {
            *b = byte;
        }
        let _ = parse(&bytes);
    }
}
