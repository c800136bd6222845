/** @jsxImportSource hono/jsx */
import type { FC } from "hono/jsx";
import type { Problem } from "../../wire/envelope";
import { Notice } from "./layout";

export type FilterField = "subject" | "state" | "tool" | "run_id" | "operator" | "since" | "until";

const LABELS: Record<FilterField, string> = {
  subject: "Order, customer or other id",
  state: "State",
  tool: "Tool",
  run_id: "Run id",
  operator: "Operator id",
  since: "Created from",
  until: "Created until",
};

const HINTS: Partial<Record<FilterField, string>> = {
  subject: "A1002 matches any argument ending in _id; order_id=A1002 only that one.",
};

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

export interface FilterFormProps {
  action: string;
  fields: readonly FilterField[];
  values: Record<string, string>;
  states: readonly string[];
  /** The tenant's tool names, offered as suggestions. */
  tools: readonly string[];
  problems: readonly Problem[];
}

/** A list's filters as a GET form: its URL is the search, so it can be bookmarked and shared. */
export const FilterForm: FC<FilterFormProps> = ({ action, fields, values, states, tools, problems }) => {
  const invalid = new Set(problems.map((problem) => problem.field));
  const field = (name: FilterField) => {
    const value = values[name] ?? "";
    const common = {
      id: `filter-${name}`,
      name,
      value,
      "aria-invalid": invalid.has(name) ? "true" : undefined,
      "aria-describedby": HINTS[name] ? `filter-${name}-hint` : undefined,
    };
    switch (name) {
      case "state":
        return (
          <select id={common.id} name={name} aria-invalid={common["aria-invalid"]}>
            {states.map((state) => (
              <option value={state} selected={state === (value || states[0])}>
                {state}
              </option>
            ))}
          </select>
        );
      case "tool":
        return <input type="text" list="filter-tools" autocomplete="off" {...common} />;
      case "since":
      case "until":
        return <input type={value === "" || DATE_ONLY.test(value) ? "date" : "text"} {...common} />;
      case "subject":
        return <input type="search" placeholder="A1002" autocomplete="off" {...common} />;
      case "run_id":
        return <input type="text" placeholder="run_…" autocomplete="off" {...common} />;
      case "operator":
        return <input type="text" placeholder="operator:…" autocomplete="off" {...common} />;
    }
  };
  return (
    <form method="get" action={action} class="filters" aria-label="Filters">
      {problems.length > 0 ? (
        <Notice kind="error">
          <p>Nothing was searched: fix these filters.</p>
          <ul>
            {problems.map((problem) => (
              <li>
                <strong>{LABELS[problem.field as FilterField] ?? problem.field}</strong>: {problem.reason}
              </li>
            ))}
          </ul>
        </Notice>
      ) : null}
      <div class="filter-fields">
        {fields.map((name) => (
          <div class={`filter filter-${name}`}>
            <label for={`filter-${name}`}>{LABELS[name]}</label>
            {field(name)}
            {HINTS[name] ? (
              <p class="hint" id={`filter-${name}-hint`}>
                {HINTS[name]}
              </p>
            ) : null}
          </div>
        ))}
      </div>
      <datalist id="filter-tools">
        {tools.map((tool) => (
          <option value={tool} />
        ))}
      </datalist>
      <div class="actions">
        <button type="submit" class="primary">
          Search
        </button>
        <a class="button secondary" href={action}>
          Clear
        </a>
      </div>
    </form>
  );
};

/** Keyset paging: newer pages are reached from the newest one, older ones by the cursor. */
export const Pager: FC<{ newest: string | null; older: string | null }> = ({ newest, older }) =>
  newest || older ? (
    <nav class="pager" aria-label="Pages">
      {newest ? <a href={newest}>← Newest</a> : null}
      {older ? (
        <a href={older} rel="next">
          Older →
        </a>
      ) : null}
    </nav>
  ) : null;
