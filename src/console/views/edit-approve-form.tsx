/** @jsxImportSource hono/jsx */
import type { FC } from "hono/jsx";
import type { Problem } from "../../wire/envelope";
import { argInputName, type EditField, type EditState, fieldOfProblem } from "../edit-form";
import { Notice } from "./layout";

export interface EditApproveFormProps {
  action: string;
  csrf: string;
  /** The digest of the decision context the page showed, posted with the edit (its audit receipt). */
  seen?: string | null;
  fields: readonly EditField[];
  /** What the inputs hold: the approval's arguments, or what the operator typed before a refusal. */
  values: Record<string, string>;
  state: EditState | null;
  /** Other runs that asked for or made the same effect: the repeat must be confirmed, as for Approve. */
  otherRuns: number;
  /** The button's words ("Approve edited call", or "… (1 of 2)"). */
  label: string;
}

/** A problem as one line: what is wrong, then what is allowed ("60000 is above …. At most 50000 …"). */
const sentence = (problem: Problem) =>
  problem.hint
    ? `${problem.reason}${/[.!?]$/.test(problem.reason) ? "" : "."} ${problem.hint}`
    : problem.reason;

const inputId = (field: EditField) => `edit-arg-${field.name}`;

/** One argument's input, typed from the tool's schema, with its problem (after a refusal) beside it. */
const FieldInput: FC<{ field: EditField; value: string; problems: Problem[] }> = ({
  field,
  value,
  problems,
}) => {
  const id = inputId(field);
  const errorId = `${id}-error`;
  const invalid = problems.length > 0;
  const common = {
    id,
    name: argInputName(field.name),
    "aria-invalid": invalid ? "true" : undefined,
    "aria-describedby": invalid ? errorId : undefined,
  };
  return (
    <div class={`edit-field${invalid ? " edit-field-invalid" : ""}`}>
      <label for={id}>
        <code>{field.name}</code>
        {field.required ? null : <span class="meta"> (optional)</span>}
      </label>
      {field.kind === "integer" || field.kind === "number" ? (
        <input
          {...common}
          type="number"
          inputmode={field.kind === "integer" ? "numeric" : "decimal"}
          step={field.kind === "integer" ? "1" : "any"}
          min={field.min ?? undefined}
          max={field.max ?? undefined}
          value={value}
          required={field.required}
        />
      ) : field.kind === "enum" || field.kind === "boolean" ? (
        <select {...common} required={field.required}>
          {field.required && field.options.includes(value) ? null : <option value="">—</option>}
          {field.options.map((option) => (
            <option value={option} selected={option === value}>
              {option}
            </option>
          ))}
        </select>
      ) : field.kind === "json" ? (
        <textarea {...common} rows={6} class="json" spellcheck={false} required={field.required}>
          {value}
        </textarea>
      ) : (
        <input
          {...common}
          type="text"
          maxlength={field.max_length ?? undefined}
          value={value}
          required={field.required}
        />
      )}
      {invalid ? (
        <p class="field-error" id={errorId}>
          {problems.map((problem) => (
            <span>{sentence(problem)} </span>
          ))}
        </p>
      ) : null}
    </div>
  );
};

/**
 * "Edit and approve": the tool's arguments as inputs, pre-filled with the call as asked. The edited
 * call is checked like an agent's (schema, policy, caps) and, approved, is what executes.
 */
export const EditApproveForm: FC<EditApproveFormProps> = (props) => {
  const problems = props.state?.problems ?? [];
  const byField = new Map<string, Problem[]>();
  const unplaced: Problem[] = [];
  for (const problem of problems) {
    const field = fieldOfProblem(props.fields, problem);
    if (field === null) unplaced.push(problem);
    else byField.set(field, [...(byField.get(field) ?? []), problem]);
  }
  return (
    <form method="post" action={props.action} class="panel card edit-form" id="edit-approve">
      <input type="hidden" name="csrf" value={props.csrf} />
      <input type="hidden" name="edit" value="yes" />
      {props.seen ? <input type="hidden" name="context_digest" value={props.seen} /> : null}
      <h3>Edit and approve</h3>
      <p class="hint">
        Change the arguments, then approve: the edited call is checked like the agent's (schema, policy, caps)
        and is what executes; the call as asked never does. An edit that needs a higher role or a second
        approver gets it.
      </p>
      {unplaced.length > 0 ? (
        <Notice kind="error">
          <ul>
            {unplaced.map((problem) => (
              <li>
                <code>{problem.field}</code>: {sentence(problem)}
              </li>
            ))}
          </ul>
        </Notice>
      ) : null}
      {props.fields.map((field) => (
        <FieldInput
          field={field}
          value={props.values[field.name] ?? ""}
          problems={byField.get(field.name) ?? []}
        />
      ))}
      {props.otherRuns > 0 || props.state?.confirm ? (
        <label class="confirm">
          <input type="checkbox" name="confirm_duplicate" value="yes" required />I checked the other runs:
          approve this edit anyway.
        </label>
      ) : null}
      <label for="edit-reason">Note on the edit (optional)</label>
      <textarea id="edit-reason" name="reason" maxlength={500} rows={2}>
        {props.state?.note ?? ""}
      </textarea>
      <button type="submit" class="approve">
        {props.label}
      </button>
    </form>
  );
};
