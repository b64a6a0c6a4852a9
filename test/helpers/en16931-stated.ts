// What a received e-invoice states — currency, document totals BT-106…BT-115, each line's net amount
// BT-131 and VAT category, the document level allowances and charges, the VAT breakdown — read by an XSLT of its own run with Saxon-HE, not by the service's
// parser, so a test can compare the service's read with the document itself. The paths are those
// of the EN 16931 syntax bindings (UBL 2.1, CII D16B), as the official rules use them: BT-111 is the
// tax total in the VAT accounting currency BT-6 whenever BT-6 is given — when BT-6 is BT-5, the
// same element as BT-110 (which is how BR-53 finds it).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { saxonFolder, writeBatch } from './en16931-rules.ts'

export interface StatedLine {
  /** BT-126, BT-129, BT-131, BT-151, BT-152 as written. */
  id: string
  quantity: string
  net: string
  category: string
  rate: string
}

export interface StatedAdjustment {
  /** A document level charge (BG-21) or allowance (BG-20): BT-99/92, BT-102/95, BT-103/96. */
  charge: boolean
  amount: string
  category: string
  rate: string
}

export interface StatedVat {
  /** BT-118, BT-119 ('' when absent), BT-116, BT-117. */
  category: string
  rate: string
  taxable: string
  tax: string
}

export interface Stated {
  currency: string
  /** BT-106…BT-115 by "BT-106" …, only those the document has. */
  totals: Record<string, string>
  lines: StatedLine[]
  adjustments: StatedAdjustment[]
  vat: StatedVat[]
}

