/** @jsxImportSource hono/jsx */
import type { FC } from "hono/jsx";
import type { ApprovalSummary } from "../../approvals/model";
import { Badge } from "./layout";

interface Shown {
  value: string;
  label: string;
  title?: string;
}

/**
 * What an approval's badge says: its state until its call's outcome is known, then what the call
 * did. An approval reaches `executed` whatever its call's outcome was, so that word alone would show
 * a refund the upstream refused, or one the proxy never sent, as done.
 */
export function approvalBadge(approval: Pick<ApprovalSummary, "state" | "execution">): Shown {
  if (approval.state === "approved" && approval.execution === "in_doubt") {
    return {
      value: "in_doubt",
      label: "in doubt",
      title: "Approved and sent; whether it took effect is unknown",
    };
  }
  if (approval.state !== "executed") return { value: approval.state, label: approval.state };
  switch (approval.execution) {
    case "refused":
      return {
        value: "refused",
        label: "refused by upstream",
        title: "Approved; the upstream refused the call and nothing was done",
      };
    case "not_sent":
      return { value: "not_sent", label: "not sent", title: "Approved; the proxy did not send the call" };
    case "in_doubt":
      return {
        value: "in_doubt",
        label: "in doubt",
        title: "Approved and sent; whether it took effect is unknown",
      };
    default:
      // Executed, or settled before executions were recorded: the state is all there is to show.
      return { value: "executed", label: "executed" };
  }
}

/** An approval's badge: its state, or what its call did once that is known. */
export const ApprovalBadge: FC<{ approval: Pick<ApprovalSummary, "state" | "execution"> }> = ({
  approval,
}) => {
  const shown = approvalBadge(approval);
  return <Badge value={shown.value} label={shown.label} title={shown.title} />;
};
