/** @jsxImportSource hono/jsx */
import type { Child, FC } from "hono/jsx";
import { taintOfReason } from "../../machine/taint";
import { ShortId } from "./short-id";

/**
 * Why a call waits for a human, one sentence per reason. The approval keeps its reasons as the
 * fragments agents are told in parentheses ("destructive tools need a human approval"); an operator
 * reads them as sentences, and the one a tainted run carries names the tool that brought the
 * untrusted text in and the tool now asked for, rather than a call id alone.
 */
export function reasonSentence(tool: string, reason: string): Child {
  const taint = taintOfReason(reason);
  if (taint) {
    return (
      <>
        The run read untrusted content from <code>{taint.tool}</code> (call <ShortId id={taint.call_id} />)
        before asking for <code>{tool}</code>.
      </>
    );
  }
  const text = reason.trim();
  const capital = text.charAt(0).toUpperCase() + text.slice(1);
  return /[.!?]$/.test(capital) ? capital : `${capital}.`;
}

/** The reasons as a list (an approval's page), or "—" when there are none. */
export const ReasonList: FC<{ tool: string; reasons: readonly string[] }> = ({ tool, reasons }) =>
  reasons.length === 0 ? (
    <>—</>
  ) : (
    <ul class="reasons">
      {reasons.map((reason) => (
        <li>{reasonSentence(tool, reason)}</li>
      ))}
    </ul>
  );

/** The reasons as one line of sentences (a list's row). */
export const ReasonLine: FC<{ tool: string; reasons: readonly string[] }> = ({ tool, reasons }) =>
  reasons.length === 0 ? null : (
    <p class="meta reasons">
      {reasons.map((reason, index) => (
        <>
          {index > 0 ? " " : ""}
          {reasonSentence(tool, reason)}
        </>
      ))}
    </p>
  );
