/**
 * An amount in minor units shown with its currency: 1999 cents of USD is "$19.99". Amounts on the
 * wire stay integers of minor units; this is only how a person reads them.
 */
export function formatMoney(minorUnits: number, currency: string): string {
  try {
    const format = new Intl.NumberFormat("en-US", { style: "currency", currency });
    const digits = format.resolvedOptions().maximumFractionDigits ?? 2;
    return format.format(minorUnits / 10 ** digits);
  } catch {
    // An unknown currency code: show the minor units as they are rather than guess.
    return `${minorUnits} ${currency} minor units`;
  }
}
