// Every label the invoice PDF prints, per `locale`. English is what the service has always printed
// (a request without a locale gets exactly these); the others are the usual invoice vocabulary of
// each language, with the legal wording of German and French law in de and fr (a correction is a
// "Rechnungskorrektur": a "Gutschrift" is self-billing by the buyer under § 14 Abs. 2 UStG). {x}/{y} and {rate} are filled in by document.ts.
import type { InvoiceLocale } from '../model/einvoice-schema.ts'

export interface Labels {
  invoice: string
  creditNote: string
  date: string
  dueDate: string
  from: string
  billTo: string
  description: string
  qty: string
  unitPrice: string
  amount: string
  subtotal: string
  discount: string
  tax: string
  /** VAT breakdown row: "{rate}" is the rate, "{base}" the taxable amount. */
  vatOn: string
  vat: string
  total: string
  notes: string
  paymentInfo: string
  page: string
  vatId: string
  taxNumber: string
  buyerReference: string
  orderReference: string
  deliveryDate: string
  precedingInvoice: string
  payment: string
  accountHolder: string
  reference: string
  terms: string
  exemption: string
  scanToPay: string
  /** Who a credit note is issued to (not "Bill to": nothing is billed). */
  creditTo: string
}

const en: Labels = {
  invoice: 'Invoice', creditNote: 'Credit note', date: 'Date', dueDate: 'Due date', from: 'From', billTo: 'Bill to',
  description: 'Description', qty: 'Qty', unitPrice: 'Unit price', amount: 'Amount', subtotal: 'Subtotal', discount: 'Discount',
  tax: 'Tax', vatOn: 'VAT {rate}% on {base}', vat: 'VAT', total: 'Total', notes: 'Notes', paymentInfo: 'Payment information',
  page: 'Page {x} of {y}', vatId: 'VAT ID', taxNumber: 'Tax number', buyerReference: 'Buyer reference', orderReference: 'Order',
  deliveryDate: 'Delivery date', precedingInvoice: 'Credit for invoice', payment: 'Payment details', accountHolder: 'Account holder',
  reference: 'Reference', terms: 'Terms', exemption: 'VAT exemption', scanToPay: 'Scan to pay', creditTo: 'Credit to',
}

