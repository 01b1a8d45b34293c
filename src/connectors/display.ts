import { z } from 'zod';
import { MoneyError, parseAmount } from '../domain/money.ts';
import { ConnectorError, type Money, type TerminalDisplay } from './types.ts';

/**
 * The cart a POS payment may show on its terminal before the card is presented, as a payment's
 * `configuration.display` (amounts as decimal strings, as everywhere in the API). Only versions whose
 * processor can show a cart declare it in their configuration schema, so elsewhere it is refused as an
 * unknown field. Limits: Stripe's cart (`Terminal.ReaderSetReaderDisplayParams.Cart`) has no documented
 * maximum; a terminal's screen shows a handful of lines, so 50 lines and 100 characters are kept to.
 */
const DisplayAmount = z.strictObject({
  value: z
    .string()
    .max(32)
    .regex(/^(0|[1-9]\d{0,11})(\.\d+)?$/)
    .describe('Decimal string, as the payment’s `amount.value`.'),
  currency: z
    .string()
    .regex(/^[A-Z]{3}$/)
    .describe('The payment’s currency.'),
});

export const DisplayConfiguration = z
  .strictObject({
    lines: z
      .array(
        z.strictObject({
          description: z.string().min(1).max(100).describe('What the line is, as the customer reads it.'),
          quantity: z.number().int().min(1).max(9999).describe('How many.'),
          amount: DisplayAmount.describe('The line’s amount.'),
        }),
      )
      .min(1)
      .max(50)
      .describe('The lines of the cart, in order.'),
    tax: DisplayAmount.optional().describe('Tax included in the total, shown apart.'),
    total: DisplayAmount.describe('What the customer is charged: must equal the payment’s amount.'),
  })
  .describe(
    'A cart shown on the terminal before the card is presented (lines, tax, total). Display only: the payment’s `amount` is what is charged, and the total must equal it.',
  );
export type DisplayConfiguration = z.infer<typeof DisplayConfiguration>;

/** Where a display disagrees with the payment it is shown for; empty when it can be shown. */
export function displayIssues(display: TerminalDisplay, amount: Money): { field: string; issue: string }[] {
  const issues: { field: string; issue: string }[] = [];
  const check = (field: string, money: Money) => {
    if (money.currency !== amount.currency) issues.push({ field, issue: 'Must be in the payment’s currency' });
    if (!Number.isSafeInteger(money.minor) || money.minor <= 0) issues.push({ field, issue: 'Must be positive' });
  };
  for (const [i, line] of display.lines.entries()) check(`display.lines.${i}.amount`, line.amount);
  if (display.tax) check('display.tax', display.tax);
  check('display.total', display.total);
  if (display.total.minor !== amount.minor) issues.push({ field: 'display.total', issue: 'Must equal the amount' });
  if (display.tax && display.tax.minor > display.total.minor)
    issues.push({ field: 'display.tax', issue: 'Must not exceed the total' });
  return issues;
}

/** A configured display in minor units; a value that is no amount of its currency is an issue of that field. */
export function displayFromConfiguration(display: DisplayConfiguration): TerminalDisplay {
  const money = (value: { value: string; currency: string }, field: string): Money => {
    try {
      return { minor: parseAmount(value.value, value.currency), currency: value.currency };
    } catch (error) {
      if (error instanceof MoneyError) throw displayRefused([{ field, issue: error.reason }]);
      throw error;
    }
  };
  return {
    lines: display.lines.map((line, i) => ({
      description: line.description,
      quantity: line.quantity,
      amount: money(line.amount, `display.lines.${i}.amount`),
    })),
    ...(display.tax ? { tax: money(display.tax, 'display.tax') } : {}),
    total: money(display.total, 'display.total'),
  };
}

/**
 * Where a configured display (decimal strings, as the request carries it) disagrees with the payment it would
 * be shown for: the core refuses these before recording the payment (400), with the same fields
 * `displayFor` would name later. Empty when it can be shown.
 */
export function displayConfigurationIssues(
  display: DisplayConfiguration,
  amount: Money,
): { field: string; issue: string }[] {
  try {
    return displayIssues(displayFromConfiguration(display), amount);
  } catch (error) {
    if (error instanceof DisplayRefused) return error.issues;
    throw error;
  }
}

/**
 * The display a create carries (the core's, else the configuration's), checked against the payment. The
 * core should have refused a bad one with 400 before recording the payment (`displayIssues`); reaching the
 * processor with it would show the customer a total other than the one charged, so it is refused here too.
 */
export function displayFor(
  input: { amount: Money; display?: TerminalDisplay },
  configuration: { display?: DisplayConfiguration } | undefined,
): TerminalDisplay | null {
  const display =
    input.display ?? (configuration?.display ? displayFromConfiguration(configuration.display) : undefined);
  if (!display) return null;
  const issues = displayIssues(display, input.amount);
  if (issues.length > 0) throw displayRefused(issues);
  return display;
}

class DisplayRefused extends ConnectorError {
  constructor(readonly issues: { field: string; issue: string }[]) {
    super(
      'configuration_invalid',
      `The display cannot be shown for this payment (${issues.map((i) => i.field).join(', ')}).`,
      'display_invalid',
    );
  }
}

const displayRefused = (issues: { field: string; issue: string }[]) => new DisplayRefused(issues);
