import * as z from "zod";
import { lazily } from "../core/lazily";

/**
 * The rates a tenant may set an alert on, one row each: the counter counted (`part`) over the
 * counter it is a share of (`whole`, less `except` when set), names of src/metrics/events.ts, which side of the
 * threshold is bad, and its name on the health page. A rate becomes alertable by adding its row here.
 */
export const ALERT_RATES = {
  /**
   * Calls that succeeded; an alert fires when fewer than the threshold do. A call waiting for a
   * human (`escalations`) is neither: it is left out of the calls counted.
   */
  task_success: {
    label: "Task success",
    part: "succeeded",
    whole: "calls",
    except: "escalations",
    fires: "below",
  },
  /** Calls refused as wrong (validation_error, permission_error). */
  invalid_calls: { label: "Invalid calls", part: "invalid", whole: "calls", fires: "above" },
  /** Calls handed to a human: answered with an approval pending. */
  human_takeover: { label: "Human takeover", part: "escalations", whole: "calls", fires: "above" },
  /** Write, draft or destructive calls answered from the ledger instead of done twice. */
  duplicates_prevented: {
    label: "Duplicates prevented",
    part: "duplicates_prevented",
    whole: "calls",
    fires: "above",
  },
  /** Approvals still undecided past their SLA, of the approvals asked. */
  approvals_overdue: {
    label: "Approvals past their SLA",
    part: "approvals_overdue",
    whole: "approvals_asked",
    fires: "above",
  },
} as const satisfies Record<
  string,
  { label: string; part: string; whole: string; except?: string; fires: "above" | "below" }
>;

export type AlertRate = keyof typeof ALERT_RATES;
export const ALERT_RATE_NAMES = Object.keys(ALERT_RATES) as AlertRate[];

/** The widest window: the eight days the local store keeps. */
export const MAX_WINDOW_MINUTES = 8 * 24 * 60;

function isAlertRate(name: string): name is AlertRate {
  return Object.hasOwn(ALERT_RATES, name);
}

const got = (input: unknown) => JSON.stringify(input) ?? "nothing";

/** One alert: the threshold a rate must not cross over a window, judged once the window holds enough. */
export const alertSchema = lazily(() =>
  z.strictObject({
    /** A share from 0 to 1: above it (below it, for task_success) the alert fires. */
    threshold: z
      .number({ error: (issue) => `must be a rate from 0 to 1 (got ${got(issue.input)})` })
      .min(0, { error: (issue) => `must be a rate from 0 to 1 (got ${got(issue.input)})` })
      .max(1, { error: (issue) => `must be a rate from 0 to 1 (got ${got(issue.input)})` }),
    /** Windows are whole minutes aligned to the epoch (60 = each clock hour); one webhook per window at most. */
    window_minutes: z
      .number({ error: (issue) => windowError(issue.input) })
      .int({ error: (issue) => windowError(issue.input) })
      .min(1, { error: (issue) => windowError(issue.input) })
      .max(MAX_WINDOW_MINUTES, { error: (issue) => windowError(issue.input) }),
    /** The rate is judged only once the window holds this many of its `whole` (calls): a few calls prove little. */
    min_sample: z
      .number({ error: (issue) => sampleError(issue.input) })
      .int({ error: (issue) => sampleError(issue.input) })
      .min(1, { error: (issue) => sampleError(issue.input) })
      .default(10),
  }),
);
export type Alert = z.infer<ReturnType<typeof alertSchema>>;

function windowError(input: unknown): string {
  return `must be a whole number of minutes from 1 to ${MAX_WINDOW_MINUTES} (got ${got(input)})`;
}

function sampleError(input: unknown): string {
  return `must be an integer ≥ 1 (got ${got(input)})`;
}

/** A tenant's alerts: rate name → alert. A rate not listed has none. */
export const alertsSchema = lazily(() =>
  z
    .record(z.string().refine(isAlertRate), alertSchema(), {
      error: (issue) =>
        issue.code === "invalid_key"
          ? `${got(issue.input)} is not a rate alerts can watch: ${ALERT_RATE_NAMES.join(", ")}`
          : undefined,
    })
    .transform((alerts) => alerts as Partial<Record<AlertRate, Alert>>),
);
