/** @jsxImportSource hono/jsx */
import type { FC } from "hono/jsx";
import type { DisplayedArg } from "../display-args";

/** Past this many characters a value is cut on overview pages; the approval page shows it whole. */
const SHORT_VALUE_CHARS = 120;

/** Arguments as a definition list: field names and values, each readable by a screen reader in pairs. */
export const ArgsList: FC<{ args: DisplayedArg[]; short?: boolean }> = ({ args, short }) =>
  args.length === 0 ? (
    <span class="meta">none</span>
  ) : (
    <dl class="args">
      {args.map(({ field, value, exact }) => (
        <>
          <dt>{field}</dt>
          <dd>
            {exact !== undefined ? (
              // Money reads in its currency; the amount the call carries stays in the markup.
              <data value={exact}>{value}</data>
            ) : short && value.length > SHORT_VALUE_CHARS ? (
              `${value.slice(0, SHORT_VALUE_CHARS)}…`
            ) : (
              value
            )}
          </dd>
        </>
      ))}
    </dl>
  );
