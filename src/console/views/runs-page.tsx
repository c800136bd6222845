/** @jsxImportSource hono/jsx */
import type { FC } from "hono/jsx";
import type { SignedInOperator } from "../../auth/principal";
import type { EnvironmentName } from "../../wire/envelope";
import { FilterForm, type FilterFormProps } from "./filter-form";
import { Layout } from "./layout";
import { LiveRegion } from "./live-region";
import { RunsList, type RunsListProps } from "./runs-list";

export interface RunsPageProps
  extends Omit<RunsListProps, "live">,
    Pick<FilterFormProps, "values" | "states" | "tools" | "problems"> {
  environment: EnvironmentName;
  session: SignedInOperator;
  /** The list's fragment for live updates, or null when paused or the filters are wrong. */
  fragment: string | null;
}

/** The tenant's runs, searchable by the ids their calls named: "what happened to order A1002?" */
export const RunsPage: FC<RunsPageProps> = ({
  environment,
  session,
  values,
  states,
  tools,
  problems,
  fragment,
  ...list
}) => (
  <Layout title="Runs" environment={environment} session={session} section="runs" live={fragment !== null}>
    <h1>Runs</h1>
    <p class="lede">
      The runs of <strong>{session.tenant}</strong>'s agents, newest first. Search by an order, customer,
      ticket or draft id to see every run that named it.
    </p>
    <FilterForm
      action="/console/runs"
      fields={["subject", "state", "tool", "since", "until"]}
      values={values}
      states={states}
      tools={tools}
      problems={problems}
    />
    {problems.length > 0 ? null : (
      <LiveRegion source={fragment}>
        <RunsList {...list} live={fragment !== null} />
      </LiveRegion>
    )}
  </Layout>
);
