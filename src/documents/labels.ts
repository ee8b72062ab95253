/** Every fixed text of the PDF, per locale (docs/documents.md explains the legal ones). */
import type { DocumentLocale } from './locale.ts';

export interface Labels {
  title: string;
  number: string;
  issueDate: string;
  dueDate: string;
  seller: string;
  buyer: string;
  ice: string;
  ifNumber: string;
  rc: string;
  vat: string;
  phone: string;
  email: string;
  position: string;
  description: string;
  quantity: string;
  unitPrice: string;
  rate: string;
  lineTotal: string;
  breakdown: string;
  taxableAmount: string;
  taxAmount: string;
  subtotal: string;
  totalTax: string;
  total: string;
  amountDue: string;
  paymentTerms: string;
  notes: string;
  noDueDate: string;
  void: string;
  voidReason: string;
  paid: string;
  paidOn: string;
  page: string;
  currency: string;
}

export const LABELS: Record<DocumentLocale, Labels> = {
  fr: {
    title: 'Facture', number: 'N° de facture', issueDate: "Date d'émission", dueDate: "Date d'échéance",
    seller: 'Émetteur', buyer: 'Facturé à', ice: 'ICE', ifNumber: 'IF', rc: 'RC', vat: 'N° TVA', phone: 'Tél.', email: 'E-mail',
    position: 'N°', description: 'Désignation', quantity: 'Qté', unitPrice: 'Prix unitaire HT', rate: 'TVA', lineTotal: 'Montant HT',
    breakdown: 'Récapitulatif de la TVA', taxableAmount: 'Base HT', taxAmount: 'Montant TVA',
    subtotal: 'Total HT', totalTax: 'Total TVA', total: 'Total TTC', amountDue: 'Net à payer',
    paymentTerms: 'Conditions de paiement', notes: 'Remarques', noDueDate: '—',
    void: 'ANNULÉE', voidReason: 'Facture annulée le', paid: 'PAYÉE', paidOn: 'le', page: 'Page', currency: 'Devise',
  },
  en: {
    title: 'Invoice', number: 'Invoice number', issueDate: 'Issue date', dueDate: 'Due date',
    seller: 'From', buyer: 'Bill to', ice: 'ICE', ifNumber: 'Tax ID (IF)', rc: 'Trade register (RC)', vat: 'VAT no.', phone: 'Tel.', email: 'Email',
    position: '#', description: 'Description', quantity: 'Qty', unitPrice: 'Unit price (excl. VAT)', rate: 'VAT', lineTotal: 'Amount (excl. VAT)',
    breakdown: 'VAT summary', taxableAmount: 'Taxable amount', taxAmount: 'VAT amount',
    subtotal: 'Total excl. VAT', totalTax: 'Total VAT', total: 'Total incl. VAT', amountDue: 'Amount due',
    paymentTerms: 'Payment terms', notes: 'Notes', noDueDate: '—',
    void: 'VOID', voidReason: 'Invoice voided on', paid: 'PAID', paidOn: 'on', page: 'Page', currency: 'Currency',
  },
  ar: {
    title: 'فاتورة', number: 'رقم الفاتورة', issueDate: 'تاريخ الإصدار', dueDate: 'تاريخ الاستحقاق',
    seller: 'البائع', buyer: 'الزبون', ice: 'التعريف الموحد للمقاولة', ifNumber: 'التعريف الضريبي', rc: 'السجل التجاري', vat: 'رقم الضريبة على القيمة المضافة',
    phone: 'الهاتف', email: 'البريد الإلكتروني',
    position: 'رقم', description: 'البيان', quantity: 'الكمية', unitPrice: 'سعر الوحدة دون احتساب الرسوم', rate: 'الضريبة', lineTotal: 'المبلغ دون احتساب الرسوم',
    breakdown: 'ملخص الضريبة على القيمة المضافة', taxableAmount: 'الأساس الخاضع للضريبة', taxAmount: 'مبلغ الضريبة',
    subtotal: 'المجموع دون احتساب الرسوم', totalTax: 'مجموع الضريبة على القيمة المضافة', total: 'المجموع مع احتساب الرسوم', amountDue: 'المبلغ الواجب أداؤه',
    paymentTerms: 'شروط الأداء', notes: 'ملاحظات', noDueDate: '—',
    void: 'ملغاة', voidReason: 'ألغيت الفاتورة بتاريخ', paid: 'مؤداة', paidOn: 'بتاريخ', page: 'صفحة', currency: 'العملة',
  },
};
