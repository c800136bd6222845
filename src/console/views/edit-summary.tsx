/** @jsxImportSource hono/jsx */
import type { FC } from "hono/jsx";
import { displayArgs, type ToolValues } from "../display-args";
import { formatTimestamp } from "../format";
import { ArgsList } from "./args-list";

/** Past this many characters a changed value is cut in the sentence; the lists below show it whole. */
const SHORT_VALUE_CHARS = 80;

/** How an operator changed a call before approving it, as the approval and the trace keep it. */
export interface ShownEdit {
  asked_args: unknown;
  fields: readonly string[];
  by: string;
  by_name: string | null;
  /** When the edit was made; the trace does not keep it (its entry has its own time). */
  at?: string;
}

const short = (value: string) =>
  value.length > SHORT_VALUE_CHARS ? `${value.slice(0, SHORT_VALUE_CHARS)}…` : value;

/**
 * "Dana Reyes changed amount_cents $9.00 → $6.00 at …", then the arguments as asked and as approved.
 * An argument one side lacks is shown as "(none)".
 */
export const EditSummary: FC<{
  tool: string | null;
  edit: ShownEdit;
  approved: unknown;
  money: ToolValues;
}> = ({ tool, edit, approved, money }) => {
  const asked = displayArgs(tool, edit.asked_args, money);
  const now = displayArgs(tool, approved, money);
  const valueIn = (args: typeof asked, field: string) =>
    short(args.find((arg) => arg.field === field)?.value ?? "(none)");
  return (
    <div class="edit-summary">
      <p>
        {edit.by_name ? <strong>{edit.by_name}</strong> : <code>{edit.by}</code>} changed{" "}
        {edit.fields.map((field, index) => (
          <>
            {index > 0 ? ", " : null}
            <code>{field}</code> {valueIn(asked, field)} → {valueIn(now, field)}
          </>
        ))}
        {edit.at ? (
          <>
            {" "}
            at <time datetime={edit.at}>{formatTimestamp(edit.at)}</time>
          </>
        ) : null}
        .
      </p>
      <div class="edit-args">
        <div>
          <p class="hint">Asked by the agent</p>
          <ArgsList args={asked} />
        </div>
        <div>
          <p class="hint">Approved</p>
          <ArgsList args={now} />
        </div>
      </div>
    </div>
  );
};
