/** @jsxImportSource hono/jsx */
import type { FC } from "hono/jsx";
import type { SignedInOperator } from "../../auth/principal";
import type { ApprovalListItem } from "../../wire/approval";
import type { EnvironmentName } from "../../wire/envelope";
import type { ToolValues } from "../display-args";
import { ApprovalTable } from "./approval-table";
import { FilterForm, type FilterFormProps, Pager } from "./filter-form";
import { Layout } from "./layout";

export interface HistoryPageProps extends Pick<FilterFormProps, "values" | "states" | "tools" | "problems"> {
  environment: EnvironmentName;
  session: SignedInOperator;
  approvals: ApprovalListItem[];
  now: number;
  newest: string | null;
  older: string | null;
  /** The money fields of the tenant's tools: amounts read in their currency. */
  money: ToolValues;
}

/** Every approval of the tenant, in every state, newest first, filtered and paged. */
export const HistoryPage: FC<HistoryPageProps> = ({
  environment,
  session,
  values,
  states,
  tools,
  problems,
  approvals,
  now,
  newest,
  older,
  money,
}) => (
  <Layout title="Approval history" environment={environment} session={session} section="approvals">
    <h1>Approval history</h1>
    <p class="lede">
      Every call of <strong>{session.tenant}</strong>'s agents that asked for a human, whatever became of it.
    </p>
    <FilterForm
      action="/console/approvals"
      fields={["subject", "state", "tool", "run_id", "since", "until"]}
      values={values}
      states={states}
      tools={tools}
      problems={problems}
    />
    {problems.length > 0 ? null : approvals.length === 0 ? (
      <p class="card empty">No approvals match.</p>
    ) : (
      <ApprovalTable approvals={approvals} now={now} withRun money={money} />
    )}
    <Pager newest={newest} older={older} />
  </Layout>
);