const XSL = `<?xml version="1.0" encoding="UTF-8"?>
<xsl:stylesheet version="2.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform"
  xmlns:cac="urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2"
  xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2"
  xmlns:rsm="urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100"
  xmlns:ram="urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100">
  <xsl:output method="text" encoding="UTF-8"/>
  <xsl:template name="row">
    <xsl:param name="cells"/>
    <xsl:value-of select="string-join(for $c in $cells return normalize-space(string($c)), '&#9;')"/>
    <xsl:text>&#10;</xsl:text>
  </xsl:template>
  <xsl:template name="total">
    <xsl:param name="bt"/><xsl:param name="node"/>
    <xsl:if test="exists($node)"><xsl:call-template name="row"><xsl:with-param name="cells" select="('total', $bt, string($node[1]))"/></xsl:call-template></xsl:if>
  </xsl:template>

  <xsl:template match="/*[local-name() = ('Invoice', 'CreditNote')]">
    <xsl:variable name="cur" select="normalize-space(cbc:DocumentCurrencyCode)"/>
    <xsl:variable name="taxcur" select="normalize-space(cbc:TaxCurrencyCode)"/>
    <xsl:variable name="t" select="cac:LegalMonetaryTotal"/>
    <xsl:call-template name="row"><xsl:with-param name="cells" select="('currency', $cur)"/></xsl:call-template>
    <xsl:call-template name="total"><xsl:with-param name="bt" select="'BT-106'"/><xsl:with-param name="node" select="$t/cbc:LineExtensionAmount"/></xsl:call-template>
    <xsl:call-template name="total"><xsl:with-param name="bt" select="'BT-107'"/><xsl:with-param name="node" select="$t/cbc:AllowanceTotalAmount"/></xsl:call-template>
    <xsl:call-template name="total"><xsl:with-param name="bt" select="'BT-108'"/><xsl:with-param name="node" select="$t/cbc:ChargeTotalAmount"/></xsl:call-template>
    <xsl:call-template name="total"><xsl:with-param name="bt" select="'BT-109'"/><xsl:with-param name="node" select="$t/cbc:TaxExclusiveAmount"/></xsl:call-template>
    <xsl:call-template name="total"><xsl:with-param name="bt" select="'BT-110'"/><xsl:with-param name="node" select="cac:TaxTotal/cbc:TaxAmount[normalize-space(@currencyID) = $cur]"/></xsl:call-template>
    <xsl:if test="$taxcur != ''">
      <xsl:call-template name="total"><xsl:with-param name="bt" select="'BT-111'"/><xsl:with-param name="node" select="cac:TaxTotal/cbc:TaxAmount[normalize-space(@currencyID) = $taxcur]"/></xsl:call-template>
    </xsl:if>
    <xsl:call-template name="total"><xsl:with-param name="bt" select="'BT-112'"/><xsl:with-param name="node" select="$t/cbc:TaxInclusiveAmount"/></xsl:call-template>
    <xsl:call-template name="total"><xsl:with-param name="bt" select="'BT-113'"/><xsl:with-param name="node" select="$t/cbc:PrepaidAmount"/></xsl:call-template>
    <xsl:call-template name="total"><xsl:with-param name="bt" select="'BT-114'"/><xsl:with-param name="node" select="$t/cbc:PayableRoundingAmount"/></xsl:call-template>
    <xsl:call-template name="total"><xsl:with-param name="bt" select="'BT-115'"/><xsl:with-param name="node" select="$t/cbc:PayableAmount"/></xsl:call-template>
    <xsl:for-each select="cac:InvoiceLine | cac:CreditNoteLine">
      <xsl:call-template name="row"><xsl:with-param name="cells" select="('line', string(cbc:ID), string((cbc:InvoicedQuantity | cbc:CreditedQuantity)[1]), string(cbc:LineExtensionAmount), string(cac:Item/cac:ClassifiedTaxCategory/cbc:ID), string(cac:Item/cac:ClassifiedTaxCategory/cbc:Percent))"/></xsl:call-template>
    </xsl:for-each>
    <xsl:for-each select="cac:AllowanceCharge">
      <xsl:call-template name="row"><xsl:with-param name="cells" select="('ac', string(cbc:ChargeIndicator), string(cbc:Amount), string(cac:TaxCategory/cbc:ID), string(cac:TaxCategory/cbc:Percent))"/></xsl:call-template>
    </xsl:for-each>
    <xsl:for-each select="cac:TaxTotal[cbc:TaxAmount/normalize-space(@currencyID) = $cur]/cac:TaxSubtotal">
      <xsl:call-template name="row"><xsl:with-param name="cells" select="('vat', string(cac:TaxCategory/cbc:ID), string(cac:TaxCategory/cbc:Percent), string(cbc:TaxableAmount), string(cbc:TaxAmount))"/></xsl:call-template>
    </xsl:for-each>
  </xsl:template>

  <xsl:template match="/rsm:CrossIndustryInvoice">
    <xsl:variable name="s" select="rsm:SupplyChainTradeTransaction/ram:ApplicableHeaderTradeSettlement"/>
    <xsl:variable name="cur" select="normalize-space($s/ram:InvoiceCurrencyCode)"/>
    <xsl:variable name="taxcur" select="normalize-space($s/ram:TaxCurrencyCode)"/>
    <xsl:variable name="t" select="$s/ram:SpecifiedTradeSettlementHeaderMonetarySummation"/>
    <xsl:call-template name="row"><xsl:with-param name="cells" select="('currency', $cur)"/></xsl:call-template>
    <xsl:call-template name="total"><xsl:with-param name="bt" select="'BT-106'"/><xsl:with-param name="node" select="$t/ram:LineTotalAmount"/></xsl:call-template>
    <xsl:call-template name="total"><xsl:with-param name="bt" select="'BT-107'"/><xsl:with-param name="node" select="$t/ram:AllowanceTotalAmount"/></xsl:call-template>
    <xsl:call-template name="total"><xsl:with-param name="bt" select="'BT-108'"/><xsl:with-param name="node" select="$t/ram:ChargeTotalAmount"/></xsl:call-template>
    <xsl:call-template name="total"><xsl:with-param name="bt" select="'BT-109'"/><xsl:with-param name="node" select="$t/ram:TaxBasisTotalAmount"/></xsl:call-template>
    <xsl:call-template name="total"><xsl:with-param name="bt" select="'BT-110'"/><xsl:with-param name="node" select="($t/ram:TaxTotalAmount[normalize-space(@currencyID) = $cur], $t/ram:TaxTotalAmount[not(@currencyID)])"/></xsl:call-template>
    <xsl:if test="$taxcur != ''">
      <xsl:call-template name="total"><xsl:with-param name="bt" select="'BT-111'"/><xsl:with-param name="node" select="$t/ram:TaxTotalAmount[normalize-space(@currencyID) = $taxcur]"/></xsl:call-template>
    </xsl:if>
    <xsl:call-template name="total"><xsl:with-param name="bt" select="'BT-112'"/><xsl:with-param name="node" select="$t/ram:GrandTotalAmount"/></xsl:call-template>
    <xsl:call-template name="total"><xsl:with-param name="bt" select="'BT-113'"/><xsl:with-param name="node" select="$t/ram:TotalPrepaidAmount"/></xsl:call-template>
    <xsl:call-template name="total"><xsl:with-param name="bt" select="'BT-114'"/><xsl:with-param name="node" select="$t/ram:RoundingAmount"/></xsl:call-template>
    <xsl:call-template name="total"><xsl:with-param name="bt" select="'BT-115'"/><xsl:with-param name="node" select="$t/ram:DuePayableAmount"/></xsl:call-template>
    <xsl:for-each select="rsm:SupplyChainTradeTransaction/ram:IncludedSupplyChainTradeLineItem">
      <xsl:call-template name="row"><xsl:with-param name="cells" select="('line', string(ram:AssociatedDocumentLineDocument/ram:LineID), string(ram:SpecifiedLineTradeDelivery/ram:BilledQuantity), string(ram:SpecifiedLineTradeSettlement/ram:SpecifiedTradeSettlementLineMonetarySummation/ram:LineTotalAmount), string(ram:SpecifiedLineTradeSettlement/ram:ApplicableTradeTax/ram:CategoryCode), string(ram:SpecifiedLineTradeSettlement/ram:ApplicableTradeTax/ram:RateApplicablePercent))"/></xsl:call-template>
    </xsl:for-each>
    <xsl:for-each select="$s/ram:SpecifiedTradeAllowanceCharge">
      <xsl:call-template name="row"><xsl:with-param name="cells" select="('ac', string(ram:ChargeIndicator), string(ram:ActualAmount), string(ram:CategoryTradeTax/ram:CategoryCode), string(ram:CategoryTradeTax/ram:RateApplicablePercent))"/></xsl:call-template>
    </xsl:for-each>
    <xsl:for-each select="$s/ram:ApplicableTradeTax">
      <xsl:call-template name="row"><xsl:with-param name="cells" select="('vat', string(ram:CategoryCode), string(ram:RateApplicablePercent), string(ram:BasisAmount), string(ram:CalculatedAmount))"/></xsl:call-template>
    </xsl:for-each>
  </xsl:template>

  <xsl:template match="/*" priority="-1"><xsl:text>unknown&#10;</xsl:text></xsl:template>
</xsl:stylesheet>
`

