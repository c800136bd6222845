import * as z from "zod";
import type { ToolSpec } from "./define-tool";
import { unwrap } from "./schema-fields";

/**
 * The rules of a tool's effect identity and value (`effect`, `value`), for code and declared tools
 * alike. Problems are located as a declaration names them (`effect.identity[0]`, `value.field`),
 * since that is where most are written; the message also names the tool and the argument.
 */

/** The window in which a second effect on one identity is a repeat: a minute to 30 days. */
export const EFFECT_WINDOW_MS = { min: 60_000, max: 30 * 24 * 60 * 60 * 1_000 } as const;

type Report = (field: string, message: string) => void;

/** What an argument is, in a reader's words: for a message that says why it does not fit. */
function argumentKind(schema: z.ZodType): string {
  const inner = unwrap(schema);
  if (inner instanceof z.ZodNumber) return inner.isInt ? "an integer" : "a number that allows fractions";
  if (inner instanceof z.ZodString) return "a string";
  if (inner instanceof z.ZodEnum) return "one of fixed strings";
  if (inner instanceof z.ZodBoolean) return "a boolean";
  if (inner instanceof z.ZodArray) return "a list";
  if (inner instanceof z.ZodObject) return "an object";
  return `a ${inner._zod.def.type}`;
}

function argumentsOf(spec: ToolSpec): Record<string, z.ZodType> {
  return spec.input instanceof z.ZodObject ? (spec.input.shape as Record<string, z.ZodType>) : {};
}

function listed(args: Record<string, z.ZodType>): string {
  const names = Object.keys(args);
  return names.length === 0 ? "it takes no arguments" : `its arguments are ${names.join(", ")}`;
}

/**
 * Every rule of a tool's effect identity and value that it breaks. `withArguments`: whether to
 * check the arguments they name against the input schema, which builds it (a catalog compile
 * checked with them may load without).
 */
export function checkEffect(spec: ToolSpec, report: Report, withArguments = true): void {
  const name = spec.name;
  const writes = spec.side_effect === "write" || spec.side_effect === "destructive";
  const { effect, value } = spec;
  if (!writes) {
    if (effect) {
      report(
        "effect",
        `tool "${name}": a ${spec.side_effect} tool has no effect to identify; effect is for write and destructive tools`,
      );
    }
    if (value) {
      report(
        "value",
        `tool "${name}": a ${spec.side_effect} tool moves no value; value is for write and destructive tools`,
      );
    }
    return;
  }
  if (!effect && !value) return;
  // Read only here: a tool's input schema may be built on first use (declared tools).
  const args = withArguments ? argumentsOf(spec) : null;
  if (effect) checkIdentity(name, effect, args, report);
  if (value) checkValue(name, value, args, report);
}

function checkIdentity(
  name: string,
  effect: NonNullable<ToolSpec["effect"]>,
  args: Record<string, z.ZodType> | null,
  report: Report,
): void {
  if (effect.fields !== null) {
    if (effect.fields.length === 0) {
      report(
        "effect.identity",
        `tool "${name}": effect identity names no argument; name at least one, or leave effect out to identify the effect by the tool and its whole arguments`,
      );
    }
    effect.fields.forEach((field, index) => {
      const at = `effect.identity[${index}]`;
      if (args !== null && !Object.hasOwn(args, field)) {
        report(at, `tool "${name}": effect identity "${field}" is not an argument; ${listed(args)}`);
      } else if (effect.fields?.indexOf(field) !== index) {
        report(at, `tool "${name}": effect identity names "${field}" twice`);
      }
    });
  }
  const window = effect.window_ms;
  if (!Number.isInteger(window / 1_000) || window < EFFECT_WINDOW_MS.min || window > EFFECT_WINDOW_MS.max) {
    report(
      "effect.window_s",
      `tool "${name}": effect window must be whole seconds from ${EFFECT_WINDOW_MS.min / 1_000} to ${EFFECT_WINDOW_MS.max / 1_000} (30 days); got ${window / 1_000}`,
    );
  }
}

function checkValue(
  name: string,
  value: NonNullable<ToolSpec["value"]>,
  args: Record<string, z.ZodType> | null,
  report: Report,
): void {
  if (args !== null) checkAmount(name, value.field, args, report);
  if (!/^[A-Z]{3}$/.test(value.currency)) {
    report(
      "value.currency",
      `tool "${name}": value currency must be an ISO 4217 code such as USD; got ${JSON.stringify(value.currency)}`,
    );
  }
  if (args !== null && value.subject !== null) checkSubject(name, value.subject, args, report);
}

/** The value's amount is an integer argument: a currency's minor unit. */
function checkAmount(name: string, field: string, args: Record<string, z.ZodType>, report: Report): void {
  const amount = args[field];
  if (!amount) {
    report("value.field", `tool "${name}": value field "${field}" is not an argument; ${listed(args)}`);
  } else if (!(unwrap(amount) instanceof z.ZodNumber && (unwrap(amount) as z.ZodNumber).isInt)) {
    report(
      "value.field",
      `tool "${name}": value field "${field}" must be an integer argument (a currency's minor unit, such as cents); it is ${argumentKind(amount)}`,
    );
  }
}

/** The value's subject, whom per-subject caps count for, is a string or integer argument. */
function checkSubject(name: string, field: string, args: Record<string, z.ZodType>, report: Report): void {
  const subject = args[field];
  if (!subject) {
    report("value.subject", `tool "${name}": value subject "${field}" is not an argument; ${listed(args)}`);
    return;
  }
  const inner = unwrap(subject);
  const names =
    inner instanceof z.ZodString ||
    inner instanceof z.ZodEnum ||
    (inner instanceof z.ZodNumber && inner.isInt);
  if (!names) {
    report(
      "value.subject",
      `tool "${name}": value subject "${field}" must be a string or integer argument; it is ${argumentKind(subject)}`,
    );
  }
}