export const LABELS: Record<InvoiceLocale, Labels> = {
  en,
  de: {
    invoice: 'Rechnung', creditNote: 'Rechnungskorrektur', date: 'Datum', dueDate: 'Fällig am', from: 'Von', billTo: 'Rechnung an',
    description: 'Beschreibung', qty: 'Menge', unitPrice: 'Einzelpreis', amount: 'Betrag', subtotal: 'Zwischensumme', discount: 'Rabatt',
    tax: 'Steuer', vatOn: 'USt. {rate} % auf {base}', vat: 'USt.', total: 'Gesamtbetrag', notes: 'Anmerkungen', paymentInfo: 'Zahlungsinformationen',
    page: 'Seite {x} von {y}', vatId: 'USt-IdNr.', taxNumber: 'Steuernummer', buyerReference: 'Käuferreferenz', orderReference: 'Bestellung',
    deliveryDate: 'Lieferdatum', precedingInvoice: 'Korrektur zu Rechnung', payment: 'Bankverbindung', accountHolder: 'Kontoinhaber',
    reference: 'Verwendungszweck', terms: 'Zahlungsbedingungen', exemption: 'Steuerhinweis', scanToPay: 'Zum Bezahlen scannen', creditTo: 'Empfänger',
  },
  fr: {
    invoice: 'Facture', creditNote: 'Avoir', date: 'Date', dueDate: 'Échéance', from: 'De', billTo: 'Facturé à',
    description: 'Désignation', qty: 'Qté', unitPrice: 'Prix unitaire', amount: 'Montant', subtotal: 'Sous-total', discount: 'Remise',
    tax: 'Taxe', vatOn: 'TVA {rate} % sur {base}', vat: 'TVA', total: 'Total', notes: 'Remarques', paymentInfo: 'Informations de paiement',
    page: 'Page {x} sur {y}', vatId: 'N° TVA', taxNumber: 'N° fiscal', buyerReference: 'Référence acheteur', orderReference: 'Commande',
    deliveryDate: 'Date de livraison', precedingInvoice: 'Avoir sur facture', payment: 'Coordonnées bancaires', accountHolder: 'Titulaire',
    reference: 'Référence', terms: 'Conditions de paiement', exemption: 'Mentions TVA', scanToPay: 'Scanner pour payer', creditTo: 'Destinataire',
  },
  es: {
    invoice: 'Factura', creditNote: 'Factura rectificativa', date: 'Fecha', dueDate: 'Vencimiento', from: 'De', billTo: 'Facturar a',
    description: 'Descripción', qty: 'Cant.', unitPrice: 'Precio unitario', amount: 'Importe', subtotal: 'Subtotal', discount: 'Descuento',
    tax: 'Impuesto', vatOn: 'IVA {rate} % sobre {base}', vat: 'IVA', total: 'Total', notes: 'Notas', paymentInfo: 'Información de pago',
    page: 'Página {x} de {y}', vatId: 'NIF-IVA', taxNumber: 'NIF', buyerReference: 'Referencia del comprador', orderReference: 'Pedido',
    deliveryDate: 'Fecha de entrega', precedingInvoice: 'Rectifica la factura', payment: 'Datos bancarios', accountHolder: 'Titular',
    reference: 'Referencia', terms: 'Condiciones de pago', exemption: 'Exención de IVA', scanToPay: 'Escanear para pagar', creditTo: 'Destinatario',
  },
  it: {
    invoice: 'Fattura', creditNote: 'Nota di credito', date: 'Data', dueDate: 'Scadenza', from: 'Da', billTo: 'Intestata a',
    description: 'Descrizione', qty: 'Qtà', unitPrice: 'Prezzo unitario', amount: 'Importo', subtotal: 'Subtotale', discount: 'Sconto',
    tax: 'Imposta', vatOn: 'IVA {rate}% su {base}', vat: 'IVA', total: 'Totale', notes: 'Note', paymentInfo: 'Informazioni di pagamento',
    page: 'Pagina {x} di {y}', vatId: 'Partita IVA', taxNumber: 'Codice fiscale', buyerReference: 'Riferimento acquirente', orderReference: 'Ordine',
    deliveryDate: 'Data di consegna', precedingInvoice: 'Nota di credito per fattura', payment: 'Coordinate bancarie', accountHolder: 'Intestatario',
    reference: 'Causale', terms: 'Condizioni di pagamento', exemption: 'Esenzione IVA', scanToPay: 'Scansiona per pagare', creditTo: 'Destinatario',
  },
  nl: {
    invoice: 'Factuur', creditNote: 'Creditnota', date: 'Datum', dueDate: 'Vervaldatum', from: 'Van', billTo: 'Factuur aan',
    description: 'Omschrijving', qty: 'Aantal', unitPrice: 'Prijs per stuk', amount: 'Bedrag', subtotal: 'Subtotaal', discount: 'Korting',
    tax: 'Belasting', vatOn: 'Btw {rate}% over {base}', vat: 'Btw', total: 'Totaal', notes: 'Opmerkingen', paymentInfo: 'Betalingsinformatie',
    page: 'Pagina {x} van {y}', vatId: 'Btw-nummer', taxNumber: 'Fiscaal nummer', buyerReference: 'Referentie koper', orderReference: 'Bestelling',
    deliveryDate: 'Leverdatum', precedingInvoice: 'Creditnota voor factuur', payment: 'Bankgegevens', accountHolder: 'Rekeninghouder',
    reference: 'Betalingskenmerk', terms: 'Betalingsvoorwaarden', exemption: 'Btw-vrijstelling', scanToPay: 'Scan om te betalen', creditTo: 'Ontvanger',
  },
  'pt-BR': {
    invoice: 'Fatura', creditNote: 'Nota de crédito', date: 'Data', dueDate: 'Vencimento', from: 'De', billTo: 'Faturar para',
    description: 'Descrição', qty: 'Qtd.', unitPrice: 'Preço unitário', amount: 'Valor', subtotal: 'Subtotal', discount: 'Desconto',
    tax: 'Imposto', vatOn: 'IVA {rate}% sobre {base}', vat: 'IVA', total: 'Total', notes: 'Observações', paymentInfo: 'Informações de pagamento',
    page: 'Página {x} de {y}', vatId: 'Nº de IVA', taxNumber: 'Nº fiscal', buyerReference: 'Referência do comprador', orderReference: 'Pedido',
    deliveryDate: 'Data de entrega', precedingInvoice: 'Crédito da fatura', payment: 'Dados bancários', accountHolder: 'Titular',
    reference: 'Referência', terms: 'Condições de pagamento', exemption: 'Isenção de IVA', scanToPay: 'Escaneie para pagar', creditTo: 'Destinatário',
  },
  ja: {
    invoice: '請求書', creditNote: '貸方票', date: '発行日', dueDate: '支払期日', from: '請求元', billTo: '請求先',
    description: '品目', qty: '数量', unitPrice: '単価', amount: '金額', subtotal: '小計', discount: '値引き',
    tax: '税', vatOn: '消費税 {rate}% ({base} に対して)', vat: '消費税', total: '合計', notes: '備考', paymentInfo: '支払情報',
    page: '{x} / {y} ページ', vatId: '登録番号', taxNumber: '税番号', buyerReference: '購入者参照', orderReference: '注文番号',
    deliveryDate: '納品日', precedingInvoice: '対象請求書', payment: '振込先', accountHolder: '口座名義',
    reference: '支払参照', terms: '支払条件', exemption: '非課税理由', scanToPay: 'スキャンして支払う', creditTo: '宛先',
  },
  'zh-CN': {
    invoice: '发票', creditNote: '贷项通知单', date: '日期', dueDate: '到期日', from: '开票方', billTo: '收票方',
    description: '描述', qty: '数量', unitPrice: '单价', amount: '金额', subtotal: '小计', discount: '折扣',
    tax: '税', vatOn: '增值税 {rate}%（计税金额 {base}）', vat: '增值税', total: '总计', notes: '备注', paymentInfo: '付款信息',
    page: '第 {x} 页，共 {y} 页', vatId: '税号', taxNumber: '纳税人识别号', buyerReference: '买方参考', orderReference: '订单号',
    deliveryDate: '交货日期', precedingInvoice: '原发票', payment: '银行信息', accountHolder: '账户名',
    reference: '付款参考', terms: '付款条件', exemption: '免税原因', scanToPay: '扫码付款', creditTo: '收件方',
  },
}

export function labelsFor(locale: InvoiceLocale | undefined): Labels {
  return LABELS[locale ?? 'en']
}
