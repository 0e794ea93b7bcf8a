import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  billingKind,
  DOCUMENT_TYPES_SOURCE,
  describeDocumentType,
  documentTypeParts,
  knownDocumentTypes,
} from '../../../src/modules/peppol/index.js';

const UBL_INVOICE = 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice';
const UBL_CREDIT_NOTE = 'urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2::CreditNote';
const CII = 'urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100::CrossIndustryInvoice';
const BIS3 = 'urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:billing:3.0';

const id = (root: string, customization: string, version = '2.1') =>
  `busdox-docid-qns::${root}##${customization}::${version}`;

describe('peppol document types', () => {
  it('are the 321 entries of the document types code list 9.7', () => {
    assert.equal(DOCUMENT_TYPES_SOURCE.version, '9.7');
    assert.equal(knownDocumentTypes().length, 321);
  });

  it('Peppol BIS Billing 3.0: the UBL and CII invoices are invoices, the credit note is not', () => {
    const ubl = describeDocumentType(id(UBL_INVOICE, BIS3));
    assert.deepEqual(ubl, {
      id: id(UBL_INVOICE, BIS3),
      name: 'Peppol BIS Billing UBL Invoice V3',
      state: 'active',
      category: 'Invoice',
      kind: 'peppol-bis-billing-3',
      invoice: true,
    });
    const cii = describeDocumentType(id(CII, BIS3, 'D16B'));
    assert.equal(cii.name, 'Peppol BIS Billing CII Invoice V3');
    assert.equal(cii.invoice, true);
    const creditNote = describeDocumentType(id(UBL_CREDIT_NOTE, BIS3));
    assert.equal(creditNote.name, 'Peppol BIS Billing UBL Credit Note V3');
    assert.equal(creditNote.kind, 'peppol-bis-billing-3');
    assert.equal(creditNote.invoice, false);
  });

  it('CIUS of EN 16931 are invoices (XRechnung among them); their extensions are not', () => {
    const xrechnung = describeDocumentType(
      id(UBL_INVOICE, 'urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0'),
    );
    assert.equal(xrechnung.name, 'XRechnung UBL Invoice V3.0');
    assert.equal(xrechnung.kind, 'en16931-cius');
    assert.equal(xrechnung.invoice, true);
    const extension = describeDocumentType(
      id(
        UBL_INVOICE,
        'urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0#conformant#urn:xeinkauf.de:kosit:extension:xrechnung_3.0',
      ),
    );
    assert.equal(extension.name, 'XRechnung UBL Invoice V3.0 Extension');
    assert.equal(extension.kind, 'en16931-extension');
    assert.equal(extension.invoice, false);
    const ublBe = describeDocumentType(
      id(UBL_INVOICE, 'urn:cen.eu:en16931:2017#conformant#urn:UBL.BE:1.0.0.20180214'),
    );
    assert.equal(ublBe.name, 'UBL.BE Invoice 3.0');
    assert.equal(ublBe.state, 'deprecated');
    assert.equal(ublBe.invoice, false);
  });

  it('self-billing, orders and pre-EN 16931 invoices are not receivable invoices', () => {
    const selfBilling = describeDocumentType(
      id(UBL_INVOICE, 'urn:cen.eu:en16931:2017#compliant#urn:fdc:peppol.eu:2017:poacc:selfbilling:3.0'),
    );
    assert.equal(selfBilling.name, 'Peppol BIS Self-Billing UBL Invoice V3');
    assert.equal(selfBilling.invoice, false);
    const order = describeDocumentType(
      id(
        'urn:oasis:names:specification:ubl:schema:xsd:Order-2::Order',
        'urn:fdc:peppol.eu:poacc:trns:order:3',
      ),
    );
    assert.equal(order.name, 'Peppol Order transaction 3.0');
    assert.equal(order.kind, 'other');
    assert.equal(order.invoice, false);
    const v2 = describeDocumentType(
      id(
        UBL_INVOICE,
        'urn:www.cenbii.eu:transaction:biitrns010:ver2.0:extended:urn:www.peppol.eu:bis:peppol4a:ver2.0',
      ),
    );
    assert.equal(v2.name, 'PEPPOL Invoice profile V2');
    assert.equal(v2.invoice, false);
  });

  it('a document type the list does not know is classified by its identifier, without a name', () => {
    const national = describeDocumentType(
      id(UBL_INVOICE, 'urn:cen.eu:en16931:2017#compliant#urn:example:cius:1.0'),
    );
    assert.deepEqual(
      [national.name, national.state, national.kind, national.invoice],
      [null, null, 'en16931-cius', true],
    );
    for (const odd of ['', 'busdox-docid-qns::', 'no scheme at all', `busdox-docid-qns::${UBL_INVOICE}`]) {
      const info = describeDocumentType(odd);
      assert.equal(info.kind, 'other', odd);
      assert.equal(info.invoice, false, odd);
    }
    assert.equal(documentTypeParts('busdox-docid-qns::root##custom::2.1')?.customization, 'custom');
    assert.equal(billingKind('urn:cen.eu:en16931:2017#compliant'), 'other');
    assert.equal(billingKind('urn:cen.eu:en16931:2017#extended#urn:x'), 'en16931-extension');
  });

  it('the active invoices of the code list are exactly BIS Billing 3.0, the EN 16931 core and its CIUS', () => {
    const active = knownDocumentTypes()
      .filter((d) => d.invoice && d.state === 'active')
      .map((d) => d.name)
      .sort();
    assert.deepEqual(active, [
      'EN 16931 CII Invoice',
      'EN 16931 UBL Invoice',
      'France CII Invoice CIUS',
      'France UBL Invoice CIUS',
      'Peppol BIS Billing CII Invoice V3',
      'Peppol BIS Billing UBL Invoice V3',
      'SETU Invoice v2.2',
      'SI-UBL 2.0 Invoice',
      'XRechnung CII Invoice V3.0',
      'XRechnung UBL Invoice V3.0',
    ]);
  });
});