/** What each document (name → XML) states, all in one Saxon run. */
export async function statedValues(documents: Map<string, Buffer | string>): Promise<Map<string, Stated>> {
  const { dir, names } = writeBatch(documents, 'qw-en16931-stated-')
  const xsl = join(mkdtempSync(join(tmpdir(), 'qw-en16931-xsl-')), 'stated.xsl')
  writeFileSync(xsl, XSL)
  const output = `${dir}-out`
  try {
    await saxonFolder(xsl, dir, output)
    const out = new Map<string, Stated>()
    for (const [file, name] of names) {
      const stated: Stated = { currency: '', totals: {}, lines: [], adjustments: [], vat: [] }
      for (const row of readFileSync(join(output, file), 'utf8').split('\n').filter(Boolean)) {
        const [kind, ...c] = row.split('\t')
        if (kind === 'unknown') throw new Error(`${name}: neither UBL Invoice/CreditNote nor CII CrossIndustryInvoice`)
        if (kind === 'currency') stated.currency = c[0]!
        else if (kind === 'total') stated.totals[c[0]!] = c[1]!
        else if (kind === 'line') stated.lines.push({ id: c[0]!, quantity: c[1]!, net: c[2]!, category: c[3]!, rate: c[4]! })
        else if (kind === 'ac') stated.adjustments.push({ charge: c[0] === 'true', amount: c[1]!, category: c[2]!, rate: c[3]! })
        else if (kind === 'vat') stated.vat.push({ category: c[0]!, rate: c[1]!, taxable: c[2]!, tax: c[3]! })
      }
      out.set(name, stated)
    }
    return out
  } finally {
    rmSync(dir, { recursive: true, force: true })
    rmSync(output, { recursive: true, force: true })
    rmSync(xsl, { force: true })
  }
}
